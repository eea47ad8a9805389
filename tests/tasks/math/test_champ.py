"""rlvr/CHAMP-v0: CHAMP's competition problems, shipped offline by the champ-dataset package."""

from __future__ import annotations

import collections
import json

import gymnasium as gym
import pytest

import rlvr_envs  # noqa: F401
from rlvr_envs.tasks.math.champ import champ_gold, load_champ


@pytest.mark.parametrize("raw, gold", [
    ("239", "239"),
    ("C(10, 5), or equivalently 252", "252"),
    ("5/14, or approximately 35.7%", "5/14"),
    ("999 (i.e., all except for one value)", "999"),
    ("0 (none of the values)", "0"),
    ("2^(n-1)", "2^(n-1)"),
    ("The limit exists and is equal to (a+3b)/2", "(a+3b)/2"),
    ("3 is the only possible value", "3"),
    ("2 inequalities", "2"),
    ("Yes", "Yes"),
    ("No integer solutions", None),
    ("The sequence is not periodic", None),
])
def test_gold_rewrites(raw, gold):
    assert champ_gold(raw) == gold


def test_counts_levels_and_skips_with_reasons():
    source = load_champ()
    assert len(source) + len(source.skipped) == 270
    assert len(source) >= 220
    assert all(reason for _, reason in source.skipped)
    levels = collections.Counter(t.difficulty.level for t in source)
    assert set(levels) == {1, 2, 3}
    assert {t.metadata["category"] for t in source} == {
        "Number-Theory", "Inequality", "Polynomial", "Sequence", "Combinatorics"}


@pytest.mark.slow
def test_env_gold_one_empty_zero_and_level_filter():
    env = gym.make("rlvr/CHAMP-v0", difficulty=1)
    for seed in range(3):
        _, info = env.reset(seed=seed)
        assert info["task"]["difficulty"]["level"] == 1
        _, reward, *_ = env.step(f"So the answer is \\boxed{{{info['task']['answer']}}}.")
        assert reward == 1.0
        env.reset(seed=seed)
        assert env.step("I am not sure.")[1] == 0.0
    pinned = gym.make("rlvr/CHAMP-v0").reset(options={"task": "P_Combinatorics_1"})[1]["task"]
    assert pinned["answer"] == "239"


def test_a_file_that_is_not_champ_gets_a_clear_error(tmp_path):
    bad = tmp_path / "v0.json"
    bad.write_text(json.dumps({"rows": []}))
    with pytest.raises(ValueError, match="not a CHAMP dataset file"):
        load_champ(bad)
