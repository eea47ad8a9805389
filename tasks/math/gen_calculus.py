"""Procedural generator for derivatives: the value f'(c) (or f''(c)) of a built function.

The task asks for the derivative's value at a point, not the derivative as an expression: a
symbolic verifier accepts `\\frac{d}{dx}(x^3 + 2x)` as equal to `3x^2 + 2`, so an expression
gold would reward restating the question. The building blocks are chosen so the value at the
point is rational: transcendental pieces vanish there (exp(a(x-c)) = 1, sin(a(x-c)) = 0,
ln(a(x-c)+1) = 0) and square roots are taken of perfect squares.
"""

from __future__ import annotations

import random

import sympy as sp

from rlvr_envs.core.sources import Generated
from rlvr_envs.tasks.math.formatting import latex_number
from rlvr_envs.tasks.math.levels import check_level

X = sp.Symbol("x")


def _polynomial(rng: random.Random, degree: int, bound: int) -> sp.Expr:
    coeffs = [rng.randint(1, bound)] + [rng.randint(-bound, bound) for _ in range(degree)]
    return sp.Poly(coeffs, X).as_expr()


def _atom(rng: random.Random, level: int, c: int) -> sp.Expr:
    """One building block; more kinds unlock as the level grows."""
    bound = 2 + level // 2
    kinds = ["poly"]
    if level >= 3:
        kinds += ["exp", "sin", "cos"]
    if level >= 4:
        kinds += ["power", "sqrt"]
    if level >= 5:
        kinds += ["ln"]
    kind = rng.choice(kinds)
    a = rng.choice([v for v in range(-bound, bound + 1) if v != 0])
    shift = a * (X - c)
    if kind == "poly":
        return _polynomial(rng, rng.randint(1, min(4, 1 + level // 2)), bound)
    if kind == "exp":
        return sp.exp(shift)
    if kind == "sin":
        return sp.sin(shift)
    if kind == "cos":
        return sp.cos(shift)
    if kind == "power":
        return _polynomial(rng, rng.randint(1, 2), bound) ** rng.randint(2, 3)
    if kind == "sqrt":
        return sp.sqrt(shift + rng.randint(1, 4) ** 2)
    return sp.log(shift + 1)


def _looks_constant(f: sp.Expr, c: int) -> bool:
    """True when f takes the same value at two points near c (e.g. e^{3x} e^{-3x})."""
    try:
        a, b = (complex(f.subs(X, c + offset).evalf(15)) for offset in (0.37, 0.71))
    except (TypeError, ValueError):  # a pole or undefined point: not a constant function
        return False
    return abs(a - b) < 1e-9


Jet = tuple  # (g(c), g'(c), g''(c)) as exact rationals, up to the derivative order asked


def _atom_jet(atom: sp.Expr, c: int, order: int) -> Jet | None:
    values = []
    if atom.is_polynomial(X):  # Poly arithmetic is far faster than Expr.diff on powers
        poly = sp.Poly(atom, X)
        for _ in range(order + 1):
            values.append(poly.eval(c))
            poly = poly.diff(X)
    else:
        expr = atom
        for _ in range(order + 1):
            values.append(expr.subs(X, c))
            expr = expr.diff(X)
    return tuple(values) if all(v.is_Rational for v in values) else None


def _combine(op: str, a: Jet, b: Jet) -> Jet | None:
    """The jet of a+b, a*b or a/b at the point from the jets of a and b (Leibniz rule), so the
    derivative of the whole function is never expanded symbolically (slow for deep products)."""
    if op == "+":
        return tuple(x + y for x, y in zip(a, b))
    if op == "*":
        out = [a[0] * b[0], a[1] * b[0] + a[0] * b[1]]
        if len(a) > 2:
            out.append(a[2] * b[0] + 2 * a[1] * b[1] + a[0] * b[2])
        return tuple(out)
    if b[0] == 0:
        return None  # a pole at the point
    q0 = a[0] / b[0]
    q1 = (a[1] - q0 * b[1]) / b[0]
    return (q0, q1) if len(a) == 2 else (q0, q1, (a[2] - 2 * q1 * b[1] - q0 * b[2]) / b[0])


def derivative(rng: random.Random, level: int) -> Generated:
    """f'(c) for f built from 1 + (level-1)//2 blocks (polynomials at levels 1-2; exp, sin, cos
    from 3; powers and square roots from 4; ln and quotients from 5); f''(c) from level 8.

    The value is computed with sympy: each block is differentiated symbolically at the point and
    the blocks' values combine by the sum, product and quotient rules in exact arithmetic.
    """
    check_level(level, "derivative")
    n_atoms = 1 + (level - 1) // 2
    order = 2 if level >= 8 else 1
    while True:
        c = rng.randint(-1 - level // 2, 1 + level // 2)
        f = _atom(rng, level, c)
        jet = _atom_jet(f, c, order)
        for _ in range(n_atoms - 1):
            op = rng.choice("+*/" if level >= 5 else "+*")
            g = _atom(rng, level, c)
            g_jet = _atom_jet(g, c, order)
            jet = _combine(op, jet, g_jet) if jet is not None and g_jet is not None else None
            f = f + g if op == "+" else f * g if op == "*" else f / g
        if jet is None or f.free_symbols != {X} or _looks_constant(f, c):
            continue
        value = sp.Rational(jet[order])
        break
    prime = "'" * order
    prompt = (f"Let $f(x) = {sp.latex(f, ln_notation=True)}$. Compute $f{prime}({c})$. Give the "
              f"exact value.")
    return Generated(prompt=prompt, answer=latex_number(value),
                     metadata={"function": str(f), "point": c, "order": order,
                               "steps": n_atoms + order - 1,
                               "max_digits": max(len(str(abs(int(n)))) for n in
                                                 f.atoms(sp.Integer) | {sp.Integer(c)})})
