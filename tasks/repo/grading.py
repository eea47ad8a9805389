"""Grading a repo task: the agent's changes on a pristine copy, tests restored, run in a sandbox.

1. Start from a fresh copy of the base tree (never the agent's workspace).
2. Copy over the agent's changes (file-by-file difference from the base tree), except
   *protected* paths: test files and directories, every `conftest.py`, pytest configuration
   (`pytest.ini`, `.pytest.ini`, `tox.ini`, `setup.cfg`, `pyproject.toml`), `sitecustomize`,
   `.pth` files, and every file named by the task's tests — those stay pristine, and new
   ones the agent created are dropped.
3. Apply the task's hidden `test_patch` (SWE-bench style), if any.
4. Run FAIL_TO_PASS + PASS_TO_PASS by node id with pytest in the sandbox, with the report
   plugin of `rlvr_envs.verify.repo` under a random module name, its report written to a
   random path in a directory created for this run; no cache provider, no bytecode.
5. Reward 1 iff pytest exited 0 and every required id passed (partial credit: the fraction).
"""

from __future__ import annotations

import secrets
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Mapping, Sequence

from rlvr_envs.tasks.repo.snapshot import apply_patch
from rlvr_envs.tasks.repo.workspace import Changes, diff_trees, write_changes

from rlvr_envs.core.scoring import Score, zero_score
from rlvr_envs.verify.repo import REPORT_PLUGIN, RunVerdict, read_report, unique_ids

TEST_DIR_NAMES = frozenset({"tests", "test", "testing"})
CONFIG_NAMES = frozenset({"conftest.py", "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg",
                          "pyproject.toml", "noxfile.py", "sitecustomize.py",
                          "usercustomize.py"})


def files_of_tests(test_ids: Sequence[str]) -> set[str]:
    """The files that pytest node ids live in ("a/test_x.py::T::t[1]" → "a/test_x.py")."""
    return {tid.split("::", 1)[0] for tid in test_ids}


def is_protected(rel_path: str, task_test_files: set[str] | frozenset[str] = frozenset()) -> bool:
    """True for paths the grader always takes from the pristine tree."""
    path = PurePosixPath(rel_path)
    name = path.name
    if rel_path in task_test_files or name in CONFIG_NAMES or name.endswith(".pth"):
        return True
    if name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")):
        return True
    return any(part in TEST_DIR_NAMES for part in path.parts[:-1]) or name in TEST_DIR_NAMES


def required_tests(metadata: Mapping[str, Any]) -> list[str]:
    return unique_ids(metadata.get("FAIL_TO_PASS", ()), metadata.get("PASS_TO_PASS", ()))


def protected_files(metadata: Mapping[str, Any]) -> set[str]:
    return files_of_tests(required_tests(metadata)) | set(metadata.get("visible_tests_files", ()))


@dataclass
class GradeRun:
    """Everything a graded run produced (for `info` and debugging)."""

    verdict: RunVerdict
    agent_patch: str
    dropped_paths: list[str]
    stdout_tail: str
    duration: float
    isolation: str


def assemble_graded_tree(base_tree: Path, changes: Changes, metadata: Mapping[str, Any],
                         dest: Path) -> list[str]:
    """Write the tree that gets tested into `dest` (new dir); return the agent's dropped paths."""
    shutil.copytree(base_tree, dest, symlinks=True)
    keep = protected_files(metadata)
    dropped = write_changes(dest, changes, skip=lambda rel: is_protected(rel, keep))
    apply_patch(dest, str(metadata.get("test_patch", "") or ""), what="test patch")
    return dropped


def pytest_env(metadata: Mapping[str, Any], tree: Path, extra_paths: Sequence[Path] = ()
               ) -> dict[str, str]:
    """PYTHONPATH for the repo's own import roots (repos are tested in place, not installed)."""
    roots = [str(p) for p in extra_paths]
    roots += [str(tree / p) for p in metadata.get("python_path", ["."])]
    # no third-party plugin autoloads: only the repo's own config and our report plugin count
    return {"PYTHONPATH": ":".join(roots), "PYTHONDONTWRITEBYTECODE": "1",
            "PYTEST_ADDOPTS": "", "PYTEST_PLUGINS": "", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


#: starts pytest with the working directory off sys.path, so a `pytest.py` or `_pytest/` the
#: agent planted in the repository can never stand in for pytest (or for our report plugin);
#: the repo's import roots (RLVR_IMPORT_ROOTS) join sys.path only once pytest is loaded
PYTEST_BOOT = ("import os, sys; cwd = os.getcwd(); "
               "sys.path[:] = [p for p in sys.path if p not in ('', '.', cwd)]; "
               "roots = os.environ.pop('RLVR_IMPORT_ROOTS').split(os.pathsep); "
               "import pytest; sys.path[:0] = roots; "
               "raise SystemExit(pytest.console_main())")


def run_pytest(sandbox, tree: Path, args: Sequence[str], metadata: Mapping[str, Any], *,
               timeout: float, memory_mb: int = 2048,
               extra_env: Mapping[str, str] | None = None) -> tuple[str | None, Any]:
    """Run pytest on `args` in `tree` inside `sandbox` with the report plugin; return the raw
    JSON report (None when pytest never wrote one) and the sandbox's RunResult. The plugin
    module and the report get random names in a directory made here for this run."""
    from rlvr_envs.sandbox.base import Limits

    token = secrets.token_hex(8)
    report_dir = tree / f".rlvr-report-{token}"
    report_dir.mkdir()
    module = f"rlvr_report_{token}"
    (report_dir / f"{module}.py").write_text(REPORT_PLUGIN)
    report_path = report_dir / f"report-{secrets.token_hex(8)}.json"
    env = pytest_env(metadata, tree)
    env["RLVR_IMPORT_ROOTS"] = env.pop("PYTHONPATH")
    env["PYTHONPATH"] = str(report_dir)  # only our plugin at start-up
    env["RLVR_REPORT_PATH"] = str(report_path)
    env.update(extra_env or {})
    command = [getattr(sandbox, "python", "python3"), "-c", PYTEST_BOOT, "-q", "-p", module,
               "-p", "no:cacheprovider", "--rootdir", str(tree), *args]
    try:
        result = sandbox.run(command, workdir=tree, env=env,
                             limits=Limits(wall_time=timeout, memory_mb=memory_mb,
                                           max_processes=64, max_output_bytes=200_000))
        report = report_path.read_text(encoding="utf-8", errors="replace") \
            if report_path.is_file() and not report_path.is_symlink() else None
    finally:
        shutil.rmtree(report_dir, ignore_errors=True)
    return report, result


def run_tests(sandbox, tree: Path, test_ids: Sequence[str], metadata: Mapping[str, Any], *,
              timeout: float) -> tuple[RunVerdict, Any]:
    """Run exactly `test_ids`; the verdict comes from the plugin's report and the real exit
    status, never from printed output."""
    report, result = run_pytest(sandbox, tree, test_ids, metadata, timeout=timeout)
    return read_report(report, result.exit_code, test_ids, timed_out=result.timed_out), result


def grade_changes(sandbox, base_tree: Path, changes: Changes, metadata: Mapping[str, Any], *,
                  timeout: float | None = None, partial_credit: bool = False,
                  scratch: Path | None = None) -> tuple[Score, GradeRun]:
    """Grade the agent's `changes` to the task whose base tree is `base_tree`."""
    required = required_tests(metadata)
    if not required:
        raise ValueError("a repo task needs at least one FAIL_TO_PASS test id")
    timeout = float(timeout or metadata.get("test_timeout", 300))
    parent = Path(tempfile.mkdtemp(prefix="rlvr-grade-", dir=scratch))
    try:
        tree = parent / "repo"
        try:
            dropped = assemble_graded_tree(base_tree, changes, metadata, tree)
        except ValueError as err:  # the hidden test patch clashes with the agent's files
            return zero_score("test_patch_conflict", {"tests": 0.0}, error=str(err)[:500]), \
                GradeRun(RunVerdict(reason="test_patch_conflict"), "", [], "", 0.0, "none")
        agent_patch = diff_trees(base_tree, tree)
        verdict, result = run_tests(sandbox, tree, required, metadata, timeout=timeout)
    finally:
        shutil.rmtree(parent, ignore_errors=True)
    return score_from_verdict(verdict, metadata, partial_credit=partial_credit,
                              dropped=dropped), GradeRun(
        verdict, agent_patch, dropped, (result.stdout + result.stderr)[-4000:],
        result.duration, result.isolation)


def score_from_verdict(verdict: RunVerdict, metadata: Mapping[str, Any], *,
                       partial_credit: bool = False, dropped: Sequence[str] = ()) -> Score:
    f2p = list(metadata.get("FAIL_TO_PASS", ()))
    correct = verdict.all_passed
    reward = 1.0 if correct else (verdict.fraction if partial_credit and
                                  verdict.reason == "tests_failed" else 0.0)
    details = {
        "tests_passed": len(verdict.passed),
        "tests_total": len(verdict.passed) + len(verdict.failed),
        "fail_to_pass_passed": sum(t in verdict.passed for t in f2p),
        "fail_to_pass_total": len(f2p),
        "failed_tests": dict(list(verdict.failed.items())[:50]),
        "pytest_exit_status": verdict.exit_status,
        "protected_paths_dropped": list(dropped)[:50],
    }
    return Score(reward=reward, correct=correct, breakdown={"tests": reward},
                 verifier=verdict.reason, details=details)
