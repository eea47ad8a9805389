"""Canonical text for math golds and prompts: integers, `\\frac{a}{b}`, tuples, polynomials.

Golds are written in the simplest forms the math verifier parses (an integer, `-\\frac{3}{4}`,
`(2, -\\frac{1}{3})`); prompts use the same LaTeX so a model sees one notation.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import sympy as sp


def latex_number(value: sp.Rational | int) -> str:
    """An exact rational as `7`, `-7`, `\\frac{3}{4}` or `-\\frac{3}{4}`."""
    q = sp.Rational(value)
    if q.q == 1:
        return str(q.p)
    sign = "-" if q < 0 else ""
    return f"{sign}\\frac{{{abs(q.p)}}}{{{q.q}}}"


def latex_tuple(values: Iterable[sp.Rational | int]) -> str:
    """An ordered tuple of exact rationals, e.g. `(2, -\\frac{1}{3})`."""
    return "(" + ", ".join(latex_number(v) for v in values) + ")"


def digits(value: int | sp.Integer) -> int:
    """Number of decimal digits of an integer's magnitude (0 has one digit)."""
    return len(str(abs(int(value))))


def signed_terms(terms: Sequence[tuple[int | sp.Rational, str]]) -> str:
    """Join (coefficient, monomial) pairs into `3x^2 - x + 5` (zero terms dropped).

    A monomial of "" is a constant; a coefficient of ±1 on a non-constant monomial is
    written as `x` / `-x`.
    """
    parts: list[str] = []
    for coeff, monomial in terms:
        c = sp.Rational(coeff)
        if c == 0:
            continue
        magnitude = abs(c)
        if monomial and magnitude == 1:
            body = monomial
        else:
            body = latex_number(magnitude) + monomial
        if not parts:
            parts.append(("-" if c < 0 else "") + body)
        else:
            parts.append((" - " if c < 0 else " + ") + body)
    return "".join(parts) if parts else "0"


def monomial(var: str, power: int) -> str:
    if power == 0:
        return ""
    if power == 1:
        return var
    return f"{var}^{{{power}}}" if power > 9 else f"{var}^{power}"


def latex_poly(coeffs_high_to_low: Sequence[int | sp.Rational], var: str = "x") -> str:
    """A polynomial from its coefficients, highest degree first: `[1, 2, 1]` → `x^2 + 2x + 1`."""
    degree = len(coeffs_high_to_low) - 1
    return signed_terms([(c, monomial(var, degree - i)) for i, c in enumerate(coeffs_high_to_low)])


def poly_coeffs(expr: sp.Expr, var: sp.Symbol) -> list[sp.Rational]:
    """Coefficients of a polynomial expression, highest degree first."""
    return [sp.Rational(c) for c in sp.Poly(sp.expand(expr), var).all_coeffs()]
