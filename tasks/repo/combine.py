"""Multi-hunk and multi-file bugs: 2–3 verified single bugs of one package applied together
(SWE-smith's "combine" idea).

Parts are drawn from the package's kept single-mutation tasks so that their FAIL_TO_PASS sets
are disjoint (each part breaks different tests) and their edits sit in different places
(different files, or hunks at least a few lines apart). The combined setup patch goes through
the same validation as any task (`builder.build_task`): the whole suite on the buggy tree,
grading by node id on the gold tree, the workspace's history audit. The combined task is kept
only if tests of every part still fail, so every hunk of the fix is needed.
"""

from __future__ import annotations

import hashlib
import random
import shutil
import tempfile
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from rlvr_envs.tasks.repo.builder import TaskRejected, build_task
from rlvr_envs.tasks.repo.journal import BuildJournal
from rlvr_envs.tasks.repo.snapshot import apply_patch, cache_dir, materialise_snapshot
from rlvr_envs.tasks.repo.statements import issue_statement
from rlvr_envs.tasks.repo.workspace import diff_trees

from rlvr_envs.core.task import Task

if TYPE_CHECKING:
    from rlvr_envs.sandbox.base import Sandbox

#: hunks in the same file closer than this (lines) are not combined (they read as one edit)
MIN_LINE_GAP = 5


def _compatible(parts: tuple[Task, ...]) -> bool:
    f2p_sets = [set(t.metadata["FAIL_TO_PASS"]) for t in parts]
    if any(a & b for a, b in combinations(f2p_sets, 2)):
        return False
    for a, b in combinations(parts, 2):
        ma, mb = a.metadata.get("mutation") or {}, b.metadata.get("mutation") or {}
        if "line" not in ma or "line" not in mb or ma.get("operator") == "combined":
            return False
        if ma["file"] == mb["file"] and abs(ma["line"] - mb["line"]) < MIN_LINE_GAP:
            return False
    return True


def pick_combinations(singles: list[Task], k: int, rng: random.Random) -> list[tuple[Task, ...]]:
    """Up to `k` compatible groups of 2 or 3 tasks, multi-file groups first."""
    pool = [t for t in singles if (t.metadata.get("mutation") or {}).get("operator")
            not in (None, "combined", "removed_body")]
    groups = [g for size in (2, 3) for g in combinations(pool, size) if _compatible(g)]
    rng.shuffle(groups)
    groups.sort(key=lambda g: -len({t.metadata["mutation"]["file"] for t in g}))
    picked, used = [], set()
    for group in groups:
        ids = {t.source_id for t in group}
        if ids & used and len(groups) > 2 * k:
            continue  # spread the parts over many groups while there is choice
        picked.append(group)
        used |= ids
        if len(picked) >= k:
            break
    return picked


def combined_id(package: str, version: str, parts: tuple[Task, ...]) -> str:
    digest = hashlib.sha256("|".join(sorted(t.source_id for t in parts)).encode()).hexdigest()
    return f"{package}-{version}/combined/{digest[:12]}"


def build_combined_tasks(report, sandbox: Sandbox, *, out_dir: Path | None = None,
                         max_tasks: int = 4, seed: int = 0,
                         progress: Callable[[str], None] = lambda _: None):
    """Combined tasks from `report.kept` (a `SynthesisReport` of one package); returns a
    report of the same shape with only the combined tasks (journaled like singles)."""
    from rlvr_envs.tasks.repo.synth import SynthesisReport

    out_dir = out_dir or cache_dir()
    singles = [t for t in report.kept
               if (t.metadata.get("mutation") or {}).get("operator") != "combined"]
    out = SynthesisReport(report.package, report.version, report.tests_passing)
    if len(singles) < 2:
        return out
    journal = BuildJournal(out_dir, report.package, report.version)
    done = [t for t in journal.kept_tasks()
            if (t.metadata.get("mutation") or {}).get("operator") == "combined"]
    pristine_run = journal.pristine_run()
    if pristine_run is None:
        raise ValueError(f"{report.package} {report.version}: no pristine run in the journal; "
                         f"build the single-bug tasks first")
    first = singles[0].metadata
    rng = random.Random(f"{report.package}-{report.version}-combine-{seed}")
    with tempfile.TemporaryDirectory(prefix="rlvr-combine-") as scratch_name:
        scratch = Path(scratch_name)
        pristine = scratch / "pristine"
        pristine.mkdir()
        materialise_snapshot(str(report.snapshot_file or first["snapshot"]), pristine)
        for parts in pick_combinations(singles, 3 * max_tasks, rng):
            if len(done) + out.new >= max_tasks:
                break
            source_id = combined_id(report.package, report.version, parts)
            if journal.tried(source_id):
                continue
            out.tried += 1
            buggy = scratch / f"combined-{out.tried}"
            shutil.copytree(pristine, buggy, symlinks=True)
            try:
                for part in parts:
                    apply_patch(buggy, part.metadata["setup_patch"], what="part of a combined bug")
            except ValueError as err:
                journal.reject(source_id, f"the parts do not apply together: {err}")
                shutil.rmtree(buggy)
                continue
            setup_patch = diff_trees(pristine, buggy)
            shutil.rmtree(buggy)
            files = sorted({p.metadata["mutation"]["file"] for p in parts})
            try:
                task = build_task(
                    sandbox=sandbox, pristine=pristine, pristine_run=pristine_run,
                    setup_patch=setup_patch, statement=issue_statement(report.package),
                    repo=report.package, snapshot=first["snapshot"], source="repo-synth",
                    source_id=source_id, timeout=float(first.get("test_timeout", 300)),
                    p2p_scope="files",
                    metadata={k: first[k] for k in ("python_path", "test_timeout", "test_args",
                                                    "license", "version", "repo_py_files")
                              if k in first}
                    | {"mutation": {"operator": "combined", "file": files[0], "files": files,
                                    "parts": [p.source_id for p in parts]}})
                f2p = set(task.metadata["FAIL_TO_PASS"])
                silent = [p.source_id for p in parts if not f2p & set(p.metadata["FAIL_TO_PASS"])]
                if silent:
                    raise TaskRejected(f"parts {silent} break no test once combined")
            except TaskRejected as err:
                journal.reject(source_id, str(err))
                progress(f"  rejected {source_id}: {err}")
                continue
            journal.keep(task)
            out.kept.append(task)
            out.new += 1
            progress(f"  kept {source_id}: {len(parts)} parts in {len(files)} file(s), "
                     f"{len(task.metadata['FAIL_TO_PASS'])} failing tests")
    return out
