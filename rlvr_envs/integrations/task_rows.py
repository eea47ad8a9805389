"""Draw tasks from an env, as trainers' datasets need them: chat messages plus the task.

Every row comes from `env.reset`, so the prompt a trainer shows the policy is exactly the one
the env shows (system prompt and answer format included). Draws are seeded and deduplicated by
task id; a finite source that holds fewer tasks than asked gives all it has.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rlvr_envs.core.task import Task
from rlvr_envs.integrations.scoring import kwargs_key

if TYPE_CHECKING:
    import gymnasium as gym


@dataclass(frozen=True)
class TaskRow:
    messages: list[dict[str, str]]
    task: Task


def _episode_start(env: gym.Env, *, seed: int | None = None, task_id: str | None = None) -> TaskRow:
    options = {"task": task_id} if task_id is not None else None
    _, info = env.reset(seed=seed, options=options)
    base = env.unwrapped
    # a multi-turn env hides the gold in info; the scoring row needs the whole task
    task = base.resolve_task(info["task"]) if hasattr(base, "resolve_task") \
        else Task.from_dict(info["task"])
    return TaskRow(messages=[dict(m) for m in info["messages"]], task=task)


def iter_task_rows(env_id: str, *, seed: int = 0,
                   env_kwargs: Mapping[str, Any] | str | None = None,
                   max_attempts_factor: int = 20, limit: int) -> Iterator[TaskRow]:
    """Up to `limit` distinct tasks of `env_id`, deterministic in `seed`."""
    import json

    import numpy as np

    from rlvr_envs.registry import make

    if limit < 1:
        raise ValueError(f"the number of tasks must be >= 1, got {limit}")
    env = make(env_id, **json.loads(kwargs_key(env_kwargs)))
    try:
        source = getattr(env.unwrapped, "source", None)
        seen: set[str] = set()
        if source is not None and hasattr(source, "__len__"):  # finite list: a seeded permutation, each task once
            order = np.random.default_rng(seed).permutation(len(source))
            for index in order[:limit]:
                row = _episode_start(env, seed=seed, task_id=source[int(index)].id)
                yield row
            return
        for attempt in range(limit * max_attempts_factor):
            row = _episode_start(env, seed=seed * 1_000_003 + attempt)
            if row.task.id in seen:
                continue
            seen.add(row.task.id)
            yield row
            if len(seen) == limit:
                return
    finally:
        env.close()


def task_rows(env_id: str, n: int, *, seed: int = 0,
              env_kwargs: Mapping[str, Any] | str | None = None) -> list[TaskRow]:
    return list(iter_task_rows(env_id, seed=seed, env_kwargs=env_kwargs, limit=n))
