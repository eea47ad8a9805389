"""`rlvr train ...`: the trainers on the command line (grpo, ppo, expert-iteration, distill).

Every command writes a run folder (settings, log.jsonl, checkpoints, final model, eval.json) and
resumes from its last checkpoint when run again with the same --output-dir.
"""

from __future__ import annotations

import json
from typing import List, Optional

import typer
from rich.console import Console

app = typer.Typer(help="Train a model on an rlvr env (GRPO, PPO, expert iteration, distillation).",
                  no_args_is_help=True, pretty_exceptions_enable=False)
console = Console()

ENV_KWARGS = typer.Option("{}", "--env-kwargs", help="gym.make kwargs as JSON")
DEVICE = typer.Option("auto", help="auto (cuda when present) | cpu | cuda[:N]")
DTYPE = typer.Option("auto", help="auto (bf16 on cuda, fp32 on cpu) | float32 | bfloat16 | float16")
PASS_RATES = typer.Option(None, "--pass-rates", help="pass-rate file (rlvr difficulty estimate): "
                          "train only on tasks whose rate lies in (solvable-lo, solvable-hi)")
SOLVABLE_LO = typer.Option(0.0, "--solvable-lo")
SOLVABLE_HI = typer.Option(1.0, "--solvable-hi")


def _kwargs(text: str, option: str = "--env-kwargs") -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise typer.BadParameter(f"{option} must be a JSON object: {err}") from None
    if not isinstance(value, dict):
        raise typer.BadParameter(f"{option} must be a JSON object, e.g. '{{\"difficulty\": 1}}'")
    return value


def _report(result: dict) -> None:
    console.print_json(json.dumps(result, default=str))


def _fail(err: Exception) -> None:
    console.print(f"[red]error:[/] {err}", markup=True, highlight=False, soft_wrap=True)
    raise typer.Exit(2)


@app.command("grpo")
def grpo_command(
    env: str = typer.Option(..., "--env", help="env id, e.g. rlvr/Arithmetic-v0"),
    model: str = typer.Option(..., "--model", help="smollm2-135m or a local checkpoint folder"),
    output_dir: str = typer.Option(..., "--output-dir", help="run folder (resumes if present)"),
    env_kwargs: str = ENV_KWARGS,
    max_steps: int = typer.Option(50), prompts_per_step: int = typer.Option(4),
    num_generations: int = typer.Option(8), max_completion_length: int = typer.Option(64),
    learning_rate: float = typer.Option(1e-5), temperature: float = typer.Option(1.0),
    loss_type: str = typer.Option("dapo", help="grpo|dr_grpo|dapo|bnpo|cispo|sapo|luspo|vespo"),
    beta: float = typer.Option(0.0, help="KL coefficient against the reference model"),
    train_tasks: int = typer.Option(64), eval_tasks: int = typer.Option(16),
    save_steps: int = typer.Option(10), seed: int = typer.Option(0),
    multi_turn: bool = typer.Option(False, help="tool-calling env: play episodes (rollout_func)"),
    max_turns: int = typer.Option(8),
    group_reward: List[str] = typer.Option([], help="group-level reward f(completions_of_one_"
                                           "prompt, tasks) -> list[float]: module:function, or "
                                           "module:Class{json kwargs} built with the env's "
                                           "scorer"),
    zero_variance_groups: str = typer.Option("skip", help="skip|keep groups whose completions "
                                             "all got the same reward"),
    pass_rates: Optional[str] = PASS_RATES, solvable_lo: float = SOLVABLE_LO,
    solvable_hi: float = SOLVABLE_HI,
    device: str = DEVICE, dtype: str = DTYPE,
    gradient_checkpointing: bool = typer.Option(False),
) -> None:
    """GRPO through TRL on an env's tasks, rewards from the env's scorer."""
    from rlvr_envs.agents.grpo import GRPOSettings, train_grpo

    try:
        settings = GRPOSettings(
            env_id=env, model=model, output_dir=output_dir, env_kwargs=_kwargs(env_kwargs),
            train_tasks=train_tasks, eval_tasks=eval_tasks, max_steps=max_steps,
            prompts_per_step=prompts_per_step, num_generations=num_generations,
            max_completion_length=max_completion_length, learning_rate=learning_rate,
            temperature=temperature, loss_type=loss_type, beta=beta, save_steps=save_steps,
            seed=seed, multi_turn=multi_turn, max_turns=max_turns, device=device, dtype=dtype,
            gradient_checkpointing=gradient_checkpointing, group_rewards=list(group_reward),
            zero_variance_groups=zero_variance_groups, pass_rates=pass_rates,
            solvable_lo=solvable_lo, solvable_hi=solvable_hi)
        result = train_grpo(settings)
    except (ValueError, KeyError, TypeError) as err:
        _fail(err)
    _report(result)


@app.command("ppo")
def ppo_command(
    env: str = typer.Option(..., "--env"), model: str = typer.Option(..., "--model"),
    output_dir: str = typer.Option(..., "--output-dir"), env_kwargs: str = ENV_KWARGS,
    total_updates: int = typer.Option(20), prompts_per_update: int = typer.Option(8),
    samples_per_prompt: int = typer.Option(4), max_new_tokens: int = typer.Option(32),
    learning_rate: float = typer.Option(1e-5), kl_coef: float = typer.Option(0.05),
    ppo_epochs: int = typer.Option(2), minibatch_size: int = typer.Option(16),
    clip_range: float = typer.Option(0.2), vf_coef: float = typer.Option(0.5),
    gamma: float = typer.Option(1.0), lam: float = typer.Option(0.95),
    train_tasks: int = typer.Option(64), eval_tasks: int = typer.Option(16),
    save_every: int = typer.Option(5), seed: int = typer.Option(0),
    temperature: float = typer.Option(1.0, help="sampling temperature (> 0); ratios and KL "
                                      "use the same tempered distribution"),
    zero_variance_groups: str = typer.Option("skip", help="skip|keep groups whose samples all "
                                             "got the same reward"),
    pass_rates: Optional[str] = PASS_RATES, solvable_lo: float = SOLVABLE_LO,
    solvable_hi: float = SOLVABLE_HI,
    device: str = DEVICE, dtype: str = DTYPE,
    gradient_checkpointing: bool = typer.Option(False),
) -> None:
    """PPO with a value head and verifiable rewards (agents/ppo.py)."""
    from rlvr_envs.agents.ppo import PPOSettings, train_ppo

    try:
        result = train_ppo(PPOSettings(
            env_id=env, model=model, output_dir=output_dir, env_kwargs=_kwargs(env_kwargs),
            total_updates=total_updates, prompts_per_update=prompts_per_update,
            samples_per_prompt=samples_per_prompt, max_new_tokens=max_new_tokens,
            learning_rate=learning_rate, kl_coef=kl_coef, ppo_epochs=ppo_epochs,
            minibatch_size=minibatch_size, clip_range=clip_range, vf_coef=vf_coef, gamma=gamma,
            lam=lam, train_tasks=train_tasks, eval_tasks=eval_tasks, save_every=save_every,
            seed=seed, temperature=temperature, zero_variance_groups=zero_variance_groups,
            pass_rates=pass_rates, solvable_lo=solvable_lo, solvable_hi=solvable_hi,
            device=device, dtype=dtype, gradient_checkpointing=gradient_checkpointing))
    except (ValueError, KeyError, TypeError) as err:
        _fail(err)
    _report(result)


@app.command("expert-iteration")
def expert_iteration_command(
    env: str = typer.Option(..., "--env"), model: str = typer.Option(..., "--model"),
    output_dir: str = typer.Option(..., "--output-dir"), env_kwargs: str = ENV_KWARGS,
    rounds: int = typer.Option(3), samples_per_task: int = typer.Option(8),
    max_new_tokens: int = typer.Option(64), temperature: float = typer.Option(1.0),
    sft_epochs: float = typer.Option(1.0), learning_rate: float = typer.Option(1e-5),
    batch_size: int = typer.Option(8), train_tasks: int = typer.Option(64),
    eval_tasks: int = typer.Option(16), seed: int = typer.Option(0),
    pass_rates: Optional[str] = PASS_RATES, solvable_lo: float = SOLVABLE_LO,
    solvable_hi: float = SOLVABLE_HI,
    device: str = DEVICE, dtype: str = DTYPE,
    gradient_checkpointing: bool = typer.Option(False),
) -> None:
    """Sample k per task, keep the verified-correct ones, SFT on them; N rounds."""
    from rlvr_envs.agents.expert_iteration import (ExpertIterationSettings,
                                                   train_expert_iteration)

    try:
        result = train_expert_iteration(ExpertIterationSettings(
            env_id=env, model=model, output_dir=output_dir, env_kwargs=_kwargs(env_kwargs),
            rounds=rounds, samples_per_task=samples_per_task, max_new_tokens=max_new_tokens,
            temperature=temperature, sft_epochs=sft_epochs, learning_rate=learning_rate,
            batch_size=batch_size, train_tasks=train_tasks, eval_tasks=eval_tasks, seed=seed,
            pass_rates=pass_rates, solvable_lo=solvable_lo, solvable_hi=solvable_hi,
            device=device, dtype=dtype, gradient_checkpointing=gradient_checkpointing))
    except (ValueError, KeyError, TypeError) as err:
        _fail(err)
    _report(result)


def _pairs(values: List[str], what: str) -> dict:
    out = {}
    for value in values:
        name, sep, rest = value.partition("=")
        if not sep or not name or not rest:
            raise typer.BadParameter(f"{what} must look like NAME=VALUE, got {value!r}")
        out[name] = rest
    return out


@app.command("distill")
def distill_command(
    student: str = typer.Option(..., "--student", help="starting model of the student"),
    family: List[str] = typer.Option(..., "--family", help="NAME=ENV_ID, once per family"),
    family_kwargs: List[str] = typer.Option([], "--family-kwargs",
                                            help="NAME=JSON: gym.make kwargs of that family's "
                                            "env, e.g. math='{\"difficulty\": 1}'"),
    expert: List[str] = typer.Option([], "--expert", help="NAME=CHECKPOINT (else trained here "
                                     "by expert iteration)"),
    output_dir: str = typer.Option(..., "--output-dir"),
    train_tasks: int = typer.Option(32), eval_tasks: int = typer.Option(16),
    samples_per_task: int = typer.Option(4), max_new_tokens: int = typer.Option(64),
    expert_rounds: int = typer.Option(2), sft_epochs: float = typer.Option(1.0),
    sft_learning_rate: float = typer.Option(1e-5), logit_epochs: int = typer.Option(1),
    logit_learning_rate: float = typer.Option(1e-5), seed: int = typer.Option(0),
    device: str = DEVICE, dtype: str = DTYPE,
) -> None:
    """Distill per-family experts into one student (sequence + logit level); print a report."""
    from rich.table import Table

    from rlvr_envs.agents.distill import DistillSettings, FamilySpec, train_distill

    envs, experts = _pairs(family, "--family"), _pairs(expert, "--expert")
    kwargs = {name: _kwargs(text, "--family-kwargs") for name, text in _pairs(family_kwargs,
                                                            "--family-kwargs").items()}
    for option, names in (("--expert", experts), ("--family-kwargs", kwargs)):
        unknown = sorted(set(names) - set(envs))
        if unknown:
            raise typer.BadParameter(f"{option} names {unknown} have no --family")
    try:
        result = train_distill(DistillSettings(
            student=student, output_dir=output_dir,
            families=[FamilySpec(n, e, experts.get(n), kwargs.get(n, {}))
                      for n, e in envs.items()],
            train_tasks=train_tasks, eval_tasks=eval_tasks, samples_per_task=samples_per_task,
            max_new_tokens=max_new_tokens, expert_rounds=expert_rounds, sft_epochs=sft_epochs,
            sft_learning_rate=sft_learning_rate, logit_epochs=logit_epochs,
            logit_learning_rate=logit_learning_rate, seed=seed, device=device, dtype=dtype))
    except (ValueError, KeyError, TypeError) as err:
        _fail(err)
    table = Table("family", "expert", "student before", "student after", "traces")
    for name, row in result["report"].items():
        table.add_row(name, f"{row['expert']['reward']:.3f}",
                      f"{row['student_before']['reward']:.3f}",
                      f"{row['student_after']['reward']:.3f}", str(row["traces"]))
    console.print(table)
    console.print(f"student: {result['student']}")
