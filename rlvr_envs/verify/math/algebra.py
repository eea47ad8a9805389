"""Fast path for small LaTeX expressions and equations: exact proofs, never samples.

A recursive-descent reader for a LaTeX subset (numbers, one-letter variables, + - * / ^,
implicit products, \\frac, \\sqrt, \\sqrt[n], \\pi, e, i, \\sin \\cos \\tan \\ln \\exp with a
bracketed argument, factorials and binomials of integers) turns an answer into a tree; then:

* expressions built from rationals, variables, i, square roots of rationals, rational n-th
  roots (real: the cube root of -8 is -2) and pi are rational functions with `Surd`
  coefficients (`polynomial.py`), expanded exactly: two are
  equal exactly when numerator x other denominator agree term by term. That is a proof
  both ways (a polynomial identity, not agreement at chosen points);
* equations are the same when their side-differences are proportional polynomials, and have
  no common solution when they differ by a nonzero constant;
* anything else (e, trigonometric functions, roots of variables) is only ever proved
  different: evaluated at fixed points in interval arithmetic (mpmath.iv, outward rounding),
  two answers differ when their enclosures are disjoint somewhere. Huge arguments
  (sin(10^100 pi)) and cancellation give wide enclosures, so they never "prove" a difference.

Any other input returns None: the symbolic path decides.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

from rlvr_envs.verify.math.polynomial import IMAGINARY, Poly, RationalFunction

EULER = "\\e"  # Euler's number: transcendental, so it is kept as a variable of the polynomials
from rlvr_envs.verify.math.surd import NotExact, Surd

_TOKEN = re.compile(r"\s*(\d+(?:\.\d+)?|\.\d+|\\[a-zA-Z]+|[a-zA-Z]|[-+*/^(){}\[\]=!|_])", re.ASCII)
_FUNCTIONS = ("\\sin", "\\cos", "\\tan", "\\ln", "\\exp", "\\log")
# Tokens that end the argument of a function written without brackets (`\cos 2x + 1`).
_ARGUMENT_END = frozenset(["+", "-", ")", "}", "]", "=", "|", None]) | set(_FUNCTIONS)
_CONSTANTS = ("\\pi", "e", "i")
_PRODUCT = {"*", "\\cdot", "\\times"}
_MAX_TOKENS = 200
_MAX_EXACT_BITS = 4096
_MAX_VARIABLES = 4
# Rational points (the k-th variable gets the k-th coordinate) where interval evaluation
# looks for a proof of difference; fixed so verdicts never depend on chance.
_POINTS = ((Fraction(7, 3), Fraction(11, 5), Fraction(13, 7), Fraction(17, 11)),
           (Fraction(-5, 4), Fraction(19, 6), Fraction(23, 9), Fraction(-3, 13)),
           (Fraction(29, 8), Fraction(-31, 10), Fraction(37, 12), Fraction(41, 15)))
# Beyond this magnitude an exponent or an exp() argument is not evaluated in intervals.
_MAX_EXPONENT = 1e5


class _Unsupported(Exception):
    pass


class _NoEnclosure(Exception):
    """Interval evaluation cannot bound this value (complex, unbounded, too large)."""


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
        self.bars = 0  # how many |...| are open here

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
            elif tok == "|" and self.bars:
                return node  # the closing bar of |...|
            elif tok == "\\frac" and _is_number(node):
                raise _Unsupported("2\\frac{1}{3} is a mixed number, not a product")
            elif tok is not None and tok not in ("+", "-", ")", "}", "]", "=", "^", "_"):
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

    def function(self, name: str):
        """`\\sin(x)`, `\\sin x`, `\\cos 2x`, `\\sin^2 x` (a power of the value), `\\log_2 8`,
        `\\log x` (base 10, as math-verify reads it). `\\sin^{-1}` and other exponents that
        are not positive integers are left to the symbolic path."""
        base = None
        if name == "\\log" and self.peek() == "_":
            self.take()
            base = self.group()
        power = None
        if self.peek() == "^":
            self.take()
            power = self.group()
            if power[0] != "num" or power[1].denominator != 1 or power[1] < 1:
                raise _Unsupported("a function raised to a power that is not 1, 2, 3, ...")
        arg = self.atom() if self.peek() in ("(", "{") else self.bare_argument()
        node = ("log", base or ("num", Fraction(10)), arg) if name == "\\log" else \
            ("fn", name, arg)
        return ("^", node, power) if power else node

    def bare_argument(self):
        """The argument of a function written without brackets: factors multiplied side by
        side, up to the next + - = or function (`\\sin x \\cos x` is sin(x) cos(x), `\\sin x^2`
        is sin(x^2)), as latex2sympy reads it. Anything less clear (`\\sin x / 2`) is refused."""
        if self.peek() in _ARGUMENT_END or self.peek() in ("^", "_", "!"):
            raise _Unsupported("function without an argument")
        node = self.power()
        while self.peek() not in _ARGUMENT_END:
            tok = self.peek()
            if tok in _PRODUCT or tok in ("/", "^", "_", "!") or tok[0].isdigit():
                raise _Unsupported("unclear extent of a function argument")
            node = ("*", node, self.power())
        if self.peek() == "|" and not self.bars:
            raise _Unsupported("unclear extent of a function argument")
        return node

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
            two = self.peek()
            if two is not None and len(two) == 2 and two.isdigit():  # \frac12 is 1/2
                self.take()
                return ("/", ("num", Fraction(int(two[0]))), ("num", Fraction(int(two[1]))))
            return ("/", self.group(), self.group())
        if tok in ("\\binom", "\\dbinom", "\\tbinom"):
            return ("binom", self.group(), self.group())
        if tok == "\\sqrt":
            if self.peek() == "[":  # \\sqrt[n]{x}
                self.take("[")
                index = self.expr()
                self.take("]")
                return ("root", index, self.group())
            return ("sqrt", self.group())
        if tok == "|":
            self.bars += 1
            node = self.expr()
            self.take("|")
            self.bars -= 1
            return ("abs", node)
        if tok in _FUNCTIONS:
            return self.function(tok)
        if tok == "\\pi":
            return ("const", tok)
        if len(tok) == 1 and tok.isalpha():
            return self._name(tok)
        raise _Unsupported(tok)


def _is_number(node) -> bool:
    return node[0] == "num" or (node[0] == "neg" and node[1][0] == "num")


def _raise(tok):
    raise _Unsupported(tok)


@lru_cache(maxsize=8192)
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


def _exact(node) -> RationalFunction:
    """The exact rational function of `node`; NotExact when it is not one."""
    kind = node[0]
    if kind == "num":
        return RationalFunction.constant(node[1])
    if kind == "var":
        return RationalFunction.variable(node[1])
    if kind == "const":
        if node[1] == "i":
            return RationalFunction.variable(IMAGINARY)
        if node[1] == "e":
            return RationalFunction.variable(EULER)
        if node[1] != "\\pi":
            raise NotExact
        return RationalFunction.constant(Surd.pi())
    if kind == "neg":
        return -_exact(node[1])
    if kind in ("+", "-", "*", "/"):
        a, b = _exact(node[1]), _exact(node[2])
        if kind == "+":
            return a + b
        if kind == "-":
            return a - b
        if kind == "*":
            return a * b
        return a / b
    if kind == "^":
        return _exact_power(_exact(node[1]), _exact(node[2]))
    if kind == "sqrt":
        value = _exact(node[1]).as_fraction()
        if value is None:
            raise NotExact
        return RationalFunction.constant(Surd.rational(value).sqrt())
    if kind == "root":
        root = _rational_root(_exact(node[2]).as_fraction(), _root_index(node[1]))
        if root is None:
            raise NotExact
        return RationalFunction.constant(root)
    if kind == "abs":
        return RationalFunction.constant(_modulus(_exact(node[1])))
    if kind == "fact":
        return RationalFunction.constant(_factorial(_exact(node[1]).as_fraction()))
    if kind == "binom":
        n, k = _exact(node[1]).as_fraction(), _exact(node[2]).as_fraction()
        return RationalFunction.constant(math.comb(_small_natural(n), _small_natural(k)))
    raise NotExact


def _modulus(value: RationalFunction) -> Surd:
    """|a + b i| for rationals a, b (a constant numerator a + b i over a rational denominator)."""
    den = value.den.constant_value()
    den = den.as_fraction() if den is not None else None
    parts = {(): Fraction(0), ((IMAGINARY, 1),): Fraction(0)}
    for monomial, coefficient in value.num.terms.items():
        rational = coefficient.as_fraction()
        if monomial not in parts or rational is None:
            raise NotExact
        parts[monomial] = rational
    if den is None:
        raise NotExact
    a, b = parts[()] / den, parts[((IMAGINARY, 1),)] / den
    return Surd.rational(abs(a)) if not b else Surd.rational(a * a + b * b).sqrt()


def _exact_power(base: RationalFunction, exponent_rf: RationalFunction) -> RationalFunction:
    exponent = exponent_rf.as_fraction()
    if exponent is None:
        raise NotExact
    rational = base.as_fraction()
    if exponent.denominator == 2:  # x^{3/2} = (sqrt x)^3, for a rational x >= 0
        if rational is None or rational < 0:
            raise NotExact
        root = Surd.rational(rational).sqrt()
        rational = root.as_fraction()
        base, exponent = RationalFunction.constant(root), exponent * 2
    if exponent.denominator != 1:
        raise NotExact
    power = exponent.numerator
    if rational is not None:
        size = max(abs(rational.numerator), abs(rational.denominator), 2).bit_length()
        if size * abs(power) > _MAX_EXACT_BITS:
            raise NotExact
        if rational == 0 and power < 0:
            raise ZeroDivisionError
        return RationalFunction.constant(rational ** power)
    return base.power(power)


def _root_index(node) -> int:
    index = _exact(node).as_fraction()
    if index is None or index.denominator != 1 or not 2 <= index <= 64:
        raise NotExact
    return int(index)


def _integer_root(n: int, k: int) -> int | None:
    """The integer r >= 0 with r**k == n (n >= 0), or None."""
    low, high = 0, 1 << (n.bit_length() // k + 1)
    while low <= high:
        mid = (low + high) // 2
        power = mid ** k
        if power == n:
            return mid
        if power < n:
            low = mid + 1
        else:
            high = mid - 1
    return None


def _rational_root(value: Fraction | None, k: int) -> Fraction | None:
    """The real k-th root of `value` when it is rational (odd roots of negatives are real:
    the cube root of -8 is -2), else None."""
    if value is None or (value < 0 and k % 2 == 0):
        return None
    if max(value.numerator, value.denominator).bit_length() > _MAX_EXACT_BITS:
        return None
    num, den = _integer_root(abs(value.numerator), k), _integer_root(value.denominator, k)
    if num is None or den is None:
        return None
    return Fraction(-num if value < 0 else num, den)


def _small_natural(value) -> int:
    if value is None or value != int(value) or not 0 <= value <= 1000:
        raise ValueError("factorials and binomials are read for integers 0..1000")
    return int(value)


def _factorial(value) -> int:
    return math.factorial(_small_natural(value))


def _enclosure(node, env: dict[str, object]):
    """An mpmath interval that surely holds the value of `node` at the point `env`."""
    from mpmath import iv

    kind = node[0]
    if kind == "num":
        return iv.mpf(node[1].numerator) / node[1].denominator
    if kind == "var":
        return env[node[1]]
    if kind == "const":
        if node[1] == "i":
            raise _NoEnclosure
        return iv.pi if node[1] == "\\pi" else iv.e
    if kind == "neg":
        return -_enclosure(node[1], env)
    if kind in ("fact", "binom"):  # integer arguments only: the exact value, enclosed
        return iv.mpf(_exact(node).as_fraction())
    if kind == "sqrt":
        return iv.sqrt(_enclosure(node[1], env))
    if kind == "root":  # the real root: odd roots of negatives are negative
        k, x = _root_index(node[1]), _enclosure(node[2], env)
        if x.a > 0:
            return iv.exp(iv.log(x) / k)
        if x.b < 0 and k % 2:
            return -iv.exp(iv.log(-x) / k)
        raise _NoEnclosure
    if kind == "abs":
        return abs(_enclosure(node[1], env))
    if kind == "log":  # log_b x = ln x / ln b
        base, arg = _enclosure(node[1], env), _enclosure(node[2], env)
        if base.a <= 0 or arg.a <= 0:
            raise _NoEnclosure
        ln_base = iv.log(base)
        if ln_base.a <= 0 <= ln_base.b:
            raise _NoEnclosure
        return iv.log(arg) / ln_base
    if kind == "fn":
        arg = _enclosure(node[2], env)
        if node[1] == "\\exp":
            if abs(arg.b) > _MAX_EXPONENT or abs(arg.a) > _MAX_EXPONENT:
                raise _NoEnclosure
            return iv.exp(arg)
        return {"\\sin": iv.sin, "\\cos": iv.cos, "\\tan": iv.tan, "\\ln": iv.log}[node[1]](arg)
    a, b = _enclosure(node[1], env), _enclosure(node[2], env)
    if kind == "+":
        return a + b
    if kind == "-":
        return a - b
    if kind == "*":
        return a * b
    if kind == "/":
        if b.a <= 0 <= b.b:
            raise _NoEnclosure
        return a / b
    # a ^ b: an integer exponent works for any base; otherwise the base must be positive
    if b.a == b.b and b.a == int(b.a) and abs(b.a) <= _MAX_EXPONENT:
        return a ** int(b.a)
    if a.a <= 0 or max(abs(b.a), abs(b.b)) > _MAX_EXPONENT:
        raise _NoEnclosure
    return iv.exp(b * iv.log(a))


def _finite(x) -> bool:
    return all(math.isfinite(float(end)) for end in (x.a, x.b))


def _proved_different(gold_node, answer_node, names: list[str]) -> bool:
    """True when at one of the fixed points the two values have disjoint enclosures."""
    from mpmath import iv

    for point in _POINTS:
        env = {n: iv.mpf(v.numerator) / v.denominator for n, v in zip(names, point)}
        try:
            g, a = _enclosure(gold_node, env), _enclosure(answer_node, env)
        except Exception:  # noqa: BLE001, S112 - complex, unbounded, undefined: no proof here
            continue
        if _finite(g) and _finite(a) and (g.b < a.a or a.b < g.a):
            return True
    return False


def _uses(node, constant: str) -> bool:
    return node == ("const", constant) or any(
        isinstance(child, tuple) and _uses(child, constant) for child in node[1:])


def _expressions_equal(gold_node, answer_node, names: list[str]) -> bool | None:
    if gold_node == answer_node:  # the same tree, spelled differently: \\sin x and \\sin(x)
        return True
    try:
        same = _exact(gold_node).same_as(_exact(answer_node))
        # e is a variable of the polynomials: equal ones are equal values, and since e is
        # transcendental, different ones are different values, unless pi is there too
        # (whether e and pi are algebraically independent is not known)
        nodes = (gold_node, answer_node)
        if same or not (any(_uses(n, "e") for n in nodes) and any(_uses(n, "\\pi") for n in nodes)):
            return same
    except NotExact:
        pass
    return False if _proved_different(gold_node, answer_node, names) else None


def _equations_equal(gold, answer) -> bool | None:
    """Same equation when the side-differences are proportional polynomials; None unless
    that, or a nonzero constant between them (no common solution), is proved exactly."""
    try:
        dg = _exact(("-", gold[1], gold[2]))
        da = _exact(("-", answer[1], answer[2]))
    except NotExact:
        return None
    if dg.den.constant_value() is None or da.den.constant_value() is None:
        return None
    p, q = dg.num, da.num
    monomial = next((m for m in q.terms if m), None)
    if monomial is None or monomial not in p.terms:
        return None
    scaled_p = p * Poly.constant(q.terms[monomial])
    scaled_q = q * Poly.constant(p.terms[monomial])
    if scaled_p == scaled_q:
        return True
    rest = (scaled_p - scaled_q).constant_value()
    return False if rest is not None and rest.terms else None


def rational_value(text: str) -> Fraction | None:
    """The exact rational value of a small expression without variables (`2 - 1`,
    `\\frac{1}{2} - 1`, `2^{-3}`), else None."""
    parsed = parse_algebra(text)
    if parsed is None or parsed[0] != "expr" or _variables(parsed[1], set()):
        return None
    try:
        return _exact(parsed[1]).as_fraction()
    except (NotExact, ZeroDivisionError, OverflowError, ValueError, RecursionError):
        return None


def is_constant(text: str) -> bool:
    """Whether `text` is an expression of the reader's subset without variables (`8!`, `|8|`,
    `\\frac{16}{2}`, `2\\sqrt{3}`, `\\pi`): one value, exact or enclosed."""
    parsed = parse_algebra(text)
    return parsed is not None and parsed[0] == "expr" and not _variables(parsed[1], set())


def algebra_equal(gold: str, answer: str) -> bool | None:
    """True/False when it is proved (see the module docstring), None when the symbolic path
    must decide."""
    g, a = parse_algebra(gold), parse_algebra(answer)
    if g is None or a is None:
        return None
    names = sorted(set().union(*(_variables(t, set()) for t in g[1:] + a[1:])))
    if len(names) > _MAX_VARIABLES:
        return None
    try:
        if g[0] != a[0]:  # "x = 2√3" against "2√3": the value assigned is what counts
            equation, value = (a, g) if a[0] == "eq" else (g, a)
            if equation[1][0] != "var" or equation[1][1] in _variables(equation[2], set()):
                return None
            values = (value[1], equation[2]) if value is g else (equation[2], value[1])
            return _expressions_equal(*values, names)
        if g[0] == "expr":
            return _expressions_equal(g[1], a[1], names)
        if g[1][0] == "var" and g[1] == a[1] and g[1][1] not in _variables(g[2], set()) \
                and g[1][1] not in _variables(a[2], set()):
            return _expressions_equal(g[2], a[2], names)  # y = ... against y = ...
        return _equations_equal(g, a)
    except (ZeroDivisionError, OverflowError, ValueError, RecursionError):
        return None
