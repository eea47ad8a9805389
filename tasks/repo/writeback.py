"""Writing an agent's changes onto a pristine tree without ever following a link.

The grader copies the agent's changes onto a fresh copy of the base tree on the host, as the
trainer's user. Nothing in that step may act outside the tree, whatever links the agent made:

- every path is walked one component at a time from a descriptor of the tree's root, each
  directory opened with `O_DIRECTORY | O_NOFOLLOW`, so no symlink (the agent's or the
  snapshot's) is ever traversed; a path whose parent is not a real directory is left out;
- the whole change set is known before anything is done: deletions first (deepest first,
  never through a link), then files (created fresh with `O_EXCL | O_NOFOLLOW`), then links;
- a link is kept only when resolving it inside the finished tree, link by link with
  `readlink` and never a real lookup, stays inside the tree at every step of the chain; an
  absolute target, or one that climbs above the root at any point, is removed.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path
from typing import Callable, Iterable, Mapping

#: the most links one resolution may pass through (the kernel's own limit is 40)
MAX_LINK_HOPS = 40
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePath(ValueError):
    """A change names a path that cannot be written without leaving the tree."""


def path_parts(rel: str) -> list[str]:
    """The components of a tree-relative path; UnsafePath for absolute paths, `.`/`..`,
    empty components and anything under a `.git` directory."""
    parts = rel.split("/")
    if not rel or rel.startswith("/") or any(p in ("", ".", "..", ".git") for p in parts):
        raise UnsafePath(f"unsafe path in the change set: {rel!r}")
    return parts


def open_dir(root_fd: int, parts: Iterable[str], *, create: bool = False) -> int | None:
    """A descriptor of the real directory root/parts (None when some component is missing, a
    file or a link). With `create`, missing components are made. The caller closes it."""
    fd = os.dup(root_fd)
    try:
        for part in parts:
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    os.close(fd)
                    return None
                os.mkdir(part, 0o755, dir_fd=fd)
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except (NotADirectoryError, OSError):  # ELOOP: a link; ENOTDIR: a file
                os.close(fd)
                return None
            os.close(fd)
            fd = child
        return fd
    except BaseException:
        os.close(fd)
        raise


def remove_entry(dir_fd: int, name: str) -> None:
    """Remove `name` in the directory `dir_fd` (a file, a link itself, or a whole directory
    with shutil's descriptor-based, link-safe rmtree); nothing if it is absent."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(name, dir_fd=dir_fd)
    else:
        os.unlink(name, dir_fd=dir_fd)


def link_stays_inside(root_fd: int, rel: str) -> bool:
    """Whether the link at `rel` resolves inside the tree at every step of its chain.

    The resolution is simulated: components are looked up with `lstat`/`readlink` relative to
    real directories opened without following links; a link met on the way splices its target
    in. An absolute target, or `..` above the root at any point, means outside. Components
    that do not exist are taken as plain directories (a dangling link must not be able to
    leave the tree once something creates the missing part)."""
    parts = path_parts(rel)
    stack = parts[:-1]
    pending = [parts[-1]]
    hops = 0
    while pending:
        part = pending.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if not stack:
                return False
            stack.pop()
            continue
        fd = open_dir(root_fd, stack)
        target = None
        if fd is not None:
            try:
                st = os.stat(part, dir_fd=fd, follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode):
                    target = os.readlink(part, dir_fd=fd)
            except FileNotFoundError:
                pass
            finally:
                os.close(fd)
        if target is None:
            stack.append(part)
            continue
        hops += 1
        if hops > MAX_LINK_HOPS or target.startswith("/") or not target:
            return False
        pending = target.split("/") + pending
    return True


def write_tree_changes(tree: Path, written: Mapping[str, bytes | str], deleted: Iterable[str],
                       *, skip: Callable[[str], bool] = lambda rel: False) -> list[str]:
    """Apply the agent's changes to `tree` (a fresh copy of the base tree): `written` maps a
    relative path to file bytes or to a symlink target (str), `deleted` lists removed paths.
    Paths for which `skip(rel)` is true, unsafe paths, writes under a non-directory and links
    that leave the tree are left out; returns those paths, sorted."""
    left_out: set[str] = set()
    plan_delete, plan_files, plan_links = [], [], []
    for rel in sorted(set(written) | set(deleted)):
        if skip(rel):
            left_out.add(rel)
            continue
        try:
            parts = path_parts(rel)
        except UnsafePath:
            left_out.add(rel)
            continue
        if rel in written:
            data = written[rel]
            (plan_links if isinstance(data, str) else plan_files).append((parts, data))
        else:
            plan_delete.append(parts)
    root_fd = os.open(tree, _DIR_FLAGS)
    try:
        for parts in sorted(plan_delete, key=len, reverse=True):
            fd = open_dir(root_fd, parts[:-1])
            if fd is None:  # its parent is already gone (or never was a real directory)
                continue
            try:
                remove_entry(fd, parts[-1])
            finally:
                os.close(fd)
        for parts, data in plan_files + plan_links:
            fd = open_dir(root_fd, parts[:-1], create=True)
            if fd is None:
                left_out.add("/".join(parts))
                continue
            try:
                remove_entry(fd, parts[-1])
                if isinstance(data, str):
                    os.symlink(data, parts[-1], dir_fd=fd)
                    continue
                out = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                              | os.O_CLOEXEC, 0o644, dir_fd=fd)
                with os.fdopen(out, "wb") as fh:
                    fh.write(data)
            finally:
                os.close(fd)
        # links are judged on the finished tree, all of them together
        escaping = [parts for parts, _ in plan_links if "/".join(parts) not in left_out
                    and not link_stays_inside(root_fd, "/".join(parts))]
        for parts in escaping:
            left_out.add("/".join(parts))
            fd = open_dir(root_fd, parts[:-1])
            if fd is not None:
                try:
                    remove_entry(fd, parts[-1])
                finally:
                    os.close(fd)
    finally:
        os.close(root_fd)
    return sorted(left_out)


def read_entry(path: Path) -> bytes | str | None:
    """A file's bytes or a link's target, read without following a link at `path` itself;
    None for anything else (directories, fifos, sockets, devices)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return os.readlink(path)
    if not stat.S_ISREG(st.st_mode):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        return fh.read()
