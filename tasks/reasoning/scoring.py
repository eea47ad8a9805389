"""Strict scoring of reasoning-gym answers: one final answer, then exact match or a strict scorer.

reasoning-gym's own `score_answer` gives partial credit to many padded answers (the gold as a
substring of a longer reply scores 0.3–1.0 on about half of its generators), so it is never used
as the reward directly. The reward is 1 only when:

1. the answer section (after the think block, found by the math verifier's reader) holds
   exactly one distinct final answer in <answer> tags (or one box), so hedges, several
   different answers and answers inside the reasoning score 0, and
2. that answer equals the gold after whitespace normalisation, or the generator is one whose
   own scorer is strict (listed in `STRICT_OWN_SCORERS`: it gives 0 to padded, prefixed, hedged
   and empty answers, measured by `audit_generator`) and that scorer returns exactly 1.0 — the
   route for generators with several valid answers (any 24-game expression, any n-queens board).
   The scorer runs under `guard.call_own_scorer`: several of them `eval` the answer, which
   must never run as code here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from rlvr_envs.core.prompts import check_answer_format
from rlvr_envs.core.scoring import Score, Scorer
from rlvr_envs.core.task import Task
from rlvr_envs.tasks.reasoning.guard import CODE_REFUSED, call_own_scorer
from rlvr_envs.tasks.reasoning.source import entry_for
from rlvr_envs.verify.math.extract import answer_section, extract
from rlvr_envs.verify.math.verdict import CORRECT, HEDGED, MISMATCH, NO_ANSWER, TOO_LONG

AUDIT_FILE = Path(__file__).with_name("audit.json")


def load_audit() -> dict[str, Any]:
    """The last audit's results per generator (`python -m rlvr_envs.tasks.reasoning.audit`)."""
    return json.loads(AUDIT_FILE.read_text()) if AUDIT_FILE.exists() else {}


def strict_own_scorers() -> frozenset[str]:
    """Generators whose own `score_answer` never gave 1.0 to a wrong variant in the audit."""
    return frozenset(name for name, r in load_audit().items()
                     if r.get("passes") and r.get("own_scorer_strict"))


STRICT_OWN_SCORERS = strict_own_scorers()

_SPACE = re.compile(r"[ \t]+")



def normalise(text: str) -> str:
    """Lines stripped, runs of spaces collapsed, blank edge lines dropped."""
    lines = [_SPACE.sub(" ", line).strip() for line in text.strip().splitlines()]
    return "\n".join(lines).strip()


def tagged_answers(section: str) -> list[str]:
    """Contents of the <answer>…</answer> pairs of an answer section (linear scan)."""
    found, pos = [], 0
    while (start := section.find("<answer>", pos)) >= 0:
        end = section.find("</answer>", start)
        if end < 0:
            break
        found.append(section[start + len("<answer>"):end])
        pos = end + len("</answer>")
    return found


def final_answer(completion: str, answer_format: str, max_chars: int) -> tuple[str | None, str]:
    """(the one final answer, reason); grids and lists keep their line breaks."""
    section = answer_section(completion)
    if section is None:
        return None, NO_ANSWER
    tags = tagged_answers(section)
    if answer_format == "r1" or tags:
        distinct = {normalise(t) for t in tags} - {""}
        if len(distinct) > 1:
            return None, HEDGED
        if not distinct:
            return None, NO_ANSWER
        answer = distinct.pop()
        return (None, TOO_LONG) if len(answer) > max_chars else (answer, "")
    found = extract(completion, answer_format)
    if found.reason:
        return None, found.reason
    return (None, HEDGED) if len(found.answers) != 1 else (found.answers[0], "")


class ReasoningGymScorer(Scorer):
    """Reward 1 for exactly one final answer equal to the gold (or accepted by a strict scorer)."""

    components = {"correctness": 0.0}

    def __init__(self, answer_format: str = "r1"):
        self.answer_format = check_answer_format(answer_format)

    def score(self, task: Task, completion: str) -> Score:
        answer, reason = final_answer(completion, self.answer_format,
                                      max_chars=4 * len(task.answer) + 1_000)
        if answer is None:
            return self._score(False, reason, None)
        if answer == normalise(task.answer):
            return self._score(True, CORRECT, answer)
        meta: dict[str, Any] = task.metadata
        name = meta.get("rg_dataset")
        if name in STRICT_OWN_SCORERS and "rg_seed" in meta:
            dataset, entry = entry_for(name, meta["rg_seed"], meta.get("rg_level", 1), meta.get("rg_config"))
            result, refused = call_own_scorer(dataset.score_answer, answer.strip(), entry)
            if refused:
                return self._score(False, CODE_REFUSED, answer)
            if result == 1.0:
                return self._score(True, CORRECT, answer)
        return self._score(False, MISMATCH, answer)

    @staticmethod
    def _score(correct: bool, reason: str, answer: str | None) -> Score:
        reward = 1.0 if correct else 0.0
        return Score(reward=reward, correct=correct, breakdown={"correctness": reward},
                     verifier=reason, extracted_answer=answer)

    def gold_completion(self, task: Task) -> str:
        if self.answer_format == "r1":
            return f"<think>Worked out.</think><answer>{task.answer}</answer>"
        return f"The final answer is \\boxed{{{task.answer}}}."
