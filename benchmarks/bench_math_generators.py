"""Procedural math generators: median time to make one task per family and level, and the
median time of the load-time gold check (check_gold) on those golds.

No peer generator library is installed here (reasoning-gym is not on this machine), so this
prints our own figures only. Run: .venv/bin/python benchmarks/bench_math_generators.py
"""

from __future__ import annotations

import random
import statistics
import time

from rlvr_envs.tasks.math.generators import GENERATORS
from rlvr_envs.verify.math import check_gold

LEVELS = (1, 5, 10)
SEEDS = range(15)


def median_ms(fn, items) -> float:
    times = []
    for item in items:
        start = time.perf_counter()
        fn(item)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    header = "family".ljust(22) + "".join(f"gen L{lvl} ms".rjust(12) for lvl in LEVELS)
    print(header + "check_gold ms".rjust(15) + "mean steps L1/L10".rjust(20))
    for name, generator in GENERATORS.items():
        row = name.ljust(22)
        made = []
        for level in LEVELS:
            row += f"{median_ms(lambda s: made.append(generator(random.Random(s), level)), SEEDS):12.2f}"
        gold_ms = median_ms(lambda g: check_gold(g.answer), made)
        steps = [statistics.mean(g.metadata["steps"] for g in made[i * len(SEEDS):(i + 1) * len(SEEDS)])
                 for i in (0, len(LEVELS) - 1)]
        print(row + f"{gold_ms:15.2f}" + f"{steps[0]:9.1f} / {steps[1]:.1f}".rjust(20))


if __name__ == "__main__":
    main()
