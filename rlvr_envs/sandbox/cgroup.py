"""A throw-away cgroup-v1 `pids` group per run: a hard process cap that also covers
children which escape the process group (setsid), and a complete kill list.

Used by the local and bubblewrap backends when the cgroup filesystem is writable (root);
elsewhere they fall back to RLIMIT_NPROC, which the kernel does not enforce for root.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

PIDS_ROOT = Path("/sys/fs/cgroup/pids")


def pids_cgroup_available() -> bool:
    return (PIDS_ROOT / "cgroup.procs").exists() and os.access(PIDS_ROOT, os.W_OK)


class PidsCgroup:
    """One run's cgroup; the run's launcher writes its own pid into `procs_file` before exec."""

    def __init__(self, max_pids: int):
        self.path = PIDS_ROOT / f"rlvr-{uuid.uuid4().hex[:12]}"
        self.path.mkdir()
        (self.path / "pids.max").write_text(str(max_pids))
        self.procs_file = str(self.path / "cgroup.procs")

    @classmethod
    def create(cls, max_pids: int) -> PidsCgroup | None:
        if not pids_cgroup_available():
            return None
        try:
            return cls(max_pids)
        except OSError:
            return None

    def pids(self) -> list[int]:
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def kill_all(self) -> None:
        """SIGKILL every member until none is left (a forking member can add new ones)."""
        for _ in range(200):
            members = self.pids()
            if not members:
                return
            for pid in members:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.005)

    def remove(self) -> None:
        self.kill_all()
        for _ in range(100):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.01)
