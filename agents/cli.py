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


def _kwargs(text: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise typer.BadParameter(f"--env-kwargs must be a JSON object: {err}") from None
    if not isinstance(value, dict):
        raise typer.BadParameter("--env-kwargs must be a JSON object, e.g. '{\"difficulty\": 1}'")
    return value


def _report(result: dict) -> None:
    console.print_json(json.dumps(result, default=str))


def _fail(err: Exception) -> None:
    console.print(f"[red]error:[/] {err}", markup=True, highlight=False)
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
    group_reward: List[str] = typer.Option([], help="module:function group-level reward "
                                           "f(completions_of_one_prompt, tasks) -> list[float]"),
    device: str = DEVICE, dtype: str = DTYPE,
    gradient_checkpointing: bool = typer.Option(False),
) -> None:
    """GRPO through TRL on an env's tasks, rewards from the env's scorer."""
    from rlvr_envs.agents.grpo import GRPOSettings, train_grpo
    from rlvr_envs.agents.reward_funcs import import_object

    try:
        settings = GRPOSettings(
            env_id=env, model=model, output_dir=output_dir, env_kwargs=_kwargs(env_kwargs),
            train_tasks=train_tasks, eval_tasks=eval_tasks, max_steps=max_steps,
            prompts_per_step=prompts_per_step, num_generations=num_generations,
            max_completion_length=max_completion_length, learning_rate=learning_rate,
            temperature=temperature, loss_type=loss_type, beta=beta, save_steps=save_steps,
            seed=seed, multi_turn=multi_turn, max_turns=max_turns, device=device, dtype=dtype,
            gradient_checkpointing=gradient_checkpointing)
        settings.validate()
        groups = [import_object(spec) for spec in group_reward]
        result = train_grpo(settings, group_rewards=groups)
    except (ValueError, KeyError, TypeError) as err:
        _fail(err)
    _report(result)
