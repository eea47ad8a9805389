"""Symbolic path (runs inside a verifier worker): math-verify parsing and equivalence, exact.

Decimals are turned into exact rationals before comparing, so 0.333 is not 1/3 here either
(math-verify alone rounds floats to 6 places).
"""

from __future__ import annotations

import cmath
import logging
from functools import lru_cache

import math_verify.parser
from math_verify import LatexExtractionConfig, parse, verify
from sympy import Basic, Eq, Expr, Float, I, Pow, Rational, Symbol

from rlvr_envs.verify.math.compare import NeedsSymbolic, aligned, fast_equal, gold_shape, judge

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
        logging.getLogger(__name__).debug("kept floats in %r", expr)
    return expr


@lru_cache(maxsize=1024)
def parse_symbolic(text: str) -> tuple:
    found = parse(f"${text}$", extraction_config=_LATEX, fallback_mode="no_fallback",
                  parsing_timeout=None)
    return tuple(_exact(x) for x in found)


# Fixed, irrational-looking sample points (the k-th free symbol gets the k-th coordinate), so a
# verdict never depends on chance.
_POINTS = ((0.6180339887498949, 1.3247179572447460, 0.5772156649015329, 1.2020569031595943),
           (1.4142135623730951, 0.7071067811865476, 2.7182818284590452, 0.3183098861837907),
           (2.2360679774997897, 1.7320508075688772, 0.4342944819032518, 1.6180339887498949))
_CLOSE = 1e-9


def _values(expr, symbols: list, point: tuple) -> complex | None:
    try:
        value = complex(expr.evalf(30, subs=dict(zip(symbols, point))))
    except (TypeError, ValueError, ArithmeticError, AttributeError):
        return None
    if not cmath.isfinite(value):
        return None
    return value


def _plain(expr) -> bool:
    return isinstance(expr, Expr) and not getattr(expr, "is_Matrix", False)


def _differ(a, b, symbols: list) -> bool:
    """True when a and b take clearly different values at one of the sample points."""
    for point in _POINTS:
        x, y = _values(a, symbols, point), _values(b, symbols, point)
        if x is None or y is None:
            return False
        if abs(x - y) > _CLOSE * max(1.0, abs(x), abs(y)):
            return True
    return False


def _proportional(a, b, symbols: list) -> bool:
    """True when a = c*b (c != 0 constant) at every sample point, so a=0 and b=0 agree."""
    ratios = []
    for point in _POINTS:
        x, y = _values(a, symbols, point), _values(b, symbols, point)
        if x is None or y is None or abs(x) < _CLOSE or abs(y) < _CLOSE:
            return False
        ratios.append(x / y)
    return all(abs(r - ratios[0]) <= _CLOSE * max(1.0, abs(ratios[0])) for r in ratios)


def quick_compare(gold, answer) -> bool | None:
    """A numeric verdict that needs no simplify/solve, when one is sound; else None.

    Plain expressions that differ at a sample point are different; equations with the same
    assigned variable compare their right-hand sides that way; equations whose sides differ
    by a constant factor are the same equation. Everything else goes to math-verify.
    """
    try:
        if len(gold.free_symbols | answer.free_symbols) > len(_POINTS[0]):
            return None
        symbols = sorted(gold.free_symbols | answer.free_symbols, key=str)
        if _plain(gold) and _plain(answer):
            return False if _differ(gold, answer, symbols) else None
        if isinstance(gold, Eq) and isinstance(answer, Eq):
            lhs = gold.lhs
            if (isinstance(lhs, Symbol) and lhs == answer.lhs and lhs not in gold.rhs.free_symbols
                    and lhs not in answer.rhs.free_symbols):
                return False if _differ(gold.rhs, answer.rhs, symbols) else None
            if _proportional(gold.lhs - gold.rhs, answer.lhs - answer.rhs, symbols):
                return True
    except Exception:  # noqa: BLE001 - any trouble here just means: ask math-verify
        return None
    return None


def _odd_root_of_negative(e) -> bool:
    return (isinstance(e, Pow) and e.exp.is_Rational and not e.exp.is_Integer
            and e.exp.q % 2 == 1 and e.base.is_negative is True)


def _real_roots(expr):
    """Odd roots of negative numbers taken real: sqrt[3]{-8} is -2, not 1 + sqrt(3) i."""
    try:
        return expr.replace(_odd_root_of_negative,
                            lambda e: (-1) ** e.exp.p * (-e.base) ** e.exp)
    except Exception:  # noqa: BLE001 - set and relation types without replace: keep as parsed
        return expr


def _readings(gold: tuple, answer: tuple) -> tuple[list, list]:
    """The parsed answers with the notation rules of the symbolic path: `i` is the imaginary
    unit when it is the only letter on both sides; odd roots of negatives are real."""
    symbols = set()
    for expr in gold + answer:
        symbols |= getattr(expr, "free_symbols", set())
    unit = {symbol: I for symbol in symbols} if {str(x) for x in symbols} == {"i"} else None

    def read(expr):
        expr = _real_roots(expr)
        if unit and isinstance(expr, Basic):
            try:
                expr = expr.xreplace(unit)
            except Exception:  # noqa: BLE001 - keep what does not rebuild
                pass
        return expr

    return [read(x) for x in gold], [read(x) for x in answer]


def symbolic_equal(gold: str, answer: str) -> bool:
    try:
        return fast_equal(gold, answer)
    except NeedsSymbolic:
        pass
    gold, answer, _ = aligned(gold, answer)  # fast_equal would have returned a verdict
    parsed_gold = parse_symbolic(gold)
    if not parsed_gold:
        raise GoldUnparsed(f"gold answer part {gold!r} does not parse as math")
    parsed_answer = parse_symbolic(answer)
    if not parsed_answer:
        return False
    parsed_gold, parsed_answer = _readings(parsed_gold, parsed_answer)
    quick = quick_compare(parsed_gold[0], parsed_answer[0])
    if quick is not None:
        return quick
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
