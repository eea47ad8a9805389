"""Page faults and CPU per graded HumanEval sample, by process role, grading one sample at a
time (no concurrency, so the figures do not depend on scheduling).

Faults are what a fork-server run costs on top of the work itself: every fork write-protects
the zygote's pages, and each page a process then writes is copied. They are counted from
`/proc/<pid>/stat` for this process (the grader), each zygote (its own and those of the
children it reaped: candidates) and the test drivers, over `--rounds` passes after one
untimed pass; medians are printed.

    .venv/bin/python benchmarks/bench_code_faults.py [--sandbox bwrap|local] [--rounds 3]
        [--skip HumanEval/75 ...]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time

from rlvr_envs.sandbox import get_sandbox
from rlvr_envs.tasks.code.humaneval import load_humaneval
from rlvr_envs.tasks.code.scoring import CodeScorer

_TICK = os.sysconf("SC_CLK_TCK")
ROLES = ("grader", "zygote", "children", "driver")


def _descendants(pid: int) -> dict[int, tuple]:
    """pid → (comm, minflt, cminflt, own CPU s, reaped children's CPU s) below `pid`."""
    found = {}
    try:
        kids = [int(c) for task in os.listdir(f"/proc/{pid}/task")
                for c in open(f"/proc/{pid}/task/{task}/children").read().split()]
    except OSError:
        return found
    for child in kids:
        try:
            with open(f"/proc/{child}/comm") as fh:
                name = fh.read().strip()
            with open(f"/proc/{child}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        found[child] = (name, int(fields[7]), int(fields[8]),
                        (int(fields[11]) + int(fields[12])) / _TICK,
                        (int(fields[13]) + int(fields[14])) / _TICK)
        found.update(_descendants(child))
    return found


def totals() -> dict[str, list[float]]:
    out = {role: [0.0, 0.0] for role in ROLES}
    for name, minflt, cminflt, cpu, children_cpu in _descendants(os.getpid()).values():
        if name == "rlvr-zygote":
            out["zygote"][0] += minflt
            out["zygote"][1] += cpu
            out["children"][0] += cminflt
            out["children"][1] += children_cpu
        elif name == "rlvr-driver":
            out["driver"][0] += minflt
            out["driver"][1] += cpu
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out["grader"] = [usage.ru_minflt, usage.ru_utime + usage.ru_stime]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sandbox", default="bwrap")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip", nargs="*", default=["HumanEval/75"],
                        help="task ids left out (HumanEval/75 is 206 ms of pure computation)")
    args = parser.parse_args()
    sandbox = get_sandbox(args.sandbox)
    scorer = CodeScorer(sandbox)
    tasks = [t for t in load_humaneval() if t.source_id not in set(args.skip)]
    completions = [scorer.gold_completion(t) for t in tasks]
    scorer.warm_up()
    for task, completion in zip(tasks, completions):  # untimed: every task's test compiled
        scorer.score(task, completion)
    rows = []
    for _ in range(args.rounds):
        before, start = totals(), time.perf_counter()
        scores = [scorer.score(t, c) for t, c in zip(tasks, completions)]
        wall, after = time.perf_counter() - start, totals()
        if any(score.reward != 1.0 for score in scores):
            raise SystemExit(f"a canonical solution failed: "
                             f"{[s.verifier for s in scores if s.reward != 1.0][:5]}")
        rows.append({role: ((after[role][0] - before[role][0]) / len(tasks),
                            1000 * (after[role][1] - before[role][1]) / len(tasks))
                     for role in ROLES} | {"wall": 1000 * wall / len(tasks)})
    sandbox.close()
    print(f"{len(tasks)} HumanEval samples one at a time, {args.sandbox}, median of "
          f"{args.rounds} rounds, per sample:")
    for role in ROLES:
        print(f"  {role:<9} faults {statistics.median(r[role][0] for r in rows):7.1f}   "
              f"CPU {statistics.median(r[role][1] for r in rows):5.2f} ms")
    print(f"  total     faults {statistics.median(sum(r[k][0] for k in ROLES) for r in rows):7.1f}"
          f"   CPU {statistics.median(sum(r[k][1] for k in ROLES) for r in rows):5.2f} ms   "
          f"wall {statistics.median(r['wall'] for r in rows):.2f} ms")


if __name__ == "__main__":
    main()
