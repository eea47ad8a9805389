"""The same pairs get the same verdicts on an idle machine and under two busy-loop
processes. Nothing here depends on timing: identical verdicts is the assertion."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rlvr_envs.verify.math import verify_batch, verify_math, warm_up
from rlvr_envs.verify.math.verifier import clear_caches

pytestmark = pytest.mark.slow

CASES_PATH = Path(__file__).resolve().parent / "math_cases.jsonl"
HOG = "while True:\n    pass\n"


def _symbolic_pairs() -> list[dict]:
    """Pairs the fast path cannot decide: they reach the symbolic workers, where a
    wall-clock deadline used to turn load into `timeout`."""
    pairs = []
    for k in range(2, 14):
        pairs += [
            {"gold": f"\\tan({k}x)", "completion": f"\\boxed{{\\frac{{\\sin({k}x)}}{{\\cos({k}x)}}}}"},
            {"gold": f"\\sqrt[3]{{{k}}}x", "completion": f"\\boxed{{x\\sqrt[3]{{{k}}}}}"},
            {"gold": f"\\sqrt[3]{{{k}}}", "completion": f"\\boxed{{\\sqrt[3]{{{k + 1}}}}}"},
            {"gold": f"\\log_{{{k}}} x", "completion": f"\\boxed{{\\frac{{\\ln x}}{{\\ln {k}}}}}"},
        ]
    return pairs


def _pairs() -> list[dict]:
    """Every other labelled case (a fixed half, to keep the test short) and the pairs above."""
    cases = [json.loads(line) for line in CASES_PATH.read_text(encoding="utf-8").splitlines()
             if line]
    return cases[::2] + _symbolic_pairs()


def _judge_one_by_one(pairs: list[dict]) -> list[tuple]:
    clear_caches()
    verdicts = [verify_math(p["completion"], p["gold"], answer_format=p.get("answer_format", "boxed"),
                            question=p.get("question")) for p in pairs]
    return [(v.correct, v.reason) for v in verdicts]


def _judge_in_batches(pairs: list[dict]) -> list[tuple]:
    clear_caches()
    out = []
    for fmt in ("boxed", "r1"):
        chosen = [p for p in pairs if p.get("answer_format", "boxed") == fmt]
        verdicts = verify_batch([p["completion"] for p in chosen], [p["gold"] for p in chosen],
                                answer_format=fmt, questions=[p.get("question") for p in chosen])
        out += [(p["gold"], p["completion"], v.correct, v.reason) for p, v in zip(chosen, verdicts)]
    return sorted(out)


def test_verdicts_are_the_same_idle_and_under_two_cpu_hogs():
    pairs = _pairs()
    assert len(pairs) >= 300
    warm_up()
    idle = _judge_one_by_one(pairs)
    idle_batch = _judge_in_batches(pairs)
    hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(2)]
    try:
        loaded = _judge_one_by_one(pairs)
        loaded_batch = _judge_in_batches(pairs)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    changed = [(p["gold"], p["completion"], a, b)
               for p, a, b in zip(pairs, idle, loaded) if a != b]
    assert not changed, changed[:10]
    assert loaded_batch == idle_batch
    assert not any(reason == "timeout" for _, reason in idle)
