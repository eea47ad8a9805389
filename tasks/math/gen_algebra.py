"""Procedural generators for algebra: linear equations, 2×2 linear systems, polynomial
expansion and factoring.

Golds are computed with sympy. Expansion and factoring ask for coefficient / root tuples rather
than a polynomial: a symbolic verifier accepts the unexpanded product `(x+2)(x+3)` as equal to
`x^2 + 5x + 6`, so a polynomial gold would reward copying the question.
"""

from __future__ import annotations

import random

import sympy as sp

from rlvr_envs.core.sources import Generated
from rlvr_envs.tasks.math.formatting import (digits, latex_number, latex_poly, latex_tuple,
                                             monomial, poly_coeffs, signed_terms)
from rlvr_envs.tasks.math.levels import check_level

X, Y = sp.symbols("x y")


def _nonzero(rng: random.Random, bound: int) -> int:
    return rng.choice([v for v in range(-bound, bound + 1) if v != 0])


def _render_side(groups: list[tuple[str, int, int, int]]) -> str:
    """Render groups ("x", k) → kx, ("c", k) → k, ("dist", k, a, b) → k(ax + b)."""
    text = ""
    for i, (kind, k, a, b) in enumerate(groups):
        if kind == "x":
            body = signed_terms([(abs(k), "x")])
        elif kind == "c":
            body = str(abs(k))
        else:
            inner = signed_terms([(a, "x"), (b, "")])
            body = f"({inner})" if abs(k) == 1 else f"{abs(k)}({inner})"
        if i == 0:
            text = ("-" if k < 0 else "") + body
        else:
            text += (" - " if k < 0 else " + ") + body
    return text


def _side_value(groups: list[tuple[str, int, int, int]]) -> sp.Expr:
    total = sp.Integer(0)
    for kind, k, a, b in groups:
        total += k * X if kind == "x" else k if kind == "c" else k * (a * X + b)
    return total


def linear_equation(rng: random.Random, level: int) -> Generated:
    """Solve one linear equation in x with level+2 terms; coefficients up to 3+2*level;
    distributed brackets from level 3; integer solutions up to level 4, rational after."""
    check_level(level, "linear_equation")
    bound = 3 + 2 * level
    n_groups = level + 2
    while True:
        kinds = ["x"] + [rng.choice(["x", "c", "dist"] if level >= 3 else ["x", "c"])
                         for _ in range(n_groups - 2)]
        rng.shuffle(kinds)
        groups = [(kind, _nonzero(rng, bound), _nonzero(rng, bound // 2 + 1),
                   _nonzero(rng, bound)) for kind in kinds]
        n_left = (n_groups + 1) // 2
        left, right = groups[:n_left], groups[n_left:] + [("c", _nonzero(rng, bound), 0, 0)]
        difference = sp.expand(_side_value(left) - _side_value(right))
        slope = difference.coeff(X, 1)
        if slope == 0:
            continue
        if level <= 4:  # shift the last constant so the solution is the integer x0
            x0 = rng.randint(-bound, bound)
            residual = int(difference.subs(X, x0))
            new_constant = right[-1][1] + residual
            if new_constant == 0:
                continue
            right[-1] = ("c", new_constant, 0, 0)
        break
    difference = sp.expand(_side_value(left) - _side_value(right))  # slope*x + offset = 0
    solution = -difference.coeff(X, 0) / difference.coeff(X, 1)
    numbers = [abs(v) for g in left + right for v in g[1:]]
    prompt = f"Solve for $x$: ${_render_side(left)} = {_render_side(right)}$."
    return Generated(prompt=prompt, answer=latex_number(solution),
                     metadata={"steps": len(left) + len(right),
                               "max_digits": max(digits(n) for n in numbers)})


_SYSTEM_BOUNDS = (3, 5, 9, 15, 25, 40, 99, 250, 600, 999)


def linear_system(rng: random.Random, level: int) -> Generated:
    """A 2×2 linear system; coefficients up to (3, 5, 9, ..., 999)[level-1]; integer solutions
    up to level 5, rational after; from level 4 each equation keeps a term on its right side."""
    check_level(level, "linear_system")
    bound = _SYSTEM_BOUNDS[level - 1]
    while True:
        a1, b1, a2, b2 = (_nonzero(rng, bound) for _ in range(4))
        det = a1 * b2 - a2 * b1
        if det == 0:
            continue
        if level <= 5:
            x0, y0 = rng.randint(-2 - level, 2 + level), rng.randint(-2 - level, 2 + level)
            c1, c2 = a1 * x0 + b1 * y0, a2 * x0 + b2 * y0
        else:
            c1, c2 = _nonzero(rng, bound), _nonzero(rng, bound)
        break
    # Cramer's rule in exact rationals (sp.solve takes ~15 ms for the same answer)
    solution = {X: sp.Rational(c1 * b2 - c2 * b1, det), Y: sp.Rational(a1 * c2 - a2 * c1, det)}

    def equation(a: int, b: int, c: int) -> str:
        if level < 4:
            return f"{signed_terms([(a, 'x'), (b, 'y')])} = {c}"
        return f"{signed_terms([(a, 'x'), (-c, '')])} = {signed_terms([(-b, 'y')])}"

    prompt = (f"Solve the system of equations ${equation(a1, b1, c1)}$ and "
              f"${equation(a2, b2, c2)}$. Give the answer as the ordered pair $(x, y)$.")
    numbers = [a1, b1, c1, a2, b2, c2]
    return Generated(prompt=prompt, answer=latex_tuple([solution[X], solution[Y]]),
                     metadata={"steps": 2 + sum(1 for n in numbers if n not in (0, 1, -1)),
                               "max_digits": max(digits(n) for n in numbers)})


def polynomial_expansion(rng: random.Random, level: int) -> Generated:
    """Expand a product of 2 + (level-1)//3 factors (linear; non-monic from level 2, quadratic
    from 3, a squared factor from 5, cubed from 8); answer: the coefficient tuple."""
    check_level(level, "polynomial_expansion")
    n_factors = 2 + (level - 1) // 3
    bound = 2 + level // 2
    factors: list[tuple[list[int], int]] = []
    for i in range(n_factors):
        if level >= 3 and i == 0:
            coeffs = [rng.randint(1, bound), _nonzero(rng, bound), _nonzero(rng, bound)]
        elif level >= 2:
            coeffs = [rng.randint(1, bound), _nonzero(rng, bound)]
        else:
            coeffs = [1, _nonzero(rng, bound)]
        power = 1
        if i == n_factors - 1 and level >= 5:
            power = 3 if level >= 8 else 2
        factors.append((coeffs, power))
    product = sp.Integer(1)
    shown = ""
    for coeffs, power in factors:
        product *= sp.Poly(coeffs, X).as_expr() ** power
        shown += f"({latex_poly(coeffs)})" + (f"^{power}" if power > 1 else "")
    coefficients = poly_coeffs(product, X)
    degree = len(coefficients) - 1
    general = " + ".join(f"a_{{{k}}}{monomial('x', k)}" for k in range(degree, -1, -1))
    names = ", ".join(f"a_{{{k}}}" for k in range(degree, -1, -1))
    prompt = (f"Expand ${shown}$ and write the result as ${general}$. Give the coefficients as "
              f"the ordered tuple $({names})$.")
    numbers = [c for coeffs, _ in factors for c in coeffs]
    return Generated(prompt=prompt, answer=latex_tuple(coefficients),
                     metadata={"expanded": latex_poly(coefficients), "degree": degree,
                               "steps": sum(len(c) * p for c, p in factors),
                               "max_digits": max(digits(n) for n in numbers)})


def factoring(rng: random.Random, level: int) -> Generated:
    """Factor a degree 2 + (level-1)//3 polynomial with rational roots up to 2+level in size
    (non-monic factors from level 3, an integer content from level 5); answer: the roots with
    multiplicity in increasing order, as a tuple."""
    check_level(level, "factoring")
    degree = 2 + (level - 1) // 3
    root_bound = 2 + level
    content = rng.choice([2, 3, -2, -3, 4, 5]) if level >= 5 else 1
    linear_factors = []
    for _ in range(degree):
        q = rng.randint(1, 1 + level // 3) if level >= 3 else 1
        p = rng.randint(-root_bound, root_bound)
        g = sp.gcd(p, q)
        linear_factors.append((q // g, p // g))  # the factor q x - p, root p/q
    polynomial = sp.expand(content * sp.Mul(*[q * X - p for q, p in linear_factors]))
    roots_with_multiplicity = sp.roots(sp.Poly(polynomial, X))
    roots = sorted(r for r, m in roots_with_multiplicity.items() for _ in range(m))
    coefficients = poly_coeffs(polynomial, X)
    factored = "".join(f"({latex_poly([q, -p])})" for q, p in sorted(linear_factors))
    names = ", ".join(f"r_{i + 1}" for i in range(degree))
    prompt = (f"Factor $p(x) = {latex_poly(coefficients)}$ completely over the rationals. "
              f"Then give its roots, repeated by multiplicity and in increasing order, as the "
              f"ordered tuple $({names})$.")
    return Generated(prompt=prompt, answer=latex_tuple(roots),
                     metadata={"factored": (f"{content}" if content != 1 else "") + factored,
                               "degree": degree, "steps": degree,
                               "max_digits": max(digits(c) for c in coefficients)})
