"""Every trainer end to end on CPU with the tiny offline model, on the MagicWord env (the
answer is a fixed short string): reward rises within a bounded number of steps. Plus resume,
group-level rewards, multi-turn GRPO, and clear errors on bad input."""

from __future__ import annotations

import json

import pytest

from rlvr_envs.agents.data import EnvDataError
from rlvr_envs.agents.grpo import GRPOSettings, log_series, train_grpo
from rlvr_envs.agents.run_dir import RunDir
from rlvr_envs.core.env import SingleTurnEnv
from rlvr_envs.registry import register_env
from .magic import MAGIC_ENV, MAGIC_TOOLS_ENV, MagicScorer, magic_tasks

MAGIC_B_ENV = "rlvr-test/MagicWordB-v0"
register_env(MAGIC_B_ENV, lambda: SingleTurnEnv(magic_tasks("magic-b", "the"),
                                                MagicScorer("magic-b"), "Answer with one word."),
             "test: say 'the'", family="magic-b")


def grpo_settings(model, out, **overrides) -> GRPOSettings:
    base = dict(env_id=MAGIC_ENV, model=str(model), output_dir=str(out), train_tasks=8,
                eval_tasks=0, max_steps=14, prompts_per_step=4, num_generations=8,
                max_completion_length=8, learning_rate=2e-2, save_steps=7, device="cpu")
    base.update(overrides)
    return GRPOSettings(**base)


def mean(values):
    return sum(values) / len(values)


@pytest.mark.slow
def test_grpo_raises_reward_logs_components_and_feeds_group_rewards(tiny_model, tmp_path):
    group_sizes = []

    def shortest_bonus(completions, tasks):
        group_sizes.append(len(completions))
        assert len({t.id for t in tasks}) == 1
        return [0.0] * len(completions)

    result = train_grpo(grpo_settings(tiny_model, tmp_path / "run", loss_type="dr_grpo"),
                        group_rewards=[shortest_bonus])
    assert result["steps"] == 14
    correctness = log_series(tmp_path / "run", "rewards/correctness/mean")
    assert len(correctness) == 14
    assert len(log_series(tmp_path / "run", "rewards/brevity/mean")) == 14
    assert len(log_series(tmp_path / "run", "rewards/shortest_bonus/mean")) == 14
    assert mean(correctness[-3:]) > mean(correctness[:3]) + 0.3, correctness
    assert group_sizes and set(group_sizes) == {8}
    assert (tmp_path / "run" / "final" / "config.json").exists()
    settings = json.loads((tmp_path / "run" / "settings.json").read_text())
    assert settings["loss_type"] == "dr_grpo"


@pytest.mark.slow
def test_grpo_resumes_after_interruption_without_repeating_steps(tiny_model, tmp_path):
    from transformers import TrainerCallback

    class Crash(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            if state.global_step == 3:
                raise KeyboardInterrupt("simulated interruption")

    settings = grpo_settings(tiny_model, tmp_path / "run", max_steps=4, save_steps=2)
    with pytest.raises(KeyboardInterrupt):
        train_grpo(settings, extra_callbacks=[Crash()])
    assert [s for s, _ in RunDir(tmp_path / "run").checkpoints()] == [2]
    result = train_grpo(settings)
    assert result["resumed"] and result["steps"] == 4
    assert [r["step"] for r in RunDir(tmp_path / "run").read_log()] == [1, 2, 3, 4]


@pytest.mark.slow
def test_grpo_multi_turn_through_rollout_func(tiny_model, tmp_path):
    settings = grpo_settings(tiny_model, tmp_path / "mt", env_id=MAGIC_TOOLS_ENV, max_steps=2,
                             prompts_per_step=2, num_generations=2, multi_turn=True,
                             max_turns=2, max_completion_length=32, save_steps=2)
    result = train_grpo(settings)
    assert result["steps"] == 2
    log = RunDir(tmp_path / "mt").read_log()
    assert all("rewards/correctness/mean" in r for r in log)
    # lengths count model tokens only (env_mask), within the whole-episode token budget
    assert all(0 < r["completions/mean_length"] <= 32 for r in log)


@pytest.mark.slow
def test_ppo_raises_reward_and_resumes(tiny_model, tmp_path):
    from rlvr_envs.agents.ppo import PPOSettings, train_ppo

    def settings(updates):
        return PPOSettings(env_id=MAGIC_ENV, model=str(tiny_model),
                           output_dir=str(tmp_path / "ppo"), train_tasks=8, eval_tasks=0,
                           total_updates=updates, prompts_per_update=4, samples_per_prompt=8,
                           max_completion_length=8, learning_rate=1e-2, minibatch_size=16,
                           kl_coef=0.01, save_steps=4, device="cpu")

    first = train_ppo(settings(4))
    assert not first["resumed"]
    second = train_ppo(settings(10))
    assert second["resumed"]
    log = RunDir(tmp_path / "ppo").read_log()
    assert [r["step"] for r in log] == list(range(1, 11))
    rewards = [r["reward"] for r in log]
    assert mean(rewards[-3:]) > mean(rewards[:3]) + 0.3, rewards
    assert all(k in log[0] for k in ("kl", "pg_loss", "vf_loss", "clipfrac", "approx_kl"))


def test_ppo_pieces():
    import torch

    from rlvr_envs.agents.ppo import gae, masked_whiten

    rewards = torch.tensor([[0.0, 0.0, 1.0]])
    values = torch.zeros(1, 3)
    mask = torch.ones(1, 3)
    advantages, returns = gae(rewards, values, mask, gamma=1.0, lam=1.0)
    assert advantages.tolist() == [[1.0, 1.0, 1.0]] and returns.tolist() == [[1.0, 1.0, 1.0]]
    advantages, _ = gae(rewards, values, mask, gamma=1.0, lam=0.5)
    assert advantages.tolist() == [[0.25, 0.5, 1.0]]
    white = masked_whiten(torch.tensor([[1.0, 2.0, 3.0, 9.0]]), torch.tensor([[1, 1, 1, 0.0]]))
    assert abs(white[0, :3].mean().item()) < 1e-6 and white[0, 3].item() == 0.0


@pytest.mark.slow
def test_expert_iteration_raises_sampled_pass_rate(tiny_model, tmp_path):
    from rlvr_envs.agents.expert_iteration import (ExpertIterationSettings,
                                                   train_expert_iteration)

    result = train_expert_iteration(ExpertIterationSettings(
        env_id=MAGIC_ENV, model=str(tiny_model), output_dir=str(tmp_path / "ei"),
        train_tasks=8, eval_tasks=0, rounds=3, samples_per_task=8, max_completion_length=8,
        learning_rate=1e-2, sft_epochs=2, device="cpu"))
    log = RunDir(result["run_dir"]).read_log()
    assert [r["step"] for r in log] == [1, 2, 3]
    assert log[0]["kept"] > 0
    assert log[-1]["reward"] > log[0]["reward"] + 0.15, log


@pytest.mark.slow
def test_distill_two_experts_into_one_student(tiny_model, tmp_path):
    from rlvr_envs.agents.distill import train_distill
    from rlvr_envs.agents.settings import DistillSettings, FamilySpec

    experts = {}
    for name, env_id in (("a", MAGIC_ENV), ("b", MAGIC_B_ENV)):
        run = train_grpo(grpo_settings(tiny_model, tmp_path / f"expert-{name}", env_id=env_id))
        experts[name] = run["run_dir"] + "/final"
    def settings(expert_a, expert_b):
        return DistillSettings(
            student=str(tiny_model), output_dir=str(tmp_path / "distill"),
            families=[FamilySpec("a", MAGIC_ENV, expert_a), FamilySpec("b", MAGIC_B_ENV,
                                                                       expert_b)],
            train_tasks=5, eval_tasks=3, samples_per_task=4, max_completion_length=8, sft_epochs=3,
            sft_learning_rate=1e-2, logit_epochs=2, logit_learning_rate=5e-3, device="cpu")

    result = train_distill(settings(experts["a"], experts["b"]))
    report = result["report"]
    for name in ("a", "b"):
        assert report[name]["traces"] > 0
        assert report[name]["kl_stage"]["method"].startswith("off-policy forward KL")
        assert {"expert", "student_before", "student_after"} <= set(report[name])
    gain = sum(report[n]["student_after"]["reward"] - report[n]["student_before"]["reward"]
               for n in ("a", "b"))
    assert gain > 0.5, report
    assert json.loads((tmp_path / "distill" / "report.json").read_text()) == report
    # a rerun with another expert samples again instead of reusing the old traces
    traces = tmp_path / "distill" / "traces.jsonl"
    first = traces.read_text()
    swapped = train_distill(settings(str(tiny_model), experts["b"]))["report"]
    assert traces.read_text() != first
    assert swapped["a"]["traces"] < report["a"]["traces"]  # the untrained model rarely says it


# -- bad input ----------------------------------------------------------------------------------

@pytest.mark.slow
def test_bad_inputs_give_clear_errors(tiny_model, tmp_path):
    from rlvr_envs.agents.models import ModelLoadError, load_model_and_tokenizer
    from rlvr_envs.agents.tiny import build_tiny_model

    with pytest.raises(ModelLoadError, match="does not exist"):
        load_model_and_tokenizer(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelLoadError, match="no config.json"):
        load_model_and_tokenizer(tmp_path / "empty")
    plain = build_tiny_model(tmp_path / "no-template", chat_template=None)
    with pytest.raises(ModelLoadError, match="no chat template"):
        load_model_and_tokenizer(plain)
    with pytest.raises(ValueError, match="loss_type must be one of"):
        grpo_settings(tiny_model, tmp_path / "x", loss_type="ppo").validate()
    with pytest.raises(EnvDataError, match="tool-calling env"):
        train_grpo(grpo_settings(tiny_model, tmp_path / "y", env_id=MAGIC_TOOLS_ENV))


def test_cli_reports_a_missing_model(tmp_path, rlvr_cli):
    result = rlvr_cli("train", "grpo", "--env", MAGIC_ENV, "--model", str(tmp_path / "nope"),
                      "--train-tasks", "4", "--eval-tasks", "2",
                      "--output-dir", str(tmp_path / "run"))
    assert result.exit_code == 1 and result.stderr.startswith("rlvr train grpo: error: ")
    assert "does not exist" in result.stderr and len(result.stderr.splitlines()) == 1
