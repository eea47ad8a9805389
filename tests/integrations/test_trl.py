"""TRL: grpo_inputs gives a conversational dataset and reward functions that follow
GRPOTrainer's calling convention (trl 1.16 `_calculate_rewards`)."""

from __future__ import annotations

import inspect
import pickle
import subprocess
import sys

import pytest
from server_helpers import gold_of

from rlvr_envs.integrations.trl import EnvReward, completion_text, grpo_inputs


@pytest.fixture(scope="module")
def inputs():
    return grpo_inputs("rlvr/Math-v0", n=6, seed=3)


def call_like_grpo_trainer(reward_func, dataset, completions):
    """GRPOTrainer._calculate_rewards: every column but prompt/completion(_ids) as a list,
    plus trainer_state, log_extra and log_metric; prompts/completions/completion_ids by name."""
    inputs = list(dataset)
    keys = [key for key in inputs[0] if key not in ["prompt", "completion", "completion_ids"]]
    reward_kwargs = {key: [example[key] for example in inputs] for key in keys}
    logged: dict = {"extra": {}, "metrics": {}}
    reward_kwargs["trainer_state"] = object()
    reward_kwargs["log_extra"] = lambda column, values: logged["extra"].setdefault(column, []).extend(values)
    reward_kwargs["log_metric"] = lambda name, value: logged["metrics"].__setitem__(name, value)
    prompts = [example["prompt"] for example in inputs]
    completion_ids = [[1, 2, 3] for _ in inputs]
    rewards = reward_func(prompts=prompts, completions=completions,
                          completion_ids=completion_ids, **reward_kwargs)
    return rewards, logged


def test_dataset_is_conversational_with_task_columns(inputs):
    dataset, reward_funcs = inputs
    assert len(dataset) == 6 and len(set(dataset["task_id"])) == 6
    assert {"prompt", "ground_truth", "task_id", "env_id", "family", "difficulty"} <= set(dataset.column_names)
    assert [m["role"] for m in dataset[0]["prompt"]] == ["system", "user"]
    assert set(dataset["env_id"]) == {"rlvr/Math-v0"}
    assert len(reward_funcs) == 1 and callable(reward_funcs[0])


def test_rewards_follow_trl_convention(inputs):
    dataset, (reward,) = inputs
    golds = [gold_of(g) for g in dataset["ground_truth"]]
    right = [[{"role": "assistant", "content": f"Done: \\boxed{{{g}}}"}] for g in golds]
    wrong = [[{"role": "assistant", "content": "\\boxed{-31337}"}] for _ in golds]
    rewards, logged = call_like_grpo_trainer(reward, dataset, right)
    assert rewards == [1.0] * 6 and all(type(r) is float for r in rewards)
    assert logged["extra"]["verifier"] == ["correct"] * 6
    assert logged["metrics"] == {f"{reward.__name__}/accuracy": 1.0}
    rewards, _ = call_like_grpo_trainer(reward, dataset, wrong)
    assert rewards == [0.0] * 6
    mixed = [right[i] if i % 2 else wrong[i] for i in range(6)]
    assert call_like_grpo_trainer(reward, dataset, mixed)[0] == [float(i % 2) for i in range(6)]


def test_standard_format_and_plain_call(inputs):
    dataset, (reward,) = inputs
    golds = [gold_of(g) for g in dataset["ground_truth"]]
    texts = [f"\\boxed{{{g}}}" for g in golds]
    assert reward(dataset["prompt"], texts, ground_truth=dataset["ground_truth"]) == [1.0] * 6


def test_reward_is_picklable_and_named_for_trl(inputs):
    dataset, (reward,) = inputs
    clone = pickle.loads(pickle.dumps(reward))
    golds = [gold_of(g) for g in dataset["ground_truth"]]
    assert clone(dataset["prompt"], [f"\\boxed{{{g}}}" for g in golds],
                 ground_truth=dataset["ground_truth"]) == [1.0] * 6
    # trl.trainer.utils.get_callable_name: getattr(func, "__name__", type(func).__name__)
    assert getattr(reward, "__name__", type(reward).__name__) == "Math-v0_reward"
    assert not inspect.iscoroutinefunction(type(reward).__call__)  # trl's is_async_callable


def test_missing_ground_truth_column_is_explained():
    with pytest.raises(ValueError, match="ground_truth"):
        EnvReward("rlvr/Math-v0")(["p"], ["\\boxed{1}"])


def test_completion_text_forms():
    assert completion_text("abc") == "abc"
    assert completion_text([{"role": "assistant", "content": "a"},
                            {"role": "tool", "content": "ignored"},
                            {"role": "assistant", "content": [{"type": "text", "text": "b"}]}]) == "ab"
    with pytest.raises(TypeError, match="str or a list of messages"):
        completion_text(3)
    # content as chat templates write it: bare strings, text parts, parts without text
    assert completion_text([{"role": "assistant", "content": ["\\boxed{3}"]}]) == "\\boxed{3}"
    assert completion_text([{"role": "assistant",
                             "content": [{"type": "text", "text": None}, {"type": "image"},
                                         {"type": "text", "text": "x"}]}]) == "x"
    assert completion_text([{"role": "assistant", "content": None}]) == ""
    with pytest.raises(TypeError, match="content must be a str or a list of parts, got int"):
        completion_text([{"role": "assistant", "content": 3}])


def test_shaping_rewards_refuse_batches_whose_columns_differ_in_length():
    from rlvr_envs.rewards.trl import FormatReward, HackingMonitor
    with pytest.raises(ValueError, match="2 prompts for 3 completions"):
        FormatReward()(["p", "p"], ["a", "b", "c"])
    with pytest.raises(ValueError, match="1 token id lists for 2 completions"):
        HackingMonitor()(["p", "p"], ["a", "b"], completion_ids=[[1, 2]])


@pytest.mark.slow
def test_no_torch_or_trl_at_import():
    code = ("import sys, rlvr_envs.integrations.trl, rlvr_envs.integrations.verl, "
            "rlvr_envs.integrations.server; "
            "print(sorted(m for m in ('torch', 'trl', 'ray') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_completions_past_the_action_space_score_zero_as_in_step(inputs):
    dataset, (reward,) = inputs
    first, second = (gold_of(g) for g in dataset["ground_truth"][:2])
    huge = "9" * 1_000_000 + f"\\boxed{{{first}}}"
    logged = {}
    rewards = reward(dataset["prompt"][:2], [huge, f"\\boxed{{{second}}}"],
                     ground_truth=dataset["ground_truth"][:2],
                     log_extra=lambda column, values: logged.setdefault(column, values))
    assert rewards == [0.0, 1.0] and logged["verifier"] == ["too_long", "correct"]


def test_an_overlong_completion_does_not_take_the_others_out_of_the_batch(inputs, monkeypatch):
    """One completion past the action space gets its zero on its own; the others still go to
    the scorer's batch path as one batch (one at a time was up to 4x slower for code)."""
    dataset, (reward,) = inputs
    golds = [gold_of(g) for g in dataset["ground_truth"][:3]]
    from rlvr_envs.integrations import trl as trl_integration
    batches = []
    real = trl_integration._score_batch

    def spy(env, tasks, texts):
        original = env.scorer.score_batch
        monkeypatch.setattr(env.scorer, "score_batch",
                            lambda t, x: batches.append(len(x)) or original(t, x))
        return real(env, tasks, texts)

    monkeypatch.setattr(trl_integration, "_score_batch", spy)
    completions = [f"\\boxed{{{golds[0]}}}", "9" * 2_000_000, f"\\boxed{{{golds[2]}}}"]
    rewards = reward(dataset["prompt"][:3], completions, ground_truth=dataset["ground_truth"][:3])
    assert rewards == [1.0, 0.0, 1.0] and batches == [2]
