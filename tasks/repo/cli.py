"""`rlvr tasks ...`: build, import and audit repo-editing tasks.

    rlvr tasks build-repo --package toolz [--max-tasks 10] [--sandbox auto]
    rlvr tasks build-repo --minirepos --ship       # rebuild the shipped mini-repo tasks
    rlvr tasks import-swebench records.jsonl --repos ./clones --out tasks.jsonl
    rlvr tasks audit-repo [--tasks shipped] [--sandbox docker]
    rlvr tasks pack --from ~/.cache/rlvr-envs/repo --name mypack --held-out NAME --out DIR
    rlvr tasks pack-update pypi --drop-failed audit.json --pass-rates rates.json
    rlvr tasks list [--tasks pack:pypi]            # per-package counts, levels, splits
"""

from __future__ import annotations

import os
import time
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
               sdist: Optional[Path] = typer.Option(
                   None, help="use this sdist (or the NAME-*.tar.gz in this directory), "
                              "no download"),
               test_args: List[str] = typer.Option(
                   [], "--test-arg", help="pytest arguments naming the tests to run (e.g. "
                                          "the relevant test files of a slow suite)"),
               combine: int = typer.Option(0, help="also build up to N multi-hunk tasks per "
                                                   "package by combining 2-3 kept bugs"),
               package_env: bool = typer.Option(False, help="build each package in its own "
                                                            "environment (--sandbox docker | "
                                                            "bwrap): what the pack is graded in"),
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
    failed = new_tasks = 0
    started = time.monotonic()
    for name in package:
        if package_env:
            from rlvr_envs.tasks.repo.environments import package_sandbox
            box.close()
            box = package_sandbox(name, sandbox)
        try:
            report = build_package_tasks(name, box, max_tasks=max_tasks, max_tries=max_tries,
                                         seed=seed, out_dir=out_dir, location_prefix=prefix,
                                         sdist=_sdist_for(sdist, name), test_args=test_args,
                                         progress=console.print)
            if combine:
                from rlvr_envs.tasks.repo.combine import build_combined_tasks
                combined = build_combined_tasks(report, box, out_dir=out_dir,
                                                max_tasks=combine, seed=seed,
                                                progress=console.print)
                report.kept += combined.kept
                report.tried += combined.tried
                report.new += combined.new
        except SynthesisError as err:
            console.print(f"[red]{name}: {err}[/]")
            failed += 1
            continue
        new_tasks += report.new
        table.add_row(f"{name} {report.version}", str(report.tests_passing), str(report.tried),
                      str(len(report.kept)), str(report.rejected or ""))
    console.print(table)
    hours = (time.monotonic() - started) / 3600
    console.print(f"throughput: {new_tasks} new verified task(s) in {hours * 60:.1f} min "
                  f"({new_tasks / hours if hours else 0:.0f} tasks/hour on "
                  f"{os.cpu_count()} cores, backend {getattr(box, 'name', sandbox)})")
    console.print(f"tasks written under {out_dir / 'tasks'}")
    box.close()
    if failed:
        raise typer.Exit(1)


def _sdist_for(sdist: Optional[Path], package: str) -> Optional[Path]:
    """`sdist` itself, or in a directory the sdist whose name starts with the package's."""
    if sdist is None or not sdist.is_dir():
        return sdist
    stem = package.replace("-", "_").lower()
    found = sorted(p for p in sdist.glob("*.tar.gz")
                   if p.name.replace("-", "_").lower().rsplit("_", 1)[0] == stem
                   or p.name.lower().startswith(stem + "-"))
    if not found:
        raise typer.BadParameter(f"no sdist of {package!r} in {sdist}")
    return found[-1]


@app.command("pack")
def pack_command(source: Path = typer.Option(..., "--from",
                                             help="build output dir (holds tasks/*.jsonl)"),
                 name: str = typer.Option(..., help="pack name (tasks say pack:NAME/...)"),
                 out: Path = typer.Option(..., help="pack directory to write"),
                 held_out: List[str] = typer.Option([], "--held-out",
                                                    help="package(s) of the test split"),
                 exclude: List[str] = typer.Option([], "--exclude",
                                                   help="package(s) left out"),
                 only: List[str] = typer.Option([], "--only", help="only these package(s)"),
                 package_env: Optional[str] = typer.Option(
                     None, help="docker | bwrap: keep only the required tests that pass in "
                                "each package's environment (tasks built elsewhere)")) -> None:
    """Gather built tasks into a pack: one snapshot per package version, tasks gzipped,
    splits by repository (held-out packages are the test split)."""
    from rlvr_envs.tasks.repo.pack import write_pack
    from rlvr_envs.tasks.repo.records import read_tasks

    tasks = []
    for path in sorted((source / "tasks").glob("*.jsonl")):
        tasks += [t for t in read_tasks(path) if t.metadata["repo"] not in exclude
                  and (not only or t.metadata["repo"] in only)]
    if package_env:
        from rlvr_envs.tasks.repo.environments import package_sandbox
        from rlvr_envs.tasks.repo.reconcile import restrict_to_environment
        os.environ["RLVR_CACHE_DIR"] = str(source.parent)  # cache: snapshots of the build
        tasks, _ = restrict_to_environment(tasks, lambda repo: package_sandbox(repo, package_env),
                                           progress=console.print)
    manifest = write_pack(tasks, out, name=name, held_out=held_out, build_dir=source)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    console.print(f"{manifest['tasks']} tasks from {len(manifest['packages'])} packages "
                  f"written to {out} ({size / 1e6:.2f} MB)")


@app.command("pack-update")
def pack_update_command(pack: str = typer.Argument(..., help="pack name (pypi) or directory"),
                        drop_failed: Optional[Path] = typer.Option(
                            None, help="audit report (audit-repo --full --report): leave out "
                                       "every task that failed on any backend"),
                        pass_rates: List[Path] = typer.Option(
                            [], "--pass-rates", help="pass-rate file(s) of `rlvr difficulty "
                                                     "estimate`: stored as difficulty.pass_rate"),
                        ) -> None:
    """Rewrite a pack in place: drop tasks that failed the audit, store measured pass rates."""
    import json

    from rlvr_envs.curriculum.difficulty import PassRates
    from rlvr_envs.tasks.repo.pack import pack_manifest, update_pack

    before = pack_manifest(pack)["tasks"]
    drop: list[str] = []
    if drop_failed:
        report = json.loads(drop_failed.read_text(encoding="utf-8"))
        for backend, entry in sorted(report.get("backends", {}).items()):
            for task in entry["summary"]["failed"]:
                console.print(f"drop {task} ({backend}: {entry['tasks'][task]['detail']})",
                              markup=False)
                drop.append(task)
    rates: dict[str, float] = {}
    sources = []
    for path in pass_rates:
        loaded = PassRates.load(path)
        rates.update(loaded.as_dict())
        sources.append(f"{loaded.policy} k={loaded.k}")
    manifest = update_pack(pack, drop=drop, pass_rates=rates,
                           pass_rate_source=", ".join(dict.fromkeys(sources)) or None)
    console.print(f"{before} → {manifest['tasks']} tasks; pass rates on "
                  f"{manifest.get('pass_rates', {}).get('tasks', 0)}")


@app.command("list")
def list_command(tasks: str = typer.Option("default", help="default | shipped | pack:NAME | "
                                                           "cache | all | a path")) -> None:
    """Per-package task counts by level and split."""
    from collections import Counter, defaultdict

    from rlvr_envs.tasks.repo.records import load_repo_tasks

    loaded = load_repo_tasks(tasks)
    rows: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for task in loaded:
        meta = task.metadata
        key = f"{meta['repo']} {meta.get('version') or ''}".strip()
        rows[key]["level"][task.difficulty.level] += 1
        rows[key]["split"][task.split] += 1
        rows[key]["licence"][str(meta.get("license", "")).split(" (")[0]] += 1
    table = Table("package", "tasks", "level 1", "level 2", "level 3", "splits", "licence")
    for key in sorted(rows):
        levels, splits = rows[key]["level"], rows[key]["split"]
        table.add_row(key, str(sum(levels.values())), *(str(levels[n]) for n in (1, 2, 3)),
                      ", ".join(f"{s} {n}" for s, n in sorted(splits.items())),
                      ", ".join(rows[key]["licence"]))
    totals = Counter(t.difficulty.level for t in loaded)
    table.add_row("[b]total[/]", str(len(loaded)), *(str(totals[n]) for n in (1, 2, 3)),
                  ", ".join(f"{s} {n}" for s, n in sorted(Counter(t.split for t in loaded)
                                                           .items())), "")
    console.print(table)


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
def audit_repo(tasks: str = typer.Option("shipped", help="shipped | cache | all | pack:NAME | "
                                                          "a JSONL path or pack directory"),
               sandbox: str = typer.Option("auto", help="auto | local | bwrap | docker"),
               ids: Optional[List[str]] = typer.Option(None, "--id", help="only these tasks"),
               workers: int = typer.Option(1, help="tasks audited in parallel"),
               package_env: bool = typer.Option(False, help="run each package's tasks in its "
                                                            "own environment (docker | bwrap)"),
               sample: Optional[int] = typer.Option(None, help="audit this many tasks drawn "
                                                               "at random (--seed)"),
               seed: int = typer.Option(0, help="seed of --sample"),
               split: Optional[str] = typer.Option(None, help="train | validation | test"),
               out: Optional[Path] = typer.Option(None, help="write the rows as JSONL"),
               full: bool = typer.Option(False, help="the full audit: also base fails "
                                                     "FAIL_TO_PASS, workspace audit, gold "
                                                     "verdict the same twice; resumable "
                                                     "(--journal)"),
               journal: Optional[Path] = typer.Option(
                   None, help="--full: the resumable JSONL journal (default: "
                              "$RLVR_CACHE_DIR/audit/TASKS-SANDBOX.jsonl)"),
               report: Optional[Path] = typer.Option(
                   None, help="--full: write the JSON report (per-task verdicts per backend, "
                              "summary) here, e.g. the pack's audit.json")) -> None:
    """Null agent (submit at once) must score 0 and gold-patch agent 1 on every task
    (`--full`: and the checks of the pack's audit)."""
    import json

    from rlvr_envs.tasks.repo.audit import audit_tasks

    if full:
        _full_audit(tasks, sandbox, ids, workers, package_env, sample, seed, split, journal,
                    report)
        return
    bad = 0
    table = Table("task", "null", "gold", "verdict")
    rows = audit_tasks(tasks, sandbox=sandbox, ids=ids, workers=workers,
                       package_env=package_env, sample=sample, seed=seed, split=split)
    sink = open(out, "w", encoding="utf-8") if out else None
    for row in rows:
        if sink:
            sink.write(json.dumps({"task": row.task, "null": row.null, "gold": row.gold,
                                   "ok": row.ok, "detail": row.detail}) + "\n")
            sink.flush()
        bad += not row.ok
        table.add_row(row.task, f"{row.null:g}", f"{row.gold:g}",
                      "[green]ok[/]" if row.ok else f"[red]FAIL[/] {row.detail}")
    if sink:
        sink.close()
    console.print(table)
    console.print(f"{bad} of {table.row_count} task(s) failed the audit")
    if bad:
        raise typer.Exit(1)


def _full_audit(tasks, sandbox, ids, workers, package_env, sample, seed, split, journal,
                report) -> None:
    import datetime
    import shlex
    import sys

    from rlvr_envs.tasks.repo.audit import run_full_audit, summarize, write_report
    from rlvr_envs.tasks.repo.snapshot import cache_dir

    safe = "".join(c if c.isalnum() or c in "-_." else "-" for c in tasks)
    journal = journal or cache_dir().parent / "audit" / f"{safe}-{sandbox}.jsonl"
    started = time.monotonic()
    count = 0

    def show(row) -> None:
        nonlocal count
        count += 1
        verdict = "[green]ok[/]" if row.ok else f"[red]FAIL[/] {row.detail}"
        console.print(f"{row.task} (level {row.level}, {row.seconds:.1f}s): {verdict}")

    rows = run_full_audit(tasks, journal, sandbox=sandbox, package_env=package_env,
                          workers=workers, progress=show, ids=ids, sample=sample, seed=seed,
                          split=split)
    minutes = (time.monotonic() - started) / 60
    summary = summarize(rows)
    console.print(f"{count} task(s) audited now in {minutes:.1f} min; journal {journal} holds "
                  f"{summary['tasks']}: {summary['passed']} pass, failing checks "
                  f"{summary['failed_checks']}")
    for task in summary["failed"]:
        console.print(f"[red]FAIL[/] {task}: {rows[task]['detail']}")
    if report:
        command = "rlvr " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        write_report(report, {sandbox: journal}, pack=tasks, command=command,
                     date=datetime.date.today().isoformat())
        console.print(f"report written to {report}")
    if summary["failed"]:
        raise typer.Exit(1)
