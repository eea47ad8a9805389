"""The math envs and their registration: rlvr/Math-v0 and friends."""

from __future__ import annotations

from typing import Sequence

from rlvr_envs.core.env import SingleTurnEnv
from rlvr_envs.core.prompts import answer_system_prompt
from rlvr_envs.core.sources import ProceduralSource
from rlvr_envs.registry import register_env
from rlvr_envs.tasks.math.generators import GENERATORS
from rlvr_envs.tasks.math.scoring import MathScorer
from rlvr_envs.verify.math import check_gold
from rlvr_envs.wrappers.shaping import with_shaping


def _levels(difficulty: int | Sequence[int] | None) -> tuple[int, ...]:
    if difficulty is None:
        return (1, 2, 3)
    if isinstance(difficulty, int):
        return (difficulty,)
    return tuple(difficulty)


def make_math_env(*, families: Sequence[str] | None = None,
                  difficulty: int | Sequence[int] | None = None, answer_format: str = "boxed",
                  timeout: float = 1.0, max_prompt_chars: int = 65_536,
                  max_completion_chars: int = 1_000_000,
                  render_mode: str | None = None) -> SingleTurnEnv:
    """Procedural math: a mixture of generator families at the given difficulty level(s)."""
    names = list(families) if families is not None else list(GENERATORS)
    unknown = [n for n in names if n not in GENERATORS]
    if unknown or not names:
        raise ValueError(f"unknown math families {unknown or names}; known: {sorted(GENERATORS)}")
    source = ProceduralSource({n: GENERATORS[n] for n in names}, family="math",
                              name="procedural-math", levels=_levels(difficulty),
                              validate=check_gold)
    return SingleTurnEnv(source, MathScorer(answer_format, timeout),
                         answer_system_prompt(answer_format), max_prompt_chars=max_prompt_chars,
                         max_completion_chars=max_completion_chars, render_mode=render_mode)


def make_arithmetic_env(*, difficulty: int | Sequence[int] | None = None,
                        answer_format: str = "boxed", timeout: float = 1.0,
                        render_mode: str | None = None) -> SingleTurnEnv:
    return make_math_env(families=["arithmetic"], difficulty=difficulty,
                         answer_format=answer_format, timeout=timeout, render_mode=render_mode)


register_env("rlvr/Math-v0", with_shaping(make_math_env),
             "Procedural math (arithmetic, fractions, equations, algebra, calculus, word problems)",
             family="math")
register_env("rlvr/Arithmetic-v0", with_shaping(make_arithmetic_env),
             "Multi-step integer arithmetic with digits and steps growing by level", family="math")
