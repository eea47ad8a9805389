"""Finding and killing what an episode left running.

The sandbox kills each run's process group (and cgroup or container); a process that left
both (double fork + setsid, on a host without a writable cgroup) would survive. Every
command of an episode runs with `RLVR_EPISODE=<token>` in its environment, which children
inherit, so after each command and before grading we kill every process carrying the token
or sitting in the workspace.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path


def tagged_processes(token: str, workspace: Path | None = None) -> list[int]:
    """Pids whose environment carries RLVR_EPISODE=<token> or whose cwd is in `workspace`."""
    needle = f"RLVR_EPISODE={token}".encode()
    root = str(workspace.resolve()) if workspace is not None else None
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as fh:
                environ = fh.read()
            if needle in environ.split(b"\0"):
                found.append(int(entry.name))
                continue
            if root is not None:
                cwd = os.readlink(f"/proc/{entry.name}/cwd")
                if cwd == root or cwd.startswith(root + "/"):
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


def kill_tagged(token: str, workspace: Path | None = None, rounds: int = 3) -> int:
    """SIGKILL every tagged process (a few rounds, to catch forks in flight); return the count."""
    killed = 0
    for _ in range(rounds):
        pids = tagged_processes(token, workspace)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except OSError:
                pass
    return killed
