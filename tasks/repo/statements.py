"""Problem statements of synthesised repo tasks, in two styles.

- ``"issue"`` (default): reads like a bug report. Each failing behaviour in words — what the
  test called, what came back, what was expected — derived from the failing line of the test
  and pytest's assertion message; then the ids of the tests that show it.
- ``"tests"``: the failing test ids with their error messages (a test dump).

Neither names the file, line or operator of the bug. Both are rendered from the task's
``metadata["failures"]`` (``{test, source, message}`` of up to five FAIL_TO_PASS tests, kept at
build time), so a task's style can be switched when it is served
(``gym.make("rlvr/RepoEdit-v0", statement="tests")``).
"""

from __future__ import annotations

import ast
import re
from typing import Any, Callable, Mapping, Sequence

STYLES = ("issue", "tests")
_MAX_VALUE = 160


def _short(text: str, limit: int = _MAX_VALUE) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _first_line(message: str) -> str:
    for line in message.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


def describe_failure(source: str, message: str) -> str:
    """One failing behaviour in words, from the test's failing line and pytest's message."""
    source = source.strip()
    first = _first_line(message)
    bare = re.sub(r"^AssertionError:\s*", "", first)
    if source.startswith("assert "):
        try:
            test = ast.parse(source).body[0].test  # type: ignore[attr-defined]
        except (SyntaxError, IndexError, AttributeError):
            test = None
        shown = re.match(r"^assert (.+?) (==|!=|is not|is|not in|in) (.+)$", bare)
        if (isinstance(test, ast.Compare) and len(test.ops) == 1
                and isinstance(test.ops[0], ast.Eq) and shown and shown.group(2) == "=="):
            left, right = test.left, test.comparators[0]
            got, expected = shown.group(1), shown.group(3)
            if isinstance(right, ast.Call) and not isinstance(left, ast.Call):
                # `assert expected == f(x)`: the call is on the right
                left, right, got, expected = right, left, expected, got
            called = ast.get_source_segment(source, left) or ""
            wanted = ast.get_source_segment(source, right) or ""
            if called and wanted:
                if isinstance(right, ast.Constant) or wanted == expected:
                    return (f"`{_short(called)}` returns `{_short(got)}`, but "
                            f"`{_short(expected)}` is expected.")
                return (f"`{_short(called)}` returns `{_short(got)}`, but `{_short(expected)}` "
                        f"(`{_short(wanted)}`) is expected.")
        if bare and bare != "assert" and not bare.startswith("assert "):
            return f"`{_short(source[7:])}` should hold, but the check fails: {_short(bare)}."
        return f"`{_short(source[7:])}` should hold, but it does not ({_short(bare) or 'false'})."
    if source and first:
        if re.match(r"^(Failed: )?DID NOT RAISE", first):
            return f"`{_short(source)}` is expected to raise an error, but it does not."
        return f"`{_short(source)}` raises `{_short(first)}`."
    if first:
        return f"It fails with `{_short(first)}`."
    return "It fails."


def render_statement(package: str, failures: Sequence[Mapping[str, str]],
                     fail_to_pass: Sequence[str], style: str = "issue") -> str:
    """A problem statement for a task whose FAIL_TO_PASS tests are `fail_to_pass`."""
    if style not in STYLES:
        raise ValueError(f"statement style must be one of {STYLES}, got {style!r}")
    more = len(fail_to_pass) - len(failures)
    if style == "tests":
        lines = []
        for f in failures:
            message = _first_line(f.get("message", ""))
            lines.append(f"- {f['test']}" + (f"\n  {message[:200]}" if message else ""))
        if more > 0:
            lines.append(f"- ... and {more} more")
        return (f"After a recent change to {package}, part of its test suite fails. These "
                f"tests fail (with the error each reports):\n" + "\n".join(lines) +
                "\n\nFind the bug in the library code and fix it so that these tests pass "
                "without breaking the other tests. Do not modify the tests.")
    seen, behaviours = set(), []
    for f in failures:
        text = describe_failure(f.get("source", ""), f.get("message", ""))
        if text not in seen:
            seen.add(text)
            behaviours.append(f"- {text}")
    ids = ", ".join(f"`{t}`" for t in fail_to_pass[:5]) + (f" and {len(fail_to_pass) - 5} more"
                                                           if len(fail_to_pass) > 5 else "")
    return (f"{package}: wrong behaviour after a recent change\n\n"
            f"Since a recent change, {package} no longer behaves as documented:\n\n"
            + "\n".join(behaviours) +
            f"\n\nThe test suite shows it: {ids} "
            f"({len(fail_to_pass)} failing test{'s' if len(fail_to_pass) != 1 else ''}). "
            f"Please fix the library so that these tests pass again without breaking the "
            f"others. The tests are right; do not change them.")


def issue_statement(package: str) -> Callable[[Any, list[str]], str]:
    """The builder's statement callback: renders the issue style from the buggy run."""
    def statement(run, f2p: list[str]) -> str:
        return render_statement(package, run.failures(f2p), f2p, "issue")
    return statement


def task_statement(task, style: str = "issue") -> str:
    """The task's statement in `style` (tasks without recorded failures keep their prompt)."""
    meta = task.metadata
    if style not in STYLES:
        raise ValueError(f"statement style must be one of {STYLES}, got {style!r}")
    if not meta.get("failures"):
        return task.prompt
    return render_statement(meta["repo"], meta["failures"], meta["FAIL_TO_PASS"], style)
