"""Scoring without stepping: a patch as the completion, the scorer from the registry, the CLI."""

import json

import pytest
from typer.testing import CliRunner

import rlvr_envs
from rlvr_envs.tasks.repo.scoring import RepoScorer


def test_scorer_grades_patches(repo_sandbox, calc_task):
    scorer = RepoScorer(repo_sandbox)
    gold = scorer.score(calc_task, scorer.gold_completion(calc_task))
    assert gold.reward == 1.0 and gold.correct and gold.breakdown == {"tests": 1.0}
    empty = scorer.score(calc_task, "")
    assert empty.reward == 0.0 and empty.verifier == "tests_failed"
    assert empty.details["fail_to_pass_passed"] == 0 and empty.details["fail_to_pass_total"] == 2
    junk = scorer.score(calc_task, "--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-x\n+y\n")
    assert junk.reward == 0.0 and junk.verifier == "patch_does_not_apply"


def test_scorer_for_the_env_id():
    scorer = rlvr_envs.scorer_for("rlvr/RepoEdit-v0", sandbox="local")
    assert isinstance(scorer, RepoScorer)


def test_cli_import_swebench_and_usage_errors(tmp_path):
    from rlvr_envs.cli import _attach_subcommands, app

    _attach_subcommands()
    runner = CliRunner()
    result = runner.invoke(app, ["tasks", "build-repo"])
    assert result.exit_code != 0 and "--package" in result.output
    records = tmp_path / "r.jsonl"
    records.write_text(json.dumps({"instance_id": "x"}) + "\n")
    result = runner.invoke(app, ["tasks", "import-swebench", str(records), "--repos",
                                 str(tmp_path), "--out", str(tmp_path / "o.jsonl")])
    assert result.exit_code != 0 and "missing" in str(result.exception)


def test_plain_processes_only_as_local_unsafe_with_a_warning():
    import pytest
    from rlvr_envs.sandbox.local import UnsafeSandboxWarning
    from rlvr_envs.tasks.repo.scoring import make_sandbox
    with pytest.warns(UnsafeSandboxWarning, match="host's files"):
        box = make_sandbox("local-unsafe")
    assert box.name == "local-unsafe"
    box.close()


def test_a_submitted_patch_cannot_write_outside_the_tree(repo_sandbox, calc_task, tmp_path):
    """git apply's path checks stay on: `../` paths and writes beyond a link are refused."""
    import tempfile
    from pathlib import Path
    scorer = RepoScorer(repo_sandbox)
    target = Path(tempfile.gettempdir()) / "rlvr-escape-canary.txt"
    target.unlink(missing_ok=True)
    escape = ("--- a/../../rlvr-escape-canary.txt\n+++ b/../../rlvr-escape-canary.txt\n"
              "@@ -0,0 +1 @@\n+pwned\n")
    through_link = (f"diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n"
                    f"@@ -0,0 +1 @@\n+{tmp_path}\n\\ No newline at end of file\n"
                    f"diff --git a/l/x b/l/x\nnew file mode 100644\n--- /dev/null\n+++ b/l/x\n"
                    f"@@ -0,0 +1 @@\n+pwned\n")
    for patch in (escape, through_link):
        score = scorer.score(calc_task, patch)
        assert score.reward == 0.0 and score.verifier == "patch_does_not_apply"
    assert not target.exists() and not (tmp_path / "x").exists()
    scorer.close()


def test_an_unwritable_test_environment_directory_is_a_clear_error(tmp_path, monkeypatch):
    from rlvr_envs.tasks.repo.environments import PackageEnvironmentError, pytest_sandbox
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("RLVR_ENV_DIR", str(blocker / "envs"))
    with pytest.raises(PackageEnvironmentError, match="RLVR_ENV_DIR"):
        pytest_sandbox("bwrap")
