"""Turning (pristine tree, injected bug) into a validated repo task.

Shared by the hand-written mini repositories and the synthesis pipeline:
run the whole test suite on the pristine tree once, then on the buggy base tree; the tests
that pass on the pristine tree and fail on the base are FAIL_TO_PASS, those passing on both
are PASS_TO_PASS. A task is kept only if some tests fail and the rest pass, the gold patch
(base → pristine) touches no protected path, the workspace is history-safe (no blob of the
fixed files in it), and grading by node id confirms the base fails and the gold passes.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from rlvr_envs.tasks.repo.grading import files_of_tests, is_protected, run_pytest, run_tests
from rlvr_envs.tasks.repo.records import make_repo_task, patch_stats
from rlvr_envs.tasks.repo.snapshot import apply_patch
from rlvr_envs.tasks.repo.workspace import (
    audit_history,
    blob_hashes,
    diff_trees,
    init_history_safe_repo,
)

from rlvr_envs.core.task import Task
from rlvr_envs.verify.repo import outcome_of

if TYPE_CHECKING:
    from rlvr_envs.sandbox.base import Sandbox


class TaskRejected(ValueError):
    """The candidate bug does not make a valid task (the message says why)."""


@dataclass
class SuiteRun:
    """Outcome of every test of a full-suite run: id → "passed" | "failed" | ..."""

    outcomes: dict[str, str]
    messages: dict[str, str]
    exit_code: int | None
    timed_out: bool
    #: id → the failing line of the test itself (what was called), when pytest showed one
    sources: dict[str, str] = field(default_factory=dict)

    def failures(self, test_ids: Sequence[str], limit: int = 5) -> list[dict[str, str]]:
        """The first `limit` failures as {test, source, message} (for problem statements)."""
        return [{"test": t, "source": self.sources.get(t, ""),
                 "message": self.messages.get(t, "")} for t in test_ids[:limit]]

    def passing(self) -> list[str]:
        return [t for t, o in self.outcomes.items() if o == "passed"]


def run_suite(sandbox: Sandbox, tree: Path, metadata: dict[str, Any], *, timeout: float
              ) -> SuiteRun:
    """Run the repo's whole test suite (its own configuration decides what that is)."""
    report, result = run_pytest(sandbox, tree, list(metadata.get("test_args", [])), metadata,
                                timeout=timeout)
    tests = report.tests if report.problem is None else {}
    return SuiteRun({t: outcome_of(p) for t, p in tests.items()},
                    {t: p.get("message", "") for t, p in tests.items() if p.get("message")},
                    result.exit_code, result.timed_out,
                    {t: p["source"] for t, p in tests.items() if p.get("source")})


def split_tests(pristine: SuiteRun, base: SuiteRun, max_failing_fraction: float = 0.5
                ) -> tuple[list[str], list[str]]:
    """(FAIL_TO_PASS, PASS_TO_PASS), or TaskRejected."""
    if base.timed_out:
        raise TaskRejected("the test suite timed out on the buggy tree")
    good = pristine.passing()
    f2p = [t for t in good if base.outcomes.get(t, "missing") != "passed"]
    p2p = [t for t in good if base.outcomes.get(t) == "passed"]
    if not f2p:
        raise TaskRejected("no test fails on the buggy tree")
    if not p2p:
        raise TaskRejected("every test fails on the buggy tree")
    if len(f2p) > max_failing_fraction * len(good):
        raise TaskRejected(f"{len(f2p)} of {len(good)} tests fail: the bug is too blunt")
    return f2p, p2p


def build_task(*, sandbox: Sandbox, pristine: Path, pristine_run: SuiteRun, setup_patch: str,
               statement: str | Callable[[SuiteRun, list[str]], str], repo: str, snapshot: str,
               source: str, source_id: str, metadata: dict[str, Any], timeout: float = 300,
               max_failing_fraction: float = 0.5, p2p_scope: str = "suite") -> Task:
    """A validated task for the bug `setup_patch` on the `pristine` tree (see module doc).
    `p2p_scope="files"` keeps as PASS_TO_PASS only the passing tests of the files that hold
    a FAIL_TO_PASS test (graded runs stay short on big suites); "suite" keeps them all."""
    with tempfile.TemporaryDirectory(prefix="rlvr-build-") as scratch:
        base = Path(scratch) / "base"
        shutil.copytree(pristine, base, symlinks=True)
        apply_patch(base, setup_patch, what="bug patch")
        gold_patch = diff_trees(base, pristine)
        files, _ = patch_stats(gold_patch)
        if not files:
            raise TaskRejected("the bug patch changes nothing")
        protected = [f for f in files if is_protected(f)]
        if protected:
            raise TaskRejected(f"the fix would touch protected paths {protected}")
        base_run = run_suite(sandbox, _scratch_copy(base, scratch), metadata, timeout=timeout)
        f2p, p2p = split_tests(pristine_run, base_run, max_failing_fraction)
        if p2p_scope == "files":  # as SWE-bench: the tests of the files that show the bug
            p2p = [t for t in p2p if t.split("::", 1)[0] in files_of_tests(f2p)]
        # a test inside a file the fix changes (a library doctest) names a protected path:
        # the grader restores that file, so the test could never pass
        f2p = [t for t in f2p if files_of_tests([t]).isdisjoint(files)]
        p2p = [t for t in p2p if files_of_tests([t]).isdisjoint(files)]
        if not f2p:
            raise TaskRejected("only tests inside the fixed files fail (library doctests)")
        text = statement(base_run, f2p) if callable(statement) else statement
        # grading by node id must agree: base fails, pristine passes
        required = f2p + p2p
        gold_verdict, _ = run_tests(sandbox, _scratch_copy(pristine, scratch), required, metadata,
                                    timeout=timeout)
        flaky = [t for t in gold_verdict.failed if t in p2p]
        if flaky and len(flaky) == len(gold_verdict.failed) and len(flaky) <= 3:
            # a PASS_TO_PASS test that failed this time is flaky (threads, timing): drop it
            p2p = [t for t in p2p if t not in flaky]
            required = f2p + p2p
            gold_verdict, _ = run_tests(sandbox, _scratch_copy(pristine, scratch), required,
                                        metadata, timeout=timeout)
        if not gold_verdict.all_passed:
            raise TaskRejected(f"the gold tree does not pass its tests by node id "
                               f"({gold_verdict.reason}: {list(gold_verdict.failed.items())[:3]})")
        # run by node id (as graded), the buggy tree must still fail: a test that failed only
        # in the whole suite's order depends on other tests, and is not kept as FAIL_TO_PASS
        base_verdict, _ = run_tests(sandbox, _scratch_copy(base, scratch), required, metadata,
                                    timeout=timeout)
        f2p = [t for t in f2p if t not in base_verdict.passed]
        if not f2p:
            raise TaskRejected("the FAIL_TO_PASS tests pass on the buggy tree when run by node "
                               "id (they fail only in the whole suite's order)")
        text = statement(base_run, f2p) if callable(statement) else statement
        fixed_blobs = blob_hashes([(pristine / f).read_bytes() for f in files
                                   if (pristine / f).is_file()], Path(scratch))
        workspace = Path(scratch) / "workspace"
        shutil.copytree(base, workspace, symlinks=True)
        commit = init_history_safe_repo(workspace)
        audit_history(workspace, commit, fixed_blobs)
    meta = dict(metadata)
    meta.update(failures=base_run.failures(f2p), setup_patch=setup_patch,
                workspace_commit=commit, fixed_blobs=fixed_blobs)
    return make_repo_task(statement=text, repo=repo, snapshot=snapshot, gold_patch=gold_patch,
                          fail_to_pass=f2p, pass_to_pass=p2p, source=source,
                          source_id=source_id, **meta)


def _scratch_copy(tree: Path, scratch: str) -> Path:
    """Tests run on throwaway copies: whatever they write must not reach a task's trees."""
    dest = Path(tempfile.mkdtemp(prefix="run-", dir=scratch)) / "repo"
    shutil.copytree(tree, dest, symlinks=True)
    return dest


def count_source_files(tree: Path) -> int:
    return sum(1 for p in tree.rglob("*.py")
               if not is_protected(p.relative_to(tree).as_posix()))


def summarize_failures(run: SuiteRun, f2p: Sequence[str], limit: int = 5) -> list[str]:
    lines = []
    for test_id in f2p[:limit]:
        message = run.messages.get(test_id, "").strip().splitlines()
        lines.append(f"- {test_id}" + (f"\n  {message[0][:200]}" if message else ""))
    if len(f2p) > limit:
        lines.append(f"- ... and {len(f2p) - limit} more")
    return lines


def stable(*runs: SuiteRun) -> SuiteRun:
    """Tests count as passing only if they passed in every run (flaky ones are dropped)."""
    first = runs[0]
    outcomes = {t: ("passed" if all(r.outcomes.get(t) == "passed" for r in runs) else
                    (o if o != "passed" else "flaky")) for t, o in first.outcomes.items()}
    return SuiteRun(outcomes, first.messages, first.exit_code,
                    any(r.timed_out for r in runs))


def run_suite_on_copy(sandbox: Sandbox, tree: Path, metadata: dict[str, Any], *,
                      timeout: float) -> SuiteRun:
    """`run_suite` on a throwaway copy of `tree`."""
    with tempfile.TemporaryDirectory(prefix="rlvr-suite-") as scratch:
        return run_suite(sandbox, _scratch_copy(tree, scratch), metadata, timeout=timeout)
