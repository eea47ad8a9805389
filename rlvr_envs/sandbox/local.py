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
from rlvr_envs.sandbox.cgroup import PidsCgroup, pids_cgroup_available


def _warn_once(message: str) -> None:
    import warnings
    warnings.warn(message, RuntimeWarning, stacklevel=3)


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


def zygote_launcher() -> list[str]:
    """The argv prefix of a fork server: no core dumps, and (without a cgroup, as non-root) a
    process budget for everything it will fork; each child lowers the rest itself."""
    import resource

    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    argv = [PRLIMIT, "--core=0"]
    if nofile != resource.RLIM_INFINITY:
        argv.append(f"--nofile={nofile}")
    if not pids_cgroup_available() and os.getuid() != 0:
        from rlvr_envs.sandbox.forkserver import ZYGOTE_MAX_PROCESSES
        argv.append(f"--nproc={_user_process_count() + ZYGOTE_MAX_PROCESSES}")
    return argv + ["--"]


class LocalSandbox(Sandbox):
    """Plain processes with limits; no filesystem or network isolation.

    `warm=True` (default) lets the code grader run programs as fresh children of a warm fork
    server (`fork_server`; at most `fork_servers` zygotes, default the CPU count, at least 2);
    each child gets the limits of a run and, where user namespaces work, its own namespaces
    and a private read-only view of the filesystem.
    """

    name = "local"

    def __init__(self, python: str | None = None, warm: bool = True,
                 fork_servers: int | None = None):
        import sys
        if not os.path.exists(PRLIMIT):
            raise SandboxUnavailable("the local sandbox needs util-linux `prlimit` on PATH "
                                     "(Debian/Ubuntu: apt-get install util-linux)")
        self.python = python or sys.executable
        self._init_warm(warm, fork_servers)

    def _init_warm(self, warm: bool, fork_servers: int | None) -> None:
        from rlvr_envs.sandbox.forkserver import ForkServers
        self.warm = bool(warm)
        self._fork_servers = ForkServers(self._start_fork_server, fork_servers)

    def zygote_argv(self) -> tuple[list[str], Path]:
        """How to start a fork server in this backend, and the host directory it runs in."""
        from rlvr_envs.sandbox.forkserver import ZYGOTE_SOURCE
        import tempfile
        home = Path(tempfile.mkdtemp(prefix="rlvr-zygote-"))
        return [self.python, "-I", "-S", "-c", ZYGOTE_SOURCE], home

    def accepts(self, server) -> bool:
        """Whether a started fork server isolates children as well as `spawn` would."""
        return True

    def _start_fork_server(self, programs):
        from rlvr_envs.sandbox.forkserver import ForkServer
        argv, home = self.zygote_argv()
        return ForkServer(argv, env=run_env(None, home), cwd=home, programs=programs,
                          isolation=self.name, launcher_prefix=zygote_launcher(),
                          owned_dir=str(home))

    def fork_server(self, programs):
        if not self.warm:
            return None
        from rlvr_envs.sandbox.forkserver import ForkServerError
        try:
            server = self._fork_servers.get(programs)
        except ForkServerError as err:
            _warn_once(f"{self.name}: no warm fork server ({err}); starting a fresh sandbox "
                       f"per run instead")
            self.warm = False
            return None
        if not self.accepts(server):
            _warn_once(f"{self.name}: the fork server cannot give each run its own namespaces "
                       f"here; starting a fresh sandbox per run instead")
            self.warm = False
            return None
        return server

    def close(self) -> None:
        self._fork_servers.close()

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
