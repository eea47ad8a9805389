"""MathScorer: the reward of a math completion, via the strict math verifier."""

from __future__ import annotations

import math
from collections.abc import Sequence

from rlvr_envs.core.prompts import check_answer_format
from rlvr_envs.core.scoring import Score, Scorer
from rlvr_envs.core.task import Task
from rlvr_envs.verify.math import ON_TIMEOUT, MathVerdict, verify_batch, verify_math


class MathScorer(Scorer):
    """Reward 1 when the final answer (from the answer section only) equals the gold.

    `timeout` is the CPU time in seconds the symbolic comparison may use. On a timeout the
    reward is 0.0 (`on_timeout="zero"`) or NaN (`"none"`: no reward; TRL reward functions
    pass it on as None, so the sample is left out of the loss).
    """

    components = {"correctness": 0.0}

    def __init__(self, answer_format: str = "boxed", timeout: float = 1.0,
                 on_timeout: str = "zero"):
        self.answer_format = check_answer_format(answer_format)
        if not timeout > 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
        if on_timeout not in ON_TIMEOUT:
            raise ValueError(f"on_timeout must be one of {ON_TIMEOUT}, got {on_timeout!r}")
        self.timeout = float(timeout)
        self.on_timeout = on_timeout

    def _score(self, verdict: MathVerdict) -> Score:
        reward = math.nan if verdict.reward is None else verdict.reward
        return Score(reward=reward, correct=bool(verdict.correct),
                     breakdown={"correctness": reward}, verifier=verdict.reason,
                     extracted_answer=verdict.extracted)

    def score(self, task: Task, completion: str) -> Score:
        return self._score(verify_math(completion, task.answer, answer_format=self.answer_format,
                                       timeout=self.timeout, on_timeout=self.on_timeout,
                                       question=task.prompt))

    def score_batch(self, tasks: Sequence[Task], completions: Sequence[str]) -> list[Score]:
        """The batch in one round trip to the symbolic workers (`verify_batch`)."""
        if len(tasks) != len(completions):
            raise ValueError(f"score_batch needs one task per completion: got {len(tasks)} tasks "
                             f"and {len(completions)} completions")
        verdicts = verify_batch(list(completions), [t.answer for t in tasks],
                                answer_format=self.answer_format, timeout=self.timeout,
                                on_timeout=self.on_timeout, questions=[t.prompt for t in tasks])
        return [self._score(v) for v in verdicts]

    def gold_completion(self, task: Task) -> str:
        if self.answer_format == "r1":
            return f"<think>The answer is {task.answer}.</think><answer>{task.answer}</answer>"
        return f"The final answer is \\boxed{{{task.answer}}}."
