"""Reset, bash-step and grade latencies of rlvr/RepoEdit-v0 per sandbox backend (median, p90).

    .venv/bin/python benchmarks/bench_repo.py [--resets 20] [--grades 5] [--steps 30] \
        [--backends bwrap,local,docker,local-unsafe]

bash step = one `bash` tool call (`true`) through `env.step`: wrapper, sandbox, leftover
kill; on Docker it runs in the episode's long-lived container. The peer is a fresh
`sandbox.run(["bash", "-c", "true"])` per command (a new container per call on Docker).

reset = build a history-safe git workspace of the task's base tree and audit it (the base
tree itself is extracted once per process); the peer is a plain `shutil.copytree` of the same
tree (what a workspace without the git/audit step would cost). grade = `submit` of the gold
patch: changes collected, pristine tree assembled, FAIL_TO_PASS + PASS_TO_PASS run in the
sandbox; the peer ratio is against the `local` backend (namespaces).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
import warnings
from pathlib import Path

from rlvr_envs.tasks.repo.agents import GoldPatchAgent
from rlvr_envs.tasks.repo.env import RepoEditEnv
from rlvr_envs.tasks.repo.snapshot import BASE_TREES

from rlvr_envs.core.multiturn import run_episode
from rlvr_envs.sandbox import BACKEND_CLASSES

TASKS = ("minicalc-associativity", "toolz-1.2.0/swapped_arguments/toolz/itertoolz.py:239")


def quantiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
    return statistics.median(ordered), p90


def bench_resets(env: RepoEditEnv, task, n: int) -> list[float]:
    env.reset(options={"task": task.id})  # warm the base tree cache
    times = []
    for _ in range(n):
        start = time.perf_counter()
        env.reset(options={"task": task.id})
        times.append(time.perf_counter() - start)
    env.end_episode()
    return times


def bench_copies(task, n: int) -> list[float]:
    base = BASE_TREES.base_tree(task.metadata)
    times = []
    for _ in range(n):
        with tempfile.TemporaryDirectory() as scratch:
            start = time.perf_counter()
            shutil.copytree(base, Path(scratch) / "repo")
            times.append(time.perf_counter() - start)
    return times


def bench_steps(env: RepoEditEnv, task, n: int) -> tuple[list[float], list[float]]:
    """Seconds per `bash` step in an episode, and per fresh sandbox run of the same command."""
    env.reset(options={"task": task.id})
    env.step({"name": "bash", "arguments": {"command": "true"}})  # start the session
    steps, fresh = [], []
    for _ in range(n):
        start = time.perf_counter()
        env.step({"name": "bash", "arguments": {"command": "true"}})
        steps.append(time.perf_counter() - start)
    with tempfile.TemporaryDirectory() as scratch:
        for _ in range(max(3, n // 3)):
            start = time.perf_counter()
            env.scorer.sandbox.run(["bash", "-c", "true"], workdir=scratch)
            fresh.append(time.perf_counter() - start)
    env.end_episode()
    return steps, fresh


def bench_grades(env: RepoEditEnv, task, n: int) -> list[float]:
    times = []
    for _ in range(n):
        episode = run_episode(env, GoldPatchAgent(), task=task.id)
        assert episode.reward == 1.0, episode.info.get("verifier")
        times.append(float(episode.info["grade_seconds"]))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resets", type=int, default=20)
    parser.add_argument("--grades", type=int, default=5)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--backends", default=",".join(BACKEND_CLASSES),
                        help="comma-separated sandbox backends (default: all)")
    args = parser.parse_args()
    rows, local_grade, step_rows = [], {}, []
    for backend in args.backends.split(","):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                env = RepoEditEnv("shipped", sandbox=backend, max_turns=10_000)
                env.scorer.sandbox
        except Exception as err:
            print(f"{backend}: unavailable ({err})")
            continue
        steps, fresh = bench_steps(env, env.source.get(TASKS[0]), args.steps)
        step_rows.append((backend, quantiles(steps), quantiles(fresh)))
        for key in TASKS:
            task = env.source.get(key)
            reset = quantiles(bench_resets(env, task, args.resets))
            copy = quantiles(bench_copies(task, args.resets))
            grade = quantiles(bench_grades(env, task, args.grades))
            if backend == "local":
                local_grade[key] = grade[0]
            rows.append((backend, task.metadata["repo"],
                         len(task.metadata["FAIL_TO_PASS"]) + len(task.metadata["PASS_TO_PASS"]),
                         reset, copy, grade, grade[0] / local_grade.get(key, grade[0])))
        env.close()
    print(f"{'backend':12} {'bash step med/p90 (s)':>22}  {'fresh run med (s)':>17}  "
          f"{'step/fresh':>10}")
    for backend, step, fresh in step_rows:
        print(f"{backend:12} {step[0]:10.3f} /{step[1]:9.3f}  {fresh[0]:17.3f}  "
              f"{step[0] / fresh[0]:10.2f}")
    print(f"{'backend':8} {'repo':10} {'tests':>5}  {'reset med/p90 (s)':>18}  "
          f"{'copytree med (s)':>16}  {'reset/copy':>10}  {'grade med/p90 (s)':>18}  "
          f"{'grade vs local':>14}")
    for backend, repo, tests, reset, copy, grade, ratio in rows:
        print(f"{backend:8} {repo:10} {tests:5d}  {reset[0]:8.3f} /{reset[1]:7.3f}  "
              f"{copy[0]:16.4f}  {reset[0] / copy[0]:10.1f}  {grade[0]:8.3f} /{grade[1]:7.3f}  "
              f"{ratio:14.2f}")


if __name__ == "__main__":
    main()
