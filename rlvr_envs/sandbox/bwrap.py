"""The `bwrap` backend: the local backend's limits, run inside bubblewrap.

Network, PID, IPC, UTS and user namespaces are unshared; the sandboxed process is uid 65534
with no capabilities; the filesystem it sees is /usr (read-only), the Python installation
(read-only, its site-packages hidden unless asked for), a fresh /tmp and /dev, its own /proc,
and the working directory (the only writable host path, bound at the same path). Nothing
else of the host (home directories, the grader's files, datasets) is visible.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Sequence

from rlvr_envs.sandbox.base import Limits, SandboxUnavailable
from rlvr_envs.sandbox.local import LocalSandbox

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


def _interpreter() -> tuple[str, Path]:
    """The real interpreter binary behind sys.executable and its installation prefix."""
    real = Path(os.path.realpath(sys.executable))
    return str(real), Path(os.path.realpath(sys.base_prefix))


class BwrapSandbox(LocalSandbox):
    """Local limits + bubblewrap namespaces. `hide_site_packages=False` exposes the Python
    installation's site-packages and the active virtualenv (repo tasks need pytest);
    `ro_binds` adds host paths, read-only, at the same place."""

    name = "bwrap"

    def __init__(self, *, hide_site_packages: bool = True, ro_binds: Sequence[str] = ()):
        problem = bwrap_problem()
        if problem is not None:
            raise SandboxUnavailable(f"the bwrap sandbox backend is unavailable: {problem}; "
                                     f"{INSTALL_HINT}")
        self.exe = shutil.which("bwrap")
        self.python, self.prefix = _interpreter()
        self.hide_site_packages = hide_site_packages
        self.ro_binds = [str(Path(p).resolve()) for p in ro_binds]
        if not hide_site_packages:
            self.python = sys.executable
            venv = Path(os.path.realpath(sys.prefix))
            if venv != self.prefix:
                self.ro_binds.append(str(venv))
        self._static = self._static_args()

    def _static_args(self) -> list[str]:
        args = [self.exe, "--ro-bind", "/usr", "/usr"]
        for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
            host = Path("/") / top
            if host.is_symlink():
                args += ["--symlink", os.readlink(host), str(host)]
            elif host.is_dir():
                args += ["--ro-bind", str(host), str(host)]
        for etc in ("/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives"):
            if os.path.exists(etc):
                args += ["--ro-bind", etc, etc]
        args += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
        if not str(self.prefix).startswith("/usr/"):
            args += ["--ro-bind", str(self.prefix), str(self.prefix)]
        if self.hide_site_packages:
            for key in ("purelib", "platlib"):
                site = Path(os.path.realpath(sysconfig.get_paths(vars={
                    "base": str(self.prefix), "platbase": str(self.prefix)})[key]))
                if site.is_dir() and (str(site).startswith(str(self.prefix)) or
                                      str(site).startswith("/usr/")):
                    args += ["--tmpfs", str(site)]
            dist = Path("/usr/lib/python3/dist-packages")
            if dist.is_dir():
                args += ["--tmpfs", str(dist)]
            local_dist = Path("/usr/local/lib")
            if local_dist.is_dir():
                args += ["--tmpfs", str(local_dist)]
        for path in self.ro_binds:
            args += ["--ro-bind", path, path]
        args += ["--unshare-all", "--unshare-user", "--uid", "65534", "--gid", "65534",
                 "--hostname", "sandbox", "--cap-drop", "ALL", "--die-with-parent",
                 "--new-session"]
        return args

    def wrap(self, command: list[str], workdir: Path, limits: Limits) -> list[str]:
        return [*self._static, "--bind", str(workdir), str(workdir), "--chdir", str(workdir),
                "--setenv", "HOME", str(workdir), "--", *command]
