"""Every sub-command answers a user's mistake with a non-zero exit and one line on stderr that
says what was expected, never a traceback; `--debug` shows the traceback instead."""

from __future__ import annotations

import gymnasium as gym
import pytest


def _files(tmp_path):
    (tmp_path / "garbage.jsonl").write_text("this is not json\n")
    (tmp_path / "empty.json").write_text("")
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "results.sqlite").write_bytes(b"")


#: (sub-command, arguments with {tmp} for a scratch folder, a fragment of the one error line)
BAD_INVOCATIONS = [
    ("list", ["list", "--family", "nope"], "no env family 'nope'"),
    ("show", ["show", "rlvr/Nope-v0"], "no rlvr env 'rlvr/Nope-v0'"),
    ("show", ["show", "rlvr/Math-v0", "--env-kwargs", "{"], "--env-kwargs must be a JSON object"),
    ("show", ["show", "rlvr/Math-v0", "--env-kwargs", "[1]"], "--env-kwargs must be a JSON object"),
    ("show", ["show", "rlvr/Math-v0", "--seed", "-1"], "'--seed'"),
    ("show", ["show", "rlvr/Math-v0", "--env-kwargs", '{"answer_format": "xml"}'],
     "answer_format must be one of"),
    ("check", ["check", "--samples", "-1"], "'--samples'"),
    ("check", ["check", "rlvr/Nope-v0"], "no rlvr env 'rlvr/Nope-v0'"),
    ("difficulty", ["difficulty", "estimate", "--env", "rlvr/Math-v0", "--policy", "nope"],
     "unknown policy 'nope'"),
    ("difficulty", ["difficulty", "estimate", "--env", "rlvr/Math-v0", "--policy", "gold",
                    "--env-kwargs", "{"], "--env-kwargs must be a JSON object"),
    ("difficulty", ["difficulty", "estimate", "--env", "rlvr/Math-v0", "--policy", "gold",
                    "-k", "0"], "'-k'"),
    ("difficulty", ["difficulty", "show", "{tmp}/missing.json"], "no pass-rate file"),
    ("sandbox", ["sandbox", "nope"], "No such command 'nope'"),
    ("serve", ["serve", "--workers", "0"], "'--workers'"),
    ("serve", ["serve", "--port", "70000"], "'--port'"),
    ("serve", ["serve", "--host", "0.0.0.0"], "refusing to bind '0.0.0.0' without a token"),
    ("serve", ["serve", "--env-kwargs", "{"], "--env-kwargs must be a JSON object"),
    ("serve", ["serve", "--env-kwargs", '{"difficulty": 99}'], "levels must be ints in 1..10"),
    ("serve", ["serve", "--env", "rlvr/Nope-v0"], "no rlvr env 'rlvr/Nope-v0'"),
    ("serve", ["serve", "--item-timeout", "0"], "item_timeout must be > 0"),
    ("export", ["export", "verl", "{tmp}/out", "--env", "rlvr/Nope-v0"], "no rlvr env"),
    ("export", ["export", "openrlhf", "{tmp}/o.jsonl", "--env", "rlvr/Math-v0", "--n", "-5"],
     "'--n'"),
    ("export", ["export", "openrlhf", "{tmp}/empty.json/o.jsonl", "--env", "rlvr/Math-v0",
                "--n", "1"], "empty.json"),
    ("tasks", ["tasks", "build-repo"], "give --package NAME"),
    ("tasks", ["tasks", "build-repo", "--package", "toolz", "--sandbox", "nope"],
     "unknown sandbox backend 'nope'"),
    ("tasks", ["tasks", "import-swebench", "{tmp}/missing.jsonl", "--repos", "{tmp}",
               "--out", "{tmp}/x.jsonl"], "missing.jsonl"),
    ("tasks", ["tasks", "audit-repo", "--sandbox", "nope"], "unknown sandbox backend 'nope'"),
    ("train", ["train", "grpo", "--env", "rlvr/Math-v0", "--model", "smollm2-135m",
               "--output-dir", "{tmp}/run", "--max-steps", "-1"], "max_steps must be >= 1"),
    ("train", ["train", "ppo", "--env", "rlvr/Math-v0", "--model", "{tmp}/no-model",
               "--output-dir", "{tmp}/run"], "does not exist"),
    ("train", ["train", "grpo", "--env", "rlvr/Math-v0"], "Missing option"),
    ("eval", ["eval", "--suite", "quick"], "give at least one --policy"),
    ("eval", ["eval", "-p", "nope", "--suite", "quick"], "unknown policy 'nope'"),
    ("eval", ["eval", "-p", "gold", "--suite", "{tmp}/empty.json"], "cannot parse"),
    ("eval", ["eval", "-p", "gold", "--suite", "{tmp}/missing.json"], "no suite"),
    ("eval", ["eval", "-p", "gold", "--suite", "quick", "--seed", "-1"], "'--seed'"),
    ("eval", ["eval", "-p", "gold", "--suite", "quick", "--runs-dir", "{tmp}/store",
              "--resume"], "is empty (0 bytes)"),
    ("leaderboard", ["leaderboard", "--runs-dir", "{tmp}/nothing"], "no result store"),
    ("leaderboard", ["leaderboard", "--runs-dir", "{tmp}/store"], "is empty (0 bytes)"),
    ("rlvr", ["no-such-command"], "No such command"),
]


@pytest.mark.parametrize("command, args, fragment", BAD_INVOCATIONS,
                         ids=[f"{c}-{i}" for i, (c, _, _) in enumerate(BAD_INVOCATIONS)])
def test_bad_invocation_gives_one_line_and_no_traceback(tmp_path, monkeypatch, rlvr_cli,
                                                        command, args, fragment):
    monkeypatch.delenv("RLVR_SERVER_TOKEN", raising=False)
    monkeypatch.delenv("RLVR_DEBUG", raising=False)
    _files(tmp_path)
    result = rlvr_cli(*[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert result.exit_code not in (0, None), result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    prefix = "rlvr: error: " if command == "rlvr" else f"rlvr {command}"
    assert lines[0].startswith(prefix) and fragment in lines[0], lines[0]
    assert "Traceback" not in result.output


def test_every_sub_command_has_a_bad_invocation_in_the_table():
    from rlvr_envs.cli import _attach_subcommands, app

    _attach_subcommands()
    names = {c.name for c in app.registered_commands} | {g.name for g in app.registered_groups}
    assert names - {command for command, _, _ in BAD_INVOCATIONS} == set()


def test_debug_shows_the_traceback(monkeypatch):
    from rlvr_envs.cli import main

    monkeypatch.delenv("RLVR_DEBUG", raising=False)
    with pytest.raises(gym.error.UnregisteredEnv):
        main(["--debug", "show", "rlvr/Nope-v0"])
    monkeypatch.setenv("RLVR_DEBUG", "1")
    with pytest.raises(ValueError, match="no env family"):
        main(["list", "--family", "nope"])
