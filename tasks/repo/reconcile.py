"""Carrying built tasks into the environment they are graded in.

A task's FAIL_TO_PASS / PASS_TO_PASS come from the environment it was built in. A test can
pass there and skip elsewhere (an optional dependency such as PyYAML, or a stdlib module
such as tkinter that another interpreter build lacks). `restrict_to_environment` runs each
package's pristine suite once in the target environment and keeps only the required tests
that pass there; a task left without a FAIL_TO_PASS test is dropped. Nothing else changes, so
base-fails / gold-passes still hold for the tests that remain (the audit checks it).
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from rlvr_envs.tasks.repo.builder import run_suite_on_copy
from rlvr_envs.tasks.repo.grading import files_of_tests
from rlvr_envs.tasks.repo.snapshot import materialise_snapshot
from rlvr_envs.tasks.repo.statements import render_statement

from rlvr_envs.core.task import Task

if TYPE_CHECKING:
    from rlvr_envs.sandbox.base import Sandbox


def passing_in(sandbox: Sandbox, task: Task) -> set[str]:
    """The tests of the task's pristine tree that pass in `sandbox` (its whole suite)."""
    meta = task.metadata
    with tempfile.TemporaryDirectory(prefix="rlvr-reconcile-") as scratch:
        tree = Path(scratch) / "pristine"
        tree.mkdir()
        materialise_snapshot(str(meta["snapshot"]), tree)
        run = run_suite_on_copy(sandbox, tree, dict(meta),
                                timeout=float(meta.get("test_timeout", 300)))
    return set(run.passing())


def gradable(test_id: str, gold_files: Sequence[str]) -> bool:
    """False for a test that lives in a file the fix changes (a doctest of the library
    module): the grader restores every file a required test names, so it could never pass."""
    return files_of_tests([test_id]).isdisjoint(gold_files)


def restrict_task(task: Task, passing: set[str]) -> Task | None:
    """The task with its required tests cut to `passing` and to gradable tests (None when no
    FAIL_TO_PASS is left)."""
    meta = dict(task.metadata)
    gold = list(meta.get("gold_files") or [])
    f2p = [t for t in meta["FAIL_TO_PASS"] if t in passing and gradable(t, gold)]
    p2p = [t for t in meta["PASS_TO_PASS"] if t in passing and gradable(t, gold)]
    if not f2p:
        return None
    if f2p == list(meta["FAIL_TO_PASS"]) and p2p == list(meta["PASS_TO_PASS"]):
        return task
    meta.update(FAIL_TO_PASS=f2p, PASS_TO_PASS=p2p, num_failing=len(f2p))
    prompt = task.prompt
    if meta.get("failures"):
        meta["failures"] = [f for f in meta["failures"] if f["test"] in passing]
        prompt = render_statement(meta["repo"], meta["failures"], f2p, "issue")
    return replace(task, prompt=prompt, metadata=meta, id="")


def restrict_to_environment(tasks: Sequence[Task], sandbox_for: Callable[[str], Any], *,
                            progress: Callable[[str], None] = lambda _: None
                            ) -> tuple[list[Task], dict[str, int]]:
    """(tasks kept, tasks dropped per package) after restricting every task to the tests
    that pass in its package's environment (`sandbox_for(package)`)."""
    groups: dict[tuple[str, str], list[Task]] = {}
    for task in tasks:
        groups.setdefault((task.metadata["repo"], str(task.metadata["snapshot"])), []).append(task)
    kept: list[Task] = []
    dropped: dict[str, int] = {}
    for (repo, _), group in sorted(groups.items()):
        box = sandbox_for(repo)
        try:
            passing = passing_in(box, group[0])
        finally:
            box.close()
        restricted = [restrict_task(t, passing) for t in group]
        kept += [t for t in restricted if t is not None]
        dropped[repo] = sum(t is None for t in restricted)
        progress(f"{repo}: {len(passing)} tests pass in its environment; "
                 f"{len(group) - dropped[repo]} of {len(group)} tasks kept")
    return kept, dropped
