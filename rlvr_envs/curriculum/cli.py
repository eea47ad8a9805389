"""`rlvr difficulty`: measure tasks' pass rates with a policy and inspect the stored file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from rlvr_envs.cli import deprecated_spelling, json_object_option

app = typer.Typer(help="Measured difficulty: pass rates per task, for curricula and filters.",
                  no_args_is_help=True)
console = Console()


def resolve_policy_spec(spec: str) -> Any:
    """A policy from a name (`rlvr_envs.agents.resolve_policy`: scripted names, models,
    endpoints, `package.module:attribute`), or a bad-parameter error naming what is known."""
    from rlvr_envs.agents.registry import resolve_policy

    try:
        return resolve_policy(spec)
    except ValueError as err:
        raise typer.BadParameter(str(err)) from None


@app.command("estimate")
def estimate_command(
    env_id: str = typer.Option(..., "--env", help="env id, e.g. rlvr/Math-v0"),
    policy: str = typer.Option(..., help="policy name (gold, null, random, a model) or "
                                         "package.module:callable"),
    k: int = typer.Option(8, "-k", min=1, help="completions sampled per task"),
    tasks: int | None = typer.Option(None, min=1, help="tasks to measure (default: all of a finite "
                                                   "source, 100 procedural ones)"),
    seed: int = typer.Option(0, min=0, help="first reset seed for procedural sources; "
                                            "sampling seed"),
    out: Path | None = typer.Option(None, help="output .json or .parquet (default: next to "
                                                  "the env's data, else runs/difficulty/)"),
    env_kwargs: str = typer.Option("{}", help="gym.make kwargs as JSON"),
    max_completion_length: int = typer.Option(512, min=1, help="tokens per completion of model "
                                                               "policies"),
    max_new_tokens: int | None = typer.Option(None, "--max-new-tokens", min=1, hidden=True,
                                              help="deprecated: --max-completion-length"),
) -> None:
    """Sample k completions per task and store each task's pass rate, keyed by task id."""
    import rlvr_envs
    from rlvr_envs.curriculum.difficulty import (
        default_store_path,
        estimate_pass_rates,
        pass_rate_histogram,
    )

    max_completion_length = deprecated_spelling(max_completion_length, max_new_tokens,
                                                new="--max-completion-length",
                                                old="--max-new-tokens")
    env = rlvr_envs.make(env_id, **json_object_option(env_kwargs, "--env-kwargs"))
    chosen = resolve_policy_spec(policy)
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console) as bar:
        job = bar.add_task(f"{env_id} x {policy} (k={k})", total=None)
        rates = estimate_pass_rates(env, chosen, k=k, tasks=tasks, seed=seed, env_id=env_id,
                                    policy_name=policy,
                                    max_completion_length=max_completion_length,
                                    progress=lambda done, total: bar.update(job, completed=done,
                                                                            total=total))
    path = rates.save(out or default_store_path(env, env_id, policy))
    values = list(rates.as_dict().values())
    mean = sum(values) / len(values) if values else 0.0
    console.print(f"{len(values)} tasks, mean pass rate {mean:.3f}, histogram (0-.2-.4-.6-.8-1): "
                  f"{pass_rate_histogram(values)}  → {path}")
    env.close()


@app.command("show")
def show_command(path: Path, limit: int = typer.Option(20, min=0, help="rows to print")) -> None:
    """Summarise a pass-rate file (how it was measured, the histogram, the first rows)."""
    from rlvr_envs.curriculum.difficulty import PassRates, pass_rate_histogram

    rates = PassRates.load(path)
    values = list(rates.as_dict().values())
    console.print(f"env={rates.env_id} policy={rates.policy} k={rates.k} tasks={len(rates)} "
                  f"histogram={pass_rate_histogram(values)}", markup=False)
    table = Table("task id", "source id", "pass rate", "successes/samples")
    for entry in list(rates.rates.values())[:limit]:
        table.add_row(entry.task_id, entry.source_id or "", f"{entry.pass_rate:.3f}",
                      f"{entry.successes}/{entry.samples}")
    console.print(table)
