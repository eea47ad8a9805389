"""The ground-truth codec every integration shares: record JSON, task id, bare gold."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from rlvr_envs.core.sources import TaskList
from rlvr_envs.core.task import Task
from rlvr_envs.integrations.ground_truth import decode_ground_truth, encode_ground_truth
from rlvr_envs.integrations.scoring import cached_env


def code_env():
    task = Task(prompt="Write f.", answer="def f(): return 1", family="code", source="unit",
                source_id="unit/0", metadata={"tests": ["assert f() == 1"]})
    return SimpleNamespace(source=TaskList([task], family="code", name="unit-code")), task


def test_record_round_trip_keeps_hidden_metadata():
    env, task = code_env()
    text = encode_ground_truth(task)
    assert json.loads(text)["metadata"] == {"tests": ["assert f() == 1"]}
    assert decode_ground_truth(text, env) == task
    assert decode_ground_truth(json.loads(text), env) == task


def test_task_ids_resolve_through_the_source():
    env, task = code_env()
    assert decode_ground_truth("unit/0", env) == task
    assert decode_ground_truth(task.id, env) == task
    math = cached_env("rlvr/Math-v0")
    regenerated = decode_ground_truth("arithmetic/L2/1234", math)
    assert regenerated.source_id == "arithmetic/L2/1234" and regenerated.difficulty.level == 2


def test_bare_gold_only_for_answer_only_families():
    math = cached_env("rlvr/Math-v0")
    assert decode_ground_truth("\\frac{1}{2}", math).answer == "\\frac{1}{2}"
    assert decode_ground_truth("{1, 2}", math).answer == "{1, 2}"  # a set, not JSON
    env, _ = code_env()
    with pytest.raises(ValueError, match="needs the full task record"):
        decode_ground_truth("def f(): return 1", env)


@pytest.mark.parametrize("bad, error", [("", ValueError), ("   ", ValueError), (42, TypeError),
                                        ({"prompt": "p"}, ValueError)])
def test_bad_ground_truths_are_explained(bad, error):
    with pytest.raises(error):
        decode_ground_truth(bad, cached_env("rlvr/Math-v0"))
