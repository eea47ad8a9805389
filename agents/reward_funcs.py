"""Reward functions for trainers, all through the env's one scoring path (its Scorer).

`component_reward_funcs(scorer)` gives one TRL reward function per reward component of the
scorer (`scorer.components`), so each component is logged on its own; with weight 1 each they
sum to the env's reward. A cache scores each (task, completion) pair once per batch however
many component functions read it.

Group-level rewards: `group_reward_funcs([f, ...])` adapts functions
`f(completions_of_one_prompt: list[str], tasks: list[Task]) -> list[float]` (length penalties
relative to the group, dynamic-sampling filters, ...) to TRL's per-sample interface: rows are
grouped by task id in batch order, each group is scored together, and the values are written
back in place. A function may return None for a row to leave it out of that reward. A function
with a `step` attribute (`rlvr_envs.rewards.trl.KimiGroupPenalty`) gets the trainer's global
step before each call, so its warm-up counts training steps.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Sequence

from rlvr_envs.agents.data import task_of
from rlvr_envs.core.scoring import Score, Scorer
from rlvr_envs.core.task import Task
from rlvr_envs.integrations.trl import completion_text
from rlvr_envs.rewards.trl import task_column_values

GroupRewardFn = Callable[[list[str], list[Task]], Sequence[float | None]]


def scorer_components(scorer: Scorer) -> list[str]:
    return list(scorer.components)


class ScoreCache:
    """Scores (task, completion) pairs through the scorer, once each (bounded LRU)."""

    def __init__(self, scorer: Scorer, max_items: int = 4096):
        self.scorer, self.max_items = scorer, max_items
        self._cache: OrderedDict[tuple[str, str], Score] = OrderedDict()

    def scores(self, tasks: Sequence[Task], texts: Sequence[str]) -> list[Score]:
        todo = [(i, t, c) for i, (t, c) in enumerate(zip(tasks, texts))
                if (t.id, c) not in self._cache]
        if todo:
            fresh = self.scorer.score_batch([t for _, t, _ in todo], [c for _, _, c in todo])
            for (_, task, text), score in zip(todo, fresh):
                self._cache[(task.id, text)] = score
        out = []
        for task, text in zip(tasks, texts):
            self._cache.move_to_end((task.id, text))
            out.append(self._cache[(task.id, text)])
        while len(self._cache) > self.max_items:
            self._cache.popitem(last=False)
        return out


class ComponentReward:
    """One component of the scorer's breakdown as a TRL reward function (picklable). Tasks come
    from the `task` column, else `ground_truth` (as `grpo_dataset` writes it)."""

    def __init__(self, name: str, cache: ScoreCache, components: Sequence[str]):
        self.__name__, self.cache, self.components = name, cache, list(components)

    def __call__(self, prompts: list[Any], completions: list[Any], **columns: Any
                 ) -> list[float]:
        tasks = task_column_values(columns, "task")
        if tasks is None:
            raise ValueError("the dataset has no 'task' or 'ground_truth' column; build it with "
                             "rlvr_envs.agents.data.rows_dataset or integrations.trl.grpo_dataset")
        scores = self.cache.scores(tasks, [completion_text(c) for c in completions])
        for score in scores:
            unknown = set(score.breakdown) - set(self.components)
            if unknown:
                raise ValueError(f"the scorer returned components {sorted(unknown)} that its "
                                 f"`components` {self.components} does not declare; declare "
                                 f"them so each is logged and summed")
        return [float(s.breakdown.get(self.__name__, 0.0)) for s in scores]


def component_reward_funcs(scorer: Scorer) -> list[ComponentReward]:
    """One TRL reward function per component of the scorer's breakdown (one shared cache)."""
    cache = ScoreCache(scorer)
    names = scorer_components(scorer)
    return [ComponentReward(name, cache, names) for name in names]


class EpisodeReward:
    """The episode's reward (or one component of it) that a multi-turn rollout function passes
    along as an extra field (picklable)."""

    def __init__(self, component: str | None = None):
        self.component = component
        self.__name__ = component or "reward"

    def __call__(self, prompts: list[Any], completions: list[Any], **fields: Any) -> list[float]:
        if self.component is None:
            return [float(r) for r in fields["episode_reward"]]
        return [float(b.get(self.component, 0.0)) for b in fields["episode_breakdown"]]


def episode_reward_funcs(components: Sequence[str] | None) -> list[EpisodeReward]:
    """Reward functions for multi-turn rollouts: they read the episode's reward (and breakdown)
    that the rollout function passes along as extra fields."""
    if not components:
        return [EpisodeReward()]
    return [EpisodeReward(name) for name in components]


def group_reward_funcs(functions: Sequence[GroupRewardFn]) -> list[Callable[..., list[Any]]]:
    """TRL reward functions from group-level ones (see the module docstring)."""
    adapted = []
    for fn in functions:
        def reward(prompts: list[Any], completions: list[Any], task: list[Any], *,
                   _fn: GroupRewardFn = fn, trainer_state: Any = None, **_: Any) -> list[Any]:
            if hasattr(_fn, "step") and trainer_state is not None:  # warm-up (KimiGroupPenalty)
                _fn.step = int(trainer_state.global_step)
            tasks = [task_of(t) for t in task]
            groups: OrderedDict[str, list[int]] = OrderedDict()
            for i, t in enumerate(tasks):
                groups.setdefault(t.id, []).append(i)
            out: list[Any] = [None] * len(tasks)
            for indices in groups.values():
                values = list(_fn([completion_text(completions[i]) for i in indices],
                                  [tasks[i] for i in indices]))
                if len(values) != len(indices):
                    raise ValueError(f"group reward {getattr(_fn, '__name__', _fn)!r} returned "
                                     f"{len(values)} values for a group of {len(indices)}")
                for i, v in zip(indices, values):
                    out[i] = v
            return out

        reward.__name__ = getattr(fn, "__name__", "group_reward")
        adapted.append(reward)
    return adapted


def group_reward_from_spec(spec: str, scorer: Scorer) -> GroupRewardFn:
    """`module:function`, or `module:Class{"json": "kwargs"}` built as `Class(scorer, **kwargs)`
    with the env's scorer (e.g. `rlvr_envs.rewards.trl:KimiGroupPenalty{"warmup_steps": 10}`)."""
    import json

    target, brace, rest = spec.partition("{")
    kwargs: dict[str, Any] = {}
    if brace:
        try:
            kwargs = json.loads(brace + rest)
        except json.JSONDecodeError as err:
            raise ValueError(f"group reward {spec!r}: the part after the name must be a JSON "
                             f"object of keyword arguments ({err})") from None
        if not isinstance(kwargs, dict):
            raise ValueError(f"group reward {spec!r}: expected a JSON object of kwargs")
    obj = import_object(target)
    if isinstance(obj, type):
        return obj(scorer, **kwargs)
    if kwargs:
        raise ValueError(f"group reward {target!r} is a function; keyword arguments "
                         f"{sorted(kwargs)} apply only to a class built with the env's scorer")
    if not callable(obj):
        raise ValueError(f"group reward {target!r} is not callable")
    return obj


def import_object(spec: str) -> Any:
    """`package.module:attribute` → the object (for --group-reward on the command line)."""
    import importlib

    module, sep, attribute = spec.partition(":")
    if not sep or not module or not attribute:
        raise ValueError(f"expected 'package.module:function', got {spec!r}")
    try:
        return getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as err:
        raise ValueError(f"cannot import {spec!r}: {err}") from None
