"""The `local` backends: each run is a fresh process in its own session and process group,
with rlimits (CPU, file size, open files, no core dumps), its own cgroup where the cgroup
filesystem is writable (a `pids` cap and one memory budget counting anonymous memory, memfd
and tmpfs; else RLIMIT_NPROC and RLIMIT_AS), a scrubbed environment and a private temporary
working directory.

`local` (`NamespaceSandbox`) runs every command in its own user, mount, PID, IPC, network and UTS
namespaces (`zygote.run_isolated`): uid 65534 (the host's 65534 when the grader is root),
no capabilities, no_new_privs, a root holding only the interpreter's files read-only
(`view.py`), the working directory, size-capped /tmp and /dev/shm, its own /proc. It needs
user namespaces and refuses (`SandboxUnavailable`) where they do not work. (The code grader's
candidates are children of the warm fork server instead, confined by its jail: `zygote.py`.)
`local-unsafe` (`LocalSandbox`) is the same without namespaces: the command sees the
host's files and network as the calling user. It is never chosen unless asked for by name.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Mapping, Sequence

from rlvr_envs.sandbox.base import (Limits, Sandbox, SandboxedProcess, SandboxUnavailable,
                                    check_command, prepare_workdir, remove_workdir, run_env)
from rlvr_envs.sandbox.cgroup import RunCgroup, memory_plan, pids_cgroup_available
from rlvr_envs.sandbox.forkserver import (MAX_MESSAGE_QUEUE_BYTES, MAX_PENDING_SIGNALS, ZYGOTE_BOOT,
                                          ZYGOTE_SOURCE, join_cgroup)
from rlvr_envs.sandbox.view import interpreter_view


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


def launcher(limits: Limits, cgroup: RunCgroup | None, address_space: int) -> list[str]:
    """The argv prefix that applies the run's limits before exec'ing the command: `sh` joins
    the cgroups, util-linux `prlimit` sets the rlimits. (A preexec_fn would force a full fork
    of the calling process, which costs milliseconds per run in a large trainer process.)"""
    nproc = None
    if cgroup is None and os.getuid() != 0:
        # RLIMIT_NPROC counts every process of the user, so allow what already runs
        nproc = _user_process_count() + limits.max_processes
    argv = [PRLIMIT, f"--as={address_space}", f"--cpu={limits.cpu_seconds}",
            f"--fsize={limits.max_file_bytes}", f"--nofile={limits.max_open_files}", "--core=0",
            f"--sigpending={MAX_PENDING_SIGNALS}", f"--msgqueue={MAX_MESSAGE_QUEUE_BYTES}"]
    if nproc is not None:
        argv.append(f"--nproc={nproc}")
    argv.append("--")
    if cgroup is not None:
        argv = join_cgroup(cgroup) + argv
    return argv


class GroupProcess(SandboxedProcess):
    """Killing means: the whole process group, then every member of the run's cgroup."""

    def __init__(self, popen, *, cgroup: RunCgroup | None, **kw):
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

    def cpu_used(self) -> float | None:
        return self.cgroup.cpu_used() if self.cgroup is not None else None

    def members(self) -> list[int]:
        # the cgroup also holds what left the process tree (a double fork)
        return super().members() + (self.cgroup.pids() if self.cgroup is not None else [])

    def out_of_memory(self) -> bool:
        return self.cgroup is not None and self.cgroup.out_of_memory()

    def cleanup(self) -> None:
        if self.cgroup is not None:
            self.cgroup.remove()
        super().cleanup()


PRLIMIT = shutil.which("prlimit") or "/usr/bin/prlimit"
#: the uid and gid a namespaced run has, inside and (when the grader is root) on the host
SANDBOX_UID = 65534


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


@functools.lru_cache(maxsize=None)
def namespace_problem() -> str | None:
    """None when a command can run in its own namespaces here, else what is wrong."""
    python = real_python()
    config = {"view": interpreter_view().as_dict(), "tmp_mb": 1, "shm_mb": 1,
              "workdir": "/tmp"}
    try:
        probe = subprocess.run([python, "-I", "-S", "-c", ZYGOTE_SOURCE, "exec",
                                json.dumps(config), python, "-I", "-S", "-c", "pass"],
                               capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"the namespace launcher failed to start: {err}"
    if probe.returncode != 0:
        detail = probe.stderr.decode("utf-8", "replace").strip()[-300:]
        return f"cannot create user namespaces here ({detail or probe.returncode})"
    return None


def real_python() -> str:
    """The interpreter binary itself (a virtualenv's `bin/python` is outside the view)."""
    return os.path.realpath(sys.executable)


def make_grader_undumpable() -> None:
    """No process of the grader's user can read this process's memory through /proc or
    ptrace (a candidate that reaches the host's /proc still cannot read expected values)."""
    import ctypes
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0


class LocalSandbox(Sandbox):
    """`local-unsafe`: plain processes with limits and nothing else — the host's files (data
    sets, caches, credentials, the grader's /proc), its network and every path this user may
    write are within the program's reach. For trusted code, or machines without user
    namespaces where Docker is not an option; `get_sandbox("local-unsafe")` warns.

    `warm=True` (default) lets the code grader run programs as fresh children of a warm fork
    server (`fork_server`; at most `fork_servers` zygotes, default the CPU count, at least 2);
    each child gets the limits of a run and, where user namespaces work, the namespaces and
    view of `NamespaceSandbox`.
    """

    name = "local-unsafe"
    isolating = False
    #: the run sees only the interpreter's files (`view.py`), not the host's
    isolates_filesystem = False
    #: the run's uid is the host's 65534 (this backend writes the id maps as root)
    owns_uid_65534 = False

    @classmethod
    def describe(cls) -> str:
        return "plain processes: the host's files and network are reachable"

    def __init__(self, python: str | None = None, warm: bool = True,
                 fork_servers: int | None = None):
        self._require_prlimit()
        self.python = python or sys.executable
        self._view_dict = interpreter_view().as_dict()  # for fork-server children
        self._init_warm(warm, fork_servers)

    @staticmethod
    def _require_prlimit() -> None:
        if not os.path.exists(PRLIMIT):
            raise SandboxUnavailable("the local sandbox needs util-linux `prlimit` on PATH "
                                     "(Debian/Ubuntu: apt-get install util-linux)")

    def _init_warm(self, warm: bool, fork_servers: int | None) -> None:
        from rlvr_envs.sandbox.forkserver import ForkServers
        self.warm = bool(warm)
        self._fork_servers = ForkServers(self._start_fork_server, fork_servers)

    def zygote_argv(self) -> tuple[list[str], Path]:
        """How to start a fork server in this backend, and the host directory it runs in."""
        import tempfile
        home = Path(tempfile.mkdtemp(prefix="rlvr-zygote-"))
        return [self.python, "-I", "-S", "-c", ZYGOTE_BOOT], home

    def accepts(self, server) -> bool:
        """Whether a started fork server isolates children as well as `spawn` would."""
        return True

    def _start_fork_server(self, programs):
        """A zygote in its jail; where the jail cannot be built (an old kernel, say), one
        whose children each build their own root, as before the jail."""
        from rlvr_envs.sandbox.forkserver import ForkServerError
        try:
            return self._new_fork_server(programs, jail=True)
        except ForkServerError as err:
            if "jail:" not in str(err):
                raise
            return self._new_fork_server(programs, jail=False)

    def _new_fork_server(self, programs, *, jail: bool):
        from rlvr_envs.sandbox.forkserver import ForkServer
        argv, home = self.zygote_argv()
        # every library function bound when the zygote starts, not on first call: a child
        # would otherwise resolve each one it is the first to call (mount, setns, setresuid,
        # ...) and write the result into a page it then has to copy, in every run
        env = {**run_env(None, home), "LD_BIND_NOW": "1"}
        return ForkServer(argv, env=env, cwd=home, programs=programs,
                          isolation=self.name, view=self._view_dict,
                          launcher_prefix=zygote_launcher(), owned_dir=str(home), jail=jail)

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

    def start_fork_servers(self, programs):
        if self.fork_server(programs) is None:
            return []
        return self._fork_servers.start_all(programs)

    def close(self) -> None:
        self._fork_servers.close()

    def wrap(self, command: list[str], workdir: Path, limits: Limits, tmp_mb: int,
             shm_mb: int, owned: bool, fds: Sequence[int] = ()) -> list[str]:
        """The argv that actually runs (namespaces and bubblewrap prepend themselves); `fds`:
        what `run_fds` opened for it."""
        return command

    def run_fds(self) -> list[int]:
        """Fds a run's launcher reads (passed to it, closed here once it started)."""
        return []

    def spawn(self, command, *, files=None, limits: Limits = Limits(), workdir=None,
              env: Mapping[str, str] | None = None, collect=()) -> SandboxedProcess:
        argv = check_command(command)
        limits = Limits.coerce(limits)
        path, owned = prepare_workdir(files, workdir, limits.memory_mb)
        if owned and os.geteuid() == 0 and self.owns_uid_65534:
            os.chown(path, SANDBOX_UID, SANDBOX_UID)  # the run's own uid writes in it
        cgroup = RunCgroup.create(limits.max_processes, limits.memory_mb * 2**20)
        address_space, tmp_mb, shm_mb = memory_plan(
            limits.memory_mb, cgroup is not None and cgroup.has_memory)
        if not self.isolates_filesystem:
            address_space = limits.memory_mb * 2**20  # no tmpfs of its own to carve out
        fds = []
        try:
            fds = self.run_fds()
            popen = subprocess.Popen(
                launcher(limits, cgroup, address_space)
                + self.wrap(argv, path, limits, tmp_mb, shm_mb, owned, fds), cwd=path,
                env=run_env(env, path), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True, close_fds=True, pass_fds=fds)
        except BaseException:
            if cgroup is not None:
                cgroup.remove()
            if owned:
                remove_workdir(path)
            raise
        finally:
            for fd in fds:
                os.close(fd)
        return GroupProcess(popen, cgroup=cgroup, workdir=path, owns_workdir=owned,
                            limits=limits, isolation=self.name)


class NamespaceSandbox(LocalSandbox):
    """`local`: every run in its own user, mount, PID, IPC, network and UTS namespaces (see
    the module docstring); refuses to start where user namespaces do not work.
    `hide_site_packages=False` shows the Python installation's site-packages and the active
    virtualenv, read-only, and runs this virtualenv's interpreter; `ro_binds` adds host paths,
    read-only, at the same place (repo tasks' test environment)."""

    name = "local"
    isolating = True
    isolates_filesystem = True
    owns_uid_65534 = True

    @classmethod
    def problem(cls) -> str | None:
        return namespace_problem()

    @classmethod
    def describe(cls) -> str:
        return "own namespaces per run, uid 65534, only the interpreter's files"

    def __init__(self, python: str | None = None, warm: bool = True,
                 fork_servers: int | None = None, *, hide_site_packages: bool = True,
                 ro_binds: Sequence[str] = ()):
        self._require_prlimit()
        problem = namespace_problem()
        if problem is not None:
            raise SandboxUnavailable(
                f"the local sandbox backend is unavailable: {problem}; allow user namespaces "
                f"(sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces), use "
                f"sandbox='docker', or, knowing that code then reads the host's files and "
                f"network, sandbox='local-unsafe'")
        self.python = python or real_python()
        extra_ro: tuple[str, ...] = ()
        if not hide_site_packages:
            from rlvr_envs.sandbox.view import python_prefix
            self.python = python or sys.executable
            venv = os.path.realpath(sys.prefix)
            if venv != os.path.realpath(python_prefix()):
                extra_ro = (venv,)
        extra_ro += tuple(os.path.realpath(p) for p in ro_binds)
        self.view = interpreter_view(hide_site_packages=hide_site_packages, extra_ro=extra_ro)
        self._view_dict = self.view.as_dict()
        make_grader_undumpable()
        self._init_warm(warm, fork_servers)

    def accepts(self, server) -> bool:
        return server.namespaces

    def wrap(self, command: list[str], workdir: Path, limits: Limits, tmp_mb: int,
             shm_mb: int, owned: bool, fds: Sequence[int] = ()) -> list[str]:
        """The argv that actually runs: the namespace launcher, then the command. When the
        grader is root the run's uid is the host's 65534 in a directory of its own, else the
        owner of the directory the caller gave (it is to write there)."""
        host_id = SANDBOX_UID if owned else workdir.stat().st_uid
        config = {"view": self._view_dict, "tmp_mb": tmp_mb, "shm_mb": shm_mb,
                  "workdir": str(workdir), "host_id": host_id}
        return [self.python, "-I", "-S", "-c", ZYGOTE_SOURCE, "exec", json.dumps(config),
                *command]



class UnsafeSandboxWarning(UserWarning):
    """A sandbox that does not isolate the program from the host was created."""
