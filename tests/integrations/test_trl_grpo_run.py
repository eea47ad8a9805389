"""Every reward function we ship works on the dataset `grpo_inputs` returns, in one real
GRPOTrainer step (tiny offline model), and each one pickles (TRL's async trainer needs it)."""

from __future__ import annotations

import os
import pickle

import pytest

import rlvr_envs
from rlvr_envs.agents.reward_funcs import component_reward_funcs, episode_reward_funcs
from rlvr_envs.integrations.trl import grpo_inputs
from rlvr_envs.rewards.trl import (
    KimiGroupPenalty,
    make_trl_reward_funcs,
    trl_format_reward,
    trl_hacking_monitor,
    trl_kimi_length_reward,
    trl_overlong_reward,
    trl_process_reward,
    trl_thinking_budget_reward,
)

ENV = "rlvr/Arithmetic-v0"


def every_reward_func():
    scorer = rlvr_envs.scorer_for(ENV)
    _, outcome = grpo_inputs(ENV, n=4)
    return [*outcome, *component_reward_funcs(scorer),
            *make_trl_reward_funcs(scorer, format_reward=0.2, thinking="on",
                                   overlong=(8, 4), length_penalty=0.1, process="min",
                                   thinking_budget=6, monitors=True)]


def test_every_reward_function_pickles():
    funcs = [*every_reward_func(), trl_format_reward(), trl_overlong_reward(8, 4),
             trl_kimi_length_reward(rlvr_envs.scorer_for(ENV)), trl_process_reward(),
             trl_thinking_budget_reward(10), trl_hacking_monitor(),
             KimiGroupPenalty(rlvr_envs.scorer_for(ENV)), *episode_reward_funcs(None),
             *episode_reward_funcs(["correctness"])]
    dataset, _ = grpo_inputs(ENV, n=2)
    rows = dataset.to_dict()
    columns = {k: v for k, v in rows.items() if k != "prompt"}
    completions = ["\\boxed{1}", "<think>1+1=2</think> \\boxed{2}"]
    for func in funcs:
        clone = pickle.loads(pickle.dumps(func))
        assert clone.__name__ == func.__name__
        if func in funcs[-3:] or isinstance(func, KimiGroupPenalty):
            continue  # episode fields / group interface: not dataset-driven
        assert clone(prompts=rows["prompt"], completions=completions, **columns) == \
            func(prompts=rows["prompt"], completions=completions, **columns)


@pytest.mark.slow
def test_one_grpo_step_with_every_reward_function(tmp_path):
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from trl import GRPOConfig, GRPOTrainer

    from rlvr_envs.agents.models import load_model_and_tokenizer
    from rlvr_envs.agents.tiny import build_tiny_model

    model, tokenizer = load_model_and_tokenizer(build_tiny_model(tmp_path / "tiny", seed=0))
    tokenizer.padding_side = "left"
    dataset, _ = grpo_inputs(ENV, n=4)
    funcs = every_reward_func()
    config = GRPOConfig(output_dir=str(tmp_path / "run"), max_steps=1,
                        per_device_train_batch_size=4, num_generations=2,
                        max_completion_length=8, report_to="none", use_cpu=True,
                        logging_steps=1, save_strategy="no", top_k=0)
    trainer = GRPOTrainer(model=model, reward_funcs=funcs, args=config, train_dataset=dataset,
                          processing_class=tokenizer)
    trainer.train()
    logged = {k for entry in trainer.state.log_history for k in entry}
    for func in funcs:
        assert f"rewards/{func.__name__}/mean" in logged, func.__name__
