"""No candidate output crashes the caller: whatever bytes a candidate writes on its protocol
channel (deep nesting, huge numbers, invalid UTF-8, NUL bytes, a reply that never ends), the
run scores 0 with `verifier="bad_output"`, and a batch keeps every other item's reward."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rlvr_envs.core.task import Task
from rlvr_envs.sandbox import Limits
from rlvr_envs.sandbox.bwrap import bwrap_problem
from rlvr_envs.tasks.code.humaneval import load_humaneval
from rlvr_envs.tasks.code.scoring import CodeScorer
from rlvr_envs.verify.code import wire

from code_attacks import BATCH_PAYLOADS, PAYLOADS, hostile

needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None,
                                 reason=f"bubblewrap unavailable: {bwrap_problem()}")
LIMITS = Limits(wall_time=10.0, memory_mb=256, max_processes=16)
HUMANEVAL = load_humaneval()

def calls_task() -> Task:
    tests = [{"args": wire.encode([2]), "expected": wire.encode(4)}]
    return Task(prompt="double(x)", answer="def double(x):\n    return 2 * x\n", family="code",
                source="test", metadata={"mode": "calls", "function": "double", "tests": tests})


@pytest.fixture(scope="module", params=["local", pytest.param("bwrap", marks=needs_bwrap)])
def scorer(request):
    scorer = CodeScorer(request.param, limits=LIMITS)
    yield scorer
    scorer.close()


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_calls_mode_scores_bad_output(scorer, name):
    score = scorer.score(calls_task(), hostile("double", "x", name))
    assert score.reward == 0.0 and score.verifier == "bad_output", score


@pytest.mark.parametrize("name", ["nesting", "huge_tagged_int", "invalid_utf8", "never_ends",
                                  *sorted(BATCH_PAYLOADS)])
def test_check_mode_scores_bad_output(scorer, name):
    task = HUMANEVAL.get("HumanEval/0")
    score = scorer.score(task, hostile("has_close_elements", "numbers, threshold", name))
    assert score.reward == 0.0 and score.verifier == "bad_output", score


def test_batch_keeps_the_other_rewards(scorer):
    task = HUMANEVAL.get("HumanEval/0")
    gold = scorer.gold_completion(task)
    completions = [gold, hostile("has_close_elements", "numbers, threshold", "nesting"), gold]
    scores = scorer.score_batch([task] * 3, completions)
    assert [s.reward for s in scores] == [1.0, 0.0, 1.0]
    assert scores[1].verifier == "bad_output", scores[1]


def test_stdio_output_that_is_not_text_or_too_long(scorer):
    task = Task(prompt="echo", answer="print(input())", family="code", source="test",
                metadata={"mode": "stdio", "tests": [{"input": "hi\n", "output": "hi\n"}]})
    binary = scorer.score(task, "```python\nimport sys\nsys.stdout.buffer.write(b'hi\\xff\\x00')\n```")
    assert binary.reward == 0.0 and binary.verifier == "bad_output", binary
    flood = scorer.score(task, "```python\nimport sys\nsys.stdout.write('x' * 5_000_000)\n```")
    assert flood.reward == 0.0 and flood.verifier == "bad_output", flood
    assert scorer.score(task, scorer.gold_completion(task)).reward == 1.0


STDIO_LIMITS = Limits(wall_time=3.0, memory_mb=256, max_processes=16)


@pytest.fixture(scope="module",
                params=["local", pytest.param("bwrap", marks=needs_bwrap), "docker"])
def any_sandbox(request):
    """Every backend; Docker skips without an engine (fails under RLVR_REQUIRE_DOCKER=1)."""
    if request.param == "docker":
        yield request.getfixturevalue("docker_sandbox")
        return
    from rlvr_envs.sandbox import get_sandbox

    sandbox = get_sandbox(request.param)
    yield sandbox
    sandbox.close()


def stdio_task(expected: str) -> Task:
    return Task(prompt="echo", answer="print(input())", family="code", source="test",
                metadata={"mode": "stdio", "tests": [{"input": expected, "output": expected}]})


def test_endless_stdio_output_is_killed_promptly_as_bad_output(any_sandbox):
    # on Docker the run used to end as `timeout` after ~12 s: `docker kill` waited for the
    # streams of a client whose stdout pipe was full and no longer read
    flood = [any_sandbox.python, "-I", "-S", "-c", 'while True: print("x" * 1000)']
    run = any_sandbox.run(flood, limits=STDIO_LIMITS)
    assert run.truncated and run.killed and not run.timed_out, run
    scorer = CodeScorer(any_sandbox, limits=STDIO_LIMITS)
    score = scorer.score(stdio_task("hi\n"), '```python\nwhile True: print("x" * 1000)\n```')
    assert score.reward == 0.0 and score.verifier == "bad_output", score


def test_waiting_for_the_start_reads_stdout_too():
    # READY comes on stderr behind a megabyte of stdout: reading stderr alone would wait
    # for it forever (the writer blocks on a full stdout pipe)
    from rlvr_envs.sandbox import docker

    script = ("import os, sys; os.write(1, b'o' * 1_000_000); "
              f"os.write(2, b'warn ' + {docker.READY!r} + b'err')")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    ready, stderr, stdout = docker.await_ready(proc, timeout=60, keep_stdout=1000)
    proc.communicate()
    assert ready and stderr == b"warn err" and stdout == b"o" * 1000


def test_invalid_utf8_fails_even_when_the_expected_output_holds_u_fffd(any_sandbox):
    scorer = CodeScorer(any_sandbox, limits=STDIO_LIMITS)
    task = stdio_task("a\ufffdb\n")  # decoded with replacement, b"a\xffb" would read the same
    # a stray byte (replaced, it reads exactly as the expected output), an overlong NUL, an
    # encoded surrogate
    for literal in (r"b'a\xffb\n'", r"b'a\xc0\x80b\n'", r"b'a\xed\xa0\x80b\n'"):
        hostile = f"```python\nimport sys\nsys.stdout.buffer.write({literal})\n```"
        score = scorer.score(task, hostile)
        assert score.reward == 0.0 and score.verifier == "bad_output", (literal, score)
    assert scorer.score(task, scorer.gold_completion(task)).reward == 1.0
    run = any_sandbox.run([any_sandbox.python, "-I", "-S", "-c",
                           r"import sys; sys.stdout.buffer.write(b'a\xffb')"])
    assert run.stdout == "a\ufffdb" and not run.stdout_utf8, run


@pytest.mark.parametrize("line", [
    b"[" * 100_000, b'{"a": ' + b"1" * 5000 + b"}", b'{"a": "\xff"}', b'{"a": "\x00"}',
    b'{"a": NaN}', b"[]", b"", b"{" * (wire.MAX_MESSAGE_BYTES + 1)])
def test_load_message_raises_only_wire_errors(line):
    with pytest.raises(wire.WireError):
        wire.load_message(line)


def test_decode_refuses_malformed_values_with_wire_errors():
    for item in (["int", "9" * 5000], ["int", "x"], ["float", "nope"], ["bytes", "zz"],
                 ["set", [["list", []]]], ["dict", [[["list", []], ["int", "1"]]]]):
        with pytest.raises(wire.WireError):
            wire.decode(item)
    assert wire.load_message(b'{"ok": true}') == {"ok": True}
    assert len(wire.short_repr(list(range(10**6)))) <= 200
