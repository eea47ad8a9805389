"""`rlvr eval` and `rlvr leaderboard`: run policies on a suite into the result store, and
write the leaderboard (Markdown + static HTML) from it."""

from __future__ import annotations

import logging
import os
import shlex
import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.logging import RichHandler
from rich.table import Table

from rlvr_envs.eval.leaderboard import fmt, fmt_seconds, to_markdown
from rlvr_envs.eval.publish import write_leaderboard

console = Console()
eval_app = typer.Typer(help="Evaluate policies on a suite.", pretty_exceptions_enable=False)
leaderboard_app = typer.Typer(help="Write the leaderboard from the result store.",
                              pretty_exceptions_enable=False)


def default_runs_dir() -> Path:
    return Path(os.environ.get("RLVR_RUNS_DIR", "runs"))


def summary_table(summary: dict) -> Table:
    ks = summary.get("k") or [1]
    table = Table(title=f"{summary.get('policy')} on {summary.get('suite')} "
                        f"(run {summary.get('run_id')})")
    table.add_column("scope")
    for k in ks:
        table.add_column(f"pass@{k}", justify="right")
    for name in ("mean reward", "tasks", "episodes"):
        table.add_column(name, justify="right")

    def add(scope: str, metrics: dict) -> None:
        passk = metrics.get("pass_at_k") or {}
        table.add_row(scope, *[fmt(passk.get(str(k))) for k in ks], fmt(metrics.get("mean_reward")),
                      str(metrics.get("tasks")), str(metrics.get("episodes")))

    add("all", summary)
    for family, metrics in summary.get("by_family", {}).items():
        add(f"family {family}", metrics)
    for family, levels in summary.get("by_difficulty", {}).items():
        for level, metrics in levels.items():
            add(f"  {family} level {level}", metrics)
    tokens = summary.get("completion_tokens") or {}
    chars = summary.get("completion_chars") or {}
    monitors = ", ".join(f"{k}={v}" for k, v in (summary.get("monitors") or {}).items()) or "none"
    table.caption = (f"completion length: mean {fmt(tokens.get('mean'), 1)} tokens, "
                     f"{fmt(chars.get('mean'), 1)} chars (median {fmt(chars.get('median'), 0)}); "
                     f"{summary.get('total_tokens', 0)} tokens in all; wall time "
                     f"{fmt_seconds(summary.get('wall_seconds'))}; monitor flags: {monitors}")
    return table


def _log_to_console() -> None:
    """Our warnings (policy retries, version changes) through rich, not other libraries'."""
    logger = logging.getLogger("rlvr_envs.eval")
    if not any(isinstance(h, RichHandler) for h in logger.handlers):
        logger.addHandler(RichHandler(console=console, show_path=False))
        logger.setLevel(logging.INFO)


def _resume_command() -> str:
    args = sys.argv[1:]
    if "--resume" not in args:
        args = args + ["--resume"]
    return shlex.join(["rlvr", *args])


@eval_app.callback(invoke_without_command=True)
def eval_command(
    policy: List[str] = typer.Option(None, "--policy", "-p",
                                     help="policy name (repeat for several): gold, null, random, "
                                          "smollm2-135m, module:attribute, ..."),
    suite: str = typer.Option("quick", help="shipped suite name or a suite .json/.yaml file"),
    run: Optional[str] = typer.Option(None, help="run id (default SUITE--POLICY); with several "
                                                 "policies, RUN--POLICY"),
    runs_dir: Path = typer.Option(None, help="result store folder (default $RLVR_RUNS_DIR or "
                                             "./runs)"),
    resume: bool = typer.Option(False, help="continue an existing run (or start it if absent)"),
    overwrite: bool = typer.Option(False, help="replace an existing run of the same id"),
    seed: int = typer.Option(0, min=0, help="run seed (every unit's sampling seed derives from it)"),
    n: Optional[int] = typer.Option(None, min=1, help="samples per task (overrides the suite)"),
    batch_size: Optional[int] = typer.Option(None, min=1, help="tasks per generate call"),
    temperature: Optional[float] = typer.Option(None, help="override the suite's temperature"),
    top_p: Optional[float] = typer.Option(None, help="override the suite's top_p"),
    max_completion_length: Optional[int] = typer.Option(
        None, min=1, help="override the suite's cap on tokens per completion"),
    max_new_tokens: Optional[int] = typer.Option(None, "--max-new-tokens", min=1, hidden=True,
                                                 help="deprecated: --max-completion-length"),
    retries: int = typer.Option(3, min=0, help="retries of a failing policy call before stopping"),
    retry_backoff: float = typer.Option(1.0, help="seconds before the first retry (doubles)"),
    leaderboard: bool = typer.Option(False, "--leaderboard",
                                     help="write the leaderboard afterwards"),
    list_suites: bool = typer.Option(False, "--list-suites", help="list shipped suites and exit"),
    quiet: bool = typer.Option(False, help="no progress bars"),
) -> None:
    """Evaluate one or more policies on a suite; results go to the SQLite result store."""
    from rlvr_envs.cli import deprecated_spelling
    from rlvr_envs.eval.progress import EvalProgress
    from rlvr_envs.eval.runner import EvalStopped, evaluate
    from rlvr_envs.eval.suites import list_suites as shipped_suites

    _log_to_console()
    if list_suites:
        table = Table("suite", "description")
        for name, description in shipped_suites().items():
            table.add_row(name, description)
        console.print(table)
        return
    if not policy:
        raise typer.BadParameter("give at least one --policy (e.g. --policy gold)")
    runs_dir = runs_dir or default_runs_dir()
    max_completion_length = deprecated_spelling(max_completion_length, max_new_tokens,
                                                new="--max-completion-length",
                                                old="--max-new-tokens")
    sampling = {"temperature": temperature, "top_p": top_p,
                "max_completion_length": max_completion_length}
    for spec in policy:
        run_id = None if run is None else (run if len(policy) == 1 else f"{run}--{spec}")

        def progress_factory(evaluation, done, _spec=spec):
            return None if quiet else EvalProgress(evaluation, done, console=console,
                                                   title=f"{_spec}")
        try:
            result = evaluate(spec, suite, runs_dir=runs_dir, run_id=run_id, resume=resume,
                              overwrite=overwrite, seed=seed, n=n, batch_size=batch_size,
                              sampling=sampling, retries=retries, retry_backoff=retry_backoff,
                              progress_factory=progress_factory)
        except EvalStopped as err:
            console.print(f"[red]stopped:[/] {err}\nresume with: {_resume_command()}",
                          highlight=False)
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            console.print(f"\n[yellow]interrupted[/]; everything so far is saved in "
                          f"{runs_dir}. Resume with: {_resume_command()}", highlight=False)
            raise typer.Exit(130) from None
        console.print(summary_table(result.summary))
        console.print(f"run [bold]{result.run_id}[/]: {result.new_episodes} new episode(s), "
                      f"stored in {result.store_path}", highlight=False)
    if leaderboard:
        _write_leaderboard(runs_dir, None, None)


def _write_leaderboard(runs_dir: Path, out: Optional[Path], suite: Optional[str]) -> None:
    md_path, html_path, boards = write_leaderboard(runs_dir, out, suite)
    console.print(to_markdown(boards), markup=False, highlight=False, soft_wrap=True)
    console.print(f"leaderboard written: {md_path}\nleaderboard page:    {html_path.resolve()}\n"
                  f"open it with: xdg-open {shlex.quote(str(html_path.resolve()))}",
                  highlight=False)


@leaderboard_app.callback(invoke_without_command=True)
def leaderboard_command(
    runs_dir: Path = typer.Option(None, help="result store folder (default $RLVR_RUNS_DIR or "
                                             "./runs)"),
    out: Optional[Path] = typer.Option(None, help="output folder (default RUNS_DIR/leaderboard)"),
    suite: Optional[str] = typer.Option(None, help="only this suite"),
) -> None:
    """Write leaderboard.md and a self-contained index.html from the result store."""
    _write_leaderboard(runs_dir or default_runs_dir(), out, suite)
