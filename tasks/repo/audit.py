"""The audit of repo tasks, through the env's tools, on whichever sandbox backend.

- `audit_task` (the quick audit behind `rlvr check` and CI): the null agent (submit at once)
  must score 0 and the gold-patch agent must score 1.
- `full_audit_task` (the pack's audit, `rlvr tasks audit-repo --full`): besides, every
  FAIL_TO_PASS test fails on the base tree (the null episode's graded run), the workspace
  built at reset passes its history audit, and a second gold episode gives the same verdict
  (a flaky task is caught). `run_full_audit` appends each row to a JSONL journal (a rerun
  skips the tasks already there) and `write_report` turns journals into the JSON report
  shipped next to a pack (per-task verdicts per backend and a summary).
"""

from __future__ import annotations

import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from rlvr_envs.tasks.repo.agents import GoldPatchAgent, NullAgent, run_episode

if TYPE_CHECKING:
    from rlvr_envs.tasks.repo.env import RepoEditEnv

    from rlvr_envs.core.task import Task
    from rlvr_envs.sandbox.base import Sandbox


@dataclass
class AuditRow:
    task: str
    null: float
    gold: float
    detail: str

    @property
    def ok(self) -> bool:
        return self.null == 0.0 and self.gold == 1.0


def audit_task(env: RepoEditEnv, task: Task) -> AuditRow:
    """Null and gold episodes of one task."""
    null = run_episode(env, NullAgent(), task=task)
    gold = run_episode(env, GoldPatchAgent(), task=task)
    detail = ""
    if null.reward != 0.0:
        detail += f"null scored {null.reward} ({null.info.get('verifier')}); "
    if gold.reward != 1.0:
        detail += (f"gold scored {gold.reward} ({gold.info.get('verifier')}: "
                   f"{gold.info.get('failed_tests')})")
    return AuditRow(task.source_id or task.id, null.reward, gold.reward, detail)


#: the checks of the full audit, in the order they are reported
FULL_CHECKS = ("workspace", "base_fails", "null_zero", "gold_one", "gold_stable")


@dataclass
class FullAuditRow:
    """The full audit of one task: each check's outcome and, for a failure, why."""

    task: str
    repo: str
    level: int
    checks: dict[str, bool] = field(default_factory=dict)
    detail: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return all(self.checks.get(name, False) for name in FULL_CHECKS)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"ok": self.ok}


def _verdict(episode) -> tuple:
    info = episode.info
    return (episode.reward, info.get("verifier"), info.get("tests_passed"),
            info.get("tests_total"), tuple(sorted(info.get("failed_tests") or ())))


def full_audit_task(env, task) -> FullAuditRow:
    """The full audit of one task (see module doc): a null episode and two gold episodes."""
    import time

    from rlvr_envs.tasks.repo.workspace import HistoryLeak

    started = time.monotonic()
    meta = task.metadata
    row = FullAuditRow(task.source_id or task.id, str(meta["repo"]), task.difficulty.level)
    problems: list[str] = []
    try:
        null = run_episode(env, NullAgent(), task=task)
        gold = [run_episode(env, GoldPatchAgent(), task=task) for _ in range(2)]
    except HistoryLeak as err:
        row.checks = dict.fromkeys(FULL_CHECKS, False)
        row.detail = f"workspace: {err}"[:500]
        row.seconds = round(time.monotonic() - started, 2)
        return row
    except Exception as err:  # noqa: BLE001 - a broken task is a failed row, not a crash
        row.checks = dict.fromkeys(FULL_CHECKS, False) | {"workspace": True}
        row.detail = f"{type(err).__name__}: {err}"[:500]
        row.seconds = round(time.monotonic() - started, 2)
        return row
    f2p_total = len(meta["FAIL_TO_PASS"])
    f2p_passed = null.info.get("fail_to_pass_passed")
    row.checks["workspace"] = True  # every reset built and audited the workspace
    row.checks["base_fails"] = (null.info.get("verifier") == "tests_failed"
                                and f2p_passed == 0)
    if not row.checks["base_fails"]:
        problems.append(f"base: {null.info.get('verifier')}, {f2p_passed} of {f2p_total} "
                        f"FAIL_TO_PASS passed")
    row.checks["null_zero"] = null.reward == 0.0
    if not row.checks["null_zero"]:
        problems.append(f"null scored {null.reward}")
    row.checks["gold_one"] = gold[0].reward == 1.0
    if not row.checks["gold_one"]:
        problems.append(f"gold scored {gold[0].reward} ({gold[0].info.get('verifier')}: "
                        f"{list((gold[0].info.get('failed_tests') or {}).items())[:3]})")
    row.checks["gold_stable"] = _verdict(gold[0]) == _verdict(gold[1])
    if not row.checks["gold_stable"]:
        problems.append(f"gold verdicts differ: {_verdict(gold[0])[:3]} then "
                        f"{_verdict(gold[1])[:3]}")
    row.detail = "; ".join(problems)[:500]
    row.seconds = round(time.monotonic() - started, 2)
    return row


def audit_env(env: RepoEditEnv, ids: Sequence[str] | None = None, *, workers: int = 1,
              audit: Callable[[Any, Any], Any] = audit_task) -> Iterator[Any]:
    """Audit every task of a RepoEditEnv (or only `ids`); `workers` > 1 audits tasks in
    parallel threads, each with its own env on the same sandbox (test runs are subprocesses
    or containers, so threads overlap their start-up and I/O)."""
    tasks = [t for t in env.source
             if not ids or (t.source_id or t.id) in ids or t.id in ids]
    if workers <= 1:
        for task in tasks:
            yield audit(env, task)
        return
    from rlvr_envs.tasks.repo.env import RepoEditEnv

    local = threading.local()
    envs = []

    def run(task):
        if not hasattr(local, "env"):
            local.env = RepoEditEnv(tasks, sandbox=env.scorer.sandbox)
            envs.append(local.env)
        return audit(local.env, task)

    try:
        with ThreadPoolExecutor(workers) as pool:
            yield from pool.map(run, tasks)
    finally:
        for worker_env in envs:
            worker_env.end_episode()


def audit_tasks(tasks: Any = "shipped", *, sandbox: str | Sandbox = "auto",
                ids: Sequence[str] | None = None, workers: int = 1,
                package_env: bool = False, sample: int | None = None, seed: int = 0,
                full: bool = False, skip: Sequence[str] = (), **filters: Any
                ) -> Iterator[Any]:
    """Audit `tasks` (filters: levels, repos, split). `package_env=True` runs each package's
    tasks in that package's environment (`environments.package_sandbox`, sandbox "docker" or
    "bwrap"); `sample` audits that many tasks drawn with `seed` instead of all; `full` runs
    `full_audit_task` (FullAuditRow) instead of the null/gold audit; tasks in `skip` (ids or
    source ids: already audited) are left out."""
    import random

    from rlvr_envs.tasks.repo.env import RepoEditEnv
    from rlvr_envs.tasks.repo.records import load_repo_tasks

    chosen = list(load_repo_tasks(tasks, **filters))
    if ids:
        chosen = [t for t in chosen if (t.source_id or t.id) in ids or t.id in ids]
    if sample is not None and sample < len(chosen):
        chosen = sorted(random.Random(seed).sample(chosen, sample),
                        key=lambda t: t.source_id or t.id)
    if skip:
        done = set(skip)
        chosen = [t for t in chosen if (t.source_id or t.id) not in done and t.id not in done]
    groups: dict[str, list] = {}
    for task in chosen:
        groups.setdefault(task.metadata["repo"] if package_env else "", []).append(task)
    for repo, group in groups.items():
        if package_env:
            from rlvr_envs.tasks.repo.environments import package_sandbox
            box = package_sandbox(repo, sandbox)
        else:
            box = sandbox
        env = RepoEditEnv(group, sandbox=box)
        try:
            yield from audit_env(env, workers=workers,
                                 audit=full_audit_task if full else audit_task)
        finally:
            env.close()


# -- the pack's audit report -------------------------------------------------------------------


def read_journal(path: Path) -> dict[str, dict]:
    """task → row of a full-audit journal (the last row of a task wins)."""
    rows: dict[str, dict] = {}
    if Path(path).is_file():
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                rows[row["task"]] = row
    return rows


def run_full_audit(tasks: Any, journal: Path, *, sandbox: str = "docker",
                   package_env: bool = True, workers: int = 1,
                   progress: Callable[[FullAuditRow], None] = lambda _: None,
                   **filters: Any) -> dict[str, dict]:
    """Full-audit every task not yet in `journal` (appending each row as soon as it is
    known, so an interrupted audit resumes where it stopped); return the journal's rows."""
    journal = Path(journal)
    journal.parent.mkdir(parents=True, exist_ok=True)
    done = read_journal(journal)
    for row in audit_tasks(tasks, sandbox=sandbox, package_env=package_env, workers=workers,
                           full=True, skip=list(done), **filters):
        with open(journal, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(row.as_dict(), sort_keys=True) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        done[row.task] = row.as_dict()
        progress(row)
    return done


def summarize(rows: dict[str, dict]) -> dict[str, Any]:
    """Counts of a backend's rows: audited, passing, failing per check, failing tasks."""
    failing = sorted(task for task, row in rows.items() if not row["ok"])
    seconds = sorted(row.get("seconds", 0.0) for row in rows.values())
    return {"tasks": len(rows), "passed": len(rows) - len(failing), "failed": failing,
            "failed_checks": {name: sum(not row["checks"].get(name, False)
                                        for row in rows.values()) for name in FULL_CHECKS},
            "median_seconds_per_task": seconds[len(seconds) // 2] if seconds else None}


def write_report(out: Path, journals: dict[str, Path], *, pack: str, command: str = "",
                 date: str = "") -> dict[str, Any]:
    """Write the JSON report of the given backends' journals (backend → journal) into `out`,
    keeping the other backends a report already there holds."""
    out = Path(out)
    report = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {}
    report.update(pack=pack, checks=list(FULL_CHECKS))
    backends = report.setdefault("backends", {})
    for backend, path in journals.items():
        rows = read_journal(path)
        backends[backend] = {"summary": summarize(rows), "command": command, "date": date,
                             "tasks": {task: {"ok": row["ok"], "checks": row["checks"],
                                              "detail": row["detail"]}
                                       for task, row in sorted(rows.items())}}
    out.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return report
