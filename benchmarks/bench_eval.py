"""What the durable, resumable evaluation costs on top of a bare loop.

Runs the gold policy on procedural math tasks two ways in one process and prints episodes/s
for each and their ratio:
- peer: a bare loop — the same suite resolution, then policy.generate on batches and
  env.reset(task) + env.step per sample, nothing stored;
- ours: `rlvr_envs.eval.evaluate` — the same work plus suite resolution, one SQLite (WAL,
  synchronous=FULL) transaction per unit, the run record and the summary.
Also times a resume of the finished run (nothing to do but checking what is stored) and the
leaderboard write. Medians of --repeats runs.

    .venv/bin/python benchmarks/bench_eval.py [--tasks 200] [--n 4] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from rlvr_envs.core.policy import SamplingParams
from rlvr_envs.agents.scripted import GoldPolicy
from rlvr_envs.eval.publish import write_leaderboard
from rlvr_envs.eval.runner import evaluate
from rlvr_envs.eval.suites import parse_suite, resolve_suite


def suite_dict(tasks: int, n: int, batch: int) -> dict:
    return {"name": "bench", "n": n, "k": [1], "batch_size": batch,
            "entries": [{"env": "rlvr/Math-v0", "name": "math", "seeds": {"count": tasks}}]}


def bare_loop(tasks: int, n: int, batch: int) -> float:
    started = time.perf_counter()
    resolved = resolve_suite(parse_suite(suite_dict(tasks, n, batch)))  # same task resolution
    entry = resolved.entries[0]
    policy = GoldPolicy()
    for start in range(0, len(entry.tasks), batch):
        chunk = entry.tasks[start:start + batch]
        groups = policy.generate(entry.messages[start:start + batch], SamplingParams(n=n),
                                 tasks=chunk, scorers=[entry.scorer] * len(chunk))
        for task, group in zip(chunk, groups):
            for completion in group:
                entry.env.reset(options={"task": task})
                entry.env.step(completion.text)
    elapsed = time.perf_counter() - started
    resolved.close()
    return elapsed


def ours(tasks: int, n: int, batch: int) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory() as runs:
        suite = parse_suite(suite_dict(tasks, n, batch))
        started = time.perf_counter()
        evaluate(GoldPolicy(), suite, runs_dir=runs)
        full = time.perf_counter() - started
        started = time.perf_counter()
        evaluate(GoldPolicy(), suite, runs_dir=runs, resume=True)
        resume = time.perf_counter() - started
        started = time.perf_counter()
        write_leaderboard(runs)
        board = time.perf_counter() - started
    return full, resume, board


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--n", type=int, default=4)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    episodes = args.tasks * args.n
    bare, full, resume, board = [], [], [], []
    for _ in range(args.repeats):
        bare.append(bare_loop(args.tasks, args.n, args.batch))
        f, r, b = ours(args.tasks, args.n, args.batch)
        full.append(f)
        resume.append(r)
        board.append(b)
    b, f = statistics.median(bare), statistics.median(full)
    print(f"{episodes} episodes ({args.tasks} math tasks x {args.n}), gold policy, "
          f"median of {args.repeats}")
    print(f"bare loop (peer):        {b:7.2f} s  {episodes / b:8.1f} episodes/s")
    print(f"rlvr eval (store, WAL):  {f:7.2f} s  {episodes / f:8.1f} episodes/s")
    print(f"ratio eval / bare:       {f / b:7.2f}x time")
    print(f"resume of the finished run: {statistics.median(resume):.2f} s;  "
          f"leaderboard write: {statistics.median(board):.2f} s")


if __name__ == "__main__":
    main()
