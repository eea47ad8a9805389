"""The repo-editing tools: bash, view, str_replace, create, run_tests, submit.

Their JSON schemas go to the model (`info["tools"]`); their effects run on one episode's
workspace. `bash` and `run_tests` run inside the sandbox with the workspace as working
directory; the file tools run here but refuse any path that resolves outside the workspace
(a symlink planted by `bash` cannot make them read or write host files).
"""

from __future__ import annotations

import os
from pathlib import Path

from rlvr_envs.core.multiturn import ToolCallError, ToolSpec

TOOL_SPECS = [
    ToolSpec("bash", "Run a bash command in the repository (your working directory). No "
             "network. Output is capped.",
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
    ToolSpec("str_replace", "Replace the one occurrence of old_str in a file with new_str.",
             {"type": "object", "properties": {
                 "path": {"type": "string"}, "old_str": {"type": "string"},
                 "new_str": {"type": "string"}},
              "required": ["path", "old_str", "new_str"]}),
    ToolSpec("create", "Create a file (or overwrite it) with the given content.",
             {"type": "object", "properties": {
                 "path": {"type": "string"}, "content": {"type": "string"}},
              "required": ["path", "content"]}),
    ToolSpec("run_tests", "Run the repository's visible tests (or a subset of them) with "
             "pytest and show the output.",
             {"type": "object", "properties": {
                 "tests": {"type": "array", "items": {"type": "string"},
                           "description": "test files or ids among the visible tests"}},
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


def view(workspace: Path, path: str, start_line: int | None = None,
         end_line: int | None = None) -> str:
    target = inside(workspace, path)
    if target.is_dir():
        entries = sorted(os.listdir(target))
        shown = [e + ("/" if (target / e).is_dir() else "") for e in entries
                 if e not in (".git", "__pycache__")]
        return "\n".join(shown) or "(empty directory)"
    if not target.is_file():
        raise ToolCallError(f"no file {path!r}")
    lines = target.read_text(encoding="utf-8", errors="replace").splitlines()
    start = max(1, start_line or 1)
    end = min(len(lines), end_line if end_line is not None else start + MAX_VIEW_LINES - 1)
    if start > max(1, len(lines)) or end < start:
        raise ToolCallError(f"{path} has {len(lines)} lines; asked for {start}..{end}")
    body = "\n".join(f"{n:6d}\t{lines[n - 1]}" for n in range(start, end + 1))
    more = f"\n[... {len(lines) - end} more lines ...]" if end < len(lines) else ""
    return body + more


def str_replace(workspace: Path, path: str, old_str: str, new_str: str) -> str:
    target = inside(workspace, path)
    if not target.is_file():
        raise ToolCallError(f"no file {path!r}")
    text = target.read_text(encoding="utf-8", errors="surrogateescape")
    count = text.count(old_str) if old_str else 0
    if count != 1:
        raise ToolCallError(f"old_str must occur exactly once in {path}; it occurs {count} times")
    target.write_text(text.replace(old_str, new_str, 1), encoding="utf-8",
                      errors="surrogateescape")
    line = text[:text.index(old_str)].count("\n") + 1
    return f"replaced 1 occurrence in {path} (line {line})"


def create(workspace: Path, path: str, content: str) -> str:
    target = inside(workspace, path)
    if target.is_dir():
        raise ToolCallError(f"{path!r} is a directory")
    existed = target.exists()
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink():
        target.unlink()
    target.write_text(content, encoding="utf-8")
    return f"{'overwrote' if existed else 'created'} {path} ({len(content)} characters)"


def select_visible(visible: list[str], asked: list[str] | None) -> list[str]:
    """The asked tests, each of which must be (in) a visible test file or id."""
    if not asked:
        return list(visible)
    allowed = []
    for test in asked:
        if not any(test == v or test.startswith(v.rstrip("/") + "::") or
                   test.startswith(v.rstrip("/") + "/") for v in visible):
            raise ToolCallError(f"{test!r} is not among the visible tests {visible}")
        allowed.append(test)
    return allowed
