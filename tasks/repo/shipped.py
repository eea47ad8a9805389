"""Building the tasks shipped in `tasks/repo/data/` from the hand-written mini repositories.

Each mini repository (tasks/repo/minirepos/<name>/) is packed once as a snapshot; each bug
of `minirepos/bugs.json` becomes one task through `builder.build_task` (tests run for real
to find FAIL_TO_PASS / PASS_TO_PASS, history safety audited).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from rlvr_envs.tasks.repo.builder import build_task, count_source_files, run_suite_on_copy
from rlvr_envs.tasks.repo.records import write_tasks
from rlvr_envs.tasks.repo.snapshot import SHIPPED_DIR, materialise_snapshot, pack_tree
from rlvr_envs.tasks.repo.workspace import diff_trees

from rlvr_envs.core.task import Task

if TYPE_CHECKING:
    from rlvr_envs.sandbox.base import Sandbox

MINIREPOS = Path(__file__).resolve().parent / "minirepos"


def bug_patch(pristine: Path, file: str, find: str, replace: str) -> str:
    """The patch that injects a find → replace bug into `file` of `pristine`."""
    text = (pristine / file).read_text(encoding="utf-8")
    if text.count(find) != 1:
        raise ValueError(f"bug for {file}: the text to replace occurs {text.count(find)} times "
                         f"(must be exactly once): {find!r}")
    with tempfile.TemporaryDirectory(prefix="rlvr-bug-") as scratch:
        buggy = Path(scratch) / "tree"
        shutil.copytree(pristine, buggy, symlinks=True)
        (buggy / file).write_text(text.replace(find, replace), encoding="utf-8")
        return diff_trees(pristine, buggy)


def build_mini_tasks(sandbox: Sandbox, *, out_dir: Path = SHIPPED_DIR,
                     location_prefix: str = "shipped",
                     progress: Callable[[str], None] = lambda _: None) -> list[Task]:
    """Pack every mini repository and build one task per bug; write `tasks/mini.jsonl`."""
    bugs: list[dict[str, Any]] = json.loads((MINIREPOS / "bugs.json").read_text())
    tasks: list[Task] = []
    with tempfile.TemporaryDirectory(prefix="rlvr-mini-") as scratch:
        prepared: dict[str, tuple[Path, Any, str]] = {}
        for bug in bugs:
            repo = bug["repo"]
            if repo not in prepared:
                name = f"mini-{repo}.tar.gz"
                pack_tree(MINIREPOS / repo, out_dir / "snapshots" / name)
                location = f"{location_prefix}:{name}"
                pristine = Path(scratch) / repo
                pristine.mkdir()
                # build from the packed snapshot so hashes match what reset extracts
                materialise_snapshot(str(out_dir / "snapshots" / name), pristine)
                run = run_suite_on_copy(sandbox, pristine, {}, timeout=120)
                prepared[repo] = (pristine, run, location)
            pristine, run, location = prepared[repo]
            progress(f"{bug['id']}: building")
            task = build_task(
                sandbox=sandbox, pristine=pristine, pristine_run=run,
                setup_patch=bug_patch(pristine, bug["file"], bug["find"], bug["replace"]),
                statement=bug["statement"], repo=repo, snapshot=location, source="repo-mini",
                source_id=bug["id"], timeout=120,
                metadata={"mutation": {"operator": bug["operator"], "file": bug["file"]},
                          "license": "Apache-2.0", "test_timeout": 120,
                          "repo_py_files": count_source_files(pristine)})
            tasks.append(task)
    write_tasks(out_dir / "tasks" / "mini.jsonl", tasks)
    return tasks
