"""The repo-editing tools: bash, view, str_replace, create, run_tests, submit.

Their JSON schemas go to the model (`info["tools"]`); their effects run on one episode's
workspace. `bash` and `run_tests` run inside the sandbox with the workspace as working
directory; the file tools run here but refuse any path that resolves outside the workspace,
and open what they read or write one component at a time from the workspace's root without
following a link (`writeback.open_dir`, then `O_NOFOLLOW | O_NONBLOCK`), refusing anything
that is not a regular file: a symlink planted or swapped in by `bash` cannot make them touch
host files, and a FIFO cannot block the trainer. They read at most MAX_FILE_BYTES of a file
and list at most MAX_LISTED entries of a directory.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from rlvr_envs.core.multiturn import ToolCallError, ToolSpec
from rlvr_envs.tasks.repo.writeback import open_dir

if TYPE_CHECKING:
    from rlvr_envs.sandbox.base import Sandbox

TOOL_SPECS = [
    ToolSpec("bash", "Run a bash command in the repository (your working directory). No "
             "network. `python`, `python3` and `pytest` are the task's interpreter with the "
             "test dependencies. stdout and stderr are merged; a long output shows its first "
             "and last part with a line saying how much was cut.",
             {"type": "object", "properties": {
                 "command": {"type": "string", "description": "the command line"},
                 "timeout": {"type": "integer", "description": "seconds (default 30, max 120)"}},
              "required": ["command"]}),
    ToolSpec("view", "Show a file with line numbers (optionally a line range), or list a "
             "directory.",
             {"type": "object", "properties": {
                 "path": {"type": "string", "description": "path relative to the repository"},
                 "start_line": {"type": "integer", "description": "first line (1-based)"},
                 "end_line": {"type": "integer", "description": "last line (inclusive)"}},
              "required": ["path"]}),
    ToolSpec("str_replace", "Replace the one occurrence of old_str in a file with new_str; "
             "answers with the edited lines, numbered, and a few lines around them.",
             {"type": "object", "properties": {
                 "path": {"type": "string"}, "old_str": {"type": "string"},
                 "new_str": {"type": "string"}},
              "required": ["path", "old_str", "new_str"]}),
    ToolSpec("create", "Create a file (or overwrite it) with the given content.",
             {"type": "object", "properties": {
                 "path": {"type": "string"}, "content": {"type": "string"}},
              "required": ["path", "content"]}),
    ToolSpec("run_tests", "Run tests with pytest and show its output: by default the task's "
             "visible tests; or the given test files, directories or node ids "
             "(e.g. tests/test_x.py::test_y); [\".\"] runs the whole visible suite.",
             {"type": "object", "properties": {
                 "tests": {"type": "array", "items": {"type": "string"},
                           "description": "test files, directories or node ids, relative "
                                          "to the repository"}},
              "required": []}),
    ToolSpec("submit", "Submit the repository as it is now for grading. Ends the episode.",
             {"type": "object", "properties": {}, "required": []}),
]

MAX_VIEW_LINES = 400


def inside(workspace: Path, rel: str) -> Path:
    """`rel` resolved inside the workspace, or ToolCallError."""
    if not isinstance(rel, str) or not rel.strip():
        raise ToolCallError("path must be a non-empty string relative to the repository")
    root = workspace.resolve()
    target = (root / rel).resolve()
    if target != root and root not in target.parents:
        raise ToolCallError(f"path {rel!r} is outside the repository")
    if ".git" in target.relative_to(root).parts:
        raise ToolCallError("the .git directory is not editable with file tools")
    return target


MAX_FILE_BYTES = 8 << 20
MAX_LISTED = 2000
_NOT_REGULAR = "is not a regular file (a directory, link, FIFO, socket or device)"


def _dir_fd(workspace: Path, parts: tuple[str, ...], *, create: bool = False) -> int | None:
    """A descriptor of the real directory workspace/parts, walked from the workspace's root
    without following a link (None when missing or not a real directory); caller closes it."""
    root_fd = os.open(workspace.resolve(), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return open_dir(root_fd, parts, create=create)
    finally:
        os.close(root_fd)


def _parts(workspace: Path, path: str) -> tuple[str, ...]:
    return inside(workspace, path).relative_to(workspace.resolve()).parts


class _Missing(ToolCallError):
    """No file at the path (as opposed to something there that is not a regular file)."""


def _open_file(workspace: Path, path: str, flags: int) -> int:
    """`path` opened with `flags`, never through a link; ToolCallError unless a regular file."""
    creating = bool(flags & os.O_CREAT)
    parts = _parts(workspace, path)
    if not parts:
        raise ToolCallError(f"{path!r} is the repository's directory, not a file")
    parent = _dir_fd(workspace, parts[:-1], create=creating)
    if parent is None:
        if creating:
            raise ToolCallError(f"cannot create {path!r}: a directory on its way is a file or "
                                "a link")
        raise _Missing(f"no file {path!r}")
    try:
        fd = os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644,
                     dir_fd=parent)
    except FileNotFoundError:
        raise _Missing(f"no file {path!r}") from None
    except OSError:  # ELOOP (a link), ENXIO (a FIFO with no reader), EISDIR, ...
        raise ToolCallError(f"{path!r} {_NOT_REGULAR}") from None
    finally:
        os.close(parent)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ToolCallError(f"{path!r} {_NOT_REGULAR}")
    return fd


def read_file(workspace: Path, path: str, *, whole: bool = False) -> tuple[str, bool]:
    """The text of a file (bad bytes kept as surrogate escapes) and whether it was cut at
    MAX_FILE_BYTES; with `whole`, a larger file is a ToolCallError."""
    with os.fdopen(_open_file(workspace, path, os.O_RDONLY), "rb") as fh:
        data = fh.read(MAX_FILE_BYTES + 1)
    cut = len(data) > MAX_FILE_BYTES
    if cut and whole:
        raise ToolCallError(f"{path} is larger than {MAX_FILE_BYTES >> 20} MiB; edit it with bash")
    return data[:MAX_FILE_BYTES].decode("utf-8", errors="surrogateescape"), cut


def write_file(workspace: Path, path: str, text: str) -> bool:
    """Write `text` over a regular file (made, with its directories, when missing); return
    whether it was there before."""
    data = text.encode("utf-8", errors="surrogateescape")
    try:
        fd, existed = _open_file(workspace, path, os.O_WRONLY), True
    except _Missing:
        fd, existed = _open_file(workspace, path, os.O_WRONLY | os.O_CREAT), False
    with os.fdopen(fd, "wb") as fh:
        fh.truncate(0)
        fh.write(data)
    return existed


def _listing(workspace: Path, path: str) -> str | None:
    """A directory's entries (subdirectories marked `/`), or None when `path` is no real
    directory."""
    fd = _dir_fd(workspace, _parts(workspace, path))
    if fd is None:
        return None
    try:
        shown = []
        with os.scandir(fd) as entries:
            for entry in entries:
                if entry.name in (".git", "__pycache__"):
                    continue
                if len(shown) == MAX_LISTED:
                    shown.append(f"[... more entries: only the first {MAX_LISTED} are listed ...]")
                    break
                shown.append(entry.name + ("/" if entry.is_dir(follow_symlinks=False) else ""))
    finally:
        os.close(fd)
    return "\n".join(sorted(shown[:MAX_LISTED]) + shown[MAX_LISTED:]) or "(empty directory)"


def view(workspace: Path, path: str, start_line: int | None = None,
         end_line: int | None = None) -> str:
    listing = _listing(workspace, path)
    if listing is not None:
        return listing
    text, cut = read_file(workspace, path)
    lines = text.splitlines()
    start = max(1, start_line or 1)
    end = min(len(lines), end_line if end_line is not None else start + MAX_VIEW_LINES - 1)
    if start > max(1, len(lines)) or end < start:
        raise ToolCallError(f"{path} has {len(lines)} lines; asked for {start}..{end}")
    body = "\n".join(f"{n:6d}\t{_shown(lines[n - 1])}" for n in range(start, end + 1))
    more = f"\n[... {len(lines) - end} more lines ...]" if end < len(lines) else ""
    if cut:
        more += f"\n[... the file goes on past {MAX_FILE_BYTES >> 20} MiB: only that much is read ...]"
    return body + more


def _shown(line: str) -> str:
    """A line for the model: bytes that are not UTF-8 as U+FFFD."""
    return line.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")


def str_replace(workspace: Path, path: str, old_str: str, new_str: str) -> str:
    text, _ = read_file(workspace, path, whole=True)
    count = text.count(old_str) if old_str else 0
    if count != 1:
        raise ToolCallError(f"old_str must occur exactly once in {path}; it occurs {count} times")
    new_text = text.replace(old_str, new_str, 1)
    write_file(workspace, path, new_text)
    line = text[:text.index(old_str)].count("\n") + 1
    return (f"replaced 1 occurrence in {path} (line {line}); the file now reads:\n"
            + snippet(new_text, line, line + new_str.count("\n")))


SNIPPET_CONTEXT = 4


def snippet(text: str, first: int, last: int, context: int = SNIPPET_CONTEXT) -> str:
    """Lines first..last (1-based) of `text` with `context` lines around, numbered."""
    lines = text.splitlines()
    start, end = max(1, first - context), min(len(lines), last + context)
    return "\n".join(f"{n:6d}\t{lines[n - 1]}" for n in range(start, end + 1))


def create(workspace: Path, path: str, content: str) -> str:
    existed = write_file(workspace, path, content)
    return f"{'overwrote' if existed else 'created'} {path} ({len(content)} characters)"


def select_tests(workspace: Path, visible: list[str], asked: list[str] | None) -> list[str]:
    """What `run_tests` runs: the task's visible tests by default, else the asked test files,
    directories or node ids, each inside the repository (never a pytest option, nor an
    `@file` of options)."""
    if not asked:
        if not visible:
            raise ToolCallError("this task names no visible tests; pass test files or ids")
        return list(visible)
    selected = []
    for test in asked:
        if not isinstance(test, str) or not test.strip() or test.startswith(("-", "@")):
            raise ToolCallError(f"{test!r} is not a test file, directory or node id")
        path = test.split("::", 1)[0]
        inside(workspace, path or ".")
        selected.append(test)
    return selected


#: the bash tool's wrapper: runs the command with a deadline, merges its output into a file
#: and prints it whole, or its real head and real tail with a line saying what was cut
BASH_WRAPPER = r"""
out=$(mktemp "${TMPDIR:-/tmp}/rlvr-out.XXXXXX") || exit 125
timeout -k 1 "$2" bash -c "$1" >"$out" 2>&1 </dev/null
code=$?
size=$(stat -c %s "$out")
if [ "$size" -le "$3" ]; then
  cat "$out"
else
  head -c "$4" "$out"
  printf '\n[... output cut: %s bytes in all, the first %s and the last %s shown ...]\n' \
    "$size" "$4" "$4"
  tail -c "$4" "$out"
fi
rm -f "$out"
if [ "$code" -eq 124 ]; then printf '\n[timed out after %s s: killed]\n' "$2"; fi
exit $code
"""


def output_keep(max_chars: int) -> int:
    """Bytes kept of each end of a cut output that must fit in `max_chars` characters."""
    return max(256, (max_chars - 200) // 2)


def bash_argv(command: str, timeout: float, max_chars: int) -> list[str]:
    """The argv of one `bash` tool call (see BASH_WRAPPER): at most `max_chars` bytes of
    output, half head and half tail when cut."""
    keep = output_keep(max_chars)
    return ["bash", "-c", BASH_WRAPPER, "rlvr-bash", command, f"{timeout:g}",
            str(2 * keep), str(keep)]


def tool_env(sandbox: Sandbox) -> dict[str, str]:
    """Environment of every agent command: the task's interpreter first on PATH (as `python`,
    `python3` and `pytest` where it is a virtualenv or an installation's bin directory), user
    site-packages off, HOME outside the repository."""
    from rlvr_envs.sandbox.base import BASE_ENV
    env = {"PYTHONNOUSERSITE": "1", "HOME": "/tmp"}
    if not hasattr(sandbox, "session"):  # a Docker session sets its own PATH
        python_bin = str(getattr(sandbox, "bin_dir", None) or "") or \
            os.path.dirname(getattr(sandbox, "python", "") or "")
        if python_bin:
            env["PATH"] = f"{python_bin}:{BASE_ENV['PATH']}"
    return env
