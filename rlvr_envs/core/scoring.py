"""The one scoring path: a Scorer turns (task, completion) into a Score.

Envs call their scorer in `step`; trainers, servers and evaluators call the very same object
(`env.unwrapped.scorer`, or `rlvr_envs.scorer_for(env_id)`) without stepping an env, one
completion at a time or in batches.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping, Sequence

from rlvr_envs.core.task import Task


@dataclass
class Score:
    """The verdict on one completion.

    reward: the scalar the env returns (weighted sum of `breakdown`).
    correct: the verifier's verdict on the outcome.
    breakdown: every reward component by name (weights already applied).
    verifier: a short reason ("correct", "mismatch", "no_answer", "hedged", "timeout", ...).
    extracted_answer: what the verifier read as the final answer, if anything.
    details: family extras for `info` (tests passed, per-step verdicts, flags, ...).
    """

    reward: float
    correct: bool
    breakdown: dict[str, float]
    verifier: str
    extracted_answer: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def info(self) -> dict[str, Any]:
        """The keys a step's `info` carries for this score."""
        return {
            "reward_breakdown": dict(self.breakdown),
            "correct": self.correct,
            "extracted_answer": self.extracted_answer,
            "verifier": self.verifier,
            **self.details,
        }


class Scorer:
    """Base class: subclasses implement `score(task, completion)`.

    The reward is `sum(breakdown.values())`; components such as format or length shaping
    add entries to `breakdown` rather than replacing the outcome reward.
    """

    #: the entries of every breakdown this scorer returns (name -> its value in a zero score);
    #: families with other components (code's tests, repo's, shaping's) declare their own
    components: Mapping[str, float] = MappingProxyType({"correctness": 0.0})

    #: how many completions `score_batch` grades at once (threads; verifiers release the GIL
    #: while they wait on subprocesses, and math's hard deadline runs off the main thread)
    batch_workers: int = 1

    def score(self, task: Task, completion: str) -> Score:  # pragma: no cover - abstract
        raise NotImplementedError

    def gold_completion(self, task: Task) -> str:  # pragma: no cover - abstract
        """A completion that states the task's gold answer in the expected format (audits,
        the scripted gold policy)."""
        raise NotImplementedError

    def __call__(self, task: Task, completion: str) -> Score:
        return self.score(task, completion)

    def score_batch(self, tasks: Sequence[Task], completions: Sequence[str]) -> list[Score]:
        if len(tasks) != len(completions):
            raise ValueError(f"score_batch needs one task per completion: got {len(tasks)} tasks "
                             f"and {len(completions)} completions")
        if self.batch_workers <= 1 or len(tasks) <= 1:
            return [self.score(t, c) for t, c in zip(tasks, completions)]
        with ThreadPoolExecutor(self.batch_workers) as pool:
            return list(pool.map(self.score, tasks, completions))


def check_completion(completion: Any, max_chars: int) -> str | None:
    """Validate an action. Raises TypeError for a non-string; returns a verifier reason
    ("too_long") when the text exceeds the action space, else None."""
    if not isinstance(completion, str):
        raise TypeError(f"the action must be a str (the model's completion), got "
                        f"{type(completion).__name__}: {completion!r:.80}")
    if len(completion) > max_chars:
        return "too_long"
    return None


def zero_score(reason: str, components: Mapping[str, float] | None = None, **details: Any) -> Score:
    """A reward-0 score with the reason; used for hostile or malformed completions."""
    breakdown = {name: 0.0 for name in (components or {"correctness": 0.0})}
    return Score(reward=0.0, correct=False, breakdown=breakdown, verifier=reason, details=details)
