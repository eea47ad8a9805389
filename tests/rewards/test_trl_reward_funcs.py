"""The shaping pieces as TRL reward functions, called exactly as GRPOTrainer calls them:
`f(prompts=, completions=, completion_ids=, trainer_state=, log_extra=, log_metric=,
**dataset_columns)` with G consecutive completions per prompt."""

import json
from types import SimpleNamespace

import pytest
from rlvr_envs.tasks.math.scoring import MathScorer

from rlvr_envs.core.task import Task
from rlvr_envs.rewards.trl import (
    KimiGroupPenalty,
    group_indices,
    make_trl_reward_funcs,
    trl_format_reward,
    trl_hacking_monitor,
    trl_kimi_length_reward,
    trl_overlong_reward,
    trl_process_reward,
)

T1 = Task(prompt="Compute 2 + 2.", answer="4", family="math")
T2 = Task(prompt="Compute 3 + 3.", answer="6", family="math")


def trl_call(func, prompts, completions, completion_ids=None, step=0, **columns):
    metrics = {}
    out = func(prompts=prompts, completions=completions, completion_ids=completion_ids,
               trainer_state=SimpleNamespace(global_step=step),
               log_extra=lambda column, values: None,
               log_metric=lambda name, value: metrics.__setitem__(name, value), **columns)
    assert len(out) == len(completions)
    return out, metrics


def batch():
    """G=3 per prompt, conversational prompts, task column as JSON text (as datasets store it)."""
    prompts = [[{"role": "user", "content": t.prompt}] for t in (T1, T1, T1, T2, T2, T2)]
    texts = ["\\boxed{4}", "it is \\boxed{4}", "\\boxed{5}",
             "\\boxed{6}", "\\boxed{6}", "\\boxed{6}"]
    completions = [[{"role": "assistant", "content": t}] for t in texts]
    ids = [list(range(len(t))) for t in texts]
    tasks = [json.dumps(t.to_dict()) for t in (T1, T1, T1, T2, T2, T2)]
    return prompts, completions, ids, tasks


def test_group_indices():
    assert group_indices(["a", "a", "b", "b"], group_size=2) == [[0, 1], [2, 3]]
    assert group_indices(["a", "b", "a", "b"]) == [[0, 2], [1, 3]]
    assert group_indices(["a", "a"], keys=["x", "y"]) == [[0], [1]]
    with pytest.raises(ValueError, match="groups of 3"):
        group_indices(["a"] * 4, group_size=3)


def test_kimi_through_trl_convention():
    prompts, completions, ids, tasks = batch()
    func = trl_kimi_length_reward(MathScorer(), weight=1.0)
    out, _ = trl_call(func, prompts, completions, ids, task=tasks)
    # group 1 lengths 9, 15, 9 (wrong): lambda 0.5, -0.5, 0.5 -> [0.5, -0.5, min(0, 0.5)=0]
    # group 2 all length 9: zero
    assert out == pytest.approx([0.5, -0.5, 0.0, 0.0, 0.0, 0.0])
    warm = trl_kimi_length_reward(MathScorer(), warmup_steps=10)
    assert trl_call(warm, prompts, completions, ids, step=3, task=tasks)[0] == [0.0] * 6
    with pytest.raises(ValueError, match="no 'task' or 'ground_truth' column"):
        trl_call(func, prompts, completions, ids)
    with pytest.raises(ValueError, match="needs correctness"):
        trl_kimi_length_reward()
    # the agents' group interface: (completions of one prompt, tasks) -> values
    group = KimiGroupPenalty(MathScorer())
    assert group(["\\boxed{4}", "it is \\boxed{4}", "\\boxed{5}"], [T1] * 3) == [0.5, -0.5, 0.0]


def test_format_overlong_process_monitor_funcs():
    prompts = ["q /think", "q /no_think"]
    completions = ["<think>r</think><answer>4</answer>", "<think>r</think><answer>4</answer>"]
    out, _ = trl_call(trl_format_reward("r1", "hybrid", weight=0.5), prompts, completions)
    assert out == [0.5, 0.0]
    ids = [[1] * 90, [1] * 70]
    out, metrics = trl_call(trl_overlong_reward(100, 20, eos_token_ids=[2]), prompts,
                            completions, ids)
    assert out == [-0.5, 0.0] and metrics["overlong/truncated_rate"] == 1.0
    out, _ = trl_call(trl_process_reward("mean"), prompts, ["1+1 = 2\n2+2 = 5", "x"])
    assert out == [0.5, 0.0]
    monitor = trl_hacking_monitor(max_length=80)
    out, metrics = trl_call(monitor, prompts, ["\\boxed{1} \\boxed{2}", "fine"], ids)
    assert out == [0.0, 0.0]
    assert metrics["hacking/several_answers"] == 0.5 and metrics["hacking/length_at_cap"] == 0.5
    assert monitor.counters.as_dict()["hacking/episodes"] == 2


def test_make_trl_reward_funcs():
    funcs = make_trl_reward_funcs(MathScorer("r1"), format_reward=0.2, overlong=(100, 20),
                                  length_penalty=0.1, process="min", monitors=True)
    assert [f.__name__ for f in funcs] == ["format_reward", "overlong_reward",
                                          "kimi_length_penalty_reward", "process_reward",
                                          "hacking_monitor"]
    assert make_trl_reward_funcs(MathScorer()) == []
