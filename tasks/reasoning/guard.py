"""Calling a generator's own scorer on a model's answer without running the answer as code.

Several of reasoning-gym's scorers hand the answer to Python: `eval(answer)` to read it as a
list (n_queens, spiral_matrix, binary_matrix, string_insertion) and sympy's `parse_expr` (an
`eval` of the transformed text) to read it as an expression (puzzle24, countdown). Called
directly, an answer such as `__import__('os').system(...)` runs in the trainer's process and
`9**9**9**9` hangs it. `call_own_scorer` runs the scorer under a guard: a process-wide audit
hook (PEP 578, installed on first use, checking a per-thread flag so other threads are
untouched) that refuses every `exec` of code compiled from a string while the flag is set.
Code from files still runs (a module the scorer imports lazily), `ast.literal_eval` still
works (it compiles to a tree and runs nothing), and two kinds of string are let through:

- the texts of the entry itself, made by the generator (number_sorting `eval`s its gold,
  bitwise_arithmetic its problem), and
- an answer made only of digits, spaces, `+ - * / ( ) .` without `**`: the arithmetic the
  expression games need, which can call nothing and cannot grow past its own length.

A refused answer scores 0 with `verifier="code_refused"`, whatever the scorer did with the
refusal (most catch it and pay their partial credit, which never counts here).
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Callable
from typing import Any

CODE_REFUSED = "code_refused"
ARITHMETIC = re.compile(r"[0-9\s+\-*/().]*")


class CodeRefused(RuntimeError):
    """Raised inside a guarded scorer at the `exec` of code compiled from a string."""


class _Guard(threading.local):
    active = False
    allow_strings = False  # the answer is plain arithmetic: its compiled form may run
    trusted: frozenset[str] = frozenset()
    last_source_trusted = False
    refused = False


_STATE = _Guard()
_INSTALL_LOCK = threading.Lock()
_installed = False


def _from_file(code: Any) -> bool:
    filename = getattr(code, "co_filename", "")
    return os.path.isabs(filename) and os.path.isfile(filename)


def _audit(event: str, args: tuple) -> None:
    state = _STATE
    if not state.active:
        return
    if event == "compile":
        source = args[0]
        if isinstance(source, bytes):
            source = source.decode("utf-8", "replace")
        state.last_source_trusted = isinstance(source, str) and source.strip() in state.trusted
    elif event == "exec":
        trusted, state.last_source_trusted = state.last_source_trusted, False
        if state.allow_strings or trusted or _from_file(args[0]):
            return
        state.refused = True
        raise CodeRefused("a scorer tried to run code compiled from the answer")


def _install() -> None:
    global _installed
    with _INSTALL_LOCK:
        if not _installed:
            sys.addaudithook(_audit)
            _installed = True


def is_arithmetic(answer: str) -> bool:
    return ARITHMETIC.fullmatch(answer) is not None and "**" not in answer


def entry_texts(value: Any, depth: int = 4) -> set[str]:
    """Every string in a generator's entry (its answer, question and metadata), stripped."""
    if isinstance(value, str):
        return {value.strip()}
    found: set[str] = set()
    if depth > 0 and isinstance(value, (dict, list, tuple)):
        for item in value.values() if isinstance(value, dict) else value:
            found |= entry_texts(item, depth - 1)
    return found


def call_own_scorer(score: Callable[[str, Any], float], answer: str,
                    entry: Any) -> tuple[float, bool]:
    """`score(answer, entry)` under the guard: (its result, whether the guard refused code).
    An exception in the scorer is a result of 0.0."""
    _install()
    state = _STATE
    state.active, state.refused, state.last_source_trusted = True, False, False
    state.allow_strings = is_arithmetic(answer)
    state.trusted = frozenset(entry_texts(entry))
    try:
        result = float(score(answer, entry))
    except Exception:  # noqa: BLE001 - the scorer choking on a hostile answer is a 0
        result = 0.0
    finally:
        state.active = False
    return result, state.refused
