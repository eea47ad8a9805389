"""Exact numbers of the form sum of q * sqrt(d) * pi**k (q rational, d square-free, k integer).

Square roots of distinct square-free integers are linearly independent over the rationals,
and pi is transcendental, so two such sums are equal exactly when their terms are: equality
needs no simplification. Operations that leave this set raise NotExact.
"""

from __future__ import annotations

import math
from fractions import Fraction

_MAX_TERMS = 64
_MAX_RADICAND = 10**10


class NotExact(Exception):
    """The result is not a sum of rational multiples of sqrt(d) * pi**k."""


def _square_free(n: int) -> tuple[int, int]:
    """(s, f) with n = s * f**2 and s square-free."""
    if n > _MAX_RADICAND:
        raise NotExact
    factor, p = 1, 2
    while p * p <= n:
        while n % (p * p) == 0:
            n //= p * p
            factor *= p
        p += 1 if p == 2 else 2
    return n, factor


class Surd:
    __slots__ = ("terms",)

    def __init__(self, terms: dict[tuple[int, int], Fraction]):
        self.terms = {key: c for key, c in terms.items() if c}
        if len(self.terms) > _MAX_TERMS:
            raise NotExact

    @classmethod
    def rational(cls, value: Fraction | int) -> Surd:
        return cls({(1, 0): Fraction(value)})

    @classmethod
    def pi(cls) -> Surd:
        return cls({(1, 1): Fraction(1)})

    def as_fraction(self) -> Fraction | None:
        if not self.terms:
            return Fraction(0)
        if set(self.terms) == {(1, 0)}:
            return self.terms[(1, 0)]
        return None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Surd) and self.terms == other.terms

    def __hash__(self) -> int:
        return hash(frozenset(self.terms.items()))

    def __neg__(self) -> Surd:
        return Surd({k: -c for k, c in self.terms.items()})

    def __add__(self, other: Surd) -> Surd:
        terms = dict(self.terms)
        for key, c in other.terms.items():
            terms[key] = terms.get(key, Fraction(0)) + c
        return Surd(terms)

    def __sub__(self, other: Surd) -> Surd:
        return self + (-other)

    def __mul__(self, other: Surd) -> Surd:
        terms: dict[tuple[int, int], Fraction] = {}
        for (d1, k1), c1 in self.terms.items():
            for (d2, k2), c2 in other.terms.items():
                g = math.gcd(d1, d2)
                key = (d1 // g * (d2 // g), k1 + k2)
                terms[key] = terms.get(key, Fraction(0)) + c1 * c2 * g
        return Surd(terms)

    def inverse(self) -> Surd:
        if len(self.terms) != 1:
            raise NotExact
        ((d, k), c), = self.terms.items()
        return Surd({(d, -k): 1 / (c * d)})  # 1/(c sqrt(d) pi^k) = sqrt(d) / (c d) pi^-k

    def __truediv__(self, other: Surd) -> Surd:
        if not other.terms:
            raise ZeroDivisionError
        return self * other.inverse()

    def power(self, exponent: int) -> Surd:
        if abs(exponent) > 64:
            raise NotExact
        base = self if exponent >= 0 else self.inverse()
        result = Surd.rational(1)
        for _ in range(abs(exponent)):
            result = result * base
        return result

    def sqrt(self) -> Surd:
        value = self.as_fraction()
        if value is None or value < 0:
            raise NotExact
        num, num_root = _square_free(value.numerator * value.denominator)
        return Surd({(num, 0): Fraction(num_root, value.denominator)})

    def __complex__(self) -> complex:
        return complex(sum(float(c) * math.sqrt(d) * math.pi**k for (d, k), c in self.terms.items()))
