"""SWE-bench / SWE-Gym record import against a local git repository whose history holds the
fix: the workspace gets the base tree only, the hidden test patch applies at grading."""

import json
import shutil
import subprocess

import pytest
from rlvr_envs.tasks.repo.agents import GoldPatchAgent, NullAgent, ScriptAgent
from rlvr_envs.tasks.repo.env import RepoEditEnv
from rlvr_envs.tasks.repo.shipped import MINIREPOS
from rlvr_envs.tasks.repo.swebench import import_swebench, import_swebench_record

from rlvr_envs.core.multiturn import run_episode

BUG = ("next_min = precedence if right_assoc else precedence + 1", "next_min = precedence")
REGRESSION_TEST = "from minicalc import evaluate\n\n\ndef test_chain():\n    assert evaluate('9 - 3 - 2 - 1') == 3\n"


def _git(repo, *args):
    out = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.fixture(scope="module")
def swe_record(tmp_path_factory):
    root = tmp_path_factory.mktemp("swe")
    repo = root / "local__minicalc"
    shutil.copytree(MINIREPOS / "minicalc", repo)
    evaluator = repo / "minicalc/evaluator.py"
    evaluator.write_text(evaluator.read_text().replace(*BUG))
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    base = _git(repo, "rev-parse", "HEAD")
    evaluator.write_text(evaluator.read_text().replace(BUG[1], BUG[0]))
    (repo / "tests/test_regression.py").write_text(REGRESSION_TEST)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "fix associativity")
    fixed = _git(repo, "rev-parse", "HEAD")
    _git(repo, "tag", "v-fixed")
    patch = _git(repo, "diff", base, fixed, "--", "minicalc") + "\n"
    test_patch = _git(repo, "diff", base, fixed, "--", "tests") + "\n"
    record = {
        "instance_id": "local__minicalc-1", "repo": "local/minicalc", "base_commit": base,
        "patch": patch, "test_patch": test_patch,
        "problem_statement": "10 - 4 - 3 evaluates to 9; subtraction must be left-associative.",
        "FAIL_TO_PASS": json.dumps(["tests/test_regression.py::test_chain",
                                    "tests/test_evaluator.py::test_subtraction_is_left_associative"]),
        "PASS_TO_PASS": ["tests/test_evaluator.py::test_precedence",
                         "tests/test_lexer.py::test_kinds"],
        "version": "0.1", "environment_setup_commit": base, "hints_text": "",
    }
    return record, root, fixed


def test_import_maps_fields(swe_record):
    record, root, _ = swe_record
    task = import_swebench_record(record, root)
    meta = task.metadata
    assert task.source == "swe-bench" and task.source_id == "local__minicalc-1"
    assert task.answer == record["patch"] and meta["test_patch"] == record["test_patch"]
    assert meta["FAIL_TO_PASS"][0] == "tests/test_regression.py::test_chain"
    assert meta["base_commit"] == record["base_commit"] and meta["version"] == "0.1"
    assert meta["gold_files"] == ["minicalc/evaluator.py"]


def test_bad_records_get_clear_errors(swe_record, tmp_path):
    record, root, _ = swe_record
    with pytest.raises(ValueError, match="missing \\['patch'\\]"):
        import_swebench_record({k: v for k, v in record.items() if k != "patch"}, root)
    with pytest.raises(ValueError, match="not a JSON list"):
        import_swebench_record({**record, "FAIL_TO_PASS": "[oops"}, root)
    with pytest.raises(FileNotFoundError, match="no git clone"):
        import_swebench_record(record, tmp_path)
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert len(import_swebench(path, {"local/minicalc": root / "local__minicalc"})) == 1


@pytest.mark.slow
def test_imported_task_is_graded_like_every_repo_task(swe_record, repo_sandbox):
    record, root, fixed_commit = swe_record
    task = import_swebench_record(record, root)
    env = RepoEditEnv([task], sandbox=repo_sandbox)
    try:
        env.reset(options={"task": task})
        ws = env.workspace
        assert not (ws / "tests/test_regression.py").exists()  # hidden test patch
        assert subprocess.run(["git", "cat-file", "-e", fixed_commit], cwd=ws).returncode != 0
        assert len(_git(ws, "log", "--all", "--oneline").splitlines()) == 1
        assert _git(ws, "tag") == ""
        assert run_episode(env, NullAgent(), task=task).reward == 0.0
        gold = run_episode(env, GoldPatchAgent(), task=task)
        assert gold.reward == 1.0, gold.info
        # an agent that also writes its own tests/test_regression.py cannot replace the hidden one
        fake = {"name": "create", "arguments": {"path": "tests/test_regression.py",
                                                 "content": "def test_chain():\n    pass\n"}}
        assert run_episode(env, ScriptAgent([fake]), task=task).reward == 0.0
    finally:
        env.close()
