"""Task packs at scale: the resumable build journal, combined bugs, issue-style statements,
packs with splits by repository, filters, and carrying tasks into another environment —
on the intervals mini repository packed as a fake sdist (nothing is downloaded)."""

import gzip
import json

import pytest
from rlvr_envs.tasks.repo.agents import GoldPatchAgent, NullAgent
from rlvr_envs.tasks.repo.mutate import find_mutations
from rlvr_envs.tasks.repo.statements import describe_failure, render_statement

from rlvr_envs.core.multiturn import run_episode

from repo_helpers import fake_sdist


@pytest.fixture(scope="module")
def built(tmp_path_factory, repo_sandbox):
    """Single and combined tasks of `intervals`, built once for the module."""
    from rlvr_envs.tasks.repo.combine import build_combined_tasks
    from rlvr_envs.tasks.repo.synth import build_package_tasks

    tmp = tmp_path_factory.mktemp("pack")
    out = tmp / "build" / "repo"
    sdist = fake_sdist(tmp)
    report = build_package_tasks("intervals", repo_sandbox, max_tasks=3, max_tries=10,
                                 sdist=sdist, out_dir=out)
    combined = build_combined_tasks(report, repo_sandbox, out_dir=out, max_tasks=1)
    return tmp, out, sdist, report, combined


def test_removed_branch_and_body_operators():
    source = ("def f(x):\n    \"\"\"Doc.\"\"\"\n    if x < 0:\n        return -x\n"
              "    y = x * 2\n    return y\n")
    found = {m.operator: m for m in find_mutations(source, "m.py")}
    branch = found["removed_branch"].apply(source)
    assert "if x < 0" not in branch and "y = x * 2" in branch
    body = found["removed_body"].apply(source)
    assert body == 'def f(x):\n    """Doc."""\n    raise NotImplementedError\n'
    gen = "def g(n):\n    for i in range(n):\n        yield i\n    return None\n"
    assert "removed_body" not in {m.operator for m in find_mutations(gen, "g.py")}


def test_issue_statement_says_what_was_called_and_expected():
    text = describe_failure("assert camelize('a_b') == 'AB'",
                            "AssertionError: assert 'Ab' == 'AB'\n  - AB\n  + Ab")
    assert text == "`camelize('a_b')` returns `'Ab'`, but `'AB'` is expected."
    swapped = describe_failure("assert expected == f(x)", "AssertionError: assert 3 == 4")
    assert swapped.startswith("`f(x)` returns `4`, but `3`")
    raised = describe_failure("merge([1], [2])", "TypeError: unsupported operand")
    assert raised == "`merge([1], [2])` raises `TypeError: unsupported operand`."
    failures = [{"test": "t.py::a", "source": "merge([1], [2])", "message": "TypeError: x"}]
    issue = render_statement("pkg", failures, ["t.py::a", "t.py::b"], "issue")
    assert "`t.py::a`" in issue and "2 failing tests" in issue and "raises" in issue
    tests = render_statement("pkg", failures, ["t.py::a", "t.py::b"], "tests")
    assert "- t.py::a\n  TypeError: x" in tests and "and 1 more" in tests
    with pytest.raises(ValueError, match="statement style"):
        render_statement("pkg", failures, ["t.py::a"], "poem")


@pytest.mark.slow
def test_build_is_resumable(built, repo_sandbox):
    from rlvr_envs.tasks.repo.synth import build_package_tasks

    _, out, sdist, report, combined = built
    assert report.new == len(report.kept) >= 2
    lines = (out / "tasks" / "intervals.jsonl").read_text().splitlines()
    assert len(lines) == len(report.kept) + len(combined.kept)
    again = build_package_tasks("intervals", repo_sandbox, max_tasks=3, max_tries=10,
                                sdist=sdist, out_dir=out)
    assert again.new == 0 and again.tried == 0  # every mutant is in the journal
    assert [t.source_id for t in again.kept[:len(report.kept)]] == \
        [t.source_id for t in report.kept]
    # a build interrupted after some tasks keeps them: drop the journal's last task and resume
    (out / "tasks" / "intervals.jsonl").write_text("\n".join(lines[:1]) + "\n")
    resumed = build_package_tasks("intervals", repo_sandbox, max_tasks=2, max_tries=10,
                                  sdist=sdist, out_dir=out)
    assert resumed.kept[0].source_id == report.kept[0].source_id and len(resumed.kept) == 2


@pytest.mark.slow
def test_pack_splits_by_repository_and_filters(built, tmp_path, repo_sandbox):
    from rlvr_envs.tasks.repo.env import RepoEditEnv
    from rlvr_envs.tasks.repo.pack import read_pack, write_pack
    from rlvr_envs.tasks.repo.records import load_repo_tasks, read_tasks

    _, out, _, _, _ = built
    tasks = read_tasks(out / "tasks" / "intervals.jsonl")
    other = [t.__class__.from_dict(t.to_dict() | {"id": "", "metadata": t.metadata | {
        "repo": "intervals2"}}) for t in tasks[:2]]
    with pytest.raises(ValueError, match="held-out"):
        write_pack(tasks, tmp_path / "p", name="mine", held_out=["nope"], build_dir=out)
    manifest = write_pack(tasks + other, tmp_path / "p", name="mine",
                          held_out=["intervals2"], build_dir=out)
    assert manifest["tasks"] == len(tasks) + 2 and manifest["held_out"] == ["intervals2"]
    assert manifest["packages"]["intervals2"]["split"] == "test"
    assert len(list((tmp_path / "p" / "snapshots").iterdir())) == 1  # one shared snapshot
    with gzip.open(tmp_path / "p" / "tasks.jsonl.gz", "rt") as fh:
        assert all(json.loads(line)["metadata"]["snapshot"].startswith("pack:mine/")
                   for line in fh)
    loaded = read_pack(tmp_path / "p")
    assert {t.split for t in loaded if t.metadata["repo"] == "intervals2"} == {"test"}
    assert {t.split for t in loaded if t.metadata["repo"] == "intervals"} <= {"train",
                                                                             "validation"}
    test_split = load_repo_tasks(tmp_path / "p", split="test")
    assert {t.metadata["repo"] for t in test_split} == {"intervals2"}
    assert len(load_repo_tasks(tmp_path / "p", repos=["intervals"])) == len(tasks)
    with pytest.raises(ValueError, match="split must be"):
        load_repo_tasks(tmp_path / "p", split="dev")
    styled = load_repo_tasks(tmp_path / "p", statement="tests", split="test")
    assert all("part of its test suite fails" in t.prompt for t in styled)
    assert [t.id for t in styled] == [t.id for t in test_split]  # ids survive the style
    env = RepoEditEnv(str(tmp_path / "p"), sandbox=repo_sandbox, split="test")
    try:
        task = env.source[0]
        assert run_episode(env, GoldPatchAgent(), task=task).reward == 1.0
        assert run_episode(env, NullAgent(), task=task).reward == 0.0
    finally:
        env.close()


@pytest.mark.slow
def test_restricting_to_an_environment_drops_tests_that_do_not_pass_there(built):
    from rlvr_envs.tasks.repo.reconcile import restrict_task

    task = built[3].kept[0]
    f2p, p2p = task.metadata["FAIL_TO_PASS"], task.metadata["PASS_TO_PASS"]
    assert restrict_task(task, set(f2p) | set(p2p)) is task  # no test inside a fixed file
    assert restrict_task(task, set(p2p)) is None  # no FAIL_TO_PASS left
    cut = restrict_task(task, set(f2p) | set(p2p[1:]))
    assert cut.metadata["PASS_TO_PASS"] == p2p[1:] and cut.metadata["FAIL_TO_PASS"] == f2p


@pytest.mark.slow
def test_tasks_list_counts_packages_and_levels(built, monkeypatch):
    from typer.testing import CliRunner
    from rlvr_envs.tasks.repo.cli import app

    _, out, _, _, _ = built
    result = CliRunner().invoke(app, ["list", "--tasks", str(out / "tasks" / "intervals.jsonl")],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "intervals" in result.output and "level 1" in result.output


def test_combinations_need_disjoint_failures_and_separate_hunks():
    import random

    from rlvr_envs.tasks.repo.combine import pick_combinations

    from rlvr_envs.core.task import Task

    def single(name, file, line, f2p):
        return Task(prompt=name, answer="", family="repo", source_id=name, metadata={
            "FAIL_TO_PASS": f2p, "mutation": {"operator": "off_by_one", "file": file,
                                              "line": line}})

    a = single("a", "x.py", 10, ["t::1"])
    b = single("b", "x.py", 12, ["t::2"])   # too close to a
    c = single("c", "y.py", 12, ["t::1"])   # breaks the same test as a
    d = single("d", "y.py", 40, ["t::3"])
    groups = {tuple(t.source_id for t in g) for g in pick_combinations([a, b, c, d], 10,
                                                                       random.Random(0))}
    assert groups == {("a", "d"), ("b", "c"), ("b", "d"), ("c", "d"), ("b", "c", "d")}


@pytest.mark.slow
def test_update_pack_drops_tasks_and_stores_pass_rates(built, tmp_path):
    from rlvr_envs.tasks.repo.pack import read_pack, update_pack, write_pack
    from rlvr_envs.tasks.repo.records import read_tasks

    _, out, _, _, _ = built
    tasks = read_tasks(out / "tasks" / "intervals.jsonl")  # the journal's, 2 or more
    assert len(tasks) >= 2
    root = tmp_path / "p"
    write_pack(tasks, root, name="mine", build_dir=out)
    (root / "audit.json").write_text("{}")
    before = {t.id: t.split for t in read_pack(root)}
    manifest = update_pack(root, drop=[tasks[0].source_id], pass_rates={tasks[1].id: 0.5},
                           pass_rate_source="revert-search k=1")
    after = read_pack(root)
    assert manifest["tasks"] == len(after) == len(tasks) - 1
    assert tasks[0].id not in {t.id for t in after}
    assert {t.id: t.split for t in after} == {k: v for k, v in before.items()
                                              if k != tasks[0].id}  # ids, splits kept
    rates = {t.id: t.difficulty.pass_rate for t in after}
    assert rates == {t.id: 0.5 if t.id == tasks[1].id else None for t in tasks[1:]}
    assert manifest["pass_rates"] == {"tasks": 1, "measured_by": "revert-search k=1"}
    assert (root / "audit.json").read_text() == "{}" and not (tmp_path / "p.tmp").exists()


def test_shipped_pack_counts_licences_and_held_out_split():
    import tarfile

    from rlvr_envs.tasks.repo.pack import PACKS_DIR, pack_manifest, read_pack
    from rlvr_envs.tasks.repo.synth import LICENSE_NAMES

    manifest = pack_manifest("pypi")
    tasks = read_pack("pypi")
    assert manifest["tasks"] == len(tasks) == 302  # 313 built, 11 failed the Docker audit
    assert sum(t.split == "test" for t in tasks) == 55
    # measured pass rates (revert-search, k=1) on every task; they fall with the level
    assert all(t.difficulty.pass_rate in (0.0, 1.0) for t in tasks)
    assert manifest["pass_rates"] == {"measured_by": "revert-search k=1", "tasks": len(tasks)}
    rate = {level: sum(t.difficulty.pass_rate for t in tasks if t.difficulty.level == level)
            / sum(t.difficulty.level == level for t in tasks) for level in (1, 2, 3)}
    assert rate[1] > rate[2] > rate[3] > 0
    packages = manifest["packages"]
    assert len(packages) >= 15
    held_out = set(manifest["held_out"])
    assert held_out and held_out < set(packages)
    by_split = {}
    for task in tasks:
        by_split.setdefault(task.split, set()).add(task.metadata["repo"])
    assert by_split["test"] == held_out  # whole packages, never seen in train/validation
    assert not (by_split["train"] | by_split["validation"]) & held_out
    assert {t.difficulty.level for t in tasks} == {1, 2, 3}
    operators = {(t.metadata.get("mutation") or {}).get("operator") for t in tasks}
    assert {"combined", "removed_body", "removed_branch"} <= operators
    snapshots = {t.metadata["snapshot"] for t in tasks}
    assert len(snapshots) == len(packages)  # one snapshot per package version, shared
    for name, entry in packages.items():
        with tarfile.open(PACKS_DIR / "pypi" / "snapshots" / entry["snapshot"]) as tar:
            assert any(LICENSE_NAMES.match(n) for n in tar.getnames()), name
        assert entry["license"].split(" ")[0] in ("MIT", "BSD", "BSD-3-Clause", "Apache-2.0")
    for task in tasks:
        meta = task.metadata
        assert meta["FAIL_TO_PASS"] and meta["num_failing"] == len(meta["FAIL_TO_PASS"])
        # never where the bug is, never the fix
        assert f"{meta['mutation']['file']}:{meta['mutation'].get('line')}" not in task.prompt
        fix = [line[1:].strip() for line in task.answer.splitlines()
               if line.startswith("+") and not line.startswith("+++")]
        assert not [line for line in fix if len(line) > 12 and line in task.prompt], \
            task.source_id


def test_shipped_pack_audit_report_covers_every_task():
    """The pack's audit report (rlvr tasks audit-repo --full): every task of the pack passed
    every check on Docker and on bubblewrap; the tasks that failed are no longer in the
    pack."""
    import json

    from rlvr_envs.tasks.repo.audit import FULL_CHECKS
    from rlvr_envs.tasks.repo.pack import PACKS_DIR, read_pack

    report = json.loads((PACKS_DIR / "pypi" / "audit.json").read_text())
    assert report["checks"] == list(FULL_CHECKS)
    ids = {t.source_id for t in read_pack("pypi")}
    for backend, entry in report["backends"].items():
        rows, summary = entry["tasks"], entry["summary"]
        assert summary["tasks"] == len(rows) and summary["passed"] + len(summary["failed"]) \
            == len(rows)
        assert not set(summary["failed"]) & ids, backend  # failures were dropped
        assert all(rows[t]["ok"] and all(rows[t]["checks"].values()) for t in ids & set(rows))
    for backend in ("docker", "bwrap"):  # each backend audited them all
        assert ids <= set(report["backends"][backend]["tasks"]), backend


@pytest.mark.slow
def test_shipped_pack_sample_passes_the_audit(repo_sandbox):
    """One task per split of the shipped pack: null scores 0, gold 1 (CI's sample; the whole
    pack is audited at build time)."""
    from rlvr_envs.tasks.repo.env import RepoEditEnv

    env = RepoEditEnv("pack:pypi", sandbox=repo_sandbox)
    try:
        for split in ("train", "validation", "test"):
            task = next(t for t in env.source if t.split == split)
            assert run_episode(env, NullAgent(), task=task).reward == 0.0, task.source_id
            assert run_episode(env, GoldPatchAgent(), task=task).reward == 1.0, task.source_id
    finally:
        env.close()


@pytest.mark.slow
def test_package_environment_pins_interpreter_and_pytest(monkeypatch, tmp_path):
    """bubblewrap runs Debian's /usr/bin/python3 with the environment's pytest (the Docker
    image gets the same directory); an environment under /tmp is refused."""
    import importlib.metadata
    import shutil
    import tempfile
    from pathlib import Path

    from rlvr_envs.sandbox.bwrap import bwrap_problem
    from rlvr_envs.tasks.repo.environments import (SYSTEM_PYTHON, PackageEnvironmentError,
                                                   build_environment, env_root,
                                                   package_sandbox)

    monkeypatch.setenv("RLVR_ENV_DIR", str(tmp_path / "envs"))
    with pytest.raises(PackageEnvironmentError, match="/tmp"):
        env_root()
    if bwrap_problem() is not None or not Path(SYSTEM_PYTHON).is_file():
        pytest.skip("needs bubblewrap and the system interpreter")
    home = Path.home() / ".cache"
    home.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="rlvr-test-envs-", dir=home))
    try:
        monkeypatch.setenv("RLVR_ENV_DIR", str(root))
        site, pins = build_environment("demo")
        assert f"pytest=={importlib.metadata.version('pytest')}" in pins
        box = package_sandbox("demo", "bwrap")
        try:
            run = box.run([box.python, "-s", "-c",
                           "import sys, pytest; print(sys.executable, pytest.__file__)"],
                          env={"PYTHONPATH": ""})
        finally:
            box.close()
        executable, pytest_file = run.stdout.split()
        assert executable == SYSTEM_PYTHON and pytest_file.startswith(str(site))
    finally:
        shutil.rmtree(root, ignore_errors=True)
