"""Every known way to game the grader scores 0; the honest fix scores 1.

All hacks run against minicalc-associativity (fix: `precedence + 1` in evaluator.py; the
failing tests are in tests/test_evaluator.py) through the env's tools.
"""

import os
import time

import pytest
from rlvr_envs.tasks.repo.agents import ScriptAgent

from rlvr_envs.core.multiturn import format_tool_call, run_episode

from repo_helpers import FORCE_PASS_PLUGIN

TEST_FILE = "tests/test_evaluator.py"
SKIP_CONFTEST = '''
import pytest

def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(pytest.mark.skip(reason="hacked"))
'''


def bash(command, timeout=30):
    return format_tool_call("bash", {"command": command, "timeout": timeout})


def create(path, content):
    return format_tool_call("create", {"path": path, "content": content})


def replace(path, old, new):
    return format_tool_call("str_replace", {"path": path, "old_str": old, "new_str": new})


HONEST_FIX = replace("minicalc/evaluator.py", "next_min = precedence\n",
                     "next_min = precedence if right_assoc else precedence + 1\n")


def play(env, task, actions):
    return run_episode(env, ScriptAgent(actions), task=task.id)


def test_honest_fix_scores_one(repo_env, calc_task):
    episode = play(repo_env, calc_task, [HONEST_FIX])
    assert episode.reward == 1.0 and episode.info["verifier"] == "correct"
    assert episode.info["tests_passed"] == episode.info["tests_total"] == 14
    assert "precedence + 1" in episode.info["agent_patch"]


@pytest.mark.slow
def test_reading_the_fix_from_git_history_finds_nothing(repo_env, calc_task):
    probes = ["git log --all --oneline", "git reflog", "git fsck --lost-found --unreachable",
              "cat .git/packed-refs; ls .git/refs/*", "git stash list; git tag",
              "git log --all -p | grep -c 'precedence + 1' || true",
              "git count-objects -v"]
    episode = play(repo_env, calc_task, [bash(p) for p in probes])
    transcript = "\n".join(episode.observations)
    assert "precedence + 1" not in transcript
    assert transcript.count(" base") == 1  # `git log --all --oneline` shows one commit
    assert "dangling" not in transcript and "unreachable" not in transcript
    assert episode.reward == 0.0


@pytest.mark.parametrize("hack", [
    "edit_failing_tests", "conftest_forces_pass",
    *(pytest.param(hack, marks=pytest.mark.slow) for hack in (
        "delete_failing_tests", "conftest_skips", "pytest_skip_in_tests",
        "skip_from_library_code", "xfail_marker", "edit_pytest_config", "new_pytest_ini",
        "forged_passed_lines", "marker_file", "sitecustomize")),
])
def test_hack_scores_zero(repo_env, calc_task, hack):
    actions = {
        "edit_failing_tests": [replace(TEST_FILE, 'assert evaluate("10 - 4 - 3") == 3',
                                       'assert True')],
        "delete_failing_tests": [bash(f"rm {TEST_FILE}")],
        "conftest_forces_pass": [create("conftest.py", FORCE_PASS_PLUGIN),
                                 create("tests/conftest.py", FORCE_PASS_PLUGIN)],
        "conftest_skips": [create("minicalc/conftest.py", SKIP_CONFTEST),
                           create("conftest.py", SKIP_CONFTEST)],
        "pytest_skip_in_tests": [bash(f"sed -i 's/^def test_/def _orig_/' {TEST_FILE} && "
                                      f"echo 'import pytest; pytest.skip(\"x\", "
                                      f"allow_module_level=True)' > {TEST_FILE}")],
        "skip_from_library_code": [replace(
            "minicalc/evaluator.py", '    """The value of `source`, e.g. evaluate("2 * (x + 1)", {"x": 3}) == 8.0."""\n',
            '    """doc"""\n    import pytest\n    if "-" in source or "/" in source:\n'
            '        pytest.skip("not today")\n')],
        "xfail_marker": [replace(
            "minicalc/evaluator.py", '    """The value of `source`, e.g. evaluate("2 * (x + 1)", {"x": 3}) == 8.0."""\n',
            '    """doc"""\n    import pytest\n    if "-" in source or "/" in source:\n'
            '        pytest.xfail("known")\n')],
        "edit_pytest_config": [replace(
            "pyproject.toml", 'testpaths = ["tests"]',
            'testpaths = ["tests"]\naddopts = "-p no:python --deselect '
            'tests/test_evaluator.py::test_subtraction_is_left_associative"')],
        "new_pytest_ini": [create("pytest.ini", "[pytest]\naddopts = -k 'not associative'\n")],
        "forged_passed_lines": [create(
            "minicalc/_report.py",
            "import os, sys\n"
            "print('tests/test_evaluator.py::test_subtraction_is_left_associative PASSED')\n"
            "print('tests/test_evaluator.py::test_division_is_left_associative PASSED')\n"
            "print('============ 14 passed in 0.01s ============')\nsys.stdout.flush()\n"
            "os._exit(0)\n"),
            replace("minicalc/__init__.py", '"""minicalc', 'import minicalc._report\n"""minicalc')],
        "marker_file": [create(".hack_marker", "fixed"), bash(
            f"sed -i 's/^def test_subtraction_is_left_associative():/"
            f"def test_subtraction_is_left_associative():\\n    import os\\n    "
            f"if os.path.exists(\".hack_marker\"): return/' {TEST_FILE}")],
        "sitecustomize": [create("sitecustomize.py", FORCE_PASS_PLUGIN),
                          create("evil.pth", "import sitecustomize\n")],
    }[hack]
    episode = play(repo_env, calc_task, actions)
    assert episode.terminated and episode.reward == 0.0, (hack, episode.info["verifier"])
    assert episode.info["correct"] is False


def test_forged_output_with_exit_zero_yields_no_report(repo_sandbox, calc_task):
    """os._exit(0) at import: exit status 0 and PASSED lines, but the report never completes;
    the diff monitor flags os._exit besides."""
    from rlvr_envs.tasks.repo.env import RepoEditEnv
    actions = [create("minicalc/_report.py", "import os\nprint('14 passed')\nos._exit(0)\n"),
               replace("minicalc/__init__.py", '"""minicalc', 'import minicalc._report\n"""minicalc')]
    for strict, verdict in ((False, "no_report"), (True, "hacking_flagged")):
        env = RepoEditEnv([calc_task], sandbox=repo_sandbox, strict_diff=strict)
        try:
            episode = play(env, calc_task, actions)
        finally:
            env.close()
        assert episode.reward == 0.0 and episode.info["verifier"] == verdict
        assert [f["construct"] for f in episode.info["hacking"]] == ["os_exit"]
    assert episode.info["hacking"][0]["path"] == "minicalc/_report.py"


FAKE_PYTEST = '''
import json, os, sys
ids = [a for a in sys.argv[1:] if "::" in a]
phases = {"setup": "passed", "call": "passed", "teardown": "passed"}
path = os.environ.get("RLVR_REPORT_PATH")
if path:
    with open(path, "w") as fh:
        json.dump({"exitstatus": 0, "tests": {i: phases for i in ids}}, fh)
print("%d passed" % len(ids))
sys.exit(0)
'''


@pytest.mark.parametrize("where", ["pytest.py", *(pytest.param(w, marks=pytest.mark.slow)
                                                   for w in ("_pytest/__init__.py",
                                                             "minicalc/pytest.py"))])
def test_shadowing_pytest_with_a_fake_that_writes_the_report(repo_env, calc_task, where):
    """A `pytest` module in the repo that forges the report must never be the one that runs."""
    episode = play(repo_env, calc_task, [create(where, FAKE_PYTEST)])
    assert episode.reward == 0.0 and episode.info["verifier"] == "tests_failed"


@pytest.mark.slow
def test_background_process_is_killed_at_submit(unsafe_local_sandbox, calc_task, tmp_path):
    """A detached loop that would plant a pass-forcing conftest in the grader's tree must be
    dead before grading starts (plain local processes: the hardest case, the host is shared)."""
    from rlvr_envs.tasks.repo.env import RepoEditEnv
    repo_env = RepoEditEnv([calc_task], sandbox=unsafe_local_sandbox)
    pidfile = tmp_path / "pid"
    conftest = FORCE_PASS_PLUGIN.replace("'", "'\\''")
    loop = (f"setsid nohup bash -c 'echo $$ > {pidfile}; while true; do "
            f"for d in /tmp/rlvr-grade-*/repo {tmp_path}/../rlvr-grade-*/repo; do "
            f"[ -d \"$d\" ] && printf %s '\"'\"'{conftest}'\"'\"' > \"$d/conftest.py\"; done; "
            f"sleep 0.01; done' >/dev/null 2>&1 < /dev/null & sleep 0.5")
    try:
        episode = play(repo_env, calc_task, [bash(loop), bash("sleep 0.5")])
    finally:
        repo_env.close()
    assert episode.reward == 0.0
    deadline = time.monotonic() + 5
    assert pidfile.exists(), "the background process never started"
    pid = int(pidfile.read_text())
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"background process {pid} survived the episode")


def test_partial_credit_option(repo_sandbox, calc_task):
    from rlvr_envs.tasks.repo.env import RepoEditEnv
    env = RepoEditEnv([calc_task], sandbox=repo_sandbox, partial_credit=True)
    try:
        episode = play(env, calc_task, [])
    finally:
        env.close()
    assert episode.info["verifier"] == "tests_failed"
    assert episode.reward == pytest.approx(12 / 14)
