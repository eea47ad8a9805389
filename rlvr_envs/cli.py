"""The `rlvr` command line: list, show and check envs; other commands join as sub-apps."""

from __future__ import annotations

import importlib
import json
from typing import List, Optional

import typer
from rich.console import Console
from rich.table import Table

from rlvr_envs.registry import list_envs

app = typer.Typer(help="rlvr-envs: verifiable-reward environments for language-model RL.",
                  no_args_is_help=True, pretty_exceptions_enable=False)
console = Console()

#: (module, attribute, command name) of sub-apps that other parts of the package provide
SUBCOMMANDS: list[tuple[str, str, str]] = [
    ("rlvr_envs.curriculum.cli", "app", "difficulty"),
    ("rlvr_envs.sandbox.cli", "app", "sandbox"),
    ("rlvr_envs.integrations.cli", "serve_app", "serve"),
    ("rlvr_envs.integrations.cli", "export_app", "export"),
    ("rlvr_envs.tasks.repo.cli", "app", "tasks"),
    ("rlvr_envs.agents.cli", "app", "train"),
    ("rlvr_envs.eval.cli", "eval_app", "eval"),
    ("rlvr_envs.eval.cli", "leaderboard_app", "leaderboard"),
]


@app.command("list")
def list_command(family: Optional[str] = typer.Option(None, help="only this family")) -> None:
    """List registered env ids with a one-line description."""
    table = Table("id", "description")
    for env_id, description in list_envs(family).items():
        table.add_row(env_id, description)
    console.print(table)


@app.command("show")
def show_command(env_id: str, seed: int = typer.Option(0, help="reset seed"),
                 kwargs: str = typer.Option("{}", help="gym.make kwargs as JSON")) -> None:
    """Print one task (the prompt as the policy sees it) and its gold answer."""
    import rlvr_envs

    env = rlvr_envs.make(env_id, **json.loads(kwargs))
    prompt, info = env.reset(seed=seed)
    console.rule(f"{env_id}  seed={seed}  task={info['task']['id']}")
    console.print(prompt, markup=False)
    console.rule("gold")
    console.print(info["task"]["answer"], markup=False)
    console.print(f"difficulty: {info['task']['difficulty']}", markup=False)
    env.close()


@app.command("check")
def check_command(env_ids: List[str] = typer.Argument(None, help="ids to check (default: all)"),
                  samples: int = typer.Option(5, help="tasks audited per id")) -> None:
    """For each id: check_env, seed determinism, and gold-scores-1 / empty-scores-0 audits."""
    from rlvr_envs.checks import check_env_id

    ids = env_ids or list(list_envs())
    table = Table("id", "check", "result")
    failed = 0
    for env_id in ids:
        for name, ok, detail in check_env_id(env_id, samples=samples):
            failed += not ok
            table.add_row(env_id, name, ("[green]ok[/]" if ok else "[red]FAIL[/] ") + detail)
    console.print(table)
    if failed:
        console.print(f"[red]{failed} check(s) failed[/]")
        raise typer.Exit(1)
    console.print(f"[green]all checks passed for {len(ids)} env id(s)[/]")


def _attach_subcommands() -> None:
    for module, attribute, name in SUBCOMMANDS:
        app.add_typer(getattr(importlib.import_module(module), attribute), name=name)


def main() -> None:
    _attach_subcommands()
    app()


if __name__ == "__main__":
    main()
