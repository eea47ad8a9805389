"""The null/gold audit of repo tasks: through the env's tools, the null agent (submit at
once) must score 0 and the gold-patch agent must score 1, on whichever sandbox backend."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Sequence

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


def audit_env(env: RepoEditEnv, ids: Sequence[str] | None = None, *, workers: int = 1
              ) -> Iterator[AuditRow]:
    """Audit every task of a RepoEditEnv (or only `ids`); `workers` > 1 audits tasks in
    parallel threads, each with its own env on the same sandbox (test runs are subprocesses
    or containers, so threads overlap their start-up and I/O)."""
    tasks = [t for t in env.source
             if not ids or (t.source_id or t.id) in ids or t.id in ids]
    if workers <= 1:
        for task in tasks:
            yield audit_task(env, task)
        return
    from rlvr_envs.tasks.repo.env import RepoEditEnv

    local = threading.local()
    envs = []

    def run(task):
        if not hasattr(local, "env"):
            local.env = RepoEditEnv(tasks, sandbox=env.scorer.sandbox)
            envs.append(local.env)
        return audit_task(local.env, task)

    try:
        with ThreadPoolExecutor(workers) as pool:
            yield from pool.map(run, tasks)
    finally:
        for worker_env in envs:
            worker_env.end_episode()


def audit_tasks(tasks: Any = "shipped", *, sandbox: str | Sandbox = "auto",
                ids: Sequence[str] | None = None, workers: int = 1,
                package_env: bool = False, sample: int | None = None, seed: int = 0,
                **filters: Any) -> Iterator[AuditRow]:
    """Audit `tasks` (filters: levels, repos, split). `package_env=True` runs each package's
    tasks in that package's environment (`environments.package_sandbox`, sandbox "docker" or
    "bwrap"); `sample` audits that many tasks drawn with `seed` instead of all."""
    import random

    from rlvr_envs.tasks.repo.env import RepoEditEnv
    from rlvr_envs.tasks.repo.records import load_repo_tasks

    chosen = list(load_repo_tasks(tasks, **filters))
    if ids:
        chosen = [t for t in chosen if (t.source_id or t.id) in ids or t.id in ids]
    if sample is not None and sample < len(chosen):
        chosen = sorted(random.Random(seed).sample(chosen, sample),
                        key=lambda t: t.source_id or t.id)
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
            yield from audit_env(env, workers=workers)
        finally:
            env.close()
