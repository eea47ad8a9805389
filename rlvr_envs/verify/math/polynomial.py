"""Exact polynomials and rational functions with `Surd` coefficients (q·√d·π^k sums).

Two polynomials are the same function exactly when their coefficients agree, and Surd
coefficients compare exactly, so `p == q` here is a proof, not a sample. The imaginary unit
is a variable reduced by i^2 = -1 after every product, so Gaussian values stay canonical
(a + b i) and `\\frac{2}{1+i} = 1-i` is proved by cross-multiplication. A rational function
is kept as an unreduced (numerator, denominator) pair and compared by cross-multiplication.
Sizes are capped (terms, degree); going past a cap raises NotExact, and the caller falls back
to another method.
"""

from __future__ import annotations

from fractions import Fraction

from rlvr_envs.verify.math.surd import NotExact, Surd

_MAX_TERMS = 512
_MAX_DEGREE = 64

Monomial = tuple[tuple[str, int], ...]  # sorted (variable, exponent > 0) pairs; () is 1


IMAGINARY = "\\i"  # the imaginary unit, kept as a variable reduced by i^2 = -1


def _times(a: Monomial, b: Monomial) -> tuple[Monomial, int]:
    """The product monomial and its sign (from i^2 = -1)."""
    powers = dict(a)
    for var, exp in b:
        powers[var] = powers.get(var, 0) + exp
    sign = 1
    if powers.get(IMAGINARY, 0) >= 2:
        exp = powers.pop(IMAGINARY)
        sign = -1 if exp % 4 in (2, 3) else 1
        if exp % 2:
            powers[IMAGINARY] = 1
    return tuple(sorted(powers.items())), sign


class Poly:
    __slots__ = ("terms",)

    def __init__(self, terms: dict[Monomial, Surd]):
        self.terms = {m: c for m, c in terms.items() if c.terms}
        if len(self.terms) > _MAX_TERMS:
            raise NotExact
        if any(sum(e for _, e in m) > _MAX_DEGREE for m in self.terms):
            raise NotExact

    @classmethod
    def constant(cls, value: Surd) -> Poly:
        return cls({(): value})

    @classmethod
    def variable(cls, name: str) -> Poly:
        return cls({((name, 1),): Surd.rational(1)})

    def is_zero(self) -> bool:
        return not self.terms

    def constant_value(self) -> Surd | None:
        """The value when this polynomial has no variable, else None."""
        if not self.terms:
            return Surd.rational(0)
        if set(self.terms) == {()}:
            return self.terms[()]
        return None

    def degree(self) -> int:
        return max((sum(e for _, e in m) for m in self.terms), default=0)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Poly) and self.terms == other.terms

    def __hash__(self) -> int:
        return hash(frozenset(self.terms))

    def __neg__(self) -> Poly:
        return Poly({m: -c for m, c in self.terms.items()})

    def __add__(self, other: Poly) -> Poly:
        terms = dict(self.terms)
        for m, c in other.terms.items():
            terms[m] = terms[m] + c if m in terms else c
        return Poly(terms)

    def __sub__(self, other: Poly) -> Poly:
        return self + (-other)

    def __mul__(self, other: Poly) -> Poly:
        terms: dict[Monomial, Surd] = {}
        for m1, c1 in self.terms.items():
            for m2, c2 in other.terms.items():
                m, sign = _times(m1, m2)
                product = c1 * c2 if sign > 0 else -(c1 * c2)
                terms[m] = terms[m] + product if m in terms else product
        return Poly(terms)

    def power(self, exponent: int) -> Poly:
        if exponent < 0 or exponent * max(self.degree(), 1) > _MAX_DEGREE:
            raise NotExact
        result, base = Poly.constant(Surd.rational(1)), self
        while exponent:
            if exponent & 1:
                result = result * base
            exponent >>= 1
            if exponent:
                base = base * base
        return result


class RationalFunction:
    """numerator / denominator, never reduced; equality by cross-multiplication."""

    __slots__ = ("den", "num")

    def __init__(self, num: Poly, den: Poly):
        if den.is_zero():
            raise ZeroDivisionError
        self.num, self.den = num, den

    @classmethod
    def constant(cls, value: Surd | Fraction | int) -> RationalFunction:
        surd = value if isinstance(value, Surd) else Surd.rational(value)
        return cls(Poly.constant(surd), Poly.constant(Surd.rational(1)))

    @classmethod
    def variable(cls, name: str) -> RationalFunction:
        return cls(Poly.variable(name), Poly.constant(Surd.rational(1)))

    def constant_value(self) -> tuple[Surd, Surd] | None:
        """(numerator, denominator) values when both are constants, else None."""
        n, d = self.num.constant_value(), self.den.constant_value()
        return None if n is None or d is None else (n, d)

    def as_fraction(self) -> Fraction | None:
        value = self.constant_value()
        if value is None:
            return None
        n, d = value[0].as_fraction(), value[1].as_fraction()
        return None if n is None or d is None else n / d

    def same_as(self, other: RationalFunction) -> bool:
        return self.num * other.den == other.num * self.den

    def __neg__(self) -> RationalFunction:
        return RationalFunction(-self.num, self.den)

    def __add__(self, other: RationalFunction) -> RationalFunction:
        if self.den == other.den:
            return RationalFunction(self.num + other.num, self.den)
        return RationalFunction(self.num * other.den + other.num * self.den,
                                self.den * other.den)

    def __sub__(self, other: RationalFunction) -> RationalFunction:
        return self + (-other)

    def __mul__(self, other: RationalFunction) -> RationalFunction:
        return RationalFunction(self.num * other.num, self.den * other.den)

    def __truediv__(self, other: RationalFunction) -> RationalFunction:
        if other.num.is_zero():
            raise ZeroDivisionError
        return RationalFunction(self.num * other.den, self.den * other.num)

    def power(self, exponent: int) -> RationalFunction:
        if exponent >= 0:
            return RationalFunction(self.num.power(exponent), self.den.power(exponent))
        if self.num.is_zero():
            raise ZeroDivisionError
        return RationalFunction(self.den.power(-exponent), self.num.power(-exponent))
