"""Running one multi-turn (tool-using) episode for an evaluation.

The agents' tool-calling loop, `rlvr_envs.agents.multiturn.run_tool_loop(policy, env, task,
max_turns=, params=)`, plays the episode (reset pins the task, the policy answers the
conversation so far, `step` returns the tool's output, until the env terminates or truncates).

The policy is wrapped in `EpisodePolicy`, which hands it the episode's task and
scorer (scripted policies such as gold need them) and measures what it wrote: tokens,
characters, and time spent generating.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from rlvr_envs.core.policy import Completion, Policy, SamplingParams
from rlvr_envs.core.task import Task

if TYPE_CHECKING:
    import gymnasium as gym
    from rlvr_envs.core.scoring import Scorer

DEFAULT_MAX_TURNS = 30


@dataclass
class EpisodeOutcome:
    """What an evaluation stores of a multi-turn episode."""

    transcript: str
    reward: float
    info: dict[str, Any]
    turns: int
    num_tokens: int | None
    finish_reason: str
    generate_seconds: float
    step_seconds: float
    messages: list[dict[str, Any]] = field(default_factory=list)
    #: characters the policy wrote (all assistant turns): the episode's completion length
    generated_chars: int = 0


class EpisodePolicy:
    """A policy bound to one episode's task and scorer, counting what it generates."""

    def __init__(self, policy: Policy, task: Task, scorer: Scorer | None):
        self.policy, self.task, self.scorer = policy, task, scorer
        self.name = getattr(policy, "name", "policy")
        self.tokens: int | None = 0
        self.chars = 0
        self.seconds = 0.0

    def generate(self, batch: Sequence[Any], params: SamplingParams, *,
                 tasks: Sequence[Task] | None = None,
                 scorers: Sequence[Scorer] | None = None) -> list[list[Completion]]:
        started = time.perf_counter()
        groups = self.policy.generate(
            batch, params, tasks=tasks or [self.task] * len(batch),
            scorers=scorers or ([self.scorer] * len(batch) if self.scorer is not None else None))
        self.seconds += time.perf_counter() - started
        for group in groups:
            for completion in group:
                self.chars += len(completion.text)
                if self.tokens is not None and completion.num_tokens is not None:
                    self.tokens += completion.num_tokens
                else:
                    self.tokens = None
        return groups


def transcript_of(messages: list[dict[str, Any]]) -> str:
    return "\n\n".join(f"[{m.get('role', '?')}] {m.get('content', '')}" for m in messages)


def run_multi_turn(env: gym.Env, policy: Policy, params: SamplingParams, task: Task, *,
                   scorer: Scorer | None = None, max_turns: int | None = None) -> EpisodeOutcome:
    """One episode on a multi-turn env, through the agents' tool-calling loop."""
    from rlvr_envs.agents.multiturn import run_tool_loop  # the agents load on first use

    bound = EpisodePolicy(policy, task, scorer)
    limit = max_turns or DEFAULT_MAX_TURNS
    started = time.perf_counter()
    episode = run_tool_loop(bound, env, task, max_turns=limit, params=params)
    messages, reward, turns = list(episode.messages), float(episode.reward), episode.turns
    info = dict(episode.info or {})
    finish = "terminated" if episode.terminated else "truncated"
    if finish != "terminated" and "verifier" not in info:
        info["verifier"] = "turn_budget_exhausted"
    return EpisodeOutcome(
        transcript=transcript_of(messages), reward=reward, info=info, turns=turns,
        num_tokens=bound.tokens, finish_reason=finish, generate_seconds=bound.seconds,
        step_seconds=time.perf_counter() - started - bound.seconds, messages=messages,
        generated_chars=bound.chars)

