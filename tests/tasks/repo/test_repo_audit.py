"""The CI audit of every shipped task, through the env's tools: the null agent (submit at
once) scores 0 and the gold-patch agent scores 1 — on the local backend, bubblewrap (when
it works here) and Docker."""

import pytest
from rlvr_envs.tasks.repo.audit import audit_env
from rlvr_envs.tasks.repo.env import RepoEditEnv


def _audit(sandbox):
    env = RepoEditEnv("shipped", sandbox=sandbox)
    try:
        rows = list(audit_env(env, workers=2))
    finally:
        env.close()
    assert len(rows) == len(env.source) >= 12
    failures = [f"{r.task}: {r.detail}" for r in rows if not r.ok]
    assert not failures, failures
    return rows


def test_shipped_tasks_cover_minirepos_and_synthesised_packages(shipped_tasks):
    sources = {t.source for t in shipped_tasks}
    assert sources == {"repo-mini", "repo-synth"}
    repos = {t.metadata["repo"] for t in shipped_tasks}
    assert {"minicalc", "intervals", "textstats", "inventory"} <= repos
    assert len(repos - {"minicalc", "intervals", "textstats", "inventory"}) >= 2
    for task in shipped_tasks:
        meta = task.metadata
        assert meta["FAIL_TO_PASS"] and meta["PASS_TO_PASS"] and meta["workspace_commit"]
        assert meta["gold_files"] and meta["gold_lines"] >= 1
        assert meta["num_failing"] == len(meta["FAIL_TO_PASS"])
        assert meta["license"]
        assert 1 <= task.difficulty.level <= 3
        # the statement never shows the fix
        removed = [line[1:].strip() for line in task.answer.splitlines()
                   if line.startswith("+") and not line.startswith("+++") and line[1:].strip()]
        for line in removed:
            assert line not in task.prompt, (task.source_id, line)


@pytest.mark.slow
def test_audit_local_backend(local_backend):
    """The local backend: bubblewrap when it works here, else plain processes."""
    _audit(local_backend)


@pytest.mark.slow
@pytest.mark.docker
def test_audit_docker(repo_docker_sandbox):
    rows = _audit(repo_docker_sandbox)
    assert rows


@pytest.mark.slow
def test_full_audit_checks_each_property_resumes_and_reports(repo_sandbox, tmp_path):
    """The pack's audit: a good task passes every check; a task whose FAIL_TO_PASS holds a
    test that already passes on the buggy tree fails `base_fails` (and only it); the journal
    makes a second run audit nothing; the report holds the rows and the summary."""
    import json

    from rlvr_envs.tasks.repo.audit import FULL_CHECKS, run_full_audit, write_report
    from rlvr_envs.tasks.repo.records import load_repo_tasks

    from rlvr_envs.core.task import Task

    good = load_repo_tasks("shipped", repos=["intervals"])[0]
    meta = dict(good.metadata)
    meta["FAIL_TO_PASS"] = [*meta["FAIL_TO_PASS"], meta["PASS_TO_PASS"][0]]
    meta["PASS_TO_PASS"] = meta["PASS_TO_PASS"][1:]
    meta["num_failing"] = len(meta["FAIL_TO_PASS"])
    bad = Task.from_dict(good.to_dict() | {"id": "", "source_id": good.source_id + "-bad",
                                           "metadata": meta})
    journal = tmp_path / "audit.jsonl"
    seen = []
    rows = run_full_audit([good, bad], journal, sandbox=repo_sandbox, package_env=False,
                          progress=seen.append)
    assert [r.task for r in seen] == [good.source_id, bad.source_id]
    assert rows[good.source_id]["ok"] and set(rows[good.source_id]["checks"]) == set(FULL_CHECKS)
    failed = {k for k, v in rows[bad.source_id]["checks"].items() if not v}
    assert failed == {"base_fails"} and "1 of" in rows[bad.source_id]["detail"]
    again = []
    run_full_audit([good, bad], journal, sandbox=repo_sandbox, package_env=False,
                   progress=again.append)
    assert again == [] and len(journal.read_text().splitlines()) == 2
    out = tmp_path / "report.json"
    write_report(out, {"bwrap": journal}, pack="test", command="rlvr ...", date="2026-12-03")
    write_report(out, {"docker": journal}, pack="test")  # another backend: both kept
    report = json.loads(out.read_text())
    assert set(report["backends"]) == {"bwrap", "docker"}
    summary = report["backends"]["bwrap"]["summary"]
    assert summary["tasks"] == 2 and summary["passed"] == 1
    assert summary["failed"] == [bad.source_id] and summary["failed_checks"]["base_fails"] == 1
    assert report["backends"]["bwrap"]["tasks"][good.source_id]["ok"] is True
