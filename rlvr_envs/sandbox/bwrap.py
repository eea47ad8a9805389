"""The `bwrap` backend: the local backend's limits, run inside bubblewrap.

Network, PID, IPC, UTS and user namespaces are unshared; the sandboxed process is uid 65534
with no capabilities and (bubblewrap 0.8.0 and later) cannot make user namespaces of its
own; the filesystem it sees is /usr (read-only), the Python installation (read-only, its
site-packages hidden unless asked for), a fresh /tmp and /dev, its own /proc, and the
working directory (the only writable host path, bound at the same path). Nothing else of
the host (home directories, the grader's files, datasets) is visible.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Sequence

from rlvr_envs.sandbox.base import Limits, SandboxUnavailable
from rlvr_envs.sandbox.local import LocalSandbox, make_grader_undumpable, real_python
from rlvr_envs.sandbox.view import interpreter_view, python_prefix
from rlvr_envs.sandbox.zygote import syscall_filter_bytes

INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`; Fedora: "
                "`dnf install bubblewrap`) and allow user namespaces "
                "(sysctl kernel.unprivileged_userns_clone=1)")


@functools.lru_cache(maxsize=None)
def bwrap_problem() -> str | None:
    """None when bubblewrap works here, else what is wrong."""
    exe = shutil.which("bwrap")
    if exe is None:
        return "`bwrap` is not on PATH"
    try:
        probe = subprocess.run([exe, "--ro-bind", "/", "/", "--unshare-all", "--unshare-user",
                                "--cap-drop", "ALL", "--die-with-parent", "true"],
                               capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"bwrap failed to start: {err}"
    if probe.returncode != 0:
        return f"bwrap cannot create namespaces here: {probe.stderr.decode(errors='replace').strip()}"
    return None


@functools.lru_cache(maxsize=None)
def no_userns_args() -> tuple[str, ...]:
    """`--disable-userns` where this bubblewrap has it and it works here (bubblewrap 0.8.0
    and later), else nothing: a command then cannot make a user namespace of its own, in
    which it could mount a rewritten copy over a directory of its working tree (a graded
    repository run would show pytest rewritten tests and leave the files on the host as
    they were)."""
    exe = shutil.which("bwrap")
    try:
        probe = subprocess.run([exe, "--ro-bind", "/", "/", "--unshare-all", "--unshare-user",
                                "--disable-userns", "--cap-drop", "ALL", "--die-with-parent",
                                "true"], capture_output=True, timeout=20)
    except (OSError, TypeError, subprocess.TimeoutExpired):
        return ()
    return ("--disable-userns",) if probe.returncode == 0 else ()


class BwrapSandbox(LocalSandbox):
    """Local limits + bubblewrap namespaces. `hide_site_packages=False` exposes the Python
    installation's site-packages and the active virtualenv (repo tasks need pytest);
    `ro_binds` adds host paths, read-only, at the same place."""

    name = "bwrap"
    isolating = True
    isolates_filesystem = True
    owns_uid_65534 = False  # bubblewrap maps 65534 to the caller's own uid

    @classmethod
    def problem(cls) -> str | None:
        return bwrap_problem()

    @classmethod
    def describe(cls) -> str:
        return "bubblewrap namespaces, uid 65534, only the interpreter's files"

    def __init__(self, *, hide_site_packages: bool = True, ro_binds: Sequence[str] = (),
                 warm: bool = True, fork_servers: int | None = None):
        problem = bwrap_problem()
        if problem is not None:
            raise SandboxUnavailable(f"the bwrap sandbox backend is unavailable: {problem}; "
                                     f"{INSTALL_HINT}")
        self.exe = shutil.which("bwrap")
        self.python = real_python()
        self.hide_site_packages = hide_site_packages
        extra = [str(Path(p).resolve()) for p in ro_binds]
        if not hide_site_packages:
            self.python = sys.executable
            venv = Path(os.path.realpath(sys.prefix))
            if venv != python_prefix():
                extra.append(str(venv))
        self.view = interpreter_view(hide_site_packages=hide_site_packages,
                                     extra_ro=tuple(extra))
        self._view_dict = self.view.as_dict()
        self._static = self._static_args()
        self._seccomp = syscall_filter_bytes()
        make_grader_undumpable()
        self._init_warm(warm, fork_servers)

    def _static_args(self) -> list[str]:
        """The view's mounts; they follow the private /tmp (see `_with_tmp`), so a view path
        under the host's /tmp (a checkout or virtualenv there) stays visible."""
        args: list[str] = []
        for path in self.view.ro_dirs:
            args += ["--ro-bind", path, path]
        for path, target in self.view.symlinks.items():
            args += ["--symlink", target, path]
        for path in self.view.ro_files:
            args += ["--ro-bind", path, path]
        # /proc/sys read-only: started by root, bubblewrap maps the run's 65534 to the host's
        # root, whom the kernel lets write any sysctl by its owner bits (kernel.core_pattern
        # names a program the host's kernel would run as root); bubblewrap covers it only
        # where the directory itself is writable. Its values are the run's own namespaces'.
        args += ["--dev", "/dev", "--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys"]
        # but /proc/sys/user writable: the fork server's jail caps its own per-user counts
        # there (zygote.limit_user_counts); a process may only write the values of a user
        # namespace it holds CAP_SYS_RESOURCE in, which no run does
        if os.path.isdir("/proc/sys/user"):
            args += ["--bind", "/proc/sys/user", "/proc/sys/user"]
        for path in self.view.hidden:
            args += ["--size", "4096", "--tmpfs", path, "--remount-ro", path]
        args += ["--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534",
                 "--hostname", "sandbox", "--cap-drop", "ALL", "--die-with-parent",
                 "--new-session"]
        return args

    def _with_tmp(self, size_bytes: int) -> list[str]:
        return [self.exe, "--size", str(size_bytes), "--tmpfs", "/tmp", *self._static]

    def run_fds(self) -> list[int]:
        """A pipe holding `syscall_filter` for bubblewrap's `--seccomp` (no keyrings: a run
        has user keyrings of its own, but may hold the grader's session keyring, which every
        run would share; no io_uring)."""
        if self._seccomp is None:
            return []
        read, write = os.pipe()
        try:
            os.write(write, self._seccomp)  # a few hundred bytes: the pipe holds them
        finally:
            os.close(write)
        return [read]

    def wrap(self, command: list[str], workdir: Path, limits: Limits, tmp_mb: int,
             shm_mb: int, owned: bool, fds: Sequence[int] = ()) -> list[str]:
        seccomp = ["--seccomp", str(fds[0])] if fds else []
        return [*self._with_tmp(tmp_mb * 2**20), *seccomp, *no_userns_args(),
                "--size", str(shm_mb * 2**20), "--tmpfs", "/dev/shm",
                "--bind", str(workdir), str(workdir), "--remount-ro", "/",
                "--chdir", str(workdir), "--setenv", "HOME", str(workdir), "--", *command]

    def zygote_argv(self) -> tuple[list[str], Path]:
        """The fork server runs in one bubblewrap sandbox with no host directory writable
        (not even a working directory); each child adds its own namespaces inside it."""
        from rlvr_envs.sandbox.forkserver import ZYGOTE_BOOT
        import tempfile
        home = Path(tempfile.mkdtemp(prefix="rlvr-zygote-"))
        return [*self._with_tmp(2**20), "--remount-ro", "/",
                "--chdir", "/tmp",
                "--setenv", "HOME", "/tmp", "--", self.python, "-I", "-S", "-c",
                ZYGOTE_BOOT], home

    def accepts(self, server) -> bool:
        return server.namespaces  # else a per-run bubblewrap isolates runs from each other
