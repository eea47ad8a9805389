"""The multi-turn contract: tool-call parsing, capped observations, budgets, info keys."""

import json
import os
from pathlib import Path

import gymnasium as gym
import pytest

import rlvr_envs  # noqa: F401
from rlvr_envs.core.multiturn import ToolCallError, cap_text, format_tool_call, parse_tool_call
from rlvr_envs.core.spaces import UnicodeText


def test_parse_hermes_text_and_dict_forms():
    text = 'I will look.\n<tool_call>\n{"name": "view", "arguments": {"path": "a.py"}}\n</tool_call>'
    assert parse_tool_call(text).arguments == {"path": "a.py"}
    assert parse_tool_call({"name": "submit"}).arguments == {}
    openai = {"type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
    assert parse_tool_call(openai).name == "bash"
    assert parse_tool_call(openai).arguments == {"command": "ls"}
    assert parse_tool_call(format_tool_call("create", {"path": "x", "content": "y"})).name == "create"


@pytest.mark.parametrize("bad, message", [
    ("no call here", "no tool call"),
    ("<tool_call>{not json}</tool_call>", "not valid JSON"),
    ('<tool_call>{"name": "a"}</tool_call><tool_call>{"name": "b"}</tool_call>', "exactly one"),
    ('<tool_call>["view"]</tool_call>', "JSON object"),
    ('<tool_call>{"name": "view", "arguments": [1]}</tool_call>', "must be a JSON object"),
    (42, "str"),
])
def test_malformed_calls_raise_tool_call_error(bad, message):
    with pytest.raises(ToolCallError, match=message):
        parse_tool_call(bad)


def test_cap_text_keeps_head_and_tail_with_a_note():
    text = "A" * 5000 + "Z" * 5000
    capped = cap_text(text, 1000)
    assert len(capped) <= 1000
    assert capped.startswith("A") and capped.endswith("Z")
    assert "output truncated" in capped and "10000 characters" in capped
    assert cap_text("short", 1000) == "short"


def test_reset_contract(repo_env):
    obs, info = repo_env.reset(seed=3)
    assert isinstance(obs, str) and obs == info["messages"][-1]["content"]
    assert [m["role"] for m in info["messages"]] == ["system", "user"]
    names = [t["function"]["name"] for t in info["tools"]]
    assert names == ["bash", "view", "str_replace", "create", "run_tests", "submit"]
    for tool in info["tools"]:
        assert tool["type"] == "function"
        json.dumps(tool)  # ready for a chat template
    assert info["task"]["family"] == "repo"
    assert repo_env.observation_space.contains(obs)
    assert isinstance(repo_env.action_space, UnicodeText)


def test_malformed_call_is_an_observation_and_counts_toward_budget(repo_env):
    repo_env.reset(seed=0)
    for turn in range(1, repo_env.max_turns + 1):
        obs, reward, terminated, truncated, info = repo_env.step("let me think...")
        assert obs.startswith("error: no tool call")
        assert info["turn"] == turn and info["tool_error"]
        assert reward == 0.0 and not terminated
    assert truncated and info["verifier"] == "turn_budget_exhausted"
    with pytest.raises(gym.error.ResetNeeded):
        repo_env.step(format_tool_call("submit", {}))


def test_unknown_tool_and_bad_arguments(repo_env):
    repo_env.reset(seed=0)
    obs, *_ = repo_env.step(format_tool_call("rm_rf", {}))
    assert "unknown tool 'rm_rf'" in obs
    obs, *_ = repo_env.step(format_tool_call("view", {"file": "x"}))
    assert "missing ['path']" in obs
    obs, *_ = repo_env.step(format_tool_call("view", {"path": 3}))
    assert "must be string" in obs


def test_tools_work_in_the_workspace(repo_env, calc_task):
    repo_env.reset(options={"task": calc_task.id})
    obs, *_ = repo_env.step({"name": "view", "arguments": {"path": "minicalc/evaluator.py",
                                                            "start_line": 1, "end_line": 3}})
    assert obs.splitlines()[0].strip().startswith("1")
    assert "more lines" in obs
    obs, *_ = repo_env.step({"name": "view", "arguments": {"path": "../../etc/passwd"}})
    assert "outside the repository" in obs
    obs, *_ = repo_env.step({"name": "bash", "arguments": {"command": "echo hi; exit 3"}})
    assert "hi" in obs and "exit code 3" in obs
    obs, *_ = repo_env.step({"name": "create", "arguments": {"path": "notes/a.txt",
                                                              "content": "x"}})
    assert "created notes/a.txt" in obs and (repo_env.workspace / "notes/a.txt").read_text() == "x"
    obs, *_ = repo_env.step({"name": "create", "arguments": {"path": "notes/a.txt/b",
                                                              "content": "x"}})
    assert obs.startswith("error: cannot create 'notes/a.txt/b'")
    obs, *_ = repo_env.step({"name": "str_replace", "arguments": {
        "path": "notes/a.txt", "old_str": "nope", "new_str": "y"}})
    assert "occurs 0 times" in obs
    obs, *_ = repo_env.step({"name": "run_tests", "arguments": {}})
    assert "failed" in obs and "test_subtraction_is_left_associative" in obs
    obs, *_ = repo_env.step({"name": "bash", "arguments": {"command": "seq 1 100000"}})
    assert obs.startswith("1\n2\n3\n") and obs.endswith("99999\n100000\n[exit code 0]")
    assert "[... output cut: 588895 bytes in all" in obs
    assert len(obs) <= repo_env.max_observation_chars


@pytest.fixture
def tool_env(isolating_sandbox, calc_task):
    from rlvr_envs.tasks.repo.env import RepoEditEnv
    env = RepoEditEnv([calc_task], sandbox=isolating_sandbox)
    env.reset(options={"task": calc_task.id})
    yield env
    env.close()


def test_agent_tools_on_every_backend(tool_env):
    """python, python3 and pytest are the task's interpreter with pytest; run_tests takes
    files, node ids or the whole suite; str_replace shows the edit; nothing survives a call."""
    step = lambda name, **a: tool_env.step({"name": name, "arguments": a})[0]  # noqa: E731
    from rlvr_envs.sandbox.image import PYTEST_VERSION, PYTHON_VERSION
    obs = step("bash", command="python -c 'import pytest, sys; print(sys.version_info[:2])'"
                               " && python3 -m pytest --version && pytest --version")
    assert str(tuple(map(int, PYTHON_VERSION.split(".")))) in obs and "exit code 0" in obs
    assert obs.count(f"pytest {PYTEST_VERSION}") == 2
    node = "tests/test_evaluator.py::test_subtraction_is_left_associative"
    obs = step("run_tests", tests=[node])
    assert "1 failed" in obs
    obs = step("run_tests", tests=["."])
    assert "2 failed" in obs and "passed" in obs
    for bad in (["--co"], ["../x.py"], ["@opts.txt"]):
        assert step("run_tests", tests=bad).startswith("error:")
    obs = step("str_replace", path="minicalc/evaluator.py", old_str="next_min = precedence\n",
               new_str="next_min = precedence if right_assoc else precedence + 1\n")
    assert "precedence + 1" in obs and obs.count("\n") >= 5
    assert step("run_tests").count("passed") >= 1 and "failed" not in step("run_tests")
    step("bash", command="(sleep 300 &); setsid sleep 300 & echo started")
    obs = step("bash", command="for p in /proc/[0-9]*; do cat $p/cmdline 2>/dev/null | "
                               "tr '\\0' ' '; echo; done | grep -c '^sleep 300' || true")
    assert obs.splitlines()[0] == "0"


@pytest.mark.slow
def test_bash_timeout_kills(repo_env):
    repo_env.reset(seed=0)
    obs, *_ = repo_env.step({"name": "bash", "arguments": {"command": "sleep 30", "timeout": 1}})
    assert "timed out" in obs


@pytest.mark.slow
def test_gym_make_and_rlvr_check_audit():
    from rlvr_envs.checks import check_env_id
    results = {name: (ok, detail) for name, ok, detail in
               check_env_id("rlvr/RepoEdit-v0", samples=1)}
    assert all(ok for ok, _ in results.values()), results
    assert {"gold agent scores 1", "null agent scores 0"} <= set(results)


def test_gold_stays_out_of_info_until_the_episode_ends(repo_env, calc_task):
    """Neither reset's nor a mid-episode step's info carries the gold patch or the hidden
    tests; the closing step does; `env.gold(task)` answers whoever needs it."""
    gold = calc_task.metadata["gold_patch"]
    _, info = repo_env.reset(options={"task": calc_task.id})
    leaks = [info["task"]]
    _, _, _, _, info = repo_env.step(format_tool_call("bash", {"command": "true"}))
    leaks.append(info["task"])
    for record in leaks:
        assert record["answer"] == "" and record["metadata"]["gold_hidden"] is True
        assert not {"gold_patch", "test_patch", "setup_patch", "mutation"} & set(record["metadata"])
        assert "precedence + 1" not in json.dumps(record)
    assert repo_env.unwrapped.gold(calc_task.id) == calc_task.answer
    assert repo_env.unwrapped.gold() == calc_task.answer
    # a hidden record pins the same task, and grades with the whole of it
    assert repo_env.unwrapped.resolve_task(leaks[0]) == calc_task
    *_, info = repo_env.step(format_tool_call("submit", {}))
    assert info["task"]["metadata"]["gold_patch"] == gold and "gold_hidden" not in info["task"]["metadata"]


def test_single_turn_envs_hide_the_gold_on_request():
    import rlvr_envs
    for include, expect_hidden in ((True, False), (False, True)):
        env = rlvr_envs.make("rlvr/Math-v0")
        env.unwrapped.include_gold = include
        _, info = env.reset(seed=0)
        task = env.unwrapped.resolve_task(info["task"])
        assert (info["task"]["answer"] == "") is expect_hidden
        assert env.unwrapped.gold(info["task"]) == task.answer != ""
        _, reward, *_ = env.step(env.unwrapped.scorer.gold_completion(task))
        assert reward == 1.0
        env.close()


def test_file_tools_refuse_what_is_not_a_regular_file_in_the_repository(repo_env, calc_task,
                                                                        monkeypatch):
    """The file tools run in the trainer's process: a FIFO the agent made must not block it, a
    link (also one swapped in for a directory after the path was checked) must not lead it
    outside, a link loop, a huge file or directory and a lone surrogate are errors, not
    exceptions or a trainer out of memory."""
    from rlvr_envs.tasks.repo import tools

    repo_env.reset(options={"task": calc_task.id})
    ws = repo_env.workspace
    step = lambda name, **a: repo_env.step({"name": name, "arguments": a})[0]  # noqa: E731
    os.mkfifo(ws / "pipe.txt")
    assert "not a regular file" in step("create", path="pipe.txt", content="x")
    for call in (lambda: tools.view(ws, "pipe.txt"),
                 lambda: tools.str_replace(ws, "pipe.txt", "a", "b")):
        with pytest.raises(ToolCallError, match="not a regular file"):
            call()
    os.symlink("loop-b", ws / "loop-a")
    os.symlink("loop-a", ws / "loop-b")
    assert step("view", path="loop-a").startswith("error:")
    assert step("create", path="u.txt", content="\ud800").startswith("error:")
    assert step("create", path="notes/ok.txt", content="fine").startswith("created")

    outside = ws.parent / f"{ws.name}-outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("host secret\n")
    (ws / "evil").mkdir()
    checked = tools.inside(ws, "evil/secret.txt")  # checked while evil/ is a directory ...
    (ws / "evil").rmdir()
    (ws / "evil").symlink_to(outside)  # ... then swapped for a link out of the repository
    monkeypatch.setattr(tools, "inside", lambda workspace, rel: checked)
    for call in (lambda: tools.read_file(ws, "evil/secret.txt"),
                 lambda: tools.write_file(ws, "evil/secret.txt", "pwned"),
                 lambda: tools.create(ws, "evil/secret.txt", "pwned")):
        with pytest.raises(ToolCallError, match="no file|cannot create"):
            call()
    assert (outside / "secret.txt").read_text() == "host secret\n"
    monkeypatch.undo()

    with open(ws / "big.txt", "wb") as fh:  # sparse: 1 GiB that takes no disk
        fh.truncate(1 << 30)
    assert "only that much is read" in tools.view(ws, "big.txt", 1, 2)
    with pytest.raises(ToolCallError, match="larger than"):
        tools.str_replace(ws, "big.txt", "a", "b")
    (ws / "many").mkdir()
    for i in range(tools.MAX_LISTED + 5):
        (ws / "many" / f"f{i}").touch()
    assert f"only the first {tools.MAX_LISTED}" in tools.view(ws, "many")


def test_the_agent_sees_pytest_but_no_other_installed_package(tool_env):
    """An installed copy of a package a task repairs (the pristine source) or this project's
    own package (a non-editable install carries the task packs and their gold patches) must
    not be readable from the agent's shell: only pytest and its dependencies are shown."""
    import importlib.util
    import sysconfig

    import rlvr_envs
    step = lambda name, **a: tool_env.step({"name": name, "arguments": a})[0]  # noqa: E731
    site = sysconfig.get_paths()["purelib"]
    installed = [name for name in ("termcolor", "six", "tabulate", "numpy", "typer")
                 if importlib.util.find_spec(name) is not None]
    assert installed and (Path(site) / "_pytest").is_dir()  # what the host has
    probe = ("import importlib.util as u, os, sys\n"
             f"print('found', [n for n in {installed!r} + ['rlvr_envs'] if u.find_spec(n)])\n"
             "import pytest; print('pytest', pytest.__version__)\n"
             f"for d in {[site, os.path.dirname(rlvr_envs.__file__)]!r}:\n"
             "    print(d, os.path.isdir(d) and sorted(os.listdir(d))[:5])\n")
    obs = step("bash", command=f"python - <<'X'\n{probe}X")
    assert "found []" in obs and "pytest " in obs, obs
    for line in obs.splitlines()[2:4]:
        assert line.endswith(" False") or line.endswith(" []"), obs


def test_a_command_that_fills_the_disk_is_killed_and_ends_the_episode(isolating_sandbox,
                                                                        calc_task):
    """Each file is capped, their number is not: the workspace's disk budget is held while a
    command runs (killed within one interval of breaking it) and the episode ends with 0."""
    from rlvr_envs.tasks.repo.env import RepoEditEnv
    env = RepoEditEnv([calc_task], sandbox=isolating_sandbox, max_workspace_mb=16)
    try:
        env.reset(options={"task": calc_task.id})
        ws = env.workspace
        fill = ("for i in $(seq 1 200); do head -c 8000000 /dev/urandom > fill$i.bin || exit 9;"
                " done; echo all-written")
        obs, reward, terminated, _, info = env.step(
            {"name": "bash", "arguments": {"command": fill, "timeout": 120}})
        assert terminated and reward == 0.0 and info["verifier"] == "workspace_too_large", obs
        assert "disk budget" in obs and "all-written" not in obs
        assert info["used_bytes"] < 200 * 8_000_000  # stopped long before the end
        assert env.workspace is None and not ws.exists()  # the disk is given back
    finally:
        env.close()


def test_disk_usage_counts_allocated_blocks_and_stops_early(tmp_path):
    from rlvr_envs.tasks.repo.disk_budget import workspace_usage
    with open(tmp_path / "sparse", "wb") as fh:
        fh.truncate(1 << 30)  # 1 GiB that takes no disk
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "data").write_bytes(b"x" * 100_000)
    used, entries = workspace_usage(tmp_path, 1 << 40)
    assert 100_000 <= used < 1 << 20 and entries == 3
    assert workspace_usage(tmp_path, 1 << 40, stop_entries=1)[1] == 2


@pytest.mark.parametrize("action", [
    '<tool_call>' + "[" * 100_000 + '</tool_call>',
    {"name": "bash", "arguments": '{"command": ' + "[" * 100_000 + "}"},
    {"name": "bash", "arguments": {"command": "echo a\u0000b"}},
    {"name": "create", "arguments": {"path": "a\u0000.py", "content": "x"}},
    {"name": "run_tests", "arguments": {"tests": ["tests/x.py\u0000"]}},
])
def test_hostile_calls_are_tool_errors_not_exceptions(repo_env, calc_task, action):
    repo_env.reset(options={"task": calc_task.id})
    obs, reward, terminated, truncated, info = repo_env.step(action)
    assert obs.startswith("error:") and info["tool_error"] and reward == 0.0


def test_a_tree_nested_past_the_recursion_limit_scores_zero_and_is_removed(repo_env, calc_task):
    """Every walker of the workspace recursed: a directory 1500 levels deep made submit a
    tool error and reset/close raise, leaving the episode on the host's disk."""
    repo_env.reset(options={"task": calc_task.id})
    episode_dir = repo_env.workspace.parent
    repo_env.step({"name": "bash", "arguments": {
        "command": "d=$(printf 'a/%.0s' $(seq 1500)); mkdir -p $d && touch $d/x.py"}})
    obs, reward, terminated, _, info = repo_env.step({"name": "submit", "arguments": {}})
    assert terminated and reward == 0.0 and info["verifier"] == "workspace_too_large", obs
    assert not episode_dir.exists()
    repo_env.reset(options={"task": calc_task.id})  # and the env goes on
