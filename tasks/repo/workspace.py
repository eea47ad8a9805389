"""History-safe git workspaces and the agent's changes to them.

A workspace is a copy of a task's base tree in a fresh `git init` with exactly one commit (the
base; fixed author, committer and dates, so its hash is a pure function of the tree). It has
no other commit, tag, branch, reflog entry, stash, packed ref or loose object: nothing from
which the fix could be recovered. `audit_history` proves it with git's own tools
(`git rev-list --all`, `git fsck --unreachable --no-reflogs`, `git count-objects -v`) and by
checking that no blob of the fixed files is in the object store; building a workspace fails
loudly (`HistoryLeak`) if anything is off.

`collect_changes` reads what the agent changed by comparing the workspace's files with the
base tree on disk — never by trusting the workspace's (agent-writable) git state.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from rlvr_envs.tasks.repo.disk_budget import walk_entries
from rlvr_envs.tasks.repo.snapshot import _plain_git_env, is_junk
from rlvr_envs.tasks.repo.writeback import read_entry, write_tree_changes

BRANCH = "main"
_IDENTITY = {
    "GIT_AUTHOR_NAME": "rlvr", "GIT_AUTHOR_EMAIL": "rlvr@localhost",
    "GIT_COMMITTER_NAME": "rlvr", "GIT_COMMITTER_EMAIL": "rlvr@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}


class HistoryLeak(RuntimeError):
    """The workspace repository holds something beyond its single base commit."""


def git(args: list[str], cwd: Path, *, input: bytes | None = None, check: bool = True,
        extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {**_plain_git_env(), **_IDENTITY, **(extra_env or {})}
    proc = subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-c", "gc.auto=0",
                           "-c", "core.autocrlf=false", *args], cwd=cwd, input=input,
                          capture_output=True, env=env)
    if check and proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {cwd}: "
                           f"{proc.stderr.decode(errors='replace').strip()[:1000]}")
    return proc


def init_history_safe_repo(tree: Path) -> str:
    """Turn the directory `tree` into a one-commit repository; return the commit hash."""
    if (tree / ".git").exists():
        raise HistoryLeak(f"{tree} already holds a .git; a workspace starts from a plain tree")
    git(["init", "-q", "--template=", f"--initial-branch={BRANCH}"], tree)
    # a repo-local excludes file would hide files from `add -A`; the base commit holds all
    git(["add", "-A", "--force", "."], tree)
    git(["commit", "-q", "--no-verify", "--no-gpg-sign", "-m", "base"], tree)
    shutil.rmtree(tree / ".git" / "logs", ignore_errors=True)  # no reflog, not even the base
    for leftover in ("ORIG_HEAD", "FETCH_HEAD", "COMMIT_EDITMSG", "description"):
        (tree / ".git" / leftover).unlink(missing_ok=True)
    return git(["rev-parse", "HEAD"], tree).stdout.decode().strip()


def blob_hashes(contents: Iterable[bytes], cwd: Path) -> list[str]:
    """git blob ids of the given file contents (computed, not written)."""
    out = []
    for data in contents:
        out.append(git(["hash-object", "--stdin"], cwd, input=data).stdout.decode().strip())
    return out


def audit_history(repo: Path, expected_commit: str | None = None,
                  forbidden_blobs: Iterable[str] = ()) -> dict[str, object]:
    """Prove the workspace history holds only the base commit; raise HistoryLeak otherwise.
    Returns the figures checked (for logs and tests)."""
    problems: list[str] = []
    commits = git(["rev-list", "--all", "--reflog"], repo).stdout.decode().split()
    if len(commits) != 1:
        problems.append(f"{len(commits)} commits reachable (want exactly the base)")
    head = git(["rev-parse", "HEAD"], repo).stdout.decode().strip()
    if expected_commit and head != expected_commit:
        problems.append(f"HEAD is {head}, expected base {expected_commit}")
    refs = git(["for-each-ref", "--format=%(refname)"], repo).stdout.decode().split()
    if refs != [f"refs/heads/{BRANCH}"]:
        problems.append(f"refs {refs} (want only refs/heads/{BRANCH}: no tags, stash, remotes)")
    unreachable = git(["fsck", "--unreachable", "--no-reflogs", "--no-progress"], repo)
    if unreachable.stdout.strip():
        problems.append(f"unreachable objects: {unreachable.stdout.decode()[:300]}")
    counts = dict(line.split(": ", 1) for line in
                  git(["count-objects", "-v"], repo).stdout.decode().splitlines())
    reachable = len(git(["rev-list", "--objects", "--all"], repo).stdout.decode().splitlines())
    if int(counts.get("packs", 0)) or int(counts.get("in-pack", 0)):
        problems.append(f"packed objects present: {counts}")
    if int(counts.get("count", 0)) != reachable:
        problems.append(f"{counts.get('count')} loose objects but {reachable} reachable")
    git_dir = repo / ".git"
    for leftover in ("logs", "packed-refs", "refs/stash", "ORIG_HEAD", "FETCH_HEAD"):
        if (git_dir / leftover).exists():
            problems.append(f".git/{leftover} exists")
    present = [b for b in forbidden_blobs
               if git(["cat-file", "-e", b], repo, check=False).returncode == 0]
    if present:
        problems.append(f"the fixed version of a file is in the object store ({present[:3]})")
    if problems:
        raise HistoryLeak(f"workspace {repo} would leak the fix: " + "; ".join(problems))
    return {"commits": len(commits), "refs": refs, "loose_objects": int(counts["count"]),
            "reachable_objects": reachable}


def build_workspace(base_tree: Path, dest: Path, *, expected_commit: str | None = None,
                    forbidden_blobs: Iterable[str] = ()) -> str:
    """Copy `base_tree` to the new directory `dest`, make it a history-safe repository and
    audit it. Returns the base commit hash."""
    shutil.copytree(base_tree, dest, symlinks=True)
    commit = init_history_safe_repo(dest)
    audit_history(dest, expected_commit, forbidden_blobs)
    return commit


# -- the agent's changes ------------------------------------------------------------------------


@dataclass
class Changes:
    """Files the agent added or modified (path → bytes, or a symlink target as str) and
    deleted, relative to the base tree."""

    written: dict[str, bytes | str] = field(default_factory=dict)
    deleted: set[str] = field(default_factory=set)
    total_bytes: int = 0

    @property
    def paths(self) -> list[str]:
        return sorted(set(self.written) | self.deleted)


class WorkspaceTooLarge(ValueError):
    pass


def _snapshot(root: Path) -> dict[str, Path]:
    """Relative path → path of every file and symlink under root (no .git, no junk);
    symlinked directories are entries, not followed."""
    entries: dict[str, Path] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        rel_dir = here.relative_to(root)
        keep = []
        for d in dirnames:
            rel = (rel_dir / d).as_posix()
            if rel == ".git" or is_junk(rel):
                continue
            if (here / d).is_symlink():
                entries[rel] = here / d
            else:
                keep.append(d)
        dirnames[:] = keep
        for f in filenames:
            rel = (rel_dir / f).as_posix()
            if not is_junk(rel):
                entries[rel] = here / f
    return entries


def _content(path: Path) -> bytes | str | None:
    return read_entry(path)  # fifos, sockets, devices: None (not source)


#: the deepest directory nesting a workspace may have (walkers recurse; a real repository's
#: tree is a few levels deep)
MAX_DEPTH = 64


def check_depth(root: Path, limit: int = MAX_DEPTH) -> None:
    """WorkspaceTooLarge when directories under `root` nest deeper than `limit`."""
    if any(depth > limit for _, depth in walk_entries(root)):
        raise WorkspaceTooLarge(f"the workspace nests directories deeper than {limit} levels")


def remove_tree(path: Path) -> None:
    """Remove a directory tree, however deep (shutil.rmtree recurses: a tree nested past
    Python's recursion limit would stay on disk and raise) and whatever permissions the
    agent left on it (a directory it made unreadable or unwritable, `chmod 000 d`, is ours:
    its owner gets them back first, links never followed; else a trainer that is not root
    would leave the episode's workspace, up to its disk budget, on the disk)."""
    try:
        shutil.rmtree(path, ignore_errors=True)
    except RecursionError:
        pass
    if os.path.lexists(path):
        subprocess.run(["chmod", "-R", "u+rwx", "--", str(path)], capture_output=True,
                       check=False)
        subprocess.run(["rm", "-rf", "--", str(path)], capture_output=True, check=False)


def collect_changes(base_tree: Path, workspace: Path, *, max_bytes: int = 50 * 2**20) -> Changes:
    """What differs between the workspace and the base tree, file by file."""
    check_depth(workspace)
    base, work = _snapshot(base_tree), _snapshot(workspace)
    changes = Changes()
    for rel, path in work.items():
        if not path.is_symlink() and path.is_file() and path.stat().st_size > max_bytes:
            raise WorkspaceTooLarge(f"{rel} is larger than {max_bytes} bytes")
        data = _content(path)
        if data is None:
            continue
        if rel in base and _content(base[rel]) == data:
            continue
        changes.written[rel] = data
        changes.total_bytes += len(data)
        if changes.total_bytes > max_bytes:
            raise WorkspaceTooLarge(f"the workspace changes exceed {max_bytes} bytes")
    changes.deleted = {rel for rel in base if rel not in work}
    return changes


def write_changes(tree: Path, changes: Changes, *, skip=lambda rel: False) -> list[str]:
    """Apply `changes` to `tree` without following any link (`writeback.write_tree_changes`),
    leaving out paths for which `skip(rel)` is true and links that leave the tree. Returns the
    paths left out."""
    return write_tree_changes(tree, changes.written, changes.deleted, skip=skip)


def diff_trees(before: Path, after: Path) -> str:
    """A git-format patch (binary-safe) turning `before` into `after`, computed in a scratch
    git directory so neither tree's own .git is read or touched."""
    with tempfile.TemporaryDirectory(prefix="rlvr-diff-") as scratch:
        git_dir = Path(scratch) / "git"
        git(["init", "-q", "--bare", "--template=", str(git_dir)], Path(scratch))
        trees = []
        for tree in (before, after):
            env = {"GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(tree),
                   "GIT_INDEX_FILE": str(Path(scratch) / f"index{len(trees)}")}
            git(["add", "-A", "--force", "."], tree, extra_env=env)
            # the repo's own .git never enters (git refuses it); caches are junk, drop them
            trees.append(git(["write-tree"], tree, extra_env=env).stdout.decode().strip())
        env = {"GIT_DIR": str(git_dir)}
        return git(["diff-tree", "-p", "--binary", "--full-index", "-M", trees[0], trees[1]],
                   Path(scratch), extra_env=env).stdout.decode("utf-8", "replace")
