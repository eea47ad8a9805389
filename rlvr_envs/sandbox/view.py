"""What a sandboxed program sees of the host: the interpreter's own files and nothing else.

`interpreter_view()` lists the host paths a run mounts read-only (/usr, the top-level
/bin, /lib... links, the dynamic loader's cache, the Python installation) and the ones it
covers with an empty read-only tmpfs (site-packages and dist-packages: installed packages and
the data files they ship, HumanEval's among them). Home directories, /root, /run, /var,
the host's /tmp, the project, its caches and every other mount are absent, not read-only.
Both the bubblewrap command line and the namespace setup of the local backend and the fork
server's children are built from this one list; the mounts themselves are made per run.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from dataclasses import asdict, dataclass, field
from pathlib import Path

#: single host files a program needs (the loader's cache, time zone data)
ETC_FILES = ("/etc/ld.so.cache", "/etc/localtime")


@dataclass
class View:
    """Host paths by how they appear in the sandbox (at the same path)."""

    ro_dirs: list[str] = field(default_factory=list)
    symlinks: dict[str, str] = field(default_factory=dict)  # path → link target
    ro_files: list[str] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)        # empty read-only tmpfs over these

    def as_dict(self) -> dict:
        return asdict(self)


def python_prefix() -> Path:
    return Path(os.path.realpath(sys.base_prefix))


def interpreter_view(*, hide_site_packages: bool = True, extra_ro: tuple[str, ...] = ()) -> View:
    """The view of a run of this Python installation (`extra_ro`: more host directories)."""
    view = View(ro_dirs=["/usr"])
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        host = Path("/") / top
        if host.is_symlink():
            view.symlinks[str(host)] = os.readlink(host)
        elif host.is_dir():
            view.ro_dirs.append(str(host))
    view.ro_files = [path for path in ETC_FILES if os.path.isfile(path)]
    prefix = python_prefix()
    if not str(prefix).startswith("/usr/"):
        view.ro_dirs.append(str(prefix))
    if hide_site_packages:
        for key in ("purelib", "platlib"):
            site = Path(os.path.realpath(sysconfig.get_paths(vars={
                "base": str(prefix), "platbase": str(prefix)})[key]))
            if site.is_dir() and (site.is_relative_to(prefix) or site.is_relative_to("/usr")):
                view.hidden.append(str(site))
        for dist in Path("/usr/lib/python3/dist-packages"), *Path("/usr/local/lib").glob(
                "python3*/dist-packages"), *Path("/usr/local/lib").glob("python3*/site-packages"):
            if dist.is_dir():
                view.hidden.append(str(dist))
    view.hidden = sorted(set(view.hidden))
    view.ro_dirs += [str(Path(p).resolve()) for p in extra_ro]
    return view
