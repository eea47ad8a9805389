"""Reading code out of a model's completion: the last ```python fenced block (or the last
unlabelled fence), else the whole text when it is Python; prose without code → None."""

from __future__ import annotations

import ast
import functools
import re
import types
import warnings

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


#: the file name of a candidate's code compiled here (`compile_solution`)
SOLUTION_FILENAME = "<solution>"
# what the compiler says about a candidate's code ("is" with a literal, ...) is no business
# of the grading process's stderr
warnings.filterwarnings("ignore", module=re.escape(SOLUTION_FILENAME))


#: longer code is compiled again each time instead of being kept (64 entries at most)
CACHED_CODE_CHARS = 1 << 18


def compile_solution(code: str) -> tuple[types.CodeType | None, str | None]:
    """`code` compiled in the grader's process, where nothing of it runs: (the code object,
    None), or (None, the error message). A fork-server candidate receives this code object
    (marshal) instead of compiling the same source again."""
    return (_compile_cached if len(code) <= CACHED_CODE_CHARS else _compile)(code)


def _compile(code: str) -> tuple[types.CodeType | None, str | None]:
    try:
        return compile(code, SOLUTION_FILENAME, "exec", dont_inherit=True), None
    except SyntaxError as err:
        return None, f"SyntaxError: {err.msg} (line {err.lineno})"
    except (ValueError, RecursionError, MemoryError, OverflowError) as err:
        return None, f"{type(err).__name__}: {err}"


_compile_cached = functools.lru_cache(maxsize=64)(_compile)


def syntax_error(code: str) -> str | None:
    """None when `code` compiles, else the error message (compiled in the grader's process,
    before anything runs)."""
    return compile_solution(code)[1]
