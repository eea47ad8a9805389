"""Procedural math generators: pure functions of (seeded rng, level) with sympy-computed golds.

Harder levels mean more digits, steps and terms.
"""

from __future__ import annotations

import random

import sympy as sp

from rlvr_envs.core.sources import Generated


def arithmetic(rng: random.Random, level: int) -> Generated:
    """Multi-step integer arithmetic: level+1 operands of up to `level` digits."""
    hi = 10 ** max(1, level)
    terms = [rng.randint(1, hi - 1) for _ in range(level + 1)]
    ops = [rng.choice("+-*") for _ in range(level)]
    expr = str(terms[0]) + "".join(f" {op} {t}" for op, t in zip(ops, terms[1:]))
    value = sp.sympify(expr)
    return Generated(prompt=f"Compute {expr}.", answer=str(value), metadata={"expression": expr})


GENERATORS = {"arithmetic": arithmetic}
