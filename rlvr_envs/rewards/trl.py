"""The shaping pieces as TRL reward functions (no torch, no trl import).

TRL's GRPOTrainer calls each reward function as
`f(prompts=..., completions=..., completion_ids=..., trainer_state=..., log_extra=...,
log_metric=..., **dataset_columns)` with every completion of the (per-process) batch, the G
completions of a prompt next to each other, and wants one float (or None) per completion.
Group-level functions regroup the batch: by `group_size` consecutive rows when given, else by
the `task_id` column, else by the task record's id, else by equal prompts. With several
processes a group can straddle two of them (TRL shards the batch); keep
`per_device_train_batch_size * steps_per_generation` a multiple of `num_generations` so each
process holds whole groups.

Every function has a `__name__`, which TRL uses to log `rewards/<name>/mean`.
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from rlvr_envs.core.task import Task
from rlvr_envs.integrations.trl import completion_text
from rlvr_envs.rewards.format import check_format, split_reasoning
from rlvr_envs.rewards.kimi import kimi_length_penalty
from rlvr_envs.rewards.lengths import Tokenizer, measure_length, measure_lengths
from rlvr_envs.rewards.monitors import HackingCounters, hacking_flags
from rlvr_envs.rewards.overlong import is_truncated, soft_overlong_penalty
from rlvr_envs.rewards.process import verify_steps
from rlvr_envs.rewards.thinking import mode_from_prompt, thinking_budget_penalty

RewardFunc = Callable[..., list[float]]


def task_from_column(value: Any) -> Task:
    """A Task from a dataset's task column: a Task, a dict, or its JSON text."""
    if isinstance(value, Task):
        return value
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise ValueError(f"the task column holds a string that is not a JSON task record: "
                             f"{value[:80]!r}") from None
    if isinstance(value, dict):
        return Task.from_dict(value)
    raise TypeError(f"a task column entry must be a Task, a dict or JSON text, got {type(value).__name__}")


def group_indices(prompts: Sequence[Any], *, group_size: int | None = None,
                  keys: Sequence[Any] | None = None) -> list[list[int]]:
    """Row indices of each group (see the module docstring for how groups are found)."""
    n = len(prompts)
    if group_size is not None:
        if group_size < 1 or n % group_size:
            raise ValueError(f"{n} completions do not split into groups of {group_size}")
        return [list(range(i, i + group_size)) for i in range(0, n, group_size)]
    keys = keys if keys is not None else [json.dumps(p, sort_keys=True, default=str) for p in prompts]
    if len(keys) != n:
        raise ValueError(f"got {len(keys)} group keys for {n} completions")
    groups: OrderedDict[Any, list[int]] = OrderedDict()
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    return list(groups.values())


def _group_keys(kwargs: dict[str, Any], task_column: str) -> list[Any] | None:
    if kwargs.get("task_id") is not None:
        return list(kwargs["task_id"])
    if kwargs.get(task_column) is not None:
        return [task_from_column(t).id for t in kwargs[task_column]]
    return None


def _lengths(texts: list[str], completion_ids: Any, tokenizer: Tokenizer | None) -> list[int]:
    return measure_lengths(texts, tokenizer, token_ids=completion_ids)


def trl_format_reward(answer_format: str = "r1", thinking: str | None = "on",
                      weight: float = 1.0) -> RewardFunc:
    """weight x R1 format verdict; in hybrid mode the episode's mode is read from the prompt's
    `/think` or `/no_think` tag."""
    def format_reward(prompts: list[Any], completions: list[Any], **_: Any) -> list[float]:
        out = []
        for prompt, completion in zip(prompts, completions):
            mode = thinking
            if thinking == "hybrid":
                mode = mode_from_prompt(prompt) or "hybrid"
            out.append(weight * check_format(completion_text(completion), answer_format, mode).reward)
        return out
    return format_reward


def trl_overlong_reward(max_length: int, cache_length: int, weight: float = 1.0,
                        tokenizer: Tokenizer | None = None,
                        eos_token_ids: Sequence[int] | None = None) -> RewardFunc:
    """weight x DAPO soft overlong punishment, on token counts from `completion_ids`; logs the
    truncated share as `overlong/truncated_rate` (mask them with GRPOConfig's
    `mask_truncated_completions=True`)."""
    def overlong_reward(prompts: list[Any], completions: list[Any], completion_ids: Any = None,
                        log_metric: Callable[[str, float], None] | None = None, **_: Any
                        ) -> list[float]:
        texts = [completion_text(c) for c in completions]
        lengths = _lengths(texts, completion_ids, tokenizer)
        if log_metric is not None and lengths:
            cut = [is_truncated(n, max_length, ids, eos_token_ids)
                   for n, ids in zip(lengths, completion_ids or [None] * len(lengths))]
            log_metric("overlong/truncated_rate", sum(cut) / len(cut))
        return [weight * soft_overlong_penalty(n, max_length, cache_length) for n in lengths]
    return overlong_reward


def trl_kimi_length_reward(scorer: Any = None, *, weight: float = 1.0, warmup_steps: int = 0,
                           group_size: int | None = None, task_column: str = "task",
                           tokenizer: Tokenizer | None = None,
                           correct_fn: Callable[..., Sequence[bool | None]] | None = None
                           ) -> RewardFunc:
    """The Kimi k1.5 length penalty over each group of the batch. Correctness comes from
    `scorer` on the task column (the env's scorer: `rlvr_envs.scorer_for(env_id)`), or from
    `correct_fn(prompts, completions, **columns) -> list[bool | None]`. Warm-up reads
    `trainer_state.global_step`. A completion whose verdict is unknown (None from
    `correct_fn`, or a NaN reward: a math timeout with `on_timeout="none"`) gets None and is
    left out of its group's length range."""
    if scorer is None and correct_fn is None:
        raise ValueError("the Kimi length penalty needs correctness: pass scorer= or correct_fn=")

    def kimi_length_penalty_reward(prompts: list[Any], completions: list[Any],
                                   completion_ids: Any = None, trainer_state: Any = None,
                                   **kwargs: Any) -> list[float | None]:
        texts = [completion_text(c) for c in completions]
        if correct_fn is not None:
            correct = [None if c is None else bool(c)
                       for c in correct_fn(prompts, completions, **kwargs)]
        else:
            if kwargs.get(task_column) is None:
                raise ValueError(f"the dataset has no {task_column!r} column with task records")
            tasks = [task_from_column(t) for t in kwargs[task_column]]
            correct = [None if math.isnan(s.reward) else s.correct
                       for s in scorer.score_batch(tasks, texts)]
        lengths = _lengths(texts, completion_ids, tokenizer)
        step = getattr(trainer_state, "global_step", None)
        out: list[float | None] = [None] * len(texts)
        keys = None if group_size else _group_keys(kwargs, task_column)
        for idx in group_indices(prompts, group_size=group_size, keys=keys):
            known = [i for i in idx if correct[i] is not None]
            values = kimi_length_penalty([lengths[i] for i in known], [correct[i] for i in known],
                                         weight=weight, step=step, warmup_steps=warmup_steps)
            for i, v in zip(known, values):
                out[i] = v
        return out
    return kimi_length_penalty_reward


def trl_process_reward(aggregation: str = "min", weight: float = 1.0,
                       no_steps_reward: float = 0.0) -> RewardFunc:
    def process_reward(prompts: list[Any], completions: list[Any], **_: Any) -> list[float]:
        return [weight * verify_steps(completion_text(c), aggregation, no_steps_reward)["reward"]
                for c in completions]
    return process_reward


def trl_thinking_budget_reward(budget: int, weight: float = 0.5, ramp: int = 0,
                               tokenizer: Tokenizer | None = None) -> RewardFunc:
    def thinking_budget(prompts: list[Any], completions: list[Any], **_: Any) -> list[float]:
        return [thinking_budget_penalty(
            measure_length(split_reasoning(completion_text(c)).reasoning, tokenizer), budget,
            weight=weight, ramp=ramp) for c in completions]
    return thinking_budget


def trl_hacking_monitor(counters: HackingCounters | None = None, max_length: int | None = None
                        ) -> RewardFunc:
    """Not a reward (always 0.0): logs each flag's rate in the batch through TRL's
    `log_metric` as `hacking/<flag>` and keeps running totals in `counters`."""
    counters = counters if counters is not None else HackingCounters()

    def hacking_monitor(prompts: list[Any], completions: list[Any], completion_ids: Any = None,
                        log_metric: Callable[[str, float], None] | None = None, **_: Any
                        ) -> list[float]:
        texts = [completion_text(c) for c in completions]
        lengths = [len(ids) for ids in completion_ids] if completion_ids is not None else None
        flags = [hacking_flags(t, max_length=max_length,
                               length=None if lengths is None else lengths[i])
                 for i, t in enumerate(texts)]
        counters.update_many(flags)
        if log_metric is not None and flags:
            for flag in flags[0]:
                log_metric(f"hacking/{flag}", sum(f[flag] for f in flags) / len(flags))
        return [0.0] * len(texts)

    hacking_monitor.counters = counters  # type: ignore[attr-defined]
    return hacking_monitor


def make_trl_reward_funcs(scorer: Any = None, *, answer_format: str | None = None,
                          format_reward: float = 0.0, thinking: str | None = None,
                          overlong: tuple[int, int] | None = None, length_penalty: float = 0.0,
                          warmup_steps: int = 0, process: str | None = None,
                          thinking_budget: int | None = None, monitors: bool = False,
                          group_size: int | None = None, tokenizer: Tokenizer | None = None
                          ) -> list[RewardFunc]:
    """The shaping reward functions asked for, to put next to the outcome reward functions
    in `GRPOTrainer(reward_funcs=[...])`."""
    answer_format = answer_format or getattr(scorer, "answer_format", "boxed")
    funcs: list[RewardFunc] = []
    if format_reward:
        funcs.append(trl_format_reward(answer_format, thinking or "on", format_reward))
    if overlong:
        funcs.append(trl_overlong_reward(*overlong, tokenizer=tokenizer))
    if length_penalty:
        funcs.append(trl_kimi_length_reward(scorer, weight=length_penalty,
                                            warmup_steps=warmup_steps, group_size=group_size,
                                            tokenizer=tokenizer))
    if process:
        funcs.append(trl_process_reward(process))
    if thinking_budget is not None:
        funcs.append(trl_thinking_budget_reward(thinking_budget, tokenizer=tokenizer))
    if monitors:
        funcs.append(trl_hacking_monitor(max_length=overlong[0] if overlong else None))
    return funcs


class KimiGroupPenalty:
    """The Kimi length penalty as a group function `(completions, tasks) -> list[float]` (the
    shape `rlvr_envs.agents.reward_funcs.group_reward_funcs` adapts); set `.step` for warm-up."""

    __name__ = "kimi_length_penalty"

    def __init__(self, scorer: Any, *, weight: float = 1.0, warmup_steps: int = 0,
                 tokenizer: Tokenizer | None = None):
        self.scorer, self.weight, self.warmup_steps, self.tokenizer = scorer, weight, warmup_steps, tokenizer
        self.step: int | None = None

    def __call__(self, completions: list[str], tasks: list[Task]) -> list[float]:
        correct = [s.correct for s in self.scorer.score_batch(tasks, completions)]
        return kimi_length_penalty(measure_lengths(completions, self.tokenizer), correct,
                                   weight=self.weight, step=self.step,
                                   warmup_steps=self.warmup_steps)
