"""Registration of rlvr/ReasoningGym-v0 and the curated per-generator ids.

`gym.make("rlvr/ReasoningGym-v0", dataset="<name>")` serves any reasoning-gym generator (its
config through `config=`, levels through `difficulty=`); the ids in `CURATED` pin one
generator each. Answers go in <answer> tags by default (reasoning-gym's own convention; many
answers are grids or lists that a \\boxed{} cannot hold cleanly).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from rlvr_envs.core.env import SingleTurnEnv
from rlvr_envs.core.prompts import answer_system_prompt
from rlvr_envs.registry import register_env
from rlvr_envs.tasks.reasoning.scoring import ReasoningGymScorer
from rlvr_envs.tasks.reasoning.source import reasoning_gym_source
from rlvr_envs.wrappers.shaping import with_shaping

#: generator → id suffix; each passes the audit (tests/tasks/test_reasoning_gym.py checks it)
CURATED = {
    "base_conversion": "BaseConversion", "basic_arithmetic": "BasicArithmetic",
    "bitwise_arithmetic": "BitwiseArithmetic", "calendar_arithmetic": "CalendarArithmetic",
    "chain_sum": "ChainSum", "complex_arithmetic": "ComplexArithmetic",
    "count_primes": "CountPrimes", "countdown": "Countdown",
    "family_relationships": "FamilyRelationships", "gcd": "GCD", "lcm": "LCM",
    "letter_counting": "LetterCounting", "maze": "Maze", "mini_sudoku": "MiniSudoku",
    "n_queens": "NQueens", "number_sorting": "NumberSorting", "puzzle24": "Puzzle24",
    "shortest_path": "ShortestPath", "simple_equations": "SimpleEquations",
    "spell_backward": "SpellBackward", "tower_of_hanoi": "TowerOfHanoi",
    "word_sorting": "WordSorting", "zebra_puzzles": "ZebraPuzzles",
}


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


def _pinned(name: str):
    def make(*, difficulty: int | Sequence[int] | None = None,
             config: Mapping[str, Any] | None = None, answer_format: str = "r1",
             max_prompt_chars: int = 65_536, max_completion_chars: int = 1_000_000,
             render_mode: str | None = None) -> SingleTurnEnv:
        return make_reasoning_gym_env(dataset=name, difficulty=difficulty, config=config,
                                      answer_format=answer_format,
                                      max_prompt_chars=max_prompt_chars,
                                      max_completion_chars=max_completion_chars,
                                      render_mode=render_mode)

    make.__name__ = f"make_{name}_env"
    make.__doc__ = f"reasoning-gym's {name!r} generator."
    return make


register_env("rlvr/ReasoningGym-v0", with_shaping(make_reasoning_gym_env),
             "Any reasoning-gym generator (dataset=NAME, config=, difficulty= its curriculum "
             "levels), strictly scored", family="reasoning")
for _name, _suffix in CURATED.items():
    register_env(f"rlvr/RG-{_suffix}-v0", with_shaping(_pinned(_name)),
                 f"reasoning-gym's {_name} generator, strictly scored", family="reasoning")
