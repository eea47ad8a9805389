"""`rlvr tasks ...`: build, import and audit repo-editing tasks.

    rlvr tasks build-repo --package toolz [--max-tasks 10] [--sandbox auto]
    rlvr tasks build-repo --minirepos --ship       # rebuild the shipped mini-repo tasks
    rlvr tasks import-swebench records.jsonl --repos ./clones --out tasks.jsonl
    rlvr tasks audit-repo [--tasks shipped] [--sandbox docker]
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(help="Build, import and audit task sets.", no_args_is_help=True)
console = Console()


def _sandbox(name: str):
    from rlvr_envs.tasks.repo.scoring import make_sandbox
    return make_sandbox(name)


@app.command("build-repo")
def build_repo(package: List[str] = typer.Option([], "--package", "-p",
                                                 help="PyPI package(s) to synthesise tasks from"),
               minirepos: bool = typer.Option(False, help="build the hand-written mini repos"),
               max_tasks: int = typer.Option(10, help="tasks kept per package"),
               max_tries: int = typer.Option(40, help="mutants tried per package"),
               seed: int = typer.Option(0, help="mutation sampling seed"),
               sandbox: str = typer.Option("auto", help="auto | local | bwrap | docker"),
               sdist: Optional[Path] = typer.Option(None, help="use this sdist, no download"),
               ship: bool = typer.Option(False, help="write into the package's shipped data "
                                                     "(tasks/repo/data) instead of the cache"),
               ) -> None:
    """Synthesise repo tasks from real packages (AST mutations kept when some tests fail and
    the rest pass), cached under $RLVR_CACHE_DIR/repo (default ~/.cache/rlvr-envs/repo)."""
    from rlvr_envs.tasks.repo.snapshot import SHIPPED_DIR, cache_dir
    from rlvr_envs.tasks.repo.synth import SynthesisError, build_package_tasks

    if not package and not minirepos:
        raise typer.BadParameter("give --package NAME (repeatable) or --minirepos")
    out_dir = SHIPPED_DIR if ship else cache_dir()
    prefix = "shipped" if ship else "cache"
    box = _sandbox(sandbox)
    table = Table("source", "tests passing", "mutants tried", "tasks kept", "rejected")
    if minirepos:
        from rlvr_envs.tasks.repo.shipped import build_mini_tasks
        tasks = build_mini_tasks(box, out_dir=out_dir, location_prefix=prefix,
                                 progress=console.print)
        table.add_row("mini repos", "-", str(len(tasks)), str(len(tasks)), "0")
    failed = 0
    for name in package:
        try:
            report = build_package_tasks(name, box, max_tasks=max_tasks, max_tries=max_tries,
                                         seed=seed, out_dir=out_dir, location_prefix=prefix,
                                         sdist=sdist, progress=console.print)
        except SynthesisError as err:
            console.print(f"[red]{name}: {err}[/]")
            failed += 1
            continue
        table.add_row(f"{name} {report.version}", str(report.tests_passing), str(report.tried),
                      str(len(report.kept)), str(report.rejected or ""))
    console.print(table)
    console.print(f"tasks written under {out_dir / 'tasks'}")
    box.close()
    if failed:
        raise typer.Exit(1)


@app.command("import-swebench")
def import_swebench_command(records: Path = typer.Argument(..., help="JSON or JSONL records"),
                            repos: Path = typer.Option(..., help="dir of clones named owner__name"),
                            out: Path = typer.Option(..., help="JSONL file to write")) -> None:
    """Convert SWE-bench / SWE-Gym records into repo tasks (serve them with
    `gym.make("rlvr/RepoEdit-v0", tasks=OUT)`)."""
    from rlvr_envs.tasks.repo.records import write_tasks
    from rlvr_envs.tasks.repo.swebench import import_swebench

    tasks = import_swebench(records, repos)
    write_tasks(out, tasks)
    console.print(f"{len(tasks)} task(s) written to {out}")


@app.command("audit-repo")
def audit_repo(tasks: str = typer.Option("shipped", help="shipped | cache | all | a JSONL path"),
               sandbox: str = typer.Option("auto", help="auto | local | bwrap | docker"),
               ids: Optional[List[str]] = typer.Option(None, "--id", help="only these tasks"),
               workers: int = typer.Option(1, help="tasks audited in parallel")) -> None:
    """Null agent (submit at once) must score 0 and gold-patch agent 1 on every task."""
    from rlvr_envs.tasks.repo.audit import audit_tasks

    bad = 0
    table = Table("task", "null", "gold", "verdict")
    for row in audit_tasks(tasks, sandbox=sandbox, ids=ids, workers=workers):
        bad += not row.ok
        table.add_row(row.task, f"{row.null:g}", f"{row.gold:g}",
                      "[green]ok[/]" if row.ok else f"[red]FAIL[/] {row.detail}")
    console.print(table)
    if bad:
        raise typer.Exit(1)
