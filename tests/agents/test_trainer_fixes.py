"""The trainer defects fixed after checking the experiments: PPO ratios at the sampling
temperature, zero-variance groups left out of GRPO and PPO updates (and logged), the Kimi
penalty's warm-up fed the training step, distillation's stale traces and interleaved KL stage,
and per-family env kwargs on the command line."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from rlvr_envs.agents.run_dir import RunDir
from rlvr_envs.core.env import SingleTurnEnv
from rlvr_envs.core.task import Task
from rlvr_envs.registry import register_env
from .magic import MAGIC_ENV, MagicScorer, magic_tasks

NEVER_ENV = "rlvr-test/MagicNever-v0"  # the answer is a string the tiny model cannot write
register_env(NEVER_ENV, lambda: SingleTurnEnv(magic_tasks("never", "\u2603\u2603\u2603"),
                                              MagicScorer("never"), "Answer with one word."),
             "test: never solved", family="never")


def weights(path):
    from safetensors.torch import load_file

    return load_file(str(path / "model.safetensors"))


def same_weights(a, b) -> bool:
    return a.keys() == b.keys() and all((a[k] == b[k]).all() for k in a)


# -- PPO at temperature ---------------------------------------------------------------------

@pytest.mark.slow
def test_ppo_logprobs_are_those_of_the_tempered_sampling_distribution(tiny_model):
    import torch

    from rlvr_envs.agents.generation import sample_chats
    from rlvr_envs.agents.models import DeviceSettings, load_model_and_tokenizer
    from rlvr_envs.agents.ppo import pack, token_logprobs

    model, tokenizer = load_model_and_tokenizer(tiny_model, DeviceSettings("cpu"))
    torch.manual_seed(0)
    samples = sample_chats(model, tokenizer, [[{"role": "user", "content": "Say it."}]], n=4,
                           max_completion_length=6, temperature=0.5)[0]
    ids, attention, mask = pack(samples, tokenizer.pad_token_id, "cpu")
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=attention).logits
    tempered = token_logprobs(logits, ids, 0.5)
    untempered = token_logprobs(logits, ids)
    for row, sample in enumerate(samples):
        sampled = torch.tensor(sample.logprobs)
        got = tempered[row][mask[row] > 0]
        assert torch.allclose(got, sampled, atol=1e-4), (got, sampled)
        assert not torch.allclose(untempered[row][mask[row] > 0], sampled, atol=1e-2)
    with pytest.raises(ValueError, match="temperature > 0"):
        token_logprobs(logits, ids, 0.0)


# -- zero-variance groups -------------------------------------------------------------------

def test_kept_rows_and_select_rows():
    import torch

    from rlvr_envs.agents.grpo_groups import kept_rows, select_rows

    rows, frac = kept_rows([1, 1, 0, 1, 0, 0], group_size=2)
    assert rows == [2, 3] and frac == pytest.approx(2 / 3)
    batch = {"ids": torch.arange(6).view(6, 1), "names": list("abcdef"), "n": torch.tensor(6),
             "other": [1, 2]}
    out = select_rows(batch, rows, 6)
    assert out["ids"].flatten().tolist() == [2, 3] and out["names"] == ["c", "d"]
    assert out["n"].item() == 6 and out["other"] == [1, 2]


@pytest.mark.slow
def test_grpo_skips_batches_without_signal_and_logs_the_fraction(tiny_model, tmp_path):
    from rlvr_envs.agents.grpo import GRPOSettings, log_series, train_grpo

    settings = GRPOSettings(env_id=NEVER_ENV, model=str(tiny_model),
                            output_dir=str(tmp_path / "run"), train_tasks=4, eval_tasks=0,
                            max_steps=2, prompts_per_step=2, num_generations=4,
                            max_completion_length=4, learning_rate=5e-2, save_steps=2,
                            device="cpu", beta=0.0)
    train_grpo(settings)
    assert log_series(tmp_path / "run", "skipped_frac") == [1.0, 1.0]
    assert log_series(tmp_path / "run", "zero_variance_frac") == [1.0, 1.0]
    # only zero-variance groups: an empty loss mask, a zero gradient, Adam moves nothing
    assert same_weights(weights(tiny_model), weights(tmp_path / "run" / "final"))
    with pytest.raises(ValueError, match="zero_variance_groups must be one of"):
        GRPOSettings(env_id=NEVER_ENV, model="m", output_dir="o",
                     zero_variance_groups="drop").validate()


@pytest.mark.slow
def test_grpo_keep_mode_logs_but_skips_nothing(tiny_model, tmp_path):
    from rlvr_envs.agents.grpo import GRPOSettings, log_series, train_grpo

    train_grpo(GRPOSettings(env_id=MAGIC_ENV, model=str(tiny_model),
                            output_dir=str(tmp_path / "run"), train_tasks=8, eval_tasks=0,
                            max_steps=2, prompts_per_step=4, num_generations=4,
                            max_completion_length=4, save_steps=2, device="cpu",
                            zero_variance_groups="keep"))
    assert log_series(tmp_path / "run", "skipped_frac") == [0.0, 0.0]
    assert all(0 <= f <= 1 for f in log_series(tmp_path / "run", "zero_variance_frac"))


@pytest.mark.slow
def test_ppo_makes_no_update_on_a_batch_without_signal(tiny_model, tmp_path):
    from rlvr_envs.agents.ppo import PPOSettings, train_ppo

    train_ppo(PPOSettings(env_id=NEVER_ENV, model=str(tiny_model),
                          output_dir=str(tmp_path / "ppo"), train_tasks=4, eval_tasks=0,
                          total_updates=2, prompts_per_update=2, samples_per_prompt=4,
                          max_completion_length=4, learning_rate=5e-2, temperature=0.7,
                          save_steps=2, device="cpu"))
    log = RunDir(tmp_path / "ppo").read_log()
    assert [r["skipped_frac"] for r in log] == [1.0, 1.0]
    assert all("pg_loss" not in r for r in log)
    assert same_weights(weights(tiny_model), weights(tmp_path / "ppo" / "final"))


# -- group rewards: the training step, specs --------------------------------------------------

def test_kimi_group_penalty_gets_the_training_step_through_group_reward_funcs():
    from rlvr_envs.agents.reward_funcs import group_reward_funcs
    from rlvr_envs.rewards.trl import KimiGroupPenalty
    from rlvr_envs.tasks.math.scoring import MathScorer

    task = Task(prompt="Compute 2 + 2.", answer="4", family="math")
    column = [task] * 3
    penalty = KimiGroupPenalty(MathScorer(), warmup_steps=5)
    [reward] = group_reward_funcs([penalty])
    completions = ["\\boxed{4}", "it is \\boxed{4}", "\\boxed{5}"]
    early = reward([""] * 3, completions, column, trainer_state=SimpleNamespace(global_step=2))
    assert penalty.step == 2 and early == [0.0, 0.0, 0.0]
    late = reward([""] * 3, completions, column, trainer_state=SimpleNamespace(global_step=6))
    assert penalty.step == 6 and late == [0.5, -0.5, 0.0]


def test_group_reward_from_spec():
    from rlvr_envs.agents.reward_funcs import group_reward_from_spec
    from rlvr_envs.rewards.trl import KimiGroupPenalty

    scorer = MagicScorer()
    built = group_reward_from_spec(
        'rlvr_envs.rewards.trl:KimiGroupPenalty{"warmup_steps": 3, "weight": 0.5}', scorer)
    assert isinstance(built, KimiGroupPenalty)
    assert (built.scorer, built.warmup_steps, built.weight) == (scorer, 3, 0.5)
    with pytest.raises(ValueError, match="is a function"):
        group_reward_from_spec('rlvr_envs.curriculum:zero_variance{"tol": 1}', scorer)
    with pytest.raises(ValueError, match="JSON object"):
        group_reward_from_spec("rlvr_envs.rewards.trl:KimiGroupPenalty{oops", scorer)


# -- distillation --------------------------------------------------------------------------

@pytest.mark.slow
def test_distill_stages_redo_later_stages_and_reject_empty_traces(tiny_model, tmp_path):
    from rlvr_envs.agents.distill import Stages

    stages = Stages(tmp_path / "stages.json")
    stages.done("traces", {"a": 1})
    stages.done("student-sft", {"b": 1})
    stages.done("student", {"c": 1})
    again = Stages(tmp_path / "stages.json")
    assert again.current("student", {"c": 1}) and not again.current("traces", {"a": 2})
    again.done("traces", {"a": 2})  # new traces: the students made from the old ones are stale
    assert not Stages(tmp_path / "stages.json").current("student-sft", {"b": 1})


@pytest.mark.slow
def test_forward_kl_interleaves_families_in_one_optimiser(tiny_model):
    from rlvr_envs.agents.distill import forward_kl_on_traces
    from rlvr_envs.agents.models import DeviceSettings, load_model_and_tokenizer

    student, tokenizer = load_model_and_tokenizer(tiny_model, DeviceSettings("cpu"))
    teacher_a, _ = load_model_and_tokenizer(tiny_model, DeviceSettings("cpu"))
    teacher_b, _ = load_model_and_tokenizer(tiny_model, DeviceSettings("cpu"))
    chat = [{"role": "user", "content": "Say it."}]
    traces = [("a", chat, "yes")] * 3 + [("b", chat, "the")] * 3
    losses = forward_kl_on_traces(student, tokenizer, {"a": teacher_a, "b": teacher_b}, traces,
                                  epochs=2, learning_rate=1e-3, temperature=1.0, batch_size=2,
                                  seed=0)
    assert set(losses) == {"all", "a", "b"} and all(len(v) == 2 for v in losses.values())
    # the student starts as a copy of both teachers: KL 0 on the first batch of either family
    assert losses["all"][0] < 1e-3
    with pytest.raises(ValueError, match="no teacher"):
        forward_kl_on_traces(student, tokenizer, {"a": teacher_a}, traces, epochs=1,
                             learning_rate=1e-3, temperature=1.0, batch_size=2, seed=0)


def test_distill_cli_passes_family_env_kwargs(monkeypatch, tmp_path):
    import rlvr_envs.agents.distill as distill
    from rlvr_envs.cli import _attach_subcommands, app

    seen = {}

    def fake_train(settings):
        seen["families"] = settings.families
        return {"report": {}, "student": "s"}

    monkeypatch.setattr(distill, "train_distill", fake_train)
    _attach_subcommands()
    args = ["train", "distill", "--student", "m", "--output-dir", str(tmp_path),
            "--family", "math=rlvr/Arithmetic-v0", "--family", "magic=" + MAGIC_ENV,
            "--family-kwargs", 'math={"difficulty": 2}']
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    specs = {f.name: f for f in seen["families"]}
    assert specs["math"].env_kwargs == {"difficulty": 2} and specs["magic"].env_kwargs == {}
    bad = CliRunner().invoke(app, args[:-1] + ['code={"x": 1}'])
    assert bad.exit_code != 0 and "have no --family" in " ".join(bad.output.split())


# -- solvability filter ----------------------------------------------------------------------

def test_training_tasks_filtered_to_the_solvability_range(tmp_path):
    import rlvr_envs
    from rlvr_envs.agents.data import EnvDataError, split_tasks
    from rlvr_envs.agents.grpo import GRPOSettings
    from rlvr_envs.agents.settings import split_training_tasks
    from rlvr_envs.curriculum import PassRates

    env = rlvr_envs.make(MAGIC_ENV)
    train, held = split_tasks(env, 6, 2)
    rates = PassRates()
    for task, successes in zip(train, (0, 1, 2, 4, 3)):  # the sixth task stays unmeasured
        rates.add(task, successes, 4)
    path = rates.save(tmp_path / "rates.json")
    settings = GRPOSettings(env_id=MAGIC_ENV, model="m", output_dir=str(tmp_path / "o"),
                            train_tasks=6, eval_tasks=2, pass_rates=str(path))
    kept, held_out = split_training_tasks(settings, env)
    assert [t.id for t in kept] == [train[i].id for i in (1, 2, 4)]
    assert [t.id for t in held_out] == [t.id for t in held]
    settings.solvable_hi = 0.9
    with pytest.raises(EnvDataError, match="cannot fill a step of 4 prompts"):
        from rlvr_envs.agents.grpo import build_trainer
        build_trainer(settings)  # 2 tasks left in (0, 0.9): TRL would train zero steps
    settings.solvable_lo = 0.9
    with pytest.raises(EnvDataError, match=r"has a pass rate in \(0.9, 0.9\)"):
        split_training_tasks(settings, env)
