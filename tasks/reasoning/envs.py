"""The factory of rlvr/ReasoningGym-v0 and of the curated per-generator ids.

`gym.make("rlvr/ReasoningGym-v0", dataset="<name>")` serves any reasoning-gym generator (its
config through `config=`, levels through `difficulty=`); the curated ids (`CURATED`, listed in
`rlvr_envs.catalogue`) pin one generator each through their fixed `dataset` kwarg. Answers go
in <answer> tags by default (reasoning-gym's own convention; many answers are grids or lists
that a \\boxed{} cannot hold cleanly).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from rlvr_envs.catalogue import REASONING_GYM_CURATED as CURATED
from rlvr_envs.core.env import SingleTurnEnv
from rlvr_envs.core.prompts import answer_system_prompt
from rlvr_envs.registry import env_factory
from rlvr_envs.tasks.reasoning.scoring import ReasoningGymScorer
from rlvr_envs.tasks.reasoning.source import reasoning_gym_source

__all__ = ["CURATED", "make_reasoning_gym_env"]


@env_factory
def make_reasoning_gym_env(*, dataset: str = "chain_sum",
                           difficulty: int | Sequence[int] | None = None,
                           config: Mapping[str, Any] | None = None, answer_format: str = "r1",
                           max_prompt_chars: int = 65_536, max_completion_chars: int = 1_000_000,
                           render_mode: str | None = None) -> SingleTurnEnv:
    """One reasoning-gym generator; levels are its own curriculum's (level L = global level L-1)."""
    if not isinstance(dataset, str):
        raise TypeError(f"dataset must be a reasoning-gym dataset name, got {dataset!r}")
    levels = (difficulty,) if isinstance(difficulty, int) else difficulty
    source = reasoning_gym_source(dataset, levels=levels, config=config)
    return SingleTurnEnv(source, ReasoningGymScorer(answer_format),
                         answer_system_prompt(answer_format), max_prompt_chars=max_prompt_chars,
                         max_completion_chars=max_completion_chars, render_mode=render_mode)
