"""RepoScorer: the one grading path of repo tasks, for the env's `submit` and for trainers.

`score(task, patch)` grades a patch (the completion of a repo task is a diff against its base
tree; the gold completion is the gold patch). `score_workspace(task, directory)` grades a
directory the agent edited (what `submit` does). Both end in `grading.grade_changes`.
"""

from __future__ import annotations

import inspect
import shutil
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from rlvr_envs.tasks.repo.grading import GradeRun, grade_changes
from rlvr_envs.tasks.repo.records import check_repo_task
from rlvr_envs.tasks.repo.snapshot import BASE_TREES, BaseTreeCache, apply_patch
from rlvr_envs.tasks.repo.workspace import WorkspaceTooLarge, collect_changes

from rlvr_envs.core.scoring import Score, Scorer, zero_score
from rlvr_envs.core.task import Task

if TYPE_CHECKING:
    from rlvr_envs.sandbox.base import Sandbox

COMPONENTS = {"tests": 0.0}


def make_sandbox(backend: str | Sandbox = "auto", *, test_requirements: Sequence[str] = (),
                 **options: Any) -> Sandbox:
    """A sandbox for repo tasks. Every name means what `get_sandbox` makes of it: "auto" the
    first backend that isolates here, "local" processes in their own namespaces, and plain
    processes only as "local-unsafe", asked for by name (with a warning): they can read the
    task files (gold patches included) and write the host. On "bwrap" and "local" the runs see
    this interpreter with pytest, its dependencies and `test_requirements` (installed
    distributions the tasks' tests import) and no other installed package
    (`environments.pytest_sandbox`)."""
    from rlvr_envs.sandbox import Sandbox, auto_backend, backend_class, get_sandbox

    if isinstance(backend, Sandbox) or hasattr(backend, "run"):
        return backend
    if backend == "auto":
        backend = auto_backend()
    if "hide_site_packages" in inspect.signature(backend_class(backend).__init__).parameters:
        from rlvr_envs.tasks.repo.environments import pytest_sandbox
        return pytest_sandbox(backend, test_requirements, **options)
    if test_requirements:
        raise ValueError(f"test_requirements apply to the 'bwrap' and 'local' backends; "
                         f"{backend!r} runs its own image or the host's installation")
    return get_sandbox(backend, **options)


class RepoScorer(Scorer):
    """Grades repo tasks in a sandbox. `partial_credit`: reward = fraction of required tests
    passing (only when the run itself completed) instead of all-or-nothing. `strict_diff`
    (default): a change the diff monitor flags as hacking scores 0."""

    components = COMPONENTS

    def __init__(self, sandbox: str | Sandbox = "auto", *, partial_credit: bool = False,
                 strict_diff: bool = True, test_timeout: float | None = None, base_trees: BaseTreeCache = BASE_TREES,
                 sandbox_options: dict[str, Any] | None = None):
        self._sandbox_spec, self._sandbox_options = sandbox, dict(sandbox_options or {})
        self._sandbox = None
        self._lock = threading.Lock()
        self.partial_credit = partial_credit
        self.strict_diff = strict_diff
        self.test_timeout = test_timeout
        self.base_trees = base_trees
        base_trees.acquire()
        self._released = False
        self.last_run: GradeRun | None = None

    @property
    def sandbox(self) -> Sandbox:
        with self._lock:
            if self._sandbox is None:
                self._sandbox = make_sandbox(self._sandbox_spec, **self._sandbox_options)
            return self._sandbox

    def gold_completion(self, task: Task) -> str:
        return check_repo_task(task).metadata["gold_patch"]

    def gold_actions(self, task: Task) -> list[str]:
        """The gold-patch agent's tool calls for the multi-turn env, ending with submit."""
        from rlvr_envs.tasks.repo.agents import GoldPatchAgent

        agent = GoldPatchAgent()
        agent.start(check_repo_task(task).to_dict())
        return list(agent._plan)

    def score(self, task: Task, completion: str) -> Score:
        """Grade `completion` as a patch against the task's base tree."""
        check_repo_task(task)
        if not isinstance(completion, str):
            raise TypeError(f"a repo completion is a patch (str), got {type(completion).__name__}")
        base = self.base_trees.base_tree(task.metadata)
        with tempfile.TemporaryDirectory(prefix="rlvr-patch-") as scratch:
            tree = Path(scratch) / "repo"
            shutil.copytree(base, tree, symlinks=True)
            if completion.strip():
                try:
                    apply_patch(tree, completion, what="submitted patch")
                except ValueError as err:
                    return zero_score("patch_does_not_apply", COMPONENTS, error=str(err)[:500])
            return self.score_workspace(task, tree)

    def score_workspace(self, task: Task, workspace: Path) -> Score:
        """Grade the files of `workspace` (an edited copy of the task's base tree)."""
        base = self.base_trees.base_tree(task.metadata)
        try:
            changes = collect_changes(base, workspace)
        except WorkspaceTooLarge as err:
            return zero_score("workspace_too_large", COMPONENTS, error=str(err))
        score, run = grade_changes(self.sandbox, base, changes, task.metadata,
                                   timeout=self.test_timeout, partial_credit=self.partial_credit,
                                   strict_diff=self.strict_diff)
        self.last_run = run
        score.details["agent_patch"] = run.agent_patch[:20_000]
        score.details["isolation"] = run.isolation
        score.details["grade_seconds"] = round(run.duration, 3)
        return score

    def close(self) -> None:
        with self._lock:
            if self._sandbox is not None and self._sandbox is not self._sandbox_spec:
                self._sandbox.close()
            self._sandbox = None
            if not self._released:
                self._released = True
                self.base_trees.release()
