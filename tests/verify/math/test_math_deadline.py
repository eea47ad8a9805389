"""The symbolic path's budget: CPU time not wall time, spare workers, the verdict cache,
`on_timeout`, and `verify_batch` giving `verify_math`'s verdicts in one round trip."""

from __future__ import annotations

import asyncio
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rlvr_envs.verify.math import ON_TIMEOUT, deadline, verify_batch, verify_math, warm_up
from rlvr_envs.verify.math.cache import VerdictCache
from rlvr_envs.verify.math.verifier import clear_caches

TOWER = "\\boxed{9^{9^{9^{9}}}}"
CASES_PATH = Path(__file__).resolve().parent / "math_cases.jsonl"
GENEROUS = 20.0  # CPU seconds: the verdicts, not the budget, are under test

# A stand-in worker: "spin" busy-loops with the CPU timer ignored (as work stuck in C code
# would), "sleep" uses no CPU at all, anything else is answered at once.
FAKE_WORKER = """
import json, signal, sys, time

def answer(request):
    if request.get("op") == "spin":
        signal.signal(signal.SIGPROF, signal.SIG_IGN)
        while True:
            pass
    if request.get("op") == "sleep":
        time.sleep(3600)
    return {"reason": "correct", "echo": request.get("op")}

print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    for i, item in enumerate(request.get("items") or [request]):
        print(json.dumps({"i": i, **answer(item)}), flush=True)
"""


@pytest.fixture(scope="module", autouse=True)
def _workers():
    warm_up()


@pytest.fixture
def fake_pool(tmp_path, monkeypatch):
    script = tmp_path / "fake_worker.py"
    script.write_text(FAKE_WORKER)
    monkeypatch.setattr(deadline, "_WORKER_COMMAND", [sys.executable, str(script)])
    pool = deadline.WorkerPool(1, spares=1)
    pool.wait_ready(every=True)
    yield pool
    pool.close()


@pytest.mark.slow
def test_a_comparison_over_its_cpu_budget_is_a_timeout_and_the_worker_survives():
    clear_caches()
    pool = deadline.pool()
    before = pool.restarts
    verdict = verify_math(TOWER, "5", timeout=0.5)
    assert (verdict.correct, verdict.reason, verdict.reward) == (False, "timeout", 0.0)
    abstained = verify_math(TOWER, "5", timeout=0.5, on_timeout="none")
    assert (abstained.correct, abstained.reason, abstained.reward) == (None, "timeout", None)
    assert pool.restarts == before  # the worker's own CPU timer stopped sympy; no kill
    assert verify_math("\\boxed{\\sqrt{8}}", "2\\sqrt{2}", timeout=GENEROUS).correct


@pytest.mark.slow
def test_work_stuck_past_the_cpu_timer_is_killed_and_a_spare_answers_next(fake_pool):
    reply = fake_pool.call({"op": "spin"}, budget=0.2)
    assert reply["timeout"] and reply["stuck"] == "cpu" and reply["cpu"] > 0.2
    assert fake_pool.restarts == 1
    # the spare takes the next request while the replacement starts
    assert fake_pool.call({"op": "judge"}, budget=0.2) == {"i": 0, "reason": "correct",
                                                           "echo": "judge"}


@pytest.mark.slow
def test_the_wall_clock_backstop_ends_a_worker_that_gets_no_cpu(fake_pool):
    reply = fake_pool.call({"op": "sleep"}, budget=0.2, wall_timeout=0.5)
    assert reply == {"timeout": True, "stuck": "wall"}
    assert fake_pool.call({"op": "judge"}, budget=0.2)["reason"] == "correct"


@pytest.mark.slow
def test_call_many_goes_on_after_an_overrunning_item(fake_pool):
    items = [{"op": "judge"}, {"op": "spin"}, {"op": "judge"}]
    fake_pool.size = 1  # one chunk: the third item must go on in another worker
    replies = fake_pool.call_many(items, budget=0.2)
    assert [r.get("i") for r in replies] == [0, None, 0]  # the third went to a fresh worker
    assert replies[1]["stuck"] == "cpu" and replies[0]["reason"] == replies[2]["reason"] == "correct"


@pytest.mark.slow
def test_deadline_from_threads_and_asyncio():
    clear_caches()
    hostile = [(TOWER, "5")] * 3
    normal = [("\\boxed{\\frac{1}{2}\\sqrt{3}}", "\\frac{\\sqrt{3}}{2}"),
              ("\\boxed{\\sin x \\tan x}", "\\frac{\\sin^2 x}{\\cos x}")] * 3

    def run(job):
        completion, gold = job
        return verify_math(completion, gold, timeout=0.5 if completion == TOWER else GENEROUS)

    with ThreadPoolExecutor(max_workers=6) as pool:
        verdicts = list(pool.map(run, hostile + normal))
    assert [v.reason for v in verdicts[:3]] == ["timeout"] * 3
    assert all(v.correct for v in verdicts[3:]), verdicts[3:]

    async def main():
        clear_caches()
        return await asyncio.to_thread(verify_math, TOWER, "5", timeout=0.5)

    assert asyncio.run(main()).reason == "timeout"


def test_verdict_cache_is_bounded_and_remembers_timeouts_per_budget():
    cache = VerdictCache(max_entries=2)
    cache.put("1", ("1",), "correct")
    cache.put("2", ("3",), "mismatch")
    cache.put("x", ("y",), "timeout", budget=1.0)
    assert cache.get("1", ("1",), 1.0) is None and len(cache) == 2  # least recent went out
    assert cache.get("2", ("3",), 99.0) == "mismatch"
    assert cache.get("x", ("y",), 0.5) == "timeout" and cache.get("x", ("y",), 1.0) == "timeout"
    assert cache.get("x", ("y",), 2.0) is None  # a larger budget may finish: judge again
    with pytest.raises(ValueError):
        VerdictCache(0)


def test_a_repeated_pair_is_judged_once(monkeypatch):
    clear_caches()
    first = verify_math("\\boxed{\\sin x \\tan x}", "\\frac{\\sin^2 x}{\\cos x}", timeout=GENEROUS)

    def no_worker(*args, **kwargs):
        raise AssertionError("the cached verdict should have answered")

    monkeypatch.setattr(deadline.pool(), "call", no_worker)
    again = verify_math("Thus \\boxed{\\sin x \\tan x}", "\\frac{\\sin^2 x}{\\cos x}",
                        timeout=GENEROUS)
    assert first == again and first.correct


def test_verify_batch_gives_verify_math_verdicts_in_one_round_trip(monkeypatch):
    cases = [json.loads(line) for line in CASES_PATH.read_text().splitlines() if line]
    cases = [c for c in cases if c.get("answer_format", "boxed") == "boxed"][:150]
    cases.append({"completion": "\\boxed{\\sin x \\tan x}", "gold": "\\frac{\\sin^2 x}{\\cos x}"})
    cases.append({"completion": "\\boxed{\\cos x \\cot x}", "gold": "\\frac{\\cos^2 x}{\\sin x}"})
    clear_caches()
    single = [verify_math(c["completion"], c["gold"], timeout=GENEROUS) for c in cases]
    clear_caches()
    pool = deadline.pool()
    calls = []
    real_call_many = pool.call_many
    monkeypatch.setattr(pool, "call", lambda *a, **k: pytest.fail("batch used per-item calls"))
    monkeypatch.setattr(pool, "call_many", lambda items, *a, **k: calls.append(len(items))
                        or real_call_many(items, *a, **k))
    batch = verify_batch([c["completion"] for c in cases], [c["gold"] for c in cases],
                         timeout=GENEROUS)
    assert batch == single
    assert len(calls) == 1 and calls[0] >= 2


def test_bad_options_raise_clear_errors():
    with pytest.raises(ValueError, match="on_timeout"):
        verify_math("\\boxed{1}", "1", on_timeout="skip")
    with pytest.raises(ValueError, match="wall_timeout"):
        verify_math("\\boxed{1}", "1", wall_timeout=0)
    with pytest.raises(ValueError, match="one gold per completion"):
        verify_batch(["\\boxed{1}"], ["1", "2"])
    with pytest.raises(TypeError):
        verify_batch("\\boxed{1}", "1")
    assert ON_TIMEOUT == ("zero", "none")


class _FirstTryTimesOut:
    """A pool whose first answer to each pair is a CPU timeout (a cold or shared core)."""

    def __init__(self):
        self.budgets = []

    def call(self, request, budget, wall_timeout=None):
        self.budgets.append(budget)
        return {"timeout": True} if len(self.budgets) == 1 else {"reason": "correct"}

    def call_many(self, requests, budget, wall_timeout=None):
        self.budgets.append(budget)
        return [{"timeout": True} if len(self.budgets) == 1 else {"reason": "correct"}
                for _ in requests]


@pytest.mark.parametrize("batch", [False, True])
def test_a_comparison_over_budget_is_tried_once_more_at_twice_the_budget(monkeypatch, batch):
    """CPU time varies with the worker's caches and the machine's load: a pair near its
    budget must get the same verdict either way, so one timeout is retried at 2x."""
    from rlvr_envs.verify.math import verify_batch
    clear_caches()
    pool = _FirstTryTimesOut()
    monkeypatch.setattr(deadline, "pool", lambda: pool)
    completion = "$\\boxed{\\sum_{n=1}^{\\infty} \\frac{1}{n^4}}$"
    verdict = (verify_batch([completion], ["\\frac{\\pi^4}{90}"], timeout=1.0)[0] if batch
               else verify_math(completion, "\\frac{\\pi^4}{90}", timeout=1.0))
    assert verdict.reason == "correct" and pool.budgets == [1.0, 2.0]
    clear_caches()
