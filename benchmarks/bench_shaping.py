"""What shaping costs per completion: the plain math scorer vs the same scorer with every
shaping component on (format, overlong, thinking budget, process steps, monitors).

Run: .venv/bin/python benchmarks/bench_shaping.py
Prints the median microseconds per completion of each and their ratio, measured in one run.
"""

from __future__ import annotations

import statistics
import time

import gymnasium as gym

import rlvr_envs  # noqa: F401 - registers the ids
from rlvr_envs.core.task import Task
from rlvr_envs.rewards.shaped import ShapedScorer

ROUNDS, PER_ROUND = 7, 200


def completions(env: gym.Env) -> list[tuple[Task, str]]:
    out = []
    for seed in range(PER_ROUND):
        _, info = env.reset(seed=seed)
        task = Task.from_dict(info["task"])
        expr = task.metadata["expression"]
        steps = "\n".join(f"Step {i}: {expr} = {task.answer}" for i in range(4))
        out.append((task, f"<think>{steps}\nSo the result is clear.</think>"
                          f"The answer is \\boxed{{{task.answer}}}."))
    return out


def median_us(scorer, pairs) -> float:
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for task, text in pairs:
            scorer.score(task, text)
        times.append((time.perf_counter() - start) / len(pairs) * 1e6)
    return statistics.median(times)


def main() -> None:
    env = gym.make("rlvr/Arithmetic-v0", difficulty=2)
    pairs = completions(env)
    plain = env.unwrapped.scorer
    shaped = ShapedScorer(plain, format_reward=0.2, thinking="on", overlong=(4096, 512),
                          thinking_budget=2048, reward_mode="mix", monitors=True)
    median_us(plain, pairs[:20])  # warm caches (sympy, math-verify)
    base_us, shaped_us = median_us(plain, pairs), median_us(shaped, pairs)
    print(f"{len(pairs)} completions x {ROUNDS} rounds (median per completion)")
    print(f"  MathScorer                    {base_us:9.1f} us")
    print(f"  ShapedScorer (all components) {shaped_us:9.1f} us")
    print(f"  ratio shaped / plain          {shaped_us / base_us:9.2f}x")


if __name__ == "__main__":
    main()
