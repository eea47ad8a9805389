"""The null/gold audit of repo tasks: through the env's tools, the null agent (submit at
once) must score 0 and the gold-patch agent must score 1, on whichever sandbox backend."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from rlvr_envs.tasks.repo.agents import GoldPatchAgent, NullAgent, run_episode


@dataclass
class AuditRow:
    task: str
    null: float
    gold: float
    detail: str

    @property
    def ok(self) -> bool:
        return self.null == 0.0 and self.gold == 1.0


def audit_env(env, ids: Sequence[str] | None = None) -> Iterator[AuditRow]:
    """Audit every task of a RepoEditEnv (or only `ids`)."""
    for task in env.source:
        key = task.source_id or task.id
        if ids and key not in ids and task.id not in ids:
            continue
        null = run_episode(env, NullAgent(), task=task)
        gold = run_episode(env, GoldPatchAgent(), task=task)
        detail = ""
        if null.reward != 0.0:
            detail += f"null scored {null.reward} ({null.info.get('verifier')}); "
        if gold.reward != 1.0:
            detail += (f"gold scored {gold.reward} ({gold.info.get('verifier')}: "
                       f"{gold.info.get('failed_tests')})")
        yield AuditRow(key, null.reward, gold.reward, detail)


def audit_tasks(tasks: Any = "shipped", *, sandbox: Any = "auto",
                ids: Sequence[str] | None = None) -> Iterator[AuditRow]:
    from rlvr_envs.tasks.repo.env import RepoEditEnv

    env = RepoEditEnv(tasks, sandbox=sandbox)
    try:
        yield from audit_env(env, ids)
    finally:
        env.close()
