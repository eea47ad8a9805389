"""The single-turn text env: reset shows a task's prompt, step scores one completion.

Every single-answer family (math, code) is this class with its own task source and scorer;
the scorer is public (`env.scorer`) so trainers score through the very same code path.

`info["task"]` carries the gold answer by default (`include_gold=True`): the dataset builders
of the trainer integrations score from that record. With `include_gold=False` reset's record
has `answer` empty and `metadata["gold_hidden"] = True` (the step that scores shows it whole);
`env.unwrapped.gold(task)` gives the gold either way.
"""

from __future__ import annotations

from typing import Any, Mapping

import gymnasium as gym

from rlvr_envs.core.prompts import render_plain
from rlvr_envs.core.scoring import Score, Scorer, check_completion, zero_score
from rlvr_envs.core.sources import TaskSource, resolve_task
from rlvr_envs.core.spaces import RENDER_FPS, UnicodeText
from rlvr_envs.core.task import Task

RESET_OPTIONS = ("task",)


class SingleTurnEnv(gym.Env[str, str]):
    """One prompt, one completion, one verified reward; `terminated` is always True."""

    metadata = {"render_modes": ["ansi"], "render_fps": RENDER_FPS}

    def __init__(self, source: TaskSource, scorer: Scorer, system_prompt: str, *,
                 max_prompt_chars: int = 65_536, max_completion_chars: int = 1_000_000,
                 render_mode: str | None = None, include_gold: bool = True):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of "
                             f"{self.metadata['render_modes']}, got {render_mode!r}")
        self.source, self.scorer, self.system_prompt = source, scorer, system_prompt
        self.render_mode = render_mode
        self.include_gold = bool(include_gold)
        self.observation_space = UnicodeText(max_prompt_chars)
        self.action_space = UnicodeText(max_completion_chars)
        self._task: Task | None = None
        self._last_completion: str | None = None

    # -- tasks ---------------------------------------------------------------------------------

    def resolve_task(self, task: Task | Mapping[str, Any] | str) -> Task:
        """A Task from a record, a plain dict with at least prompt and answer, or an id; a
        record whose gold was hidden is looked up by its id."""
        record = task.to_dict() if isinstance(task, Task) else task
        if isinstance(record, Mapping) and (record.get("metadata") or {}).get("gold_hidden"):
            return self.source.get(record["id"])
        return resolve_task(self.source, task)

    def gold(self, task: Task | Mapping[str, Any] | str | None = None) -> str:
        """The gold answer of `task` (default: the task of the current episode)."""
        task = self._task if task is None else self.resolve_task(task)
        if task is None:
            raise ValueError("no task given and no episode running: pass a task or an id")
        return task.answer

    def task_record(self, task: Task) -> dict[str, Any]:
        """`info["task"]` at reset: whole, or with the gold hidden (`include_gold=False`)."""
        record = task.to_dict()
        if not self.include_gold:
            record["answer"] = ""
            record["metadata"]["gold_hidden"] = True
        return record

    def messages(self, task: Task) -> list[dict[str, str]]:
        return [{"role": "system", "content": self.system_prompt},
                {"role": "user", "content": task.prompt}]

    # -- gymnasium API -------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = set(options) - set(RESET_OPTIONS)
        if unknown:
            raise ValueError(f"unknown reset options {sorted(unknown)}; valid: {list(RESET_OPTIONS)}")
        if "task" in options:
            self._task = self.resolve_task(options["task"])
        else:
            self._task = self.source.sample(self.np_random)
        self._last_completion = None
        messages = self.messages(self._task)
        return render_plain(messages), {"messages": messages,
                                        "task": self.task_record(self._task)}

    def step(self, action: str):
        if self._task is None:
            raise gym.error.ResetNeeded("step() called before reset() (or after the episode "
                                        "ended): call env.reset() first")
        task, self._task = self._task, None
        too_long = check_completion(action, self.action_space.max_length)
        score = (zero_score(too_long, self.scorer_components()) if too_long
                 else self.scorer.score(task, action))
        self._last_completion = action
        info = score.info()
        info["task"] = task.to_dict()
        return "", float(score.reward), True, False, info

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return f"completion:\n{self._last_completion or ''}"
        return None

    # -- scoring without stepping --------------------------------------------------------------

    def scorer_components(self) -> dict[str, float]:
        return dict(self.scorer.components)

    def score(self, completion: str, task: Task | Mapping[str, Any] | str) -> Score:
        """Score one completion against a task without stepping (same path as `step`)."""
        return self.scorer.score(self.resolve_task(task), completion)

    def score_batch(self, completions: list[str], tasks: list[Any]) -> list[Score]:
        return self.scorer.score_batch([self.resolve_task(t) for t in tasks], completions)
