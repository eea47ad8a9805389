"""Symbolic path (runs inside a verifier worker): math-verify parsing and equivalence, exact.

Decimals are turned into exact rationals before comparing, so 0.333 is not 1/3 here either
(math-verify alone rounds floats to 6 places). Before math-verify's own comparison (which
chops differences below 1e-15, so tiny values would all look equal), plain expressions are
evaluated to 30 correct digits at fixed rational points: a proved gap means different.
Agreement there never means equal; that is math-verify's (symbolic) call.
"""

from __future__ import annotations

import cmath
import logging
from functools import lru_cache

import math_verify.parser
from math_verify import LatexExtractionConfig, parse, verify
from sympy import (
    QQ,
    ZZ,
    Basic,
    Eq,
    Expr,
    Float,
    I,
    Poly,
    PolynomialError,
    Pow,
    Rational,
    Symbol,
    cancel,
    exp,
    expand,
    expand_func,
    expand_log,
    together,
)
from sympy.functions.elementary.trigonometric import TrigonometricFunction

from rlvr_envs.verify.math.compare import NeedsSymbolic, aligned, fast_equal, gold_shape, judge
from rlvr_envs.verify.math.direct import to_sympy

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
    """The parsed answer: read directly (`direct.to_sympy`) when it is a small expression or
    equation, else by math-verify (latex2sympy), decimals made exact."""
    direct = to_sympy(text)
    if direct is not None:
        return (direct,)
    found = parse(f"${text}$", extraction_config=_LATEX, fallback_mode="no_fallback",
                  parsing_timeout=None)
    return tuple(_exact(x) for x in found)


# Fixed rational points (the k-th free symbol gets the k-th coordinate): substituted exactly,
# so a verdict never depends on chance or on rounding of the point itself.
_POINTS = ((Rational(7, 3), Rational(11, 5), Rational(13, 7), Rational(17, 11)),
           (Rational(-5, 4), Rational(19, 6), Rational(23, 9), Rational(-3, 13)),
           (Rational(29, 8), Rational(-31, 10), Rational(37, 12), Rational(41, 15)))
_DIGITS = 30
# Two values known to 30 significant digits whose relative gap is above this differ.
_RELATIVE_GAP = 1e-20


def _value(expr, symbols: list, point: tuple) -> complex | None:
    """The value at `point` with 30 correct digits (sympy's strict evalf), else None."""
    try:
        value = complex(expr.evalf(_DIGITS, subs=dict(zip(symbols, point)), strict=True))
    except Exception:  # noqa: BLE001 - PrecisionExhausted, not a number, ...: no proof here
        return None
    return value if cmath.isfinite(value) else None


def _plain(expr) -> bool:
    return isinstance(expr, Expr) and not getattr(expr, "is_Matrix", False)


def _differ(a, b, symbols: list) -> bool:
    """True when a and b are proved to take different values at a fixed point.

    Each value is evaluated to 30 correct digits or not at all, so a relative gap above
    1e-20 is a proof, for tiny values too (1/11! is not 1/10!); an evaluation sympy cannot
    make accurate (huge arguments, cancellation) proves nothing. The first point where both
    evaluate decides: agreement there is left to math-verify, which is the slow part anyway.
    """
    for point in _POINTS:
        x, y = _value(a, symbols, point), _value(b, symbols, point)
        if x is not None and y is not None:
            return abs(x - y) > _RELATIVE_GAP * max(abs(x), abs(y))
    return False


def _proportional(a, b) -> bool:
    """True when a = c*b for a nonzero constant c, proved by exact cancellation."""
    if b == 0:
        return False
    ratio = cancel(together(a / b))
    return not ratio.free_symbols and ratio != 0 and bool(ratio.is_finite)


def _rational_polys(p, q, symbols: list) -> tuple | None:
    """p and q as nonzero polynomials in `symbols` with rational coefficients, else None."""
    if not symbols:
        return None
    try:
        polys = Poly(p, *symbols), Poly(q, *symbols)
    except PolynomialError:
        return None
    if any(poly.domain not in (ZZ, QQ) or poly.is_zero for poly in polys):
        return None
    return polys


def _same_equation(p, q, symbols: list) -> bool | None:
    """Whether p = 0 and q = 0 are the same equation, when that is proved cheaply.

    Same: p and q are proportional (exactly: polynomial coefficients, else a constant ratio
    after cancellation). Different: p and q are square-free polynomials with rational
    coefficients that are not proportional: by the Nullstellensatz, square-free polynomials
    with the same (complex) zeros are proportional, so `(x+1)^2 + (y-2)^2 = 9` is not
    `(x-1)^2 + (y+2)^2 = 9` without solving either (what math-verify would do)."""
    polys = _rational_polys(p, q, symbols)
    if polys is None:
        return True if _proportional(p, q) else None
    first, second = polys
    if first * second.LC() == second * first.LC():
        return True
    if not first.is_ground and not second.is_ground and first.is_sqf and second.is_sqf:
        return False
    return None


def quick_compare(gold, answer) -> bool | None:
    """A verdict that needs no simplify/solve, when one is proved; else None.

    Plain expressions proved different at a point are different; equations with the same
    assigned variable compare their right-hand sides that way; equations whose sides differ
    by a constant factor (exact cancellation) are the same equation. Everything else goes to
    math-verify.
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
            return _same_equation(gold.lhs - gold.rhs, answer.lhs - answer.rhs, symbols)
    except Exception:  # noqa: BLE001 - any trouble here just means: ask math-verify
        return None
    return None


def identical(gold, answer) -> bool:
    """True when gold - answer is proved to be 0 by cheap exact rewriting (expanding
    functions and logarithms of numbers, and trigonometric functions as exponentials); a
    False here decides nothing. Much cheaper than math-verify's `simplify`, which runs only
    when this finds no proof."""
    difference = gold - answer
    if difference == 0:
        return True
    if expand(expand_func(expand_log(difference))) == 0:
        return True
    return bool(difference.has(TrigonometricFunction)) and \
        expand(difference.rewrite(exp)) == 0


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


def _readings(gold: tuple, answer: tuple) -> tuple[tuple, tuple]:
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
                logging.getLogger(__name__).debug("kept i as a symbol in %r", expr)
        return expr

    return tuple(map(read, gold)), tuple(map(read, answer))


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
    if _plain(parsed_gold[0]) and _plain(parsed_answer[0]) and \
            identical(parsed_gold[0], parsed_answer[0]):
        return True
    return bool(verify(list(parsed_gold), list(parsed_answer), timeout_seconds=None))


def judge_symbolic(gold: str, answers: list[str]) -> str:
    return judge(gold_shape(gold), tuple(answers), symbolic_equal)


def gold_parses(text: str) -> bool:
    return bool(parse_symbolic(text))


def clear_caches() -> None:
    """Forget every parse here, math-verify's included (benchmarks time cold parses)."""
    for cached in (math_verify.parser.parse_latex_cached, math_verify.parser.parse_expr_cached,
                   math_verify.parser.extract_latex):
        cached.cache_clear()
    parse_symbolic.cache_clear()
    gold_shape.cache_clear()
    from rlvr_envs.verify.math.algebra import parse_algebra
    from rlvr_envs.verify.math.fast import parse_leaf
    parse_leaf.cache_clear()
    parse_algebra.cache_clear()
