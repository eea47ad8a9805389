"""Fast path for small LaTeX expressions and equations: evaluation at fixed sample points.

A recursive-descent reader for a LaTeX subset (numbers, one-letter variables, + - * / ^,
implicit products, \\frac, \\sqrt, \\pi, e, \\sin \\cos \\tan \\ln \\exp with a bracketed
argument) turns an answer into a tree that is evaluated, never simplified:

* expressions built from rationals, square roots and pi are evaluated exactly (as
  `surd.Surd` numbers) at fixed rational points; equal values at every point decide
  "equal", a different value decides "different";
* anything else (e, trigonometric functions, roots of non-rationals) is evaluated in
  floating point: a clear difference at a point decides "different"; agreement is left to
  the symbolic path to confirm.

Any other input, or an evaluation that overflows, returns None: the symbolic path decides.
"""

from __future__ import annotations

import cmath
import math
import re
from fractions import Fraction

from rlvr_envs.verify.math.surd import NotExact, Surd

_TOKEN = re.compile(r"\s*(\d+(?:\.\d+)?|\.\d+|\\[a-zA-Z]+|[a-zA-Z]|[-+*/^(){}\[\]=!])", re.ASCII)
_FUNCTIONS = {"\\sin": cmath.sin, "\\cos": cmath.cos, "\\tan": cmath.tan, "\\ln": cmath.log,
              "\\exp": cmath.exp}
_CONSTANTS = {"\\pi": math.pi, "e": math.e, "i": 1j}
_PRODUCT = {"*", "\\cdot", "\\times"}
_MAX_TOKENS = 200
_MAX_EXACT_BITS = 4096
# Rational sample points (the k-th variable gets the k-th coordinate); fixed so verdicts
# never depend on chance.
_EXACT_POINTS = ((Fraction(7, 3), Fraction(11, 5), Fraction(13, 7), Fraction(17, 11)),
                 (Fraction(-5, 4), Fraction(19, 6), Fraction(23, 9), Fraction(-3, 13)),
                 (Fraction(29, 8), Fraction(-31, 10), Fraction(37, 12), Fraction(41, 15)))
_CLOSE = 1e-9


class _Unsupported(Exception):
    pass


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise _Unsupported(text[pos:pos + 10])
        out.append(m.group(1))
        pos = m.end()
        if len(out) > _MAX_TOKENS:
            raise _Unsupported("too long")
    return out


class _Reader:
    def __init__(self, tokens: list[str]):
        self.tokens, self.pos = tokens, 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (expected is not None and tok != expected):
            raise _Unsupported(f"expected {expected}, got {tok}")
        self.pos += 1
        return tok

    def expr(self):
        node = self.term()
        while self.peek() in ("+", "-"):
            node = (self.take(), node, self.term())
        return node

    def term(self):
        node = self.signed()
        while True:
            tok = self.peek()
            if tok in _PRODUCT or tok == "/":
                self.take()
                node = ("/" if tok == "/" else "*", node, self.signed())
            elif tok is not None and tok[0].isdigit():
                raise _Unsupported("two numbers side by side")
            elif tok is not None and tok not in ("+", "-", ")", "}", "]", "=", "^"):
                node = ("*", node, self.power())  # implicit product: 2x, (x+1)(x-1)
            else:
                return node

    def signed(self):
        if self.peek() in ("+", "-"):
            sign = self.take()
            inner = self.signed()
            return ("neg", inner) if sign == "-" else inner
        return self.power()

    def power(self):
        base = self.atom()
        while self.peek() == "!":
            self.take()
            base = ("fact", base)
        if self.peek() == "^":
            self.take()
            if self.peek() != "{" and (self.peek() or "")[:1].isdigit() and len(self.peek()) > 1:
                raise _Unsupported("x^10 means x^1 0 in LaTeX")
            exponent = self.group() if self.peek() == "{" else self.signed_atom()
            return ("^", base, exponent)
        return base

    def signed_atom(self):
        if self.peek() == "-":
            self.take()
            return ("neg", self.atom())
        return self.atom()

    def group(self):
        """A {...} group, or a single digit / letter (as in \\frac12)."""
        if self.peek() == "{":
            self.take()
            node = self.expr()
            self.take("}")
            return node
        tok = self.take()
        if tok.isdigit():
            return ("num", Fraction(int(tok[0]))) if len(tok) == 1 else _raise(tok)
        if len(tok) == 1 and tok.isalpha():
            return self._name(tok)
        raise _Unsupported(tok)

    def _name(self, tok: str):
        return ("const", tok) if tok in _CONSTANTS else ("var", tok)

    def atom(self):
        tok = self.take()
        if tok[0].isdigit() or tok[0] == ".":
            return ("num", Fraction(tok))
        if tok in ("(", "{", "["):
            node = self.expr()
            self.take({"(": ")", "{": "}", "[": "]"}[tok])
            return node
        if tok == "\\frac":
            return ("/", self.group(), self.group())
        if tok in ("\\binom", "\\dbinom", "\\tbinom"):
            return ("binom", self.group(), self.group())
        if tok == "\\sqrt":
            if self.peek() == "[":
                raise _Unsupported("nth root")
            return ("sqrt", self.group())
        if tok in _FUNCTIONS:
            if self.peek() not in ("(", "{"):
                raise _Unsupported("function without brackets")
            return ("fn", tok, self.atom())
        if tok == "\\pi":
            return ("const", tok)
        if len(tok) == 1 and tok.isalpha():
            return self._name(tok)
        raise _Unsupported(tok)


def _raise(tok):
    raise _Unsupported(tok)


def parse_algebra(text: str):
    """(kind, tree...) for an expression ("expr", tree) or equation ("eq", lhs, rhs); or None."""
    try:
        reader = _Reader(_tokens(text))
        left = reader.expr()
        if reader.peek() == "=":
            reader.take()
            right = reader.expr()
            if reader.peek() is not None:
                return None
            return ("eq", left, right)
        if reader.peek() is not None:
            return None
        return ("expr", left)
    except (_Unsupported, ValueError, ZeroDivisionError, RecursionError):
        return None


def _variables(node, found: set[str]) -> set[str]:
    if node[0] == "var":
        found.add(node[1])
    for child in node[1:]:
        if isinstance(child, tuple):
            _variables(child, found)
    return found


def _exact(node, env: dict[str, Fraction]) -> Surd:
    kind = node[0]
    if kind == "num":
        return Surd.rational(node[1])
    if kind == "var":
        return Surd.rational(env[node[1]])
    if kind == "const":
        if node[1] != "\\pi":
            raise NotExact
        return Surd.pi()
    if kind == "neg":
        return -_exact(node[1], env)
    if kind in ("+", "-", "*", "/"):
        a, b = _exact(node[1], env), _exact(node[2], env)
        if kind == "+":
            return a + b
        if kind == "-":
            return a - b
        if kind == "*":
            return a * b
        return a / b
    if kind == "^":
        base, exponent = _exact(node[1], env), _exact(node[2], env).as_fraction()
        if exponent is None:
            raise NotExact
        if exponent.denominator == 2:
            base, exponent = base.sqrt(), exponent * 2
        if exponent.denominator != 1:
            raise NotExact
        rational = base.as_fraction()
        if rational is not None:
            size = max(abs(rational.numerator), abs(rational.denominator), 2).bit_length()
            if size * abs(exponent.numerator) > _MAX_EXACT_BITS:
                raise NotExact
            if rational == 0 and exponent < 0:
                raise ZeroDivisionError
            return Surd.rational(rational ** exponent.numerator)
        return base.power(exponent.numerator)
    if kind == "sqrt":
        return _exact(node[1], env).sqrt()
    if kind == "fact":
        return Surd.rational(_factorial(_exact(node[1], env).as_fraction()))
    if kind == "binom":
        n, k = _exact(node[1], env).as_fraction(), _exact(node[2], env).as_fraction()
        return Surd.rational(math.comb(_small_natural(n), _small_natural(k)))
    raise NotExact


def _small_natural(value) -> int:
    if isinstance(value, complex):
        if abs(value.imag) > 1e-12 or abs(value.real - round(value.real)) > 1e-9:
            raise ValueError("not an integer")
        value = round(value.real)
    if value is None or value != int(value) or not 0 <= value <= 1000:
        raise ValueError("factorials and binomials are read for integers 0..1000")
    return int(value)


def _factorial(value) -> int:
    return math.factorial(_small_natural(value))


def _approx(node, env: dict[str, complex]) -> complex:
    kind = node[0]
    if kind == "num":
        return complex(node[1])
    if kind == "var":
        return env[node[1]]
    if kind == "const":
        return complex(_CONSTANTS[node[1]])
    if kind == "neg":
        return -_approx(node[1], env)
    if kind == "sqrt":
        return cmath.sqrt(_approx(node[1], env))
    if kind == "fn":
        return _FUNCTIONS[node[1]](_approx(node[2], env))
    if kind == "fact":
        return complex(_factorial(_approx(node[1], env)))
    if kind == "binom":
        n, k = _approx(node[1], env), _approx(node[2], env)
        return complex(math.comb(_small_natural(n), _small_natural(k)))
    a, b = _approx(node[1], env), _approx(node[2], env)
    if kind == "+":
        return a + b
    if kind == "-":
        return a - b
    if kind == "*":
        return a * b
    if kind == "/":
        return a / b
    if abs(b) > 1e4:
        raise OverflowError
    return a ** b


def _values(node, names: list[str]) -> list:
    """Exact values at every sample point if the tree allows, else floating-point values."""
    try:
        return [_exact(node, dict(zip(names, point))) for point in _EXACT_POINTS]
    except (NotExact, KeyError):
        pass
    return [_approx(node, {n: complex(v) for n, v in zip(names, point)}) for point in _EXACT_POINTS]


def _close(a: complex, b: complex) -> bool:
    return abs(a - b) <= _CLOSE * max(1.0, abs(a), abs(b))


def _compare(gold_node, answer_node, names: list[str]) -> bool | None:
    g, a = _values(gold_node, names), _values(answer_node, names)
    if all(isinstance(x, Surd) for x in g + a):
        return g == a
    g, a = [complex(x) for x in g], [complex(x) for x in a]
    if not all(map(cmath.isfinite, g + a)):
        return None
    return False if not all(map(_close, g, a)) else None


def algebra_equal(gold: str, answer: str) -> bool | None:
    """True/False when evaluation decides it soundly, None when the symbolic path must."""
    g, a = parse_algebra(gold), parse_algebra(answer)
    if g is None or a is None or g[0] != a[0]:
        return None
    names = sorted(set().union(*(_variables(t, set()) for t in g[1:] + a[1:])))
    if len(names) > len(_EXACT_POINTS[0]):
        return None
    try:
        if g[0] == "expr":
            return _compare(g[1], a[1], names)
        # equations: same assigned variable -> compare right-hand sides
        if g[1][0] == "var" and g[1] == a[1] and g[1][1] not in _variables(g[2], set()) \
                and g[1][1] not in _variables(a[2], set()):
            return _compare(g[2], a[2], names)
        # otherwise the same equation iff one side-difference is a constant multiple of the other
        dg = _values(("-", g[1], g[2]), names)
        da = _values(("-", a[1], a[2]), names)
        dg = [x.as_fraction() if isinstance(x, Surd) else None for x in dg]
        da = [x.as_fraction() if isinstance(x, Surd) else None for x in da]
        if all(x is not None for x in dg + da) and all(dg) and all(da):
            ratios = [x / y for x, y in zip(dg, da)]
            if all(r == ratios[0] for r in ratios):
                return True
        if names and all(x is not None for x in dg + da) and da[0] != da[1]:
            # gold = c * answer + k with k != 0: no common solution at all (over C)
            c = (dg[0] - dg[1]) / (da[0] - da[1])
            k = dg[0] - c * da[0]
            if c and k and all(x - c * y == k for x, y in zip(dg, da)):
                return False
        return None
    except (ZeroDivisionError, OverflowError, ValueError, RecursionError):
        return None
