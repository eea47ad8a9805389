"""Grading a repo task: the agent's changes on a pristine copy, tests restored, run in a sandbox.

1. Start from a fresh copy of the base tree (never the agent's workspace).
2. Copy over the agent's changes (file-by-file difference from the base tree) without ever
   following a link (`writeback`), except *protected* paths: test files and directories,
   every `conftest.py`, pytest configuration files, `sitecustomize`, `.pth` files, and every
   file named by the task's tests — those stay pristine, and new ones the agent created are
   dropped — and added modules that would shadow a standard-library module, pytest or an
   installed distribution (`shadows_a_module`).
3. Flag hacking constructs the agent added to library code (`monitor`); with `strict_diff`
   a flagged change scores 0 without running anything.
4. Apply the task's hidden `test_patch` (SWE-bench style), if any.
5. Run FAIL_TO_PASS + PASS_TO_PASS by node id with pytest in the sandbox through the boot
   program of `rlvr_envs.verify.repo`: the project's own configuration passed with `-c`,
   root and conftest boundary fixed, user site-packages off, HOME outside the tree, the
   verdicts streamed with a MAC to a descriptor opened before collection.
6. Reward 1 iff pytest exited 0 and every required id passed (partial credit: the fraction),
   and the run left every protected path as it found it (`protected_state`): library code
   runs in the graded tree before pytest imports the test modules, and could rewrite them.
"""

from __future__ import annotations

import functools
import os
import secrets
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from rlvr_envs.tasks.repo.disk_budget import DiskWatch, walk_entries, workspace_usage
from rlvr_envs.tasks.repo.monitor import flag_changes
from rlvr_envs.tasks.repo.processes import kill_tagged
from rlvr_envs.tasks.repo.snapshot import apply_patch
from rlvr_envs.tasks.repo.workspace import Changes, diff_trees, remove_tree, write_changes
from rlvr_envs.tasks.repo.writeback import read_entry

from rlvr_envs.core.scoring import Score, zero_score
from rlvr_envs.verify.repo import (
    PYTEST_BOOT,
    RunVerdict,
    StreamReport,
    read_stream,
    unique_ids,
    verdict_of,
)

if TYPE_CHECKING:
    from rlvr_envs.sandbox.base import Sandbox

TEST_DIR_NAMES = frozenset({"tests", "test", "testing"})
CONFIG_NAMES = frozenset({"conftest.py", "pytest.toml", ".pytest.toml", "pytest.ini",
                          ".pytest.ini", "tox.ini", "setup.cfg",
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


#: names an added module may never take (besides the standard library's and installed
#: distributions' top-level names): pytest itself and Python's start-up hooks
RESERVED_MODULES = frozenset({"pytest", "_pytest", "py", "pluggy", "iniconfig", "packaging",
                              "sitecustomize", "usercustomize", "__main__"})
_MODULE_SUFFIXES = (".py", ".pyw", ".pyc", ".so", ".pyd")


@functools.lru_cache(maxsize=1)
def reserved_module_names() -> frozenset[str]:
    """Top-level import names no added module may shadow."""
    import importlib.metadata

    names = set(sys.stdlib_module_names) | RESERVED_MODULES
    try:
        names |= set(importlib.metadata.packages_distributions())
    except Exception:  # noqa: BLE001 - a broken distribution must not stop grading
        pass
    return frozenset(names)


def shadows_a_module(rel_path: str, base_tree: Path) -> bool:
    """True for an added module or package (not in the base tree) named like a standard-
    library module, pytest or an installed distribution's top-level import, in a directory
    that is not a package of the base tree (so it could sit on sys.path)."""
    parts = rel_path.split("/")
    reserved = reserved_module_names()
    for i, part in enumerate(parts):
        here = base_tree.joinpath(*parts[:i + 1])
        if here.exists() or here.is_symlink():
            continue
        if i == len(parts) - 1:
            if not part.endswith(_MODULE_SUFFIXES):
                return False
            part = part.split(".", 1)[0]
        if part in reserved and not base_tree.joinpath(*parts[:i], "__init__.py").is_file():
            return True
    return False


def required_tests(metadata: Mapping[str, Any]) -> list[str]:
    return unique_ids(metadata.get("FAIL_TO_PASS", ()), metadata.get("PASS_TO_PASS", ()))


def protected_files(metadata: Mapping[str, Any]) -> set[str]:
    return files_of_tests(required_tests(metadata)) | set(metadata.get("visible_tests_files", ()))


def _entry_state(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_ctime_ns


def protected_state(tree: Path, keep: set[str] | frozenset[str] = frozenset()
                    ) -> dict[str, tuple[int, int, int] | None]:
    """(device, inode, ctime) of every protected file and directory of `tree` (`is_protected`)
    and of every directory above one, the root aside, read without following links. The
    graded run can write its tree, and library code runs there before pytest imports a test
    module (a conftest imports the library, tests live in the library's package, or a root
    `__init__.py` makes `tests` a subpackage): rewriting a test file, or moving a directory of
    tests aside and back, changes the ctime of what it touched, which no unprivileged process
    can set back."""
    state: dict[str, tuple[int, int, int] | None] = {}
    for entry, _ in walk_entries(tree):
        rel = Path(entry.path).relative_to(tree).as_posix()
        if is_protected(rel, keep):
            parts = rel.split("/")
            for i in range(1, len(parts) + 1):
                above = "/".join(parts[:i])
                if above not in state:
                    state[above] = _entry_state(tree / above)
    return state


def changed_paths(tree: Path, before: Mapping[str, tuple[int, int, int] | None]) -> list[str]:
    """The paths of `before` (`protected_state`) that are gone, replaced or changed since."""
    return sorted(rel for rel, state in before.items() if _entry_state(tree / rel) != state)


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
    dropped = write_changes(dest, changes, skip=lambda rel: is_protected(rel, keep)
                            or shadows_a_module(rel, base_tree))
    apply_patch(dest, str(metadata.get("test_patch", "") or ""), what="test patch")
    return dropped


def import_roots(metadata: Mapping[str, Any], tree: Path) -> list[str]:
    """The repo's own import roots (repos are tested in place, not installed)."""
    return [str(tree / p) for p in metadata.get("python_path", ["."])]


def pytest_env(metadata: Mapping[str, Any], tree: Path) -> dict[str, str]:
    """The environment of every interpreter an episode starts: the repo's import roots for
    the boot program (which puts them after the standard library), no user site-packages,
    HOME outside the tree, no bytecode, no pytest options or plugins from the environment."""
    return {"RLVR_IMPORT_ROOTS": os.pathsep.join(import_roots(metadata, tree)),
            "PYTHONPATH": "", "PYTHONNOUSERSITE": "1", "HOME": "/tmp",
            "PYTHONDONTWRITEBYTECODE": "1", "PYTEST_ADDOPTS": "", "PYTEST_PLUGINS": "",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


#: where pytest would find a project's configuration, in its own order of precedence, and the
#: text that makes the file count (None: the file counts whatever it holds)
CONFIG_FILES = (("pytest.toml", None), (".pytest.toml", None), ("pytest.ini", None),
                (".pytest.ini", None), ("pyproject.toml", "[tool.pytest"),
                ("tox.ini", "[pytest]"), ("setup.cfg", "[tool:pytest]"))


def project_config(base_tree: Path) -> str | None:
    """The base tree's own pytest configuration file (relative name), or None."""
    for name, marker in CONFIG_FILES:
        path = base_tree / name
        if path.is_file() and not path.is_symlink() and (
                marker is None or marker in path.read_text(encoding="utf-8", errors="replace")):
            return name
    return None


def pytest_command(sandbox: Sandbox, tree: Path, config: str | None, args: Sequence[str]
                   ) -> list[str]:
    """The argv of a test run: user site off, the boot program, the project's configuration
    named explicitly (a config file the agent adds, whatever its name, is never read), the
    root and the conftest boundary fixed at the tree."""
    return [getattr(sandbox, "python", "python3"), "-s", "-c", PYTEST_BOOT, "-q",
            "-p", "no:cacheprovider", "-c", str(tree / config) if config else os.devnull,
            "--rootdir", str(tree), "--confcutdir", str(tree), *args]


def run_pytest(sandbox: Sandbox, tree: Path, args: Sequence[str], metadata: Mapping[str, Any], *,
               timeout: float, config_from: Path | None = None, memory_mb: int = 2048,
               extra_env: Mapping[str, str] | None = None,
               max_output_bytes: int = 4_000_000) -> tuple[StreamReport, Any]:
    """Run pytest on `args` in `tree` inside `sandbox`; return the report stream (see
    `rlvr_envs.verify.repo`) and the sandbox's RunResult (pytest's own output on stderr).
    The configuration is the one `config_from` (default: `tree`) has, read from `tree`."""
    from rlvr_envs.sandbox.base import Limits

    key = secrets.token_bytes(32)
    env = {**pytest_env(metadata, tree), **(extra_env or {})}
    config = project_config(config_from or tree)
    result = sandbox.run(pytest_command(sandbox, tree, config, args), workdir=tree, env=env,
                         stdin=key.hex() + "\n",
                         limits=Limits(wall_time=timeout, memory_mb=memory_mb,
                                       max_processes=64, max_output_bytes=max_output_bytes))
    report = read_stream(result.stdout, key)
    if result.truncated and report.problem is None:
        report.problem = "report_truncated"
    return report, result


#: what a graded run may add to its tree on the host's disk (the library's code runs there)
GRADING_DISK_BUDGET_MB = 1024


def run_tests(sandbox: Sandbox, tree: Path, test_ids: Sequence[str],
              metadata: Mapping[str, Any], *, timeout: float,
              config_from: Path | None = None,
              disk_budget_mb: int = GRADING_DISK_BUDGET_MB) -> tuple[RunVerdict, Any]:
    """Run exactly `test_ids`; the verdict comes from the plugin's report and the real exit
    status, never from printed output. A run that adds more than `disk_budget_mb` to its tree
    is killed (`DiskWatch`) and scores `workspace_too_large`."""
    token = secrets.token_hex(12)
    start, _ = workspace_usage(tree, 1 << 62)
    watch = DiskWatch(tree, start + (disk_budget_mb << 20), lambda: kill_tagged(token, tree))
    with watch:
        report, result = run_pytest(sandbox, tree, test_ids, metadata, timeout=timeout,
                                    config_from=config_from, extra_env={"RLVR_EPISODE": token})
    if watch.exceeded:
        return RunVerdict(reason="workspace_too_large"), result
    return verdict_of(report, result.exit_code, test_ids, timed_out=result.timed_out), result


def grade_changes(sandbox: Sandbox, base_tree: Path, changes: Changes,
                  metadata: Mapping[str, Any], *, timeout: float | None = None,
                  partial_credit: bool = False,
                  strict_diff: bool = True, scratch: Path | None = None
                  ) -> tuple[Score, GradeRun]:
    """Grade the agent's `changes` to the task whose base tree is `base_tree`. With
    `strict_diff`, a change the diff monitor flags scores 0 (the flags are in
    `details["hacking"]` either way)."""
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
        graded = [rel for rel in changes.written if rel not in set(dropped)]
        flags = [f.as_dict() for f in flag_changes(
            changes.written, {rel: read_entry(base_tree / rel) or b"" for rel in graded
                              if (base_tree / rel).is_file()}, graded)]
        if flags and strict_diff:
            verdict = RunVerdict(reason="hacking_flagged")
            score = score_from_verdict(verdict, metadata, dropped=dropped)
            score.details["hacking"] = flags
            return score, GradeRun(verdict, agent_patch, dropped, "", 0.0, "none")
        before = protected_state(tree, protected_files(metadata))
        verdict, result = run_tests(sandbox, tree, required, metadata, timeout=timeout,
                                    config_from=base_tree)
        tampered = changed_paths(tree, before)
        if tampered:  # the run rewrote, replaced or moved a test file, conftest or config
            verdict.reason = "tampered_tree"
    finally:
        remove_tree(parent)
    score = score_from_verdict(verdict, metadata, partial_credit=partial_credit,
                               dropped=dropped)
    score.details["hacking"] = flags
    score.details["tampered_paths"] = tampered[:20]
    return score, GradeRun(verdict, agent_patch, dropped, result.stderr[-4000:],
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
