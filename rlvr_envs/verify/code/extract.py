"""Reading code out of a model's completion: the last ```python fenced block (or the last
unlabelled fence), else the whole text when it is Python; prose without code → None."""

from __future__ import annotations

import ast
import re

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:```|\Z)", re.S)
_PY_LABELS = {"python", "py", "python3", "py3"}
_CODE_HINTS = re.compile(r"^\s*(def |class |import |from \S+ import |return\b|print\(|for |while |if )",
                         re.M)


def extract_code(completion: str) -> str | None:
    """The code in `completion`, or None when it holds none."""
    if not completion or not completion.strip():
        return None
    blocks = [(label.lower(), body) for label, body in _FENCE.findall(completion)]
    labelled = [body for label, body in blocks if label in _PY_LABELS]
    bare = [body for label, body in blocks if not label]
    for candidates in (labelled, bare):
        for body in reversed(candidates):
            if body.strip():
                return body
    if blocks:
        return None  # only fences of other languages
    text = completion
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text if _CODE_HINTS.search(text) else None
    return text if _CODE_HINTS.search(text) or "=" in text else None


def syntax_error(code: str) -> str | None:
    """None when `code` parses, else the error message (parsing happens in the grader's
    process, before anything runs)."""
    try:
        ast.parse(code)
    except SyntaxError as err:
        return f"SyntaxError: {err.msg} (line {err.lineno})"
    except (ValueError, RecursionError, MemoryError) as err:
        return f"{type(err).__name__}: {err}"
    return None
