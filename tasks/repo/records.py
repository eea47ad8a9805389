"""Repo task records: the metadata a repo-editing task carries, its difficulty, and loading.

A repo task is a `Task` (family "repo") whose `prompt` is the problem statement and whose
`answer` is the gold patch. Its `metadata`:

    repo              name of the project ("toolz", "minicalc", "astropy/astropy")
    snapshot          where the pristine tree lives (see snapshot.py: shipped:, cache:, git:, path)
    base_commit       the source repository's commit (git snapshots, SWE-bench); else None
    setup_patch       patch applied to the snapshot to make the base tree (an injected bug)
    workspace_commit  hash of the workspace's single commit (deterministic; checked at reset)
    fixed_blobs       git blob ids of the fixed files: must not exist in the workspace's .git
    gold_patch        the fix (same as `answer`)
    test_patch        tests added at grading time and hidden from the agent (SWE-bench)
    FAIL_TO_PASS      test ids failing at base and passing with the gold patch
    PASS_TO_PASS      test ids passing at both
    visible_tests     test ids/files the agent's `run_tests` tool runs
    python_path       import roots relative to the repo (default ["."])
    test_timeout      seconds for a graded run
    gold_files, gold_lines, num_failing, repo_py_files   difficulty figures
    mutation          for synthesised tasks: operator, file, line
    license           the project's licence (synthesised and imported tasks)
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterable, Sequence

from rlvr_envs.tasks.repo.snapshot import SHIPPED_DIR, cache_dir

from rlvr_envs.core.sources import TaskList
from rlvr_envs.core.task import Difficulty, Task

FAMILY = "repo"
REQUIRED_METADATA = ("repo", "snapshot", "gold_patch", "FAIL_TO_PASS", "PASS_TO_PASS")


def patch_stats(patch: str) -> tuple[list[str], int]:
    """(files touched, lines added + removed) of a unified diff."""
    files: list[str] = []
    lines = 0
    for line in patch.splitlines():
        if line.startswith("+++ ") or line.startswith("--- "):
            path = line[4:].strip()
            if path != "/dev/null":
                path = re.sub(r"^[ab]/", "", path)
                if path not in files:
                    files.append(path)
        elif line.startswith(("+", "-")):
            lines += 1
    return files, lines


def difficulty_level(gold_lines: int, gold_files: int, num_failing: int, repo_py_files: int,
                     operator: str | None = None) -> int:
    """1..3: bigger fixes, several files, bigger repos and subtler mutations are harder; many
    failing tests make a bug easier to locate."""
    score = 0
    score += gold_lines > 2
    score += gold_files > 1
    score += repo_py_files > 8
    score += operator in ("dropped_statement", "wrong_default", "swapped_arguments",
                          "removed_branch", "removed_body", "combined")
    score -= num_failing >= 5
    return max(1, min(3, 1 + score))


def make_repo_task(*, statement: str, repo: str, snapshot: str, gold_patch: str,
                   fail_to_pass: Sequence[str], pass_to_pass: Sequence[str],
                   source: str, source_id: str, split: str = "test",
                   level: int | None = None, **metadata: Any) -> Task:
    """A repo Task with its difficulty figures filled in from the gold patch."""
    if not fail_to_pass:
        raise ValueError(f"{source_id}: a repo task needs at least one FAIL_TO_PASS test")
    files, lines = patch_stats(gold_patch)
    meta = {"repo": repo, "snapshot": snapshot, "base_commit": None, "setup_patch": "",
            "gold_patch": gold_patch, "test_patch": "", "FAIL_TO_PASS": list(fail_to_pass),
            "PASS_TO_PASS": list(pass_to_pass), "python_path": ["."], "test_timeout": 300,
            "gold_files": files, "gold_lines": lines, "num_failing": len(fail_to_pass)}
    meta.update(metadata)
    meta.setdefault("visible_tests", sorted({t.split("::")[0] for t in fail_to_pass}))
    if level is None:
        level = difficulty_level(lines, len(files), len(fail_to_pass),
                                 int(meta.get("repo_py_files", 0)),
                                 (meta.get("mutation") or {}).get("operator"))
    return Task(prompt=statement, answer=gold_patch, family=FAMILY, source=source,
                source_id=source_id, difficulty=Difficulty(level), split=split, metadata=meta)


def check_repo_task(task: Task) -> Task:
    if task.family != FAMILY:
        raise ValueError(f"task {task.source_id or task.id} is family {task.family!r}, not 'repo'")
    missing = [k for k in REQUIRED_METADATA if k not in task.metadata]
    if missing:
        raise ValueError(f"repo task {task.source_id or task.id} lacks metadata {missing}; "
                         f"a repo task needs {list(REQUIRED_METADATA)}")
    if not task.metadata["FAIL_TO_PASS"]:
        raise ValueError(f"repo task {task.source_id or task.id} has no FAIL_TO_PASS tests")
    return task


def read_tasks(path: Path) -> list[Task]:
    """Tasks from a JSONL file of `Task.to_dict()` records."""
    tasks = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if line.strip():
                try:
                    tasks.append(check_repo_task(Task.from_dict(json.loads(line))))
                except (ValueError, TypeError) as err:
                    raise ValueError(f"{path}:{n}: bad repo task record: {err}") from err
    return tasks


def write_tasks(path: Path, tasks: Iterable[Task]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for task in tasks:
            fh.write(json.dumps(task.to_dict(), sort_keys=True) + "\n")


SHIPPED_TASKS = SHIPPED_DIR / "tasks"


def cached_task_files() -> list[Path]:
    return sorted((cache_dir() / "tasks").glob("*.jsonl"))


def load_repo_tasks(tasks: str | Path | Sequence[Task] | None = "shipped", *,
                    levels: Sequence[int] | None = None, repos: Sequence[str] | None = None,
                    split: str | Sequence[str] | None = None, statement: str | None = None
                    ) -> TaskList:
    """The task list an env serves, optionally filtered by level, repo and split.

    `tasks`: "default" (the default pack, else "shipped"), "shipped" (the curated tasks of tasks/repo/data/tasks), "pack:NAME" (a shipped
    pack; "pack" alone is the default pack), "cache" (built by `rlvr tasks build-repo`),
    "all" (all of these), a pack directory, a JSONL path, or a list of Tasks. `statement`
    ("issue" | "tests") re-renders the statements of tasks that recorded their failures."""
    from rlvr_envs.tasks.repo.pack import DEFAULT_PACK, SPLITS, read_pack, shipped_packs

    if tasks == "default":  # the shipped pack when there is one, else the curated tasks
        tasks = f"pack:{DEFAULT_PACK}" if DEFAULT_PACK in shipped_packs() else "shipped"
    if tasks is None or isinstance(tasks, (str, Path)):
        which = str(tasks or "shipped")
        loaded: list[Task] = []
        if which in ("shipped", "all"):
            for path in sorted(SHIPPED_TASKS.glob("*.jsonl")):
                loaded += read_tasks(path)
        if which == "all":
            for pack in shipped_packs():
                loaded += read_pack(pack)
        if which in ("cache", "all"):
            for path in cached_task_files():
                loaded += read_tasks(path)
        if which == "pack" or which.startswith("pack:"):
            name = which.partition(":")[2] or DEFAULT_PACK
            loaded, name = read_pack(name), f"repo-pack-{name}"
        elif Path(which).is_dir():
            loaded, name = read_pack(Path(which)), Path(which).name
        elif which not in ("shipped", "cache", "all"):
            loaded, name = read_tasks(Path(which)), Path(which).stem
        else:
            name = f"repo-{which}"
    else:
        loaded, name = [check_repo_task(t) for t in tasks], "repo-custom"
    if levels is not None:
        loaded = [t for t in loaded if t.difficulty.level in set(levels)]
    if repos is not None:
        repos = [repos] if isinstance(repos, str) else repos
        loaded = [t for t in loaded if t.metadata["repo"] in set(repos)]
    if split is not None:
        splits = [split] if isinstance(split, str) else list(split)
        bad = [s for s in splits if s not in SPLITS]
        if bad:
            raise ValueError(f"split must be among {SPLITS}, got {bad}")
        loaded = [t for t in loaded if t.split in splits]
    if statement is not None:
        from dataclasses import replace

        from rlvr_envs.tasks.repo.statements import task_statement
        loaded = [replace(t, prompt=task_statement(t, statement)) for t in loaded]
    if not loaded:
        raise ValueError(f"no repo tasks left from {tasks!r} (levels={levels}, repos={repos}, "
                         f"split={split}); build some with `rlvr tasks build-repo --package "
                         f"NAME`")
    return TaskList(loaded, family=FAMILY, name=name)
