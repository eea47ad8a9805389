"""TRL: any env id → (train_dataset, reward_funcs) for `GRPOTrainer`, in one line::

    from rlvr_envs.integrations.trl import grpo_inputs
    train_dataset, reward_funcs = grpo_inputs("rlvr/Math-v0", n=2000)
    trainer = GRPOTrainer(model=..., args=GRPOConfig(...), train_dataset=train_dataset,
                          reward_funcs=reward_funcs)

The dataset is conversational (`prompt` = the env's chat messages) with task columns
(`ground_truth`, `task_id`, `env_id`, `family`, `difficulty`). GRPOTrainer passes every column
but `prompt` to reward functions as keyword lists, so `EnvReward` finds each completion's task
in `ground_truth` and scores it with the env's own scorer (the path `env.step` takes).

Imports neither torch nor trl: `datasets` is imported when a dataset is built.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rlvr_envs.integrations.ground_truth import decode_ground_truth, encode_ground_truth
from rlvr_envs.integrations.scoring import cached_env, kwargs_key, score_completion
from rlvr_envs.integrations.task_rows import task_rows

if TYPE_CHECKING:
    import gymnasium as gym


def completion_text(completion: Any) -> str:
    """The text of one TRL completion: a str (standard format) or a list of message dicts
    (conversational: the assistant turn(s) the model generated)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence):
        parts = []
        for message in completion:
            if not isinstance(message, Mapping):
                raise TypeError(f"a conversational completion is a list of message dicts; got "
                                f"an item of type {type(message).__name__}")
            if message.get("role", "assistant") == "assistant":
                parts.append(_content_text(message.get("content")))
        return "".join(parts)
    raise TypeError(f"a completion must be a str or a list of messages, got "
                    f"{type(completion).__name__}")


def _content_text(content: Any) -> str:
    """A message's text: its content string, or the text of a list of parts (strings, or
    dicts with a "text" string; other parts, such as images, hold none)."""
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, Sequence):
        return "".join(part if isinstance(part, str) else
                       part.get("text") if isinstance(part, Mapping) and
                       isinstance(part.get("text"), str) else "" for part in content)
    raise TypeError(f"a message's content must be a str or a list of parts, got "
                    f"{type(content).__name__}")


class EnvReward:
    """A GRPOTrainer reward function scoring through an env's scorer.

    Picklable (it holds the env id and kwargs; the env is built lazily in each process), named
    for TRL's logs by `__name__`, and follows TRL's calling convention:
    `reward(prompts, completions, completion_ids=None, **columns) -> list[float | None]`.
    A reward the env leaves undecided (NaN: a math timeout with `on_timeout="none"`) is
    returned as None, which TRL reads as "no reward" and leaves out of the loss.
    `on_timeout` ("zero" or "none"), when given, is passed to the env as that kwarg.
    """

    def __init__(self, env_id: str, env_kwargs: Mapping[str, Any] | str | None = None, *,
                 name: str | None = None, log_verdicts: bool = True,
                 on_timeout: str | None = None):
        self.env_id = env_id
        if on_timeout is not None:
            env_kwargs = {**json.loads(kwargs_key(env_kwargs)), "on_timeout": on_timeout}
        self.env_kwargs = kwargs_key(env_kwargs)
        self.__name__ = name or f"{env_id.split('/')[-1]}_reward"
        self.log_verdicts = log_verdicts

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any],
                 completion_ids: Sequence[Any] | None = None, *,
                 ground_truth: Sequence[Any] | None = None,
                 log_extra: Callable[[str, list], None] | None = None,
                 log_metric: Callable[[str, float], None] | None = None,
                 **_: Any) -> list[float | None]:
        if ground_truth is None:
            raise ValueError(f"{self.__name__}: the dataset has no 'ground_truth' column; build "
                             f"it with rlvr_envs.integrations.trl.grpo_inputs (or add the column "
                             f"with encode_ground_truth(task))")
        if len(ground_truth) != len(completions):
            raise ValueError(f"{self.__name__}: {len(completions)} completions but "
                             f"{len(ground_truth)} ground truths")
        env = cached_env(self.env_id, self.env_kwargs)
        tasks = [decode_ground_truth(g, env) for g in ground_truth]
        texts = [completion_text(c) for c in completions]
        scores = _score_batch(env, tasks, texts)
        if self.log_verdicts and log_extra is not None:
            log_extra("verifier", [s.verifier for s in scores])
        if self.log_verdicts and log_metric is not None and scores:
            log_metric(f"{self.__name__}/accuracy", sum(s.correct for s in scores) / len(scores))
        return [None if math.isnan(s.reward) else float(s.reward) for s in scores]


def _score_batch(env: gym.Env, tasks: list, texts: list[str]) -> list:
    """The scorer's batch path (threads where the scorer allows), with step's length cap: an
    over-long completion gets its zero on its own and the others still go as one batch."""
    scores = [score_completion(env, task, text) if len(text) > env.action_space.max_length
              else None for task, text in zip(tasks, texts)]
    todo = [i for i, score in enumerate(scores) if score is None]
    if todo:
        for i, score in zip(todo, env.scorer.score_batch([tasks[i] for i in todo],
                                                         [texts[i] for i in todo])):
            scores[i] = score
    return scores


def grpo_dataset(env_id: str, n: int, *, seed: int = 0,
                 env_kwargs: Mapping[str, Any] | str | None = None):
    """A `datasets.Dataset` of `n` distinct tasks: `prompt` (chat messages) + task columns."""
    import datasets

    rows = task_rows(env_id, n, seed=seed, env_kwargs=env_kwargs)
    return datasets.Dataset.from_list([
        {"prompt": row.messages, "ground_truth": encode_ground_truth(row.task),
         "task_id": row.task.id, "env_id": env_id, "family": row.task.family,
         "difficulty": row.task.difficulty.level}
        for row in rows
    ])


def grpo_inputs(env_id: str, n: int = 1000, *, seed: int = 0,
                env_kwargs: Mapping[str, Any] | str | None = None,
                on_timeout: str | None = None):
    """(train_dataset, reward_funcs) for `trl.GRPOTrainer` from an env id; `on_timeout`
    goes to the reward function (see `EnvReward`)."""
    return (grpo_dataset(env_id, n, seed=seed, env_kwargs=env_kwargs),
            [EnvReward(env_id, env_kwargs, on_timeout=on_timeout)])
