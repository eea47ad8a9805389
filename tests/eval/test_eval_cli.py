"""`rlvr eval` and `rlvr leaderboard` from the command line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from eval_helpers import math_suite
from rlvr_envs.eval.store import ResultStore


@pytest.fixture
def rlvr(rlvr_cli):
    return rlvr_cli


@pytest.fixture
def suite_file(tmp_path):
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(math_suite(n=2, k=[1, 2])))
    return str(path)


def test_eval_two_policies_then_leaderboard(rlvr, suite_file, tmp_path):
    runs = str(tmp_path / "runs")
    # the README's form: --resume starts the runs that do not exist yet
    result = rlvr("eval", "--policy", "gold", "--policy", "null", "--suite", suite_file,
                  "--runs-dir", runs, "--resume", "--leaderboard", "--quiet")
    assert result.exit_code == 0, result.output
    assert "gold on mathtest" in result.output and "null on mathtest" in result.output
    assert "| 1 | gold | mathtest--gold | 1.000 | 1.000 |" in result.output
    assert "leaderboard page:" in result.output
    assert (tmp_path / "runs" / "leaderboard" / "index.html").is_file()
    with ResultStore(runs) as store:
        assert [r.run_id for r in store.list_runs()] == ["mathtest--gold", "mathtest--null"]
        assert store.count_episodes("mathtest--null") == 20

    again = rlvr("eval", "-p", "gold", "--suite", suite_file, "--runs-dir", runs, "--quiet")
    assert again.exit_code == 1 and "already exists" in again.stderr and "--resume" in again.stderr
    resumed = rlvr("eval", "-p", "gold", "--suite", suite_file, "--runs-dir", runs, "--quiet",
                   "--resume")
    assert resumed.exit_code == 0 and "0 new episode(s)" in resumed.output

    out = tmp_path / "board"
    board = rlvr("leaderboard", "--runs-dir", runs, "--out", str(out), "--suite", "mathtest")
    assert board.exit_code == 0 and "mathtest--null" in board.output
    assert (out / "leaderboard.md").is_file() and (out / "index.html").is_file()


@pytest.mark.slow
def test_named_run_and_overrides_are_recorded(rlvr, suite_file, tmp_path):
    runs = str(tmp_path / "runs")
    result = rlvr("eval", "-p", "random", "--suite", suite_file, "--runs-dir", runs, "--quiet",
                  "--run", "mine", "--seed", "7", "--n", "3", "--temperature", "0.2",
                  "--max-completion-length", "64", "--batch-size", "5")
    assert result.exit_code == 0, result.output
    with ResultStore(runs) as store:
        run = store.get_run("mine")
        assert store.count_episodes("mine") == 30
    assert run.config["seed"] == 7 and run.config["batch_size"] == 5
    assert run.config["entries"]["math"]["sampling"]["temperature"] == 0.2
    assert run.config["entries"]["math"]["sampling"]["max_completion_length"] == 64


@pytest.mark.parametrize("args,message", [
    (["--policy", "no-such-policy"], "unknown policy 'no-such-policy'"),
    (["--policy", "gold", "--suite", "no-such-suite"], "no suite 'no-such-suite'"),
    ([], "give at least one --policy"),
])
def test_bad_invocations_exit_non_zero_with_a_message(rlvr, suite_file, tmp_path, args, message):
    if "--suite" not in args:
        args = [*args, "--suite", suite_file]
    result = rlvr("eval", *args, "--runs-dir", str(tmp_path / "runs"), "--quiet")
    assert result.exit_code in (1, 2) and message in result.stderr
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.output
    assert not (tmp_path / "runs" / "results.sqlite").exists() or \
        ResultStore(tmp_path / "runs").list_runs() == []


def test_list_suites_and_missing_store(rlvr, tmp_path):
    listed = rlvr("eval", "--list-suites")
    assert listed.exit_code == 0 and "quick" in listed.output and "math" in listed.output
    missing = rlvr("leaderboard", "--runs-dir", str(tmp_path / "nothing"))
    assert missing.exit_code == 1 and "no result store" in missing.stderr
    assert not (tmp_path / "nothing").exists()


def test_eval_modules_do_not_import_torch():
    code = ("import sys, rlvr_envs.eval.cli, rlvr_envs.eval.runner, rlvr_envs.eval.page; "
            "from rlvr_envs.agents.registry import resolve_policy; resolve_policy('null'); "
            "assert 'torch' not in sys.modules, 'torch was imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr


def test_an_unknown_name_from_the_agents_resolver_is_a_clean_error():
    from rlvr_envs.agents import registry

    with pytest.raises(registry.PolicyNotFound, match="unknown policy 'nope'"):
        registry.resolve_policy("nope")


def test_the_old_token_cap_option_still_works_with_a_warning(rlvr, suite_file, tmp_path):
    runs = str(tmp_path / "runs")
    result = rlvr("eval", "-p", "gold", "--suite", suite_file, "--runs-dir", runs, "--quiet",
                  "--max-new-tokens", "64")
    assert result.exit_code == 0, result.output
    assert "--max-new-tokens is deprecated; use --max-completion-length" in result.stderr
    with ResultStore(runs) as store:
        run = store.get_run("mathtest--gold")
    assert run.config["entries"]["math"]["sampling"]["max_completion_length"] == 64
    assert "--max-new-tokens" not in rlvr("eval", "--help").output
