"""Direct reading into sympy (runs inside a verifier worker): the LaTeX subset that
`algebra.parse_algebra` reads, built as sympy expressions without math-verify's parser.

math-verify parses with latex2sympy's ANTLR grammar, which costs 1-30 ms per answer and was
most of the symbolic path's time. The answers that reach sympy are mostly small expressions
(`\\log_2 5`, `\\cos 2x`, `\\binom{n+1}{2}`, `e^{-1}`, `|3+4i|`): for those the tree of the
fast path's reader is turned into the expression latex2sympy would build, read the same way
(one-letter real symbols, `e` is Euler's number, `i` a symbol until `symbolic._readings`
makes it the imaginary unit, `\\log` without a base is base 10, `\\sqrt[n]{x}` is x^(1/n)).
Anything else, and any power or factorial too large to build eagerly, returns None and
math-verify parses it.
"""

from __future__ import annotations

import re

from math_verify.grader import should_treat_as_complex
from sympy import (
    Abs,
    E,
    Eq,
    Rational,
    Symbol,
    binomial,
    cos,
    exp,
    factorial,
    log,
    pi,
    sin,
    sqrt,
    tan,
)

from rlvr_envs.verify.math.algebra import parse_algebra

_FUNCTIONS = {"\\sin": sin, "\\cos": cos, "\\tan": tan, "\\ln": log, "\\exp": exp}
_CONSTANTS = {"e": E, "\\pi": pi}
# sympy evaluates a power of a number and a factorial of an integer when it builds them:
# larger ones are left to math-verify's parser (inside the same CPU budget).
_MAX_POWER_BITS = 1 << 14
_MAX_FACTORIAL = 1000


class _Refused(Exception):
    pass


_COMMAND = re.compile(r"\\[a-zA-Z]+")
# Left to math-verify: capital letters (it reads them in lower case, I as the imaginary
# unit), words (`5 percent`, `Monday`), scientific notation (`3.2E-5`).
_NOT_OURS = re.compile(r"[A-Z]|[a-zA-Z]{3,}|\d[eE][-+]?\d")


def _symbol(name: str, real: bool) -> Symbol:
    return Symbol(name, real=real)


def _power(base, exponent):
    if base.is_Number and exponent.is_Integer:
        size = max(abs(base.p), abs(base.q), 2).bit_length() if base.is_Rational else 64
        if size * abs(int(exponent)) > _MAX_POWER_BITS:
            raise _Refused
    elif base.is_Number and exponent.is_Rational and abs(exponent.p) > _MAX_POWER_BITS:
        raise _Refused
    return base ** exponent


def _small_integer_argument(value):
    if value.is_Integer and abs(int(value)) > _MAX_FACTORIAL:
        raise _Refused
    return value


def _build(node, real: bool):
    kind = node[0]
    if kind == "num":
        return Rational(node[1].numerator, node[1].denominator)
    if kind == "var":
        return _symbol(node[1], real)
    if kind == "const":
        return _symbol("i", real) if node[1] == "i" else _CONSTANTS[node[1]]
    if kind == "neg":
        return -_build(node[1], real)
    if kind in ("+", "-", "*", "/", "^"):
        a, b = _build(node[1], real), _build(node[2], real)
        if kind == "+":
            return a + b
        if kind == "-":
            return a - b
        if kind == "*":
            return a * b
        if kind == "/":
            return a / b
        return _power(a, b)
    if kind == "sqrt":
        return sqrt(_build(node[1], real))
    if kind == "root":
        index = _build(node[1], real)
        if not index.is_Integer or not 2 <= int(index) <= 64:
            raise _Refused
        return _power(_build(node[2], real), Rational(1, int(index)))
    if kind == "fn":
        return _FUNCTIONS[node[1]](_build(node[2], real))
    if kind == "log":
        return log(_build(node[2], real), _build(node[1], real))
    if kind == "abs":
        return Abs(_build(node[1], real))
    if kind == "fact":
        return factorial(_small_integer_argument(_build(node[1], real)))
    if kind == "binom":
        n, k = _build(node[1], real), _build(node[2], real)
        return binomial(_small_integer_argument(n), _small_integer_argument(k))
    raise _Refused


def to_sympy(text: str):
    """The sympy expression (or Eq) of `text`, or None when math-verify must parse it."""
    if _NOT_OURS.search(_COMMAND.sub(" ", text)):
        return None
    parsed = parse_algebra(text)
    if parsed is None:
        return None
    # latex2sympy's assumptions: every symbol is real unless the text looks complex
    real = not should_treat_as_complex(text)
    try:
        if parsed[0] == "eq":
            return Eq(_build(parsed[1], real), _build(parsed[2], real), evaluate=False)
        return _build(parsed[1], real)
    except (_Refused, ValueError, TypeError, ZeroDivisionError, OverflowError, RecursionError):
        return None

