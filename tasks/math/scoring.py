"""MathScorer: the reward of a math completion, via the strict math verifier."""

from __future__ import annotations

from rlvr_envs.core.prompts import check_answer_format
from rlvr_envs.core.scoring import Score, Scorer
from rlvr_envs.core.task import Task
from rlvr_envs.verify.math import verify_math


class MathScorer(Scorer):
    """Reward 1 when the final answer (from the answer section only) equals the gold."""

    components = {"correctness": 0.0}
    batch_workers = 4

    def __init__(self, answer_format: str = "boxed", timeout: float = 1.0):
        self.answer_format = check_answer_format(answer_format)
        if not timeout > 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
        self.timeout = float(timeout)

    def score(self, task: Task, completion: str) -> Score:
        verdict = verify_math(completion, task.answer, answer_format=self.answer_format,
                              timeout=self.timeout, question=task.prompt)
        reward = 1.0 if verdict.correct else 0.0
        return Score(reward=reward, correct=verdict.correct, breakdown={"correctness": reward},
                     verifier=verdict.reason, extracted_answer=verdict.extracted)

    def gold_completion(self, task: Task) -> str:
        if self.answer_format == "r1":
            return f"<think>The answer is {task.answer}.</think><answer>{task.answer}</answer>"
        return f"The final answer is \\boxed{{{task.answer}}}."
