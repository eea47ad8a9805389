"""Repository snapshots: where a repo task's pristine source tree lives and how the task's
base tree (what the agent starts from) is made from it.

A snapshot is a `.tar.gz` of a source tree (top-level entries at the archive root), a plain
directory, or a git repository plus the task's `base_commit` (SWE-bench style). A task's
metadata names it as:

- ``shipped:<file>``  — `tasks/repo/data/snapshots/<file>` (installed with the package)
- ``pack:<pack>/<file>`` — `tasks/repo/data/packs/<pack>/snapshots/<file>` (a shipped pack)
- ``cache:<file>``    — `<cache dir>/snapshots/<file>` (tasks built by `rlvr tasks build-repo`)
- ``git:<path>``      — a git checkout; the tree at `base_commit` is exported (history dropped)
- an absolute path to a `.tar.gz` or a directory.

The base tree is the snapshot with the task's `setup_patch` applied (the injected bug of a
synthesised task). Base trees are extracted once per process into one cache directory,
verified by digest whenever they are used, and copied per episode.
"""

from __future__ import annotations

import atexit
import hashlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import threading
from pathlib import Path
from typing import Mapping

SHIPPED_DIR = Path(__file__).resolve().parent / "data"
#: files never copied into a base tree: caches and build leftovers that could carry the fix
JUNK_NAMES = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox", ".nox",
              ".eggs", ".git", ".hg", ".svn", "build", "dist", ".coverage"}
JUNK_SUFFIXES = (".pyc", ".pyo", ".egg-info", ".orig", ".rej")


def cache_dir() -> Path:
    """Where built repo tasks are cached: $RLVR_CACHE_DIR/repo or ~/.cache/rlvr-envs/repo."""
    root = os.environ.get("RLVR_CACHE_DIR")
    base = Path(root) if root else Path.home() / ".cache" / "rlvr-envs"
    return base / "repo"


def resolve_snapshot(location: str) -> Path:
    """The filesystem path a snapshot location names (see the module docstring)."""
    if not isinstance(location, str) or not location:
        raise ValueError(f"a repo snapshot location must be a non-empty string, got {location!r}")
    if location.startswith("shipped:"):
        path = SHIPPED_DIR / "snapshots" / location.split(":", 1)[1]
    elif location.startswith("pack:"):
        pack, _, name = location.split(":", 1)[1].partition("/")
        if not pack or not name or ".." in (pack, name) or "/" in name:
            raise ValueError(f"a pack snapshot location is pack:NAME/FILE, got {location!r}")
        path = SHIPPED_DIR / "packs" / pack / "snapshots" / name
    elif location.startswith("cache:"):
        path = cache_dir() / "snapshots" / location.split(":", 1)[1]
    elif location.startswith("git:"):
        path = Path(location.split(":", 1)[1])
    else:
        path = Path(location)
    if not path.exists():
        raise FileNotFoundError(f"repo snapshot {location!r} not found at {path}")
    return path


def is_junk(rel_path: str) -> bool:
    parts = Path(rel_path).parts
    return any(p in JUNK_NAMES or p.endswith(JUNK_SUFFIXES) for p in parts)


def pack_tree(tree: Path, out_file: Path) -> str:
    """Write `tree` as a deterministic .tar.gz (sorted, zeroed times and owners, no junk);
    return its sha256."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(tree.rglob("*")):
            rel = path.relative_to(tree).as_posix()
            if is_junk(rel) or path.is_dir() and not path.is_symlink():
                continue
            info = tar.gettarinfo(str(path), arcname=rel)
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            info.mode = 0o755 if info.mode & 0o111 else 0o644
            if info.isreg():
                with open(path, "rb") as fh:
                    tar.addfile(info, fh)
            elif info.issym():
                tar.addfile(info)
    import gzip
    data = gzip.compress(buf.getvalue(), compresslevel=9, mtime=0)
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def _safe_extract(archive: Path, dest: Path) -> None:
    with tarfile.open(archive, "r:gz") as tar:
        tar.extractall(dest, filter="data")


def export_git_tree(repo: Path, commit: str, dest: Path) -> None:
    """The tree of `repo` at `commit`, without any history (git archive)."""
    archive = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", commit],
                             capture_output=True, check=False)
    if archive.returncode != 0:
        raise ValueError(f"cannot export commit {commit} of {repo}: "
                         f"{archive.stderr.decode(errors='replace').strip()}")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout), mode="r:") as tar:
        tar.extractall(dest, filter="data")


def apply_patch(tree: Path, patch: str, *, what: str = "patch") -> None:
    """Apply a unified diff (git format) to a plain directory; fail loudly if it does not apply.
    git's own checks stay on: a path that leaves the directory, or a write beyond a symbolic
    link, is refused (a submitted patch is untrusted and applied on the host)."""
    if not patch.strip():
        return
    proc = subprocess.run(["git", "apply", "--whitespace=nowarn", "-"],
                          input=patch.encode("utf-8"), cwd=tree, capture_output=True,
                          env=_plain_git_env())
    if proc.returncode != 0:
        raise ValueError(f"the {what} does not apply to {tree}: "
                         f"{proc.stderr.decode(errors='replace').strip()[:2000]}")


def _plain_git_env() -> dict[str, str]:
    """git with no user or system configuration (hooks, templates, aliases) in play."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0")
    return env


def materialise_snapshot(location: str, dest: Path, *, base_commit: str | None = None) -> None:
    """Write the snapshot's pristine tree into the empty directory `dest` (no junk files)."""
    source = resolve_snapshot(location)
    if location.startswith("git:") or (source / ".git").exists():
        if not base_commit:
            raise ValueError(f"snapshot {location!r} is a git repository: the task needs a "
                             f"base_commit to export")
        export_git_tree(source, base_commit, dest)
    elif source.is_dir():
        shutil.copytree(source, dest, dirs_exist_ok=True, symlinks=True,
                        ignore=lambda d, names: [n for n in names if is_junk(n)])
    elif source.name.endswith((".tar.gz", ".tgz")):
        _safe_extract(source, dest)
    else:
        raise ValueError(f"repo snapshot {source} is neither a directory, a git repository "
                         f"nor a .tar.gz")
    for path in sorted(dest.rglob("*"), reverse=True):
        if path.exists() and is_junk(path.relative_to(dest).as_posix()):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()


def tree_digest(root: Path) -> str:
    """sha256 over every entry of `root` (relative path, kind, bytes or link target), walked
    without following links: two trees have the same digest iff they hold the same files."""
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        here = Path(dirpath)
        for name in sorted(filenames + [d for d in dirnames if (here / d).is_symlink()]):
            path = here / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                digest.update(f"L\0{rel}\0{os.readlink(path)}\0".encode())
            elif path.is_file():
                digest.update(f"F\0{rel}\0".encode())
                with open(path, "rb") as fh:
                    for block in iter(lambda: fh.read(1 << 20), b""):
                        digest.update(block)
                digest.update(b"\0")
    return digest.hexdigest()


def _tree_bytes(root: Path) -> int:
    return sum(p.lstat().st_size for p in root.rglob("*"))


class BaseTreeCache:
    """Base trees (snapshot + setup patch), built once and kept in one cache directory per
    process (`rlvr-repo-base-*` in the temporary directory, which no sandbox shows an agent),
    keyed by their content, each checked against the digest taken when it was built every time
    it is handed out (a tree changed since is rebuilt), the least recently used evicted past
    `max_bytes`, and the whole directory removed when the last scorer using it closes (or at
    interpreter exit)."""

    def __init__(self, root: Path | None = None, *, max_bytes: int | None = None):
        self._root, self._own_root = root, root is None
        self.max_bytes = max_bytes if max_bytes is not None else int(
            os.environ.get("RLVR_REPO_CACHE_MAX_MB", "2048")) * 2**20
        self._trees: dict[str, tuple[Path, str, int]] = {}  # key -> (tree, digest, bytes)
        self._lock = threading.RLock()
        self._users = 0
        self.rebuilt = 0  # trees found changed and rebuilt (tests, logs)

    @property
    def root(self) -> Path:
        with self._lock:
            if self._root is None:
                self._root = Path(tempfile.mkdtemp(prefix="rlvr-repo-base-"))
                atexit.register(self.clear)
            return self._root

    def acquire(self) -> None:
        """A scorer starts using the cache."""
        with self._lock:
            self._users += 1

    def release(self) -> None:
        """A scorer is done; the last one out removes the cache directory."""
        with self._lock:
            self._users = max(0, self._users - 1)
            if self._users == 0:
                self.clear()

    def base_tree(self, metadata: Mapping[str, object]) -> Path:
        """The base tree of a task, verified against its digest (built on first use)."""
        key = hashlib.sha256(repr((metadata["snapshot"], metadata.get("base_commit"),
                                   metadata.get("setup_patch", ""))).encode()).hexdigest()[:20]
        with self._lock:
            entry = self._trees.pop(key, None)
            if entry is not None:
                tree, digest, _ = entry
                if tree.is_dir() and tree_digest(tree) == digest:
                    self._trees[key] = entry  # most recently used last
                    return tree
                self.rebuilt += 1
            dest = self.root / key
            if dest.exists() or dest.is_symlink():
                shutil.rmtree(dest, ignore_errors=True)
                if dest.is_symlink():
                    dest.unlink()
            dest.mkdir(parents=True)
            commit = metadata.get("base_commit")
            materialise_snapshot(str(metadata["snapshot"]), dest,
                                 base_commit=str(commit) if commit else None)
            apply_patch(dest, str(metadata.get("setup_patch", "") or ""), what="setup patch")
            self._trees[key] = (dest, tree_digest(dest), _tree_bytes(dest))
            self._evict(keep=key)
            return dest

    def _evict(self, keep: str) -> None:
        total = sum(size for _, _, size in self._trees.values())
        for key in list(self._trees):
            if total <= self.max_bytes:
                break
            if key == keep:
                continue
            tree, _, size = self._trees.pop(key)
            shutil.rmtree(tree, ignore_errors=True)
            total -= size

    def clear(self) -> None:
        with self._lock:
            if self._root is not None and self._own_root:
                shutil.rmtree(self._root, ignore_errors=True)
                self._root = None
            elif self._root is not None:
                for tree, _, _ in self._trees.values():
                    shutil.rmtree(tree, ignore_errors=True)
            self._trees = {}


BASE_TREES = BaseTreeCache()
