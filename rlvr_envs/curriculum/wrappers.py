"""Curriculum wrappers: the solvability-range filter and the online level curriculum.

Both choose the episode's task themselves (with their own seeded generator) and pin it in the
inner env through `options={"task": ...}`, so the scoring path is untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from rlvr_envs.core.sources import ProceduralSource
from rlvr_envs.core.task import Task
from rlvr_envs.curriculum.difficulty import PassRates
from rlvr_envs.curriculum.measured import annotate
from rlvr_envs.curriculum.selection import LevelController, in_solvability_range


def _finite_tasks(env: gym.Env) -> list[Task] | None:
    source = getattr(env.unwrapped, "source", None)
    if source is None or isinstance(source, ProceduralSource):
        return None
    try:
        return list(iter(source))
    except TypeError:
        return None


class SolvabilityFilter(gym.Wrapper):
    """Serve only tasks whose pass rate lies in (lo, hi) — default (0, 1), exclusive — the
    Kimi k1.5 recipe. Rates come from `pass_rates` (file, mapping or PassRates) or, failing
    that, from the task's own `difficulty.pass_rate`.

    A finite source is filtered once up front (`eligible`); so is a procedural one whose
    measured tasks carry their source ids (`rlvr difficulty estimate` stores them; the source
    regenerates each task from it). Otherwise tasks are drawn and rejected until one fits
    (`max_tries`); `rejected` counts the draws thrown away.
    """

    def __init__(self, env: gym.Env, pass_rates: Any = None, lo: float = 0.0, hi: float = 1.0, *,
                 inclusive: bool = False, max_tries: int = 1000):
        super().__init__(env)
        in_solvability_range(None, lo, hi)  # validates lo, hi
        self.lo, self.hi, self.inclusive, self.max_tries = lo, hi, inclusive, max_tries
        self.pass_rates = PassRates.coerce(pass_rates) if pass_rates is not None else PassRates()
        self.rejected = 0
        self._rng = np.random.default_rng()
        tasks = _finite_tasks(env)
        if tasks is None:
            tasks = self._regenerate_measured(env)
        self.eligible: list[Task] | None = None
        if tasks is not None:
            self.eligible = [t for t in tasks if self._fits(t.id, t.difficulty.pass_rate)]
            if not self.eligible:
                raise ValueError(f"no task of {len(tasks)} has a pass rate in "
                                 f"{'[' if inclusive else '('}{lo}, {hi}{']' if inclusive else ')'}"
                                 f" ({len(self.pass_rates)} measured); measure them with "
                                 f"`rlvr difficulty estimate` or widen the range")

    def _regenerate_measured(self, env: gym.Env) -> list[Task] | None:
        source = getattr(env.unwrapped, "source", None)
        if source is None or not self.pass_rates.rates:
            return None
        tasks = []
        for entry in self.pass_rates.rates.values():
            if entry.source_id is None:
                return None
            try:
                task = source.get(entry.source_id)
            except (KeyError, ValueError):
                continue
            if task.id == entry.task_id:
                tasks.append(task)
        return tasks or None

    def _fits(self, task_id: str, own_rate: float | None) -> bool:
        rate = self.pass_rates.get(task_id)
        return in_solvability_range(own_rate if rate is None else rate, self.lo, self.hi,
                                    inclusive=self.inclusive)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if options and "task" in options:  # an explicitly pinned task is served as asked
            return tuple_annotated(self.env.reset(seed=seed, options=options), self.pass_rates)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        if self.eligible is not None:
            task = self.eligible[int(self._rng.integers(len(self.eligible)))]
            return tuple_annotated(self.env.reset(seed=seed, options={**(options or {}),
                                                                      "task": task}),
                                   self.pass_rates)
        for attempt in range(self.max_tries):
            obs, info = self.env.reset(seed=seed if attempt == 0 else None, options=options)
            annotate(info, self.pass_rates)
            if self._fits(info["task"]["id"], info["task"]["difficulty"].get("pass_rate")):
                return obs, info
            self.rejected += 1
        raise RuntimeError(f"SolvabilityFilter: no task with a pass rate in ({self.lo}, {self.hi}) "
                           f"in {self.max_tries} draws; the source's tasks are not measured "
                           f"(run `rlvr difficulty estimate`) or the range is too narrow")

    def step(self, action: Any):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, terminated, truncated, annotate(info, self.pass_rates)


def tuple_annotated(result: tuple, rates: PassRates) -> tuple:
    obs, info = result
    return obs, annotate(info, rates)


class OnlineCurriculum(gym.Wrapper):
    """Raise or lower the level from the running success rate (see `LevelController`).

    Procedural sources: the level is the generators' difficulty knob. Finite (dataset)
    sources: tasks are bucketed by `level_of(task)` — by default the task's difficulty level,
    or with `by="pass_rate"` the measured pass rate in `bins` buckets (level 1 = easiest,
    pass rate near 1) — and the episode draws from the current bucket.
    `info["curriculum"]` reports the level and the running success rate after every step.
    """

    def __init__(self, env: gym.Env, *, levels: Any = None, start_level: int | None = None,
                 window: int = 32, raise_at: float = 0.8, lower_at: float = 0.3,
                 by: str = "level", pass_rates: Any = None, bins: int = 5,
                 level_of: Callable[[Task], int] | None = None):
        super().__init__(env)
        if by not in ("level", "pass_rate"):
            raise ValueError(f"by must be 'level' or 'pass_rate', got {by!r}")
        self.pass_rates = PassRates.coerce(pass_rates) if pass_rates is not None else PassRates()
        self._rng = np.random.default_rng()
        source = getattr(env.unwrapped, "source", None)
        self.procedural = source if isinstance(source, ProceduralSource) else None
        self.buckets: dict[int, list[Task]] = {}
        if self.procedural is not None:
            levels = levels or range(1, self.procedural.max_level + 1)
        else:
            tasks = _finite_tasks(env)
            if tasks is None:
                raise TypeError("OnlineCurriculum needs a procedural source or a finite task list")
            if level_of is None:
                level_of = (lambda t: t.difficulty.level) if by == "level" else \
                    (lambda t: self._pass_rate_level(t, bins))
            for task in tasks:
                level = level_of(task)
                if level is not None:
                    self.buckets.setdefault(level, []).append(task)
            if not self.buckets:
                raise ValueError("no task has a level (measure pass rates first for by='pass_rate')")
            levels = sorted(l for l in (levels or self.buckets) if l in self.buckets)
        self.controller = LevelController(list(levels), start=start_level, window=window,
                                          raise_at=raise_at, lower_at=lower_at)

    def _pass_rate_level(self, task: Task, bins: int) -> int | None:
        rate = self.pass_rates.get(task.id)
        rate = task.difficulty.pass_rate if rate is None else rate
        if rate is None:
            return None
        return 1 + min(bins - 1, int((1.0 - rate) * bins))

    @property
    def level(self) -> int:
        return self.controller.level

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if options and "task" in options:
            return self.env.reset(seed=seed, options=options)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        if self.procedural is not None:
            task = self.procedural.sample(self._rng, level=self.level)
        else:
            bucket = self.buckets[self.level]
            task = bucket[int(self._rng.integers(len(bucket)))]
        obs, info = self.env.reset(seed=seed, options={**(options or {}), "task": task})
        info["curriculum"] = {"level": self.level}
        return obs, info

    def step(self, action: Any):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.controller.update(bool(info.get("correct")))
        info["curriculum"] = {"level": self.level, "success_rate": self.controller.success_rate,
                              "changes": len(self.controller.history)}
        return obs, reward, terminated, truncated, info
