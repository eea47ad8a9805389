"""Symbolic path (runs inside a verifier worker): math-verify parsing and equivalence, exact.

Decimals are turned into exact rationals before comparing, so 0.333 is not 1/3 here either
(math-verify alone rounds floats to 6 places).
"""

from __future__ import annotations

import logging
from functools import lru_cache

import math_verify.parser
from math_verify import LatexExtractionConfig, parse, verify
from sympy import Basic, Float, Rational

from rlvr_envs.verify.math.compare import NeedsSymbolic, fast_equal, gold_shape, judge

math_verify.parser.TIMEOUT_WARNING_SHOWN = True  # the worker's deadline is the caller's timeout
logging.getLogger("math_verify").setLevel(logging.ERROR)

_LATEX = [LatexExtractionConfig()]


class GoldUnparsed(ValueError):
    """A gold answer (or a part of it) that math-verify cannot read."""


def _exact(expr):
    if not isinstance(expr, Basic) and not hasattr(expr, "atoms"):
        return expr
    try:
        floats = expr.atoms(Float)
        if floats:
            return expr.xreplace({f: Rational(str(f)) for f in floats})
    except Exception:  # noqa: BLE001 - some set types do not rebuild; keep them as parsed
        pass
    return expr


@lru_cache(maxsize=1024)
def parse_symbolic(text: str) -> tuple:
    found = parse(f"${text}$", extraction_config=_LATEX, fallback_mode="no_fallback",
                  parsing_timeout=None)
    return tuple(_exact(x) for x in found)


def symbolic_equal(gold: str, answer: str) -> bool:
    try:
        return fast_equal(gold, answer)
    except NeedsSymbolic:
        pass
    parsed_gold = parse_symbolic(gold)
    if not parsed_gold:
        raise GoldUnparsed(f"gold answer part {gold!r} does not parse as math")
    parsed_answer = parse_symbolic(answer)
    if not parsed_answer:
        return False
    return bool(verify(list(parsed_gold), list(parsed_answer), timeout_seconds=None))


def judge_symbolic(gold: str, answers: list[str]) -> str:
    return judge(gold_shape(gold), tuple(answers), symbolic_equal)


def gold_parses(text: str) -> bool:
    return bool(parse_symbolic(text))


def clear_caches() -> None:
    parse_symbolic.cache_clear()
    gold_shape.cache_clear()
    from rlvr_envs.verify.math.fast import parse_leaf
    parse_leaf.cache_clear()
