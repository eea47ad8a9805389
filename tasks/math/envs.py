"""The math envs' factories: rlvr/Math-v0, rlvr/Arithmetic-v0, rlvr/GSM8K-v0, rlvr/MATH-v0,
rlvr/CHAMP-v0 (their ids are listed in `rlvr_envs.catalogue`).

All are `SingleTurnEnv`s scored by `MathScorer`; they differ in their task source
(procedural generators or a GSM8K / MATH-schema dataset).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from rlvr_envs.core.env import SingleTurnEnv
from rlvr_envs.core.prompts import answer_system_prompt
from rlvr_envs.core.sources import ProceduralSource, TaskList, TaskSource
from rlvr_envs.registry import env_factory
from rlvr_envs.tasks.math.champ import load_champ
from rlvr_envs.tasks.math.datasets import GSM8K, MATH, MathDataset, load_math_dataset
from rlvr_envs.tasks.math.generators import GENERATORS, MAX_LEVEL
from rlvr_envs.tasks.math.scoring import MathScorer
from rlvr_envs.verify.math import check_gold

DATA_DIR = Path(__file__).parent / "data"
GSM8K_SAMPLE = DATA_DIR / "gsm8k_sample.jsonl"
MATH_SAMPLE = DATA_DIR / "math_sample.jsonl"


def _levels(difficulty: int | Sequence[int] | None,
            default: tuple[int, ...] | None) -> tuple[int, ...] | None:
    if difficulty is None:
        return default
    levels = (difficulty,) if isinstance(difficulty, int) else tuple(difficulty)
    if not levels or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1
                             for v in levels):
        raise ValueError(f"difficulty must be a level (int >= 1) or a list of levels, "
                         f"got {difficulty!r}")
    return levels


def _env(source: TaskSource, answer_format: str, timeout: float, on_timeout: str,
         max_prompt_chars: int, max_completion_chars: int,
         render_mode: str | None) -> SingleTurnEnv:
    return SingleTurnEnv(source, MathScorer(answer_format, timeout, on_timeout),
                         answer_system_prompt(answer_format), max_prompt_chars=max_prompt_chars,
                         max_completion_chars=max_completion_chars, render_mode=render_mode)


@env_factory
def make_math_env(*, families: Sequence[str] | None = None,
                  difficulty: int | Sequence[int] | None = None,
                  weights: Mapping[str, float] | None = None, answer_format: str = "boxed",
                  timeout: float = 1.0, on_timeout: str = "zero",
                  max_prompt_chars: int = 65_536, max_completion_chars: int = 1_000_000,
                  render_mode: str | None = None) -> SingleTurnEnv:
    """Procedural math: a mixture of generator families at the given difficulty level(s)."""
    if isinstance(families, str):
        families = [families]
    names = list(families) if families is not None else list(GENERATORS)
    unknown = [n for n in names if n not in GENERATORS]
    if unknown or not names:
        raise ValueError(f"unknown math families {unknown or names}; known: {sorted(GENERATORS)}")
    unknown_weights = sorted(set(weights or {}) - set(names))
    if unknown_weights:
        raise ValueError(f"weights name families that are not in use: {unknown_weights}; "
                         f"families: {names}")
    source = ProceduralSource({n: GENERATORS[n] for n in names}, family="math",
                              name="procedural-math", levels=_levels(difficulty, (1, 2, 3)),
                              weights=weights, validate=check_gold, max_level=MAX_LEVEL)
    return _env(source, answer_format, timeout, on_timeout, max_prompt_chars,
                max_completion_chars, render_mode)


@env_factory
def make_arithmetic_env(*, difficulty: int | Sequence[int] | None = None,
                        answer_format: str = "boxed", timeout: float = 1.0,
                        on_timeout: str = "zero",
                        render_mode: str | None = None) -> SingleTurnEnv:
    """Multi-step integer arithmetic only."""
    return make_math_env(families=["arithmetic"], difficulty=difficulty,
                         answer_format=answer_format, timeout=timeout, on_timeout=on_timeout,
                         render_mode=render_mode)


def _make_dataset_env(dataset: MathDataset, *, path: str | os.PathLike | None,
                      data_files: Any, split: str, config: str | None,
                      difficulty: int | Sequence[int] | None, limit: int | None,
                      on_bad_gold: str, answer_format: str, timeout: float,
                      on_timeout: str, max_prompt_chars: int, max_completion_chars: int,
                      render_mode: str | None) -> SingleTurnEnv:
    source = load_math_dataset(dataset, path=path, data_files=data_files, split=split,
                               config=config, on_bad_gold=on_bad_gold, limit=limit,
                               levels=_levels(difficulty, None))
    return _env(source, answer_format, timeout, on_timeout, max_prompt_chars,
                max_completion_chars, render_mode)


@env_factory(check_kwargs={"data_files": str(GSM8K_SAMPLE)})
def make_gsm8k_env(*, path: str | os.PathLike | None = None, data_files: Any = None,
                   split: str = "test", config: str | None = None,
                   difficulty: int | Sequence[int] | None = None, limit: int | None = None,
                   on_bad_gold: str = "raise", answer_format: str = "boxed",
                   timeout: float = 1.0, on_timeout: str = "zero",
                   max_prompt_chars: int = 65_536, max_completion_chars: int = 1_000_000,
                   render_mode: str | None = None) -> SingleTurnEnv:
    """GSM8K-schema grade-school word problems (hub openai/gsm8k or local files)."""
    return _make_dataset_env(GSM8K, path=path, data_files=data_files, split=split,
                             config=config, difficulty=difficulty, limit=limit,
                             on_bad_gold=on_bad_gold, answer_format=answer_format,
                             timeout=timeout, on_timeout=on_timeout,
                             max_prompt_chars=max_prompt_chars,
                             max_completion_chars=max_completion_chars, render_mode=render_mode)


@env_factory(check_kwargs={"data_files": str(MATH_SAMPLE)})
def make_math_dataset_env(*, path: str | os.PathLike | None = None, data_files: Any = None,
                          split: str = "test", config: str | None = None,
                          difficulty: int | Sequence[int] | None = None,
                          limit: int | None = None, on_bad_gold: str = "raise",
                          answer_format: str = "boxed", timeout: float = 1.0,
                          on_timeout: str = "zero", max_prompt_chars: int = 65_536, max_completion_chars: int = 1_000_000,
                          render_mode: str | None = None) -> SingleTurnEnv:
    """MATH-schema competition problems (hub HuggingFaceH4/MATH-500 or local files)."""
    return _make_dataset_env(MATH, path=path, data_files=data_files, split=split,
                             config=config, difficulty=difficulty, limit=limit,
                             on_bad_gold=on_bad_gold, answer_format=answer_format,
                             timeout=timeout, on_timeout=on_timeout,
                             max_prompt_chars=max_prompt_chars,
                             max_completion_chars=max_completion_chars, render_mode=render_mode)


@env_factory
def make_champ_env(*, path: str | os.PathLike | None = None,
                   difficulty: int | Sequence[int] | None = None, answer_format: str = "boxed",
                   timeout: float = 1.0, on_timeout: str = "zero",
                   max_prompt_chars: int = 65_536,
                   max_completion_chars: int = 1_000_000,
                   render_mode: str | None = None) -> SingleTurnEnv:
    """CHAMP competition problems (shipped by the champ-dataset package), levels 1-3."""
    source = load_champ(path)
    levels = _levels(difficulty, None)
    if levels is not None:
        kept = [t for t in source if t.difficulty.level in levels]
        if not kept:
            raise ValueError(f"no CHAMP problem at levels {list(levels)}; levels are 1-3")
        source = TaskList(kept, family="math", name="champ")
    return _env(source, answer_format, timeout, on_timeout, max_prompt_chars,
                max_completion_chars, render_mode)
