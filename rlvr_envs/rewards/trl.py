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

Every function has a `__name__`, which TRL uses to log `rewards/<name>/mean`, and is a small
class instance that pickles (TRL's asynchronous GRPO trainer sends reward functions to other
processes). Tasks come from the `task` column or, as `grpo_dataset` writes it, `ground_truth`.
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rlvr_envs.core.task import Task
from rlvr_envs.integrations.trl import completion_text
from rlvr_envs.rewards.format import check_format, split_reasoning
from rlvr_envs.rewards.kimi import kimi_length_penalty
from rlvr_envs.rewards.lengths import Tokenizer, measure_length, measure_lengths
from rlvr_envs.rewards.monitors import HackingCounters, hacking_flags
from rlvr_envs.rewards.overlong import is_truncated, soft_overlong_penalty
from rlvr_envs.rewards.process import verify_steps
from rlvr_envs.rewards.thinking import mode_from_prompt, thinking_budget_penalty

if TYPE_CHECKING:
    from rlvr_envs.core.scoring import Scorer

RewardFunc = Callable[..., list[float]]


def task_from_column(value: Any) -> Task:
    """A Task from a dataset's task column: a Task, a dict, or its JSON text."""
    if isinstance(value, Task):
        return value
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (json.JSONDecodeError, RecursionError):
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
    tasks = task_column_values(kwargs, task_column)
    return None if tasks is None else [t.id for t in tasks]


def _lengths(texts: list[str], completion_ids: Any, tokenizer: Tokenizer | None) -> list[int]:
    return measure_lengths(texts, tokenizer, token_ids=completion_ids)


def task_column_values(kwargs: dict[str, Any], task_column: str) -> list[Task] | None:
    """The batch's tasks from the `task_column` column, else from `ground_truth` (the column
    `rlvr_envs.integrations.trl.grpo_dataset` writes: the task record as JSON)."""
    for column in (task_column, "ground_truth"):
        if kwargs.get(column) is not None:
            try:
                return [task_from_column(value) for value in kwargs[column]]
            except ValueError as err:
                raise ValueError(f"the {column!r} column must hold task records (as "
                                 f"grpo_dataset writes them): {err}") from None
    return None


class FormatReward:
    """weight x R1 format verdict; in hybrid mode the episode's mode is read from the prompt's
    `/think` or `/no_think` tag."""

    __name__ = "format_reward"

    def __init__(self, answer_format: str = "r1", thinking: str | None = "on",
                 weight: float = 1.0):
        self.answer_format, self.thinking, self.weight = answer_format, thinking, weight

    def __call__(self, prompts: list[Any], completions: list[Any], **_: Any) -> list[float]:
        if len(prompts) != len(completions):
            raise ValueError(f"got {len(prompts)} prompts for {len(completions)} completions")
        out = []
        for prompt, completion in zip(prompts, completions):
            mode = self.thinking
            if self.thinking == "hybrid":
                mode = mode_from_prompt(prompt) or "hybrid"
            verdict = check_format(completion_text(completion), self.answer_format, mode)
            out.append(self.weight * verdict.reward)
        return out


class OverlongReward:
    """weight x DAPO soft overlong punishment, on token counts from `completion_ids`; logs the
    truncated share as `overlong/truncated_rate` (mask them with GRPOConfig's
    `mask_truncated_completions=True`)."""

    __name__ = "overlong_reward"

    def __init__(self, max_length: int, cache_length: int, weight: float = 1.0,
                 tokenizer: Tokenizer | None = None,
                 eos_token_ids: Sequence[int] | None = None):
        self.max_length, self.cache_length, self.weight = max_length, cache_length, weight
        self.tokenizer, self.eos_token_ids = tokenizer, eos_token_ids

    def __call__(self, prompts: list[Any], completions: list[Any], completion_ids: Any = None,
                 log_metric: Callable[[str, float], None] | None = None, **_: Any
                 ) -> list[float]:
        texts = [completion_text(c) for c in completions]
        lengths = _lengths(texts, completion_ids, self.tokenizer)
        if log_metric is not None and lengths:
            cut = [is_truncated(n, self.max_length, ids, self.eos_token_ids)
                   for n, ids in zip(lengths, completion_ids or [None] * len(lengths))]
            log_metric("overlong/truncated_rate", sum(cut) / len(cut))
        return [self.weight * soft_overlong_penalty(n, self.max_length, self.cache_length)
                for n in lengths]


class KimiLengthReward:
    """The Kimi k1.5 length penalty over each group of the batch. Correctness comes from
    `scorer` on the task column (`task`, else `ground_truth`: the env's scorer is
    `rlvr_envs.scorer_for(env_id)`), or from `correct_fn(prompts, completions, **columns) ->
    list[bool | None]`. Warm-up reads `trainer_state.global_step`. A completion whose verdict
    is unknown (None from `correct_fn`, or a NaN reward: a math timeout with
    `on_timeout="none"`) gets None and is left out of its group's length range."""

    __name__ = "kimi_length_penalty_reward"

    def __init__(self, scorer: Scorer | None = None, *, weight: float = 1.0, warmup_steps: int = 0,
                 group_size: int | None = None, task_column: str = "task",
                 tokenizer: Tokenizer | None = None,
                 correct_fn: Callable[..., Sequence[bool | None]] | None = None):
        if scorer is None and correct_fn is None:
            raise ValueError("the Kimi length penalty needs correctness: pass scorer= or "
                             "correct_fn=")
        self.scorer, self.weight, self.warmup_steps = scorer, weight, warmup_steps
        self.group_size, self.task_column = group_size, task_column
        self.tokenizer, self.correct_fn = tokenizer, correct_fn

    def __call__(self, prompts: list[Any], completions: list[Any], completion_ids: Any = None,
                 trainer_state: Any = None, **kwargs: Any) -> list[float | None]:
        texts = [completion_text(c) for c in completions]
        if self.correct_fn is not None:
            correct = [None if c is None else bool(c)
                       for c in self.correct_fn(prompts, completions, **kwargs)]
        else:
            tasks = task_column_values(kwargs, self.task_column)
            if tasks is None:
                raise ValueError(f"the dataset has no {self.task_column!r} or 'ground_truth' "
                                 f"column with task records")
            correct = [None if math.isnan(s.reward) else s.correct
                       for s in self.scorer.score_batch(tasks, texts)]
        lengths = _lengths(texts, completion_ids, self.tokenizer)
        step = getattr(trainer_state, "global_step", None)
        out: list[float | None] = [None] * len(texts)
        keys = None if self.group_size else _group_keys(kwargs, self.task_column)
        for idx in group_indices(prompts, group_size=self.group_size, keys=keys):
            known = [i for i in idx if correct[i] is not None]
            values = kimi_length_penalty([lengths[i] for i in known], [correct[i] for i in known],
                                         weight=self.weight, step=step,
                                         warmup_steps=self.warmup_steps)
            for i, v in zip(known, values):
                out[i] = v
        return out


class ProcessReward:
    """weight x the share (or min) of verified arithmetic steps in each completion."""

    __name__ = "process_reward"

    def __init__(self, aggregation: str = "min", weight: float = 1.0,
                 no_steps_reward: float = 0.0):
        self.aggregation, self.weight, self.no_steps_reward = aggregation, weight, no_steps_reward

    def __call__(self, prompts: list[Any], completions: list[Any], **_: Any) -> list[float]:
        return [self.weight * verify_steps(completion_text(c), self.aggregation,
                                           self.no_steps_reward)["reward"]
                for c in completions]


class ThinkingBudgetReward:
    """The thinking-budget penalty on the length of each completion's reasoning."""

    __name__ = "thinking_budget"

    def __init__(self, budget: int, weight: float = 0.5, ramp: int = 0,
                 tokenizer: Tokenizer | None = None):
        self.budget, self.weight, self.ramp, self.tokenizer = budget, weight, ramp, tokenizer

    def __call__(self, prompts: list[Any], completions: list[Any], **_: Any) -> list[float]:
        return [thinking_budget_penalty(
            measure_length(split_reasoning(completion_text(c)).reasoning, self.tokenizer),
            self.budget, weight=self.weight, ramp=self.ramp) for c in completions]


class HackingMonitor:
    """Not a reward (always 0.0): logs each flag's rate in the batch through TRL's
    `log_metric` as `hacking/<flag>` and keeps running totals in `counters`."""

    __name__ = "hacking_monitor"

    def __init__(self, counters: HackingCounters | None = None, max_length: int | None = None):
        self.counters = counters if counters is not None else HackingCounters()
        self.max_length = max_length

    def __call__(self, prompts: list[Any], completions: list[Any], completion_ids: Any = None,
                 log_metric: Callable[[str, float], None] | None = None, **_: Any
                 ) -> list[float]:
        texts = [completion_text(c) for c in completions]
        lengths = measure_lengths(texts, token_ids=completion_ids) \
            if completion_ids is not None else None
        flags = [hacking_flags(t, max_length=self.max_length,
                               length=None if lengths is None else lengths[i])
                 for i, t in enumerate(texts)]
        self.counters.update_many(flags)
        if log_metric is not None and flags:
            for flag in flags[0]:
                log_metric(f"hacking/{flag}", sum(f[flag] for f in flags) / len(flags))
        return [0.0] * len(texts)


# The factory names the docs use; each returns one of the picklable classes above.
trl_format_reward = FormatReward
trl_overlong_reward = OverlongReward
trl_kimi_length_reward = KimiLengthReward
trl_process_reward = ProcessReward
trl_thinking_budget_reward = ThinkingBudgetReward
trl_hacking_monitor = HackingMonitor


def make_trl_reward_funcs(scorer: Scorer | None = None, *, answer_format: str | None = None,
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

    def __init__(self, scorer: Scorer, *, weight: float = 1.0, warmup_steps: int = 0,
                 tokenizer: Tokenizer | None = None):
        self.scorer, self.weight, self.warmup_steps, self.tokenizer = scorer, weight, warmup_steps, tokenizer
        self.step: int | None = None

    def __call__(self, completions: list[str], tasks: list[Task]) -> list[float]:
        correct = [s.correct for s in self.scorer.score_batch(tasks, completions)]
        return kimi_length_penalty(measure_lengths(completions, self.tokenizer), correct,
                                   weight=self.weight, step=self.step,
                                   warmup_steps=self.warmup_steps)
