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
