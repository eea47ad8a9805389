"""The procedural math generators by family name (the `families` kwarg of rlvr/Math-v0).

Each generator is a pure function `fn(random.Random, level) -> Generated` for levels
1..MAX_LEVEL: harder levels mean more digits, more steps and more terms (every task's metadata
records `steps` and `max_digits`). Golds are computed with sympy and written in the canonical
forms the math verifier parses: integers, `\\frac{a}{b}`, and tuples such as `(x, y)`.
"""

from __future__ import annotations

from rlvr_envs.core.sources import Generated, Generator
from rlvr_envs.tasks.math.gen_algebra import (factoring, linear_equation, linear_system,
                                              polynomial_expansion)
from rlvr_envs.tasks.math.gen_arithmetic import arithmetic, fractions, modular
from rlvr_envs.tasks.math.gen_calculus import derivative
from rlvr_envs.tasks.math.gen_word import word_problem
from rlvr_envs.tasks.math.levels import MAX_LEVEL

GENERATORS: dict[str, Generator] = {
    "arithmetic": arithmetic,
    "fractions": fractions,
    "linear_equation": linear_equation,
    "linear_system": linear_system,
    "polynomial_expansion": polynomial_expansion,
    "factoring": factoring,
    "derivative": derivative,
    "modular": modular,
    "word_problem": word_problem,
}

__all__ = ["GENERATORS", "Generated", "MAX_LEVEL"]
