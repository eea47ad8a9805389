"""ShapedScorer: a family scorer plus shaping components, on the one scoring path.

It wraps any `Scorer` and returns a `Score` whose `breakdown` holds the outcome (or process, or
their mix) and the shaping components; the reward stays `sum(breakdown.values())`, so an env
(`env.scorer`), a trainer and a reward server all see the same shaped reward. Components:

- correctness  the family verifier on the answer section (x (1 - process_weight) in "mix")
- process      the step verifier's reward ("process": alone; "mix": x process_weight); 0 for a
               completion with no single final answer (outcome "no_answer" or "hedged")
- format       format_reward x R1 format verdict (0/1), in the episode's thinking mode
- overlong     weight x DAPO soft overlong punishment; `info["truncated"]` flags the cut ones
- thinking_budget  penalty for reasoning beyond the budget

`info` also carries `format` (ok, reason), `process` (per-step verdicts), `length`,
`thinking_mode` and `hacking` (monitor flags); `scorer.counters` counts the flags.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from rlvr_envs.core.scoring import Score, Scorer
from rlvr_envs.core.task import Task
from rlvr_envs.rewards.format import check_format, check_thinking_mode, split_reasoning
from rlvr_envs.rewards.lengths import Tokenizer, measure_length
from rlvr_envs.rewards.monitors import HackingCounters, MonitorConfig, hacking_flags
from rlvr_envs.rewards.overlong import OverlongConfig, is_truncated, soft_overlong_penalty
from rlvr_envs.rewards.process import AGGREGATIONS, verify_steps
from rlvr_envs.rewards.thinking import ThinkingBudget, episode_mode, thinking_budget_penalty

REWARD_MODES = ("outcome", "process", "mix")
#: outcome verdicts of a completion that gave no single final answer: its steps earn nothing
#: (else a run of true but idle steps, "1 + 1 = 2", would earn the process reward alone)
UNCOMMITTED = ("no_answer", "hedged")


@dataclass(frozen=True)
class ShapingConfig:
    """What to add to a family's outcome reward. All off by default."""

    format_reward: float = 0.0
    thinking: str | None = None
    thinking_budget: ThinkingBudget | None = None
    overlong: OverlongConfig | None = None
    reward_mode: str = "outcome"
    process_weight: float = 0.5
    process_aggregation: str = "min"
    monitors: bool = False
    max_length: int | None = None
    tokenizer: Tokenizer | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        check_thinking_mode(self.thinking)
        object.__setattr__(self, "overlong", OverlongConfig.coerce(self.overlong))
        object.__setattr__(self, "thinking_budget", ThinkingBudget.coerce(self.thinking_budget))
        if self.reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode must be one of {list(REWARD_MODES)}, got {self.reward_mode!r}")
        if not 0.0 <= float(self.process_weight) <= 1.0:
            raise ValueError(f"process_weight must be in [0, 1], got {self.process_weight!r}")
        if self.process_aggregation not in AGGREGATIONS:
            raise ValueError(f"process_aggregation must be one of {list(AGGREGATIONS)}, "
                             f"got {self.process_aggregation!r}")
        if float(self.format_reward) < 0:
            raise ValueError(f"format_reward is a weight >= 0, got {self.format_reward!r}")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @property
    def active(self) -> bool:
        """True when anything differs from the plain outcome reward."""
        return self != ShapingConfig()

    @property
    def uses_sections(self) -> bool:
        """Grade only the answer section (the R1 rule) once a think block is part of the format."""
        return self.thinking is not None or self.format_reward > 0

    @property
    def cap(self) -> int | None:
        return self.max_length or (self.overlong.max_length if self.overlong else None)


class ShapedScorer(Scorer):
    """`base` (a family scorer) with the shaping components of `config` added."""

    def __init__(self, base: Scorer, config: ShapingConfig | None = None, **options: Any):
        if isinstance(base, ShapedScorer):  # shaping twice replaces the first config
            config = replace(base.config, **options) if config is None else config
            base = base.base
        self.base = base
        self.config = config if config is not None else ShapingConfig(**options)
        self.answer_format = getattr(base, "answer_format", "boxed")
        self.batch_workers = getattr(base, "batch_workers", 1)
        self.counters = HackingCounters()
        self._monitor_config = MonitorConfig(max_length=self.config.cap)

    @property
    def components(self) -> dict[str, float]:
        config = self.config
        names = [] if config.reward_mode == "process" else list(self.base.components)
        if config.reward_mode != "outcome":
            names.append("process")
        if config.format_reward:
            names.append("format")
        if config.overlong:
            names.append("overlong")
        if config.thinking_budget:
            names.append("thinking_budget")
        return {name: 0.0 for name in names}

    def length(self, text: str) -> int:
        return measure_length(text, self.config.tokenizer)

    def score(self, task: Task, completion: str) -> Score:
        config = self.config
        mode = episode_mode(config.thinking, task.metadata)
        sections = split_reasoning(completion)
        graded = sections.answer if config.uses_sections else completion
        outcome = self.base.score(task, graded)

        breakdown: dict[str, float] = {}
        details: dict[str, Any] = dict(outcome.details)
        if config.reward_mode != "process":
            keep = 1.0 if config.reward_mode == "outcome" else 1.0 - config.process_weight
            breakdown.update({k: keep * v for k, v in outcome.breakdown.items()})
        if config.reward_mode != "outcome":
            process = verify_steps(completion, config.process_aggregation)
            if outcome.verifier in UNCOMMITTED:  # steps only earn credit toward an answer
                process = {**process, "reward": 0.0, "withheld": outcome.verifier}
            weight = 1.0 if config.reward_mode == "process" else config.process_weight
            breakdown["process"] = weight * process["reward"]
            details["process"] = process
        if config.format_reward:
            verdict = check_format(completion, self.answer_format, mode)
            breakdown["format"] = config.format_reward * verdict.reward
            details["format"] = {"ok": verdict.ok, "reason": verdict.reason}
        if config.overlong or config.monitors or config.thinking_budget:
            details["length"] = length = self.length(completion)
        if config.overlong:
            over = config.overlong
            breakdown["overlong"] = over.weight * soft_overlong_penalty(
                length, over.max_length, over.cache_length)
            details["truncated"] = is_truncated(length, over.max_length)
        if config.thinking_budget:
            budget = config.thinking_budget
            details["reasoning_length"] = reasoning = self.length(sections.reasoning)
            breakdown["thinking_budget"] = thinking_budget_penalty(
                reasoning, budget.budget, weight=budget.weight, ramp=budget.ramp)
        if mode is not None:
            details["thinking_mode"] = mode
        if config.monitors:
            details["hacking"] = flags = hacking_flags(completion, length=length,
                                                       config=self._monitor_config)
            self.counters.update(flags)
        return Score(reward=sum(breakdown.values()), correct=outcome.correct, breakdown=breakdown,
                     verifier=outcome.verifier, extracted_answer=outcome.extracted_answer,
                     details=details)

    def gold_completion(self, task: Task) -> str:
        gold = self.base.gold_completion(task)
        if not self.config.uses_sections:
            return gold
        mode = episode_mode(self.config.thinking, task.metadata) or "on"
        sections = split_reasoning(gold)
        reasoning = sections.reasoning.strip() or f"The answer is {task.answer}."
        return f"<think>{'' if mode == 'off' else reasoning}</think>{sections.answer.strip()}"


def shape(scorer: Scorer, config: ShapingConfig | Mapping[str, Any] | None = None,
          **options: Any) -> Scorer:
    """`scorer` with shaping, or `scorer` itself when nothing is asked for."""
    if isinstance(config, Mapping):
        options, config = {**config, **options}, None
    if config is None:
        config = ShapingConfig(**options)
    return ShapedScorer(scorer, config) if config.active else scorer
