"""Measured difficulty: estimate with scripted policies and a plain callable, store and reload
(JSON, Parquet), the `rlvr difficulty` CLI, and the curriculum helpers."""


import gymnasium as gym
import pytest
from rlvr_envs.agents.scripted import GoldPolicy, NullPolicy
from rlvr_envs.tasks.math.scoring import MathScorer
from typer.testing import CliRunner

from rlvr_envs.cli import _attach_subcommands, app
from rlvr_envs.core.env import SingleTurnEnv
from rlvr_envs.core.prompts import answer_system_prompt
from rlvr_envs.core.sources import TaskList
from rlvr_envs.core.task import Task
from rlvr_envs.curriculum.selection import (
    DynamicSamplingBuffer,
    LevelController,
    drop_zero_variance_groups,
    filter_by_pass_rate,
    in_solvability_range,
    split_groups,
)
from rlvr_envs.curriculum.difficulty import PassRates, estimate_pass_rates

TASKS = [Task(prompt=f"Compute {a} * 3.", answer=str(3 * a), family="math") for a in range(1, 6)]


def tiny_env():
    return SingleTurnEnv(TaskList(TASKS, family="math", name="tiny"), MathScorer(),
                         answer_system_prompt("boxed"))


def test_gold_and_null_policies():
    gold = estimate_pass_rates(tiny_env(), GoldPolicy(), k=3)
    null = estimate_pass_rates(tiny_env(), NullPolicy(), k=3)
    assert gold.as_dict() == {t.id: 1.0 for t in TASKS}
    assert null.as_dict() == {t.id: 0.0 for t in TASKS}
    assert gold.k == 3 and gold.policy == "gold"


def test_any_callable_prompt_to_completion():
    # a "model" that knows the 3-times table only up to 3 * 3, and is right every other try
    calls = {"n": 0}

    def half_right(prompt: str) -> str:
        calls["n"] += 1
        a = int(prompt.split("Compute ")[1].split(" *")[0])
        return f"\\boxed{{{3 * a}}}" if a <= 3 and calls["n"] % 2 else "\\boxed{0}"

    rates = estimate_pass_rates(tiny_env(), half_right, k=4)
    assert [rates.get(t.id) for t in TASKS] == [0.5, 0.5, 0.5, 0.0, 0.0]
    assert calls["n"] == 20


def test_procedural_env_by_id_and_store_round_trip(tmp_path):
    rates = estimate_pass_rates("rlvr/Arithmetic-v0", GoldPolicy(), k=2, tasks=4, seed=10)
    assert len(rates) == 4 and rates.env_id == "rlvr/Arithmetic-v0"
    assert all(e.source_id.startswith("arithmetic/L") for e in rates.rates.values())
    for suffix in (".json", ".parquet"):
        path = rates.save(tmp_path / f"rates{suffix}")
        back = PassRates.load(path)
        assert back.as_dict() == rates.as_dict() and back.k == 2 and back.policy == "gold"
        assert [e.source_id for e in back.rates.values()] == [e.source_id for e in rates.rates.values()]
    with pytest.raises(ValueError, match=".json or .parquet"):
        rates.save(tmp_path / "rates.csv")
    (tmp_path / "bad.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a pass-rate file"):
        PassRates.load(tmp_path / "bad.json")
    with pytest.raises(FileNotFoundError, match="rlvr difficulty estimate"):
        PassRates.load(tmp_path / "missing.json")


def test_reloaded_into_info_from_the_make_kwarg(tmp_path):
    env = gym.make("rlvr/Arithmetic-v0", difficulty=1)
    task = Task.from_dict(env.reset(seed=5)[1]["task"])
    store = PassRates()
    store.add(task, 3, 8)
    path = store.save(tmp_path / "rates.json")
    shaped = gym.make("rlvr/Arithmetic-v0", difficulty=1, pass_rates=str(path))
    _, info = shaped.reset(seed=5)
    assert info["task"]["difficulty"]["pass_rate"] == 0.375


def test_cli_estimate_and_show(tmp_path):
    _attach_subcommands()
    runner = CliRunner()
    out = tmp_path / "arith.parquet"
    result = runner.invoke(app, ["difficulty", "estimate", "--env", "rlvr/Arithmetic-v0",
                                 "--policy", "gold", "-k", "2", "--tasks", "3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "3 tasks, mean pass rate 1.000" in result.output
    assert PassRates.load(out).as_dict() and set(PassRates.load(out).as_dict().values()) == {1.0}
    result = runner.invoke(app, ["difficulty", "show", str(out)])
    assert result.exit_code == 0 and "policy=gold k=2 tasks=3" in result.output
    result = runner.invoke(app, ["difficulty", "estimate", "--env", "rlvr/Arithmetic-v0",
                                 "--policy", "tests.nowhere:policy", "--tasks", "1"])
    assert result.exit_code != 0 and "cannot import policy" in result.output


# -- curriculum helpers ------------------------------------------------------------------------

def test_solvability_range_and_filter():
    assert in_solvability_range(0.5) and not in_solvability_range(0.0)
    assert not in_solvability_range(1.0) and not in_solvability_range(None)
    assert in_solvability_range(1.0, 0.2, 1.0, inclusive=True)
    with pytest.raises(ValueError):
        in_solvability_range(0.5, 0.8, 0.2)
    rates = {TASKS[0].id: 0.0, TASKS[1].id: 0.5, TASKS[2].id: 1.0}
    assert filter_by_pass_rate(TASKS, rates) == [TASKS[1]]
    assert filter_by_pass_rate(TASKS, rates, keep_unmeasured=True) == [TASKS[1], *TASKS[3:]]


def test_dynamic_sampling():
    flat = [1, 1, 1, 0, 1, 0, 0, 0, 0, 0.5, 0.5, 0.5]
    groups = split_groups(flat, 3)
    result = drop_zero_variance_groups(groups)
    assert result.kept == [1] and result.dropped == [0, 2, 3] and result.num_dropped == 3
    assert drop_zero_variance_groups([[1.0]]).num_dropped == 1   # one completion: no signal
    with pytest.raises(ValueError):
        split_groups(flat, 5)
    buffer = DynamicSamplingBuffer(target_groups=2)
    for i, rewards in enumerate([[1, 1], [0, 1], [0, 0], [1, 0], [0.2, 0.1]]):
        buffer.add(f"group{i}", rewards)
    assert buffer.full and buffer.take() == ["group1", "group3"] and buffer.groups == ["group4"]
    assert buffer.stats() == {"dynamic_sampling/seen_groups": 5,
                              "dynamic_sampling/dropped_groups": 2,
                              "dynamic_sampling/drop_rate": 0.4}


def test_level_controller():
    ctl = LevelController([1, 2, 3], window=2, raise_at=1.0, lower_at=0.0)
    assert [ctl.update(c) for c in (True, True, True, False, False, False)] == [1, 2, 2, 2, 1, 1]
    assert ctl.history == [(2, 2), (5, 1)]
    with pytest.raises(ValueError, match="lower_at < raise_at"):
        LevelController([1], raise_at=0.2, lower_at=0.5)
