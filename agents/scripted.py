"""Scripted policies for audits and tests: gold (states the gold answer), null (says nothing),
random (random text), and for repo tasks revert-search (a real search baseline through the
env's tools: `rlvr_envs.tasks.repo.baseline`). They need no model and no torch."""

from __future__ import annotations

import random
from typing import Sequence

from rlvr_envs.core.policy import Completion, Messages, SamplingParams
from rlvr_envs.core.scoring import Scorer
from rlvr_envs.core.task import Task


class GoldPolicy:
    """Answers every task with its scorer's gold completion (pass@1 must be 1.0)."""

    name = "gold"

    def generate(self, batch: Sequence[Messages], params: SamplingParams, *,
                 tasks: Sequence[Task] | None = None,
                 scorers: Sequence[Scorer] | None = None) -> list[list[Completion]]:
        if tasks is None or scorers is None or len(tasks) != len(batch) or len(scorers) != len(batch):
            raise ValueError("the gold policy needs one task and one scorer per conversation "
                             "(pass tasks= and scorers=)")
        return [[Completion(self._gold_turn(messages, task, scorer)) for _ in range(params.n)]
                for messages, task, scorer in zip(batch, tasks, scorers)]

    @staticmethod
    def _gold_turn(messages: Messages, task: Task, scorer: Scorer) -> str:
        """Single-turn: the gold completion. Multi-turn (the scorer lists gold tool calls): the
        next gold action, counted by the assistant turns already in the conversation."""
        gold_actions = getattr(scorer, "gold_actions", None)
        if gold_actions is None:
            return scorer.gold_completion(task)
        actions = gold_actions(task)
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        return actions[min(turn, len(actions) - 1)]


class NullPolicy:
    """Answers nothing (pass@1 must be 0.0): the empty completion."""

    name = "null"

    def generate(self, batch: Sequence[Messages], params: SamplingParams, **_: object
                 ) -> list[list[Completion]]:
        return [[Completion("", num_tokens=0) for _ in range(params.n)] for _ in batch]


class RandomPolicy:
    """Random words, seeded: a noise baseline. A call with `params.seed` draws from that seed
    alone (so an evaluation unit gets the same words whether the run was resumed or not);
    without one, from the policy's own stream."""

    name = "random"
    _WORDS = ("the", "answer", "is", "0", "1", "2", "x", "=", "\\boxed{7}", "so", "def", "return")

    def __init__(self, seed: int = 0):
        self._rng = random.Random(seed)

    def generate(self, batch: Sequence[Messages], params: SamplingParams, **_: object
                 ) -> list[list[Completion]]:
        rng = self._rng if params.seed is None else random.Random(params.seed)

        def one() -> Completion:
            words = [rng.choice(self._WORDS) for _ in range(rng.randint(0, 20))]
            return Completion(" ".join(words), num_tokens=len(words))
        return [[one() for _ in range(params.n)] for _ in batch]


def RevertSearchPolicy(**kwargs):  # noqa: N802 - a policy class, loaded on first use
    """The revert-search baseline of repo tasks (`rlvr_envs.tasks.repo.baseline`)."""
    from rlvr_envs.tasks.repo.baseline import RevertSearchPolicy as policy

    return policy(**kwargs)


SCRIPTED_POLICIES = {"gold": GoldPolicy, "null": NullPolicy, "random": RandomPolicy,
                     "revert-search": RevertSearchPolicy}
