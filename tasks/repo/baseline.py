"""A scripted baseline for repo tasks: revert search through the env's own tools.

`RevertSearchAgent` does what a careful but unimaginative engineer would do with the tools an
agent has (`run_tests`, `bash`, `view`, `str_replace`, `submit`), and nothing else: it never
reads the gold patch, the injected mutation or the hidden metadata.

1. run the failing tests the task names (`run_tests`), read the traceback frames that lie in
   the library (not in test files);
2. find the definitions of the functions the failing tests call (names from the statement's
   code snippets and the tests' failing lines, `grep` for ``def NAME``);
3. candidate lines: each frame's line and the three before it (innermost frame first), then
   every line of those functions;
4. on each line, try the inverse of the common one-token slips — a comparison flipped
   (``<`` ↔ ``<=``, ``==`` ↔ ``!=``, ``is`` ↔ ``is not``, ``in`` ↔ ``not in``), an arithmetic
   or boolean operator swapped (``+`` ↔ ``-``, ``*`` ↔ ``//``, ``and`` ↔ ``or``), a small
   integer off by one, ``True`` ↔ ``False``, two simple call arguments swapped — one
   `str_replace` at a time, rerunning the failing tests after each and undoing a failed try;
5. submit after the first edit that makes the failing tests pass and keeps the visible test
   files passing, or when `max_tries` edits have failed (a bug that deleted code cannot be
   found this way: such tasks stay unsolved).

`RevertSearchPolicy` (policy name ``revert-search``) plays this agent for `rlvr difficulty
estimate`: it runs one episode per task in a `RepoEditEnv` on the scorer's sandbox and returns
the workspace's diff as the completion (a patch, which the repo scorer grades).
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Generator
from typing import Any

from rlvr_envs.tasks.repo.grading import is_protected

from rlvr_envs.core.multiturn import format_tool_call

#: token → what it may have been before the slip
_OPS = {"<": ("<=",), "<=": ("<",), ">": (">=",), ">=": (">",), "==": ("!=",), "!=": ("==",),
        "+": ("-",), "-": ("+",), "*": ("//", "/"), "//": ("*", "/", "%"), "/": ("//", "*"),
        "%": ("//",), "+=": ("-=",), "-=": ("+=",), "*=": ("//=",), "//=": ("*=",),
        "&": ("|",), "|": ("&",)}
_NAMES = {"and": ("or",), "or": ("and",), "True": ("False",), "False": ("True",)}
#: lines before a traceback frame's own line that are tried too
FRAME_LINES = 3
_FRAME = re.compile(r"^([\w./-]+\.py):(\d+):", re.MULTILINE)
_CALLED = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_ARGS = re.compile(r"\(([\w.]+|'[^']*'|\"[^\"]*\"|\d+), ([\w.]+|'[^']*'|\"[^\"]*\"|\d+)\)")
_NOT_FUNCTIONS = frozenset({"assert", "print", "len", "str", "int", "list", "dict", "set",
                            "tuple", "isinstance", "type", "raises", "range", "repr", "sorted",
                            "if", "for", "while", "return", "not", "and", "or", "in", "is",
                            "lambda", "super", "getattr", "setattr", "hasattr", "bool", "float"})


def line_edits(line: str) -> list[str]:
    """Variants of one source line, each undoing one common one-token slip (see module doc)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(line.strip("\n") + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []
    offsets = [0]
    for text in line.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(text))

    def at(row: int, col: int) -> int:
        return offsets[row - 1] + col

    out: list[str] = []

    def replace(start: int, end: int, new: str) -> None:
        variant = line[:start] + new + line[end:]
        if variant != line and variant not in out:
            out.append(variant)

    stripped = line.lstrip()
    is_loop = stripped.startswith(("for ", "async for ")) or " for " in line
    for i, tok in enumerate(tokens):
        start, end = at(*tok.start), at(*tok.end)
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        prev = tokens[i - 1] if i else None
        if tok.type == tokenize.OP and tok.string in _OPS:
            for new in _OPS[tok.string]:
                replace(start, end, new)
        elif tok.type == tokenize.NAME and tok.string in _NAMES:
            for new in _NAMES[tok.string]:
                replace(start, end, new)
        elif tok.type == tokenize.NAME and tok.string == "is":
            if nxt is not None and nxt.string == "not":
                replace(start, at(*nxt.end), "is")
            else:
                replace(start, end, "is not")
        elif tok.type == tokenize.NAME and tok.string == "in" and not is_loop:
            if prev is not None and prev.string == "not":
                replace(at(*prev.start), end, "in")
            else:
                replace(start, end, "not in")
        elif tok.type == tokenize.NUMBER and tok.string.isdigit() and int(tok.string) <= 11:
            value = int(tok.string)
            for new in (value + 1, value - 1):
                if new >= 0:
                    replace(start, end, str(new))
    for match in _ARGS.finditer(line):
        a, b = match.group(1), match.group(2)
        if a != b:
            replace(match.start(), match.end(), f"({b}, {a})")
    return out


def _frames(output: str) -> list[tuple[str, int]]:
    """Library frames (path, line) of pytest's tracebacks, innermost first."""
    seen: list[tuple[str, int]] = []
    for path, line in reversed(_FRAME.findall(output)):
        frame = (path.lstrip("./"), int(line))
        if not is_protected(frame[0]) and frame not in seen:
            seen.append(frame)
    return seen


def _view_lines(output: str) -> dict[int, str]:
    """line number → text of a `view` observation."""
    lines = {}
    for row in output.splitlines():
        number, tab, text = row.partition("\t")
        if tab and number.strip().isdigit():
            lines[int(number)] = text
    return lines


class RevertSearchAgent:
    """The revert-search baseline (module doc), an agent for `run_episode` and the env."""

    name = "revert-search"

    def __init__(self, max_tries: int = 12, max_functions: int = 6):
        self.max_tries, self.max_functions = max_tries, max_functions
        self._script: Generator[str, str, None] | None = None
        self.tries = 0
        self.solved = False

    def start(self, task: dict[str, Any]) -> None:
        self.tries, self.solved = 0, False
        self._script = self._run(task)
        self._first = True

    def act(self, observation: str, info: dict[str, Any]) -> str:
        assert self._script is not None, "start() first"
        if info.get("tool_error"):
            observation = f"error: {info['tool_error']}"
        try:
            if self._first:
                self._first = False
                return next(self._script)
            return self._script.send(observation)
        except StopIteration:
            return format_tool_call("submit", {})

    # -- the search --------------------------------------------------------------------------

    def _run(self, task: dict[str, Any]) -> Generator[str, str, None]:
        meta = task.get("metadata") or {}
        failing = list(meta.get("FAIL_TO_PASS") or [])[:8]
        run = format_tool_call("run_tests", {"tests": failing} if failing else {})
        output = yield run
        candidates: list[tuple[str, int]] = []
        files: dict[str, dict[int, str]] = {}
        for path, line in _frames(output):
            # the frame's line and the few before it (where a wrong value is often made)
            seen = yield format_tool_call("view", {"path": path,
                                                   "start_line": max(1, line - FRAME_LINES - 1),
                                                   "end_line": line + 1})
            files.setdefault(path, {}).update(_view_lines(seen))
            candidates += [(path, n) for n in range(line, max(0, line - FRAME_LINES - 1), -1)]
        for path, start in (yield from self._definitions(task, output)):
            seen = yield format_tool_call("view", {"path": path, "start_line": start,
                                                   "end_line": start + 40})
            body = self._function_body(_view_lines(seen), start)
            files.setdefault(path, {}).update(body)
            candidates += [(path, n) for n in sorted(body)]
        done: set[tuple[str, int]] = set()
        for path, line in candidates:
            if (path, line) in done or line not in files.get(path, {}):
                continue
            done.add((path, line))
            lines = files[path]
            text = lines[line]
            if not text.strip() or text.lstrip().startswith(("#", '"', "'")):
                continue
            for variant in line_edits(text):
                if self.tries >= self.max_tries:
                    return
                self.tries += 1
                old, new = self._unique_window(lines, line, variant)
                answer = yield format_tool_call("str_replace", {"path": path, "old_str": old,
                                                                "new_str": new})
                if answer.startswith("error:"):
                    continue
                result = yield run
                if result.rstrip().endswith("[exit code 0]"):
                    # the failing tests pass: the visible test files must too (nothing broken)
                    result = yield format_tool_call("run_tests", {})
                    if result.rstrip().endswith("[exit code 0]"):
                        self.solved = True
                        return
                yield format_tool_call("str_replace", {"path": path, "old_str": new,
                                                       "new_str": old})

    def _definitions(self, task: dict[str, Any], output: str
                     ) -> Generator[str, str, list[tuple[str, int]]]:
        """(path, line) of the library definitions of the functions the failing tests call."""
        code = output.splitlines()
        # most telling first: the statement's snippets, the failing lines, the tests' bodies
        snippets = [*re.findall(r"`([^`]+)`", str(task.get("prompt", ""))),
                    *(line[1:] for line in code if line.startswith(">")),
                    *(line for line in code if line.startswith("    "))]
        names = [n for n in dict.fromkeys(_CALLED.findall("\n".join(snippets)))
                 if n not in _NOT_FUNCTIONS and not n.startswith(("test", "assert"))
                 ][:self.max_functions]
        found: list[tuple[str, int]] = []
        for name in names:
            listing = yield format_tool_call("bash", {"command": (
                f"grep -rnE --include='*.py' '^\\s*(async )?def {name}\\b' . | head -5")})
            for match in re.finditer(r"^\.?/?([\w./-]+\.py):(\d+):", listing, re.MULTILINE):
                path = match.group(1)
                if not is_protected(path):
                    found.append((path, int(match.group(2))))
        return found

    @staticmethod
    def _function_body(lines: dict[int, str], start: int) -> dict[int, str]:
        """The lines of the function defined at `start` (until the first line indented no
        deeper than its `def`)."""
        if start not in lines:
            return {}
        indent = len(lines[start]) - len(lines[start].lstrip())
        body = {start: lines[start]}
        for n in range(start + 1, max(lines) + 1):
            text = lines.get(n)
            if text is None:
                break
            if text.strip() and len(text) - len(text.lstrip()) <= indent:
                break
            body[n] = text
        return body

    @staticmethod
    def _unique_window(lines: dict[int, str], line: int, variant: str) -> tuple[str, str]:
        """old/new text for `str_replace`: the line with its neighbours (as far as they were
        seen), so the text occurs once in the file."""
        before = [lines[n] for n in (line - 1,) if n in lines]
        after = [lines[n] for n in (line + 1,) if n in lines]
        old = "\n".join([*before, lines[line], *after])
        new = "\n".join([*before, variant, *after])
        return old, new


class RevertSearchPolicy:
    """`revert-search` as a policy for `rlvr difficulty estimate` on rlvr/RepoEdit-v0: one
    episode of `RevertSearchAgent` per sample, the completion is the workspace's diff."""

    name = "revert-search"

    def __init__(self, max_tries: int = 12):
        self.max_tries = max_tries

    def generate(self, batch, params, *, tasks=None, scorers=None):
        from rlvr_envs.core.policy import Completion

        if tasks is None or scorers is None or not all(hasattr(s, "base_trees")
                                                       for s in scorers):
            raise ValueError("the revert-search policy plays repo tasks (rlvr/RepoEdit-v0): "
                             "it needs tasks= and the repo scorers=")
        return [[Completion(self.patch(task, scorer)) for _ in range(params.n)]
                for task, scorer in zip(tasks, scorers)]

    def patch(self, task, scorer) -> str:
        """Play one episode on `task` and return what the agent changed, as a patch."""
        from rlvr_envs.tasks.repo.env import RepoEditEnv
        from rlvr_envs.tasks.repo.workspace import diff_trees

        env = RepoEditEnv([task], sandbox=scorer.sandbox, max_turns=10_000)
        agent = RevertSearchAgent(self.max_tries)
        try:
            _, info = env.reset(options={"task": task})
            agent.start(info["task"])
            observation = info["messages"][-1]["content"]
            while True:
                action = agent.act(observation, info)
                if '"submit"' in action:
                    base = env.scorer.base_trees.base_tree(task.metadata)
                    return diff_trees(base, env.workspace)
                observation, _, terminated, truncated, info = env.step(action)
                if terminated or truncated:
                    return ""
        finally:
            env.end_episode()
            env.close()


__all__ = ["RevertSearchAgent", "RevertSearchPolicy", "line_edits"]
