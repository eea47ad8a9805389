"""The `local` backend: each run is a fresh process in its own session and process group,
with rlimits (address space, CPU, file size, open files, no core dumps), a process cap (a
cgroup `pids` group when writable, else RLIMIT_NPROC), a scrubbed environment and a private
temporary working directory. It does NOT hide the host filesystem or the network: use the
bubblewrap or Docker backend for that (`get_sandbox("auto")` picks bubblewrap when present).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Mapping

from rlvr_envs.sandbox.base import (Limits, Sandbox, SandboxedProcess, SandboxUnavailable,
                                    check_command, prepare_workdir, run_env)
from rlvr_envs.sandbox.cgroup import PidsCgroup


def _user_process_count() -> int:
    uid, count = os.getuid(), 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                pass
    return count


def launcher(limits: Limits, cgroup: PidsCgroup | None) -> list[str]:
    """The argv prefix that applies the run's limits before exec'ing the command: `sh` joins
    the cgroup, util-linux `prlimit` sets the rlimits. (A preexec_fn would force a full fork of
    the calling process, which costs milliseconds per run in a large trainer process.)"""
    nproc = None
    if cgroup is None and os.getuid() != 0:
        # RLIMIT_NPROC counts every process of the user, so allow what already runs
        nproc = _user_process_count() + limits.max_processes
    mem = limits.memory_mb * 2**20
    argv = [PRLIMIT, f"--as={mem}", f"--cpu={limits.cpu_seconds}",
            f"--fsize={limits.max_file_bytes}", f"--nofile={limits.max_open_files}", "--core=0"]
    if nproc is not None:
        argv.append(f"--nproc={nproc}")
    argv.append("--")
    if cgroup is not None:
        argv = ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', cgroup.procs_file, *argv]
    return argv


class GroupProcess(SandboxedProcess):
    """Killing means: the whole process group, then every member of the run's cgroup."""

    def __init__(self, popen, *, cgroup: PidsCgroup | None, **kw):
        super().__init__(popen, **kw)
        self.cgroup = cgroup

    def kill(self) -> None:
        self.killed = True
        self._kill_all()

    def kill_leftovers(self) -> None:
        self._kill_all()

    def _kill_all(self) -> None:
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.cgroup is not None:
            self.cgroup.kill_all()

    def cleanup(self) -> None:
        if self.cgroup is not None:
            self.cgroup.remove()
        super().cleanup()


PRLIMIT = shutil.which("prlimit") or "/usr/bin/prlimit"


class LocalSandbox(Sandbox):
    """Plain processes with limits; no filesystem or network isolation."""

    name = "local"

    def __init__(self, python: str | None = None):
        import sys
        if not os.path.exists(PRLIMIT):
            raise SandboxUnavailable("the local sandbox needs util-linux `prlimit` on PATH "
                                     "(Debian/Ubuntu: apt-get install util-linux)")
        self.python = python or sys.executable

    def wrap(self, command: list[str], workdir: Path, limits: Limits) -> list[str]:
        """The argv that actually runs (bubblewrap prepends itself here)."""
        return command

    def spawn(self, command, *, files=None, limits: Limits = Limits(), workdir=None,
              env: Mapping[str, str] | None = None) -> SandboxedProcess:
        argv = check_command(command)
        limits = Limits.coerce(limits)
        path, owned = prepare_workdir(files, workdir)
        cgroup = PidsCgroup.create(limits.max_processes)
        try:
            popen = subprocess.Popen(
                launcher(limits, cgroup) + self.wrap(argv, path, limits), cwd=path,
                env=run_env(env, path), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True, close_fds=True)
        except BaseException:
            if cgroup is not None:
                cgroup.remove()
            if owned:
                shutil.rmtree(path, ignore_errors=True)
            raise
        return GroupProcess(popen, cgroup=cgroup, workdir=path, owns_workdir=owned,
                            limits=limits, isolation=self.name)
