"""The `local` backend: each run is a fresh process in its own session and process group,
with rlimits (address space, CPU, file size, open files, no core dumps), a process cap (a
cgroup `pids` group when writable, else RLIMIT_NPROC), a scrubbed environment and a private
temporary working directory. It does NOT hide the host filesystem or the network: use the
bubblewrap or Docker backend for that (`get_sandbox("auto")` picks bubblewrap when present).
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
from pathlib import Path
from typing import Mapping

from rlvr_envs.sandbox.base import (Limits, Sandbox, SandboxedProcess, check_command,
                                    prepare_workdir, run_env)
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


def make_preexec(limits: Limits, cgroup: PidsCgroup | None):
    """The function the child runs between fork and exec: cgroup, then rlimits."""
    mem = limits.memory_mb * 2**20
    nproc = None
    if cgroup is None and os.getuid() != 0:
        # RLIMIT_NPROC counts every process of the user, so allow what already runs
        nproc = _user_process_count() + limits.max_processes
    settings = [
        (resource.RLIMIT_AS, mem),
        (resource.RLIMIT_CPU, limits.cpu_seconds),
        (resource.RLIMIT_FSIZE, limits.max_file_bytes),
        (resource.RLIMIT_NOFILE, limits.max_open_files),
        (resource.RLIMIT_CORE, 0),
    ]
    if nproc is not None:
        settings.append((resource.RLIMIT_NPROC, nproc))

    def preexec() -> None:
        if cgroup is not None:
            cgroup.enter()
        for which, value in settings:
            soft, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(which, (value, value))
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)

    return preexec


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


class LocalSandbox(Sandbox):
    """Plain processes with limits; no filesystem or network isolation."""

    name = "local"

    def __init__(self, python: str | None = None):
        import sys
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
                self.wrap(argv, path, limits), cwd=path, env=run_env(env, path),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                start_new_session=True, preexec_fn=make_preexec(limits, cgroup), close_fds=True)
        except BaseException:
            if cgroup is not None:
                cgroup.remove()
            if owned:
                import shutil
                shutil.rmtree(path, ignore_errors=True)
            raise
        return GroupProcess(popen, cgroup=cgroup, workdir=path, owns_workdir=owned,
                            limits=limits, isolation=self.name)
