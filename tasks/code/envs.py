"""The code envs and their registration: rlvr/Code-v0 (any source) and rlvr/HumanEval-v0."""

from __future__ import annotations

from typing import Mapping, Sequence

from rlvr_envs.core.env import SingleTurnEnv
from rlvr_envs.core.sources import ProceduralSource, TaskSource
from rlvr_envs.registry import env_factory
from rlvr_envs.sandbox import Limits, Sandbox
from rlvr_envs.tasks.code.procedural import GENERATORS
from rlvr_envs.tasks.code.prompts import CODE_SYSTEM_PROMPT
from rlvr_envs.tasks.code.scoring import MAX_CODE_CHARS, CodeScorer

SOURCES = ("humaneval", "mbpp", "stdio", "procedural")
DEFAULT_DATA = {"mbpp": "mbpp", "stdio": "codeparrot/apps"}


def _levels(difficulty: int | Sequence[int] | None) -> tuple[int, ...]:
    if difficulty is None:
        return (1, 2, 3)
    return (difficulty,) if isinstance(difficulty, int) else tuple(difficulty)


def code_source(source: str, *, data: str | None = None, split: str = "test",
                difficulty: int | Sequence[int] | None = None,
                max_tests: int | None = None) -> TaskSource:
    """The task source behind `source` (see SOURCES)."""
    if source == "humaneval":
        from rlvr_envs.tasks.code.humaneval import load_humaneval
        return load_humaneval(data)
    if source == "mbpp":
        from rlvr_envs.tasks.code.mbpp import load_mbpp
        return load_mbpp(data or DEFAULT_DATA["mbpp"], split=split)
    if source == "stdio":
        from rlvr_envs.tasks.code.stdio import load_stdio
        return load_stdio(data or DEFAULT_DATA["stdio"], split=split, max_tests=max_tests)
    if source == "procedural":
        return ProceduralSource(GENERATORS, family="code", name="procedural-code",
                                levels=_levels(difficulty), max_level=3)
    raise ValueError(f"unknown code source {source!r}; choose one of {list(SOURCES)}")


@env_factory(check_kwargs={"source": "procedural"})
def make_code_env(*, source: str = "procedural", sandbox: str | Sandbox = "auto",
                  limits: Limits | Mapping | None = None, partial_credit: bool = False,
                  data: str | None = None, split: str = "test",
                  difficulty: int | Sequence[int] | None = None, max_tests: int | None = None,
                  max_completion_chars: int = 200_000, max_code_chars: int = MAX_CODE_CHARS,
                  render_mode: str | None = None) -> SingleTurnEnv:
    """Code tasks graded by running the completion's code against tests in a sandbox."""
    task_source = code_source(source, data=data, split=split, difficulty=difficulty,
                              max_tests=max_tests)
    scorer = CodeScorer(sandbox, limits, partial_credit, max_code_chars=max_code_chars)
    return SingleTurnEnv(task_source, scorer, CODE_SYSTEM_PROMPT,
                         max_completion_chars=max_completion_chars, render_mode=render_mode)


@env_factory
def make_humaneval_env(*, sandbox: str | Sandbox = "auto", limits: Limits | Mapping | None = None,
                       partial_credit: bool = False, max_code_chars: int = MAX_CODE_CHARS,
                       render_mode: str | None = None) -> SingleTurnEnv:
    return make_code_env(source="humaneval", sandbox=sandbox, limits=limits,
                         partial_credit=partial_credit, max_code_chars=max_code_chars,
                         render_mode=render_mode)
