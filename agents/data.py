"""Training data from an env: its tasks, their chat prompts, and train / held-out splits.

Trainers never invent prompts: each row is what `env.reset(options={"task": task})` shows the
policy (`info["messages"]`), with the task record alongside (JSON in the `task` column) so the
reward functions score through the env's own scorer.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rlvr_envs.core.task import Task
from rlvr_envs.rewards.trl import task_from_column as task_of  # noqa: F401 - re-exported

if TYPE_CHECKING:
    import gymnasium as gym

    from rlvr_envs.core.scoring import Scorer


class EnvDataError(ValueError):
    """An env (or its tasks) lacks what a trainer needs; the message names what and why."""


@dataclass
class TaskRow:
    task: Task
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None

    def to_record(self) -> dict[str, Any]:
        return {"prompt": self.messages, "task": json.dumps(self.task.to_dict()),
                "task_id": self.task.id}


def env_scorer(env: gym.Env, env_id: str = "the env") -> Scorer:
    """The env's scorer (`env.unwrapped.scorer`), or a clear error."""
    scorer = getattr(env.unwrapped, "scorer", None)
    if scorer is None or not callable(getattr(scorer, "score", None)):
        raise EnvDataError(f"{env_id} exposes no scorer (env.unwrapped.scorer with a "
                           f"score(task, completion) method); single-turn trainers score "
                           f"completions through it. Multi-turn envs train with --multi-turn")
    return scorer


def _finite_tasks(env: gym.Env) -> list[Task] | None:
    source = getattr(env.unwrapped, "source", None)
    try:
        return list(source) if source is not None else None
    except TypeError:  # procedural sources are not finite
        return None


def collect_tasks(env: gym.Env, count: int, *, seed: int = 0, exclude: set[str] | None = None,
                  env_id: str = "the env") -> list[Task]:
    """Up to `count` distinct tasks: a shuffled slice of a finite list, or procedural tasks
    drawn with seeds seed, seed+1, ... (skipping ids in `exclude`)."""
    if count < 1:
        raise EnvDataError(f"need at least 1 task, asked for {count}")
    exclude = exclude or set()
    finite = _finite_tasks(env)
    if finite is not None:
        pool = [t for t in finite if t.id not in exclude]
        random.Random(seed).shuffle(pool)
        if not pool:
            raise EnvDataError(f"{env_id} has no tasks left after excluding {len(exclude)}")
        return pool[:count]
    tasks: dict[str, Task] = {}
    for offset in range(count * 20):
        _, info = env.reset(seed=seed + offset)
        record = info.get("task")
        if record is None:
            raise EnvDataError(f"{env_id}'s reset info has no 'task' record; trainers need "
                               f"info['task'] to score and split tasks")
        task = Task.from_dict(record)
        if task.id not in exclude:
            tasks.setdefault(task.id, task)
        if len(tasks) >= count:
            break
    if not tasks:
        raise EnvDataError(f"{env_id} produced no task outside the held-out set")
    return list(tasks.values())


def split_tasks(env: gym.Env, train: int, held_out: int, *, seed: int = 0, env_id: str = "the env"
                ) -> tuple[list[Task], list[Task]]:
    """Disjoint train and held-out tasks (held-out drawn first, from seeds far from train's)."""
    evaluation = collect_tasks(env, held_out, seed=seed + 1_000_003, env_id=env_id) if held_out else []
    training = collect_tasks(env, train, seed=seed, exclude={t.id for t in evaluation},
                             env_id=env_id)
    return training, evaluation


def task_rows(env: gym.Env, tasks: list[Task], *, env_id: str = "the env") -> list[TaskRow]:
    """Each task with the chat messages the env shows for it (and its tool schemas, if any)."""
    rows = []
    for task in tasks:
        _, info = env.reset(options={"task": task})
        messages = info.get("messages")
        if not messages:
            raise EnvDataError(f"{env_id}'s reset info has no 'messages' (the chat prompt); "
                               f"trainers feed chat models and need info['messages']")
        rows.append(TaskRow(task, [dict(m) for m in messages], info.get("tools")))
    return rows


def require_answers(tasks: list[Task], trainer: str) -> None:
    """Trainers that verify against a gold answer need one on every task."""
    blank = [t.source_id or t.id for t in tasks if not str(t.answer).strip()]
    if blank:
        raise EnvDataError(f"{trainer} needs a gold answer on every task to verify samples; "
                           f"{len(blank)} task(s) have none, e.g. {blank[:3]}")


def rows_dataset(rows: list[TaskRow]):
    """A `datasets.Dataset` with columns prompt (chat messages), task (JSON), task_id."""
    from datasets import Dataset

    return Dataset.from_list([r.to_record() for r in rows])
