"""verl: the exported Parquet matches verl's RL dataset schema, and compute_score works when
loaded and called the way verl loads and calls a custom_reward_function."""

from __future__ import annotations

import importlib
import importlib.util
import json
from functools import partial

import datasets
import pyarrow.parquet as pq
import pytest
from server_helpers import gold_of
from typer.testing import CliRunner

from rlvr_envs import cli
from rlvr_envs.integrations.verl import compute_score, export_verl


def load_extern_object(module_path: str, object_name: str):
    """verl.utils.import_utils.load_extern_object, as verl resolves `pkg://` and file paths."""
    if module_path.startswith("pkg://"):
        module = importlib.import_module(module_path[len("pkg://"):].replace("/", "."))
    else:
        module_path = module_path.removeprefix("file://")
        spec = importlib.util.spec_from_file_location(f"custom_module_{hash(module_path)}", module_path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return getattr(module, object_name)


def _call_with_kwargs(raw_fn, extra_kwargs, *args, **kwargs):  # verl/trainer/ppo/reward.py
    return raw_fn(*args, **{**kwargs, **extra_kwargs})


def naive_manager_call(compute, row: dict, response_str: str):
    """What verl's NaiveRewardManager does per sample (non-tensor fields → compute_score)."""
    ground_truth = row["reward_model"]["ground_truth"]
    data_source = row["data_source"]
    extra_info = row.get("extra_info", {})
    extra_info["num_turns"] = None
    extra_info["rollout_reward_scores"] = {}
    return compute(data_source=data_source, solution_str=response_str,
                   ground_truth=ground_truth, extra_info=extra_info)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("verl")
    paths = export_verl("rlvr/Math-v0", 12, out, test_n=4, seed=7)
    return out, paths


def test_parquet_has_verls_schema(exported):
    _, paths = exported
    assert set(paths) == {"train", "test"}
    table = pq.read_table(paths["train"])
    assert set(table.column_names) == {"data_source", "prompt", "ability", "reward_model", "extra_info"}
    train = datasets.load_dataset("parquet", data_files=str(paths["train"]))["train"]
    test = datasets.load_dataset("parquet", data_files=str(paths["test"]))["train"]
    assert (len(train), len(test)) == (12, 4)
    row = train[0]
    assert row["data_source"] == "rlvr/Math-v0" and row["ability"] == "math"
    assert [m["role"] for m in row["prompt"]] == ["system", "user"]
    assert "\\boxed" in row["prompt"][0]["content"]
    assert row["reward_model"]["style"] == "rule"
    record = json.loads(row["reward_model"]["ground_truth"])
    assert record["prompt"] == row["prompt"][1]["content"]
    assert record["answer"] not in row["prompt"][1]["content"].split()  # gold is not in the prompt
    info = row["extra_info"]
    assert info["split"] == "train" and info["index"] == 0
    assert info["task_id"] == record["id"] and info["difficulty"] == record["difficulty"]["level"]
    assert [r["extra_info"]["index"] for r in train] == list(range(12))
    assert {r["extra_info"]["split"] for r in test} == {"test"}
    train_ids = {r["extra_info"]["task_id"] for r in train}
    assert len(train_ids) == 12 and not train_ids & {r["extra_info"]["task_id"] for r in test}


def test_export_is_deterministic(exported, tmp_path):
    _, paths = exported
    again = export_verl("rlvr/Math-v0", 12, tmp_path, test_n=4, seed=7)
    assert pq.read_table(again["train"]).equals(pq.read_table(paths["train"]))


@pytest.mark.parametrize("module_path", ["pkg://rlvr_envs.integrations.verl", "FILE"])
def test_compute_score_as_verl_loads_and_calls_it(exported, module_path):
    import rlvr_envs.integrations.verl as verl_module

    if module_path == "FILE":
        module_path = verl_module.__file__
    raw_fn = load_extern_object(module_path, "compute_score")
    compute = partial(_call_with_kwargs, raw_fn, {})  # reward_kwargs: {}
    rows = datasets.load_dataset("parquet", data_files=str(exported[1]["train"]))["train"]
    for row in list(rows)[:4]:
        gold = gold_of(row["reward_model"]["ground_truth"])
        right = naive_manager_call(compute, dict(row), f"So the answer is \\boxed{{{gold}}}.")
        wrong = naive_manager_call(compute, dict(row), "I think it is \\boxed{-987654321}.")
        empty = naive_manager_call(compute, dict(row), "")
        assert right["score"] == 1.0 and right["acc"] == 1.0 and right["pred"] == gold
        assert wrong["score"] == 0.0 and wrong["verifier"] == "mismatch"
        assert empty["score"] == 0.0 and empty["pred"] == ""
        assert set(right) == set(wrong) == set(empty) == {"score", "acc", "pred", "verifier"}


def test_compute_score_accepts_reward_kwargs_and_router_fields():
    gt = json.dumps({"prompt": "1+1?", "answer": "2"})
    raw = partial(_call_with_kwargs, compute_score, {"some_reward_kwarg": 3})
    result = raw(data_source="rlvr/Math-v0", solution_str="\\boxed{2}", ground_truth=gt,
                 extra_info=None, reward_router_address=None, reward_model_tokenizer=None)
    assert result["score"] == 1.0


def test_env_kwargs_travel_in_extra_info(tmp_path):
    paths = export_verl("rlvr/Arithmetic-v0", 3, tmp_path, test_n=0,
                        env_kwargs={"answer_format": "r1"})
    assert set(paths) == {"train"}
    row = datasets.load_dataset("parquet", data_files=str(paths["train"]))["train"][0]
    assert json.loads(row["extra_info"]["env_kwargs"]) == {"answer_format": "r1"}
    assert "<answer>" in row["prompt"][0]["content"]
    gold = gold_of(row["reward_model"]["ground_truth"])
    r1 = naive_manager_call(compute_score, dict(row), f"<think>ok</think><answer>{gold}</answer>")
    boxed = naive_manager_call(compute_score, dict(row), f"\\boxed{{{gold}}}")
    assert (r1["score"], boxed["score"]) == (1.0, 0.0)


def test_bad_ground_truth_is_a_clear_error():
    with pytest.raises(ValueError, match="rlvr/Math-v0"):
        compute_score("rlvr/Math-v0", "\\boxed{1}", "", None)


def test_cli_export(tmp_path):
    cli._attach_subcommands()
    result = CliRunner().invoke(cli.app, ["export", "verl", str(tmp_path / "out"), "--env",
                                          "rlvr/Arithmetic-v0", "--n", "5", "--test-n", "2"])
    assert result.exit_code == 0, result.output
    assert pq.read_table(tmp_path / "out" / "train.parquet").num_rows == 5
    assert pq.read_table(tmp_path / "out" / "test.parquet").num_rows == 2
