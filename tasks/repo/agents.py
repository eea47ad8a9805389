"""Scripted tool-using agents for audits and tests (no model, no torch).

- `NullAgent`: submits at once (must score 0 on every task).
- `GoldPatchAgent`: applies the task's gold patch through the env's own tools — one
  `str_replace` per hunk, `create` for new files, `bash rm` for deleted ones — then runs the
  visible tests and submits (must score 1).
- `ScriptAgent`: plays a fixed list of actions (hack tests, demos).

`rlvr_envs.core.multiturn.run_episode(env, agent)` drives any of them (re-exported here).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

__all__ = ["Episode", "GoldPatchAgent", "NullAgent", "ScriptAgent", "gold_actions",
           "parse_patch", "run_episode"]

from rlvr_envs.core.multiturn import Episode, format_tool_call, run_episode

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


@dataclass
class FilePatch:
    path: str
    old_path: str | None
    new_path: str | None
    hunks: list[tuple[str, str]] = field(default_factory=list)  # (old text, new text)


def parse_patch(patch: str) -> list[FilePatch]:
    """Files and hunks of a unified diff, each hunk as (old text, new text) with context."""
    files: list[FilePatch] = []
    current: FilePatch | None = None
    old_lines: list[str] | None = None
    new_lines: list[str] = []

    def close_hunk() -> None:
        nonlocal old_lines, new_lines
        if current is not None and old_lines is not None:
            current.hunks.append(("".join(old_lines), "".join(new_lines)))
        old_lines, new_lines = None, []

    lines = patch.splitlines(keepends=True)
    prev = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            close_hunk()
            old = line[4:].strip()
            new = lines[i + 1][4:].strip()
            old_path = None if old == "/dev/null" else re.sub(r"^a/", "", old)
            new_path = None if new == "/dev/null" else re.sub(r"^b/", "", new)
            current = FilePatch(new_path or old_path or "", old_path, new_path)
            files.append(current)
            i += 2
            continue
        if _HUNK.match(line):
            close_hunk()
            old_lines, new_lines = [], []
        elif old_lines is not None and line.startswith("\\"):
            # "\ No newline at end of file": drop the newline of the previous line
            target = new_lines if prev.startswith("+") else old_lines
            if prev.startswith(" "):
                old_lines[-1] = old_lines[-1].rstrip("\n")
                new_lines[-1] = new_lines[-1].rstrip("\n")
            elif target:
                target[-1] = target[-1].rstrip("\n")
        elif old_lines is not None and line[:1] in (" ", "-", "+"):
            body = line[1:]
            if line[0] in (" ", "-"):
                old_lines.append(body)
            if line[0] in (" ", "+"):
                new_lines.append(body)
        elif old_lines is not None and line in ("\n",):  # a blank context line, trimmed
            old_lines.append("\n")
            new_lines.append("\n")
        else:
            close_hunk()
        prev = line
        i += 1
    close_hunk()
    return files


def gold_actions(patch: str) -> Iterator[str]:
    """Tool calls that apply `patch` to the workspace."""
    for file in parse_patch(patch):
        if file.new_path is None:
            yield format_tool_call("bash", {"command": f"rm -f -- {shlex.quote(file.path)}"})
        elif file.old_path is None:
            content = "".join(new for _, new in file.hunks)
            yield format_tool_call("create", {"path": file.path, "content": content})
        else:
            for old, new in file.hunks:
                yield format_tool_call("str_replace",
                                       {"path": file.path, "old_str": old, "new_str": new})


class NullAgent:
    """Submits without touching anything."""

    name = "null"

    def start(self, task: dict[str, Any]) -> None:
        pass

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return format_tool_call("submit", {})


class GoldPatchAgent:
    """Applies the gold patch hunk by hunk with the file tools, runs the tests, submits."""

    name = "gold"
    needs_gold = True  # run_episode starts it from the whole task record

    def __init__(self, run_tests: bool = False):
        self.run_tests = run_tests
        self._plan: list[str] = []

    def start(self, task: dict[str, Any]) -> None:
        self._plan = list(gold_actions(task["metadata"]["gold_patch"]))
        if self.run_tests:
            self._plan.append(format_tool_call("run_tests", {}))
        self._plan.append(format_tool_call("submit", {}))

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if info.get("tool_error"):
            raise RuntimeError(f"the gold agent's call failed: {info['tool_error']}")
        return self._plan.pop(0)


class ScriptAgent:
    """Plays the given actions in order (then submits)."""

    name = "script"

    def __init__(self, actions: Sequence[str | dict]):
        self.actions = list(actions)
        self._plan: list[str | dict] = []

    def start(self, task: dict[str, Any]) -> None:
        self._plan = list(self.actions)

    def act(self, observation: str, info: dict[str, Any]) -> str | dict:
        return self._plan.pop(0) if self._plan else format_tool_call("submit", {})
