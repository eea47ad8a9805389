"""What the grader does is never the candidate's time, and never unbounded: compiling the
program and starting the run's processes (a fork server's first children, a test driver's
imports) happen outside the run's clock, and a program over `max_code_chars` scores 0
(`too_long`) without being compiled (red team of 2026-12-06: a 0.3 MB f-string program took
10 s to compile, and a driver starting on a busy machine took a correct program's time)."""

from __future__ import annotations

import time

import pytest

from rlvr_envs.core.task import Task
from rlvr_envs.sandbox import Limits, get_sandbox
from rlvr_envs.tasks.code.scoring import MAX_CODE_CHARS, CodeScorer
from rlvr_envs.verify.code import grader

# local-unsafe says what it exposes on every sandbox made; here it only keeps the test fast
pytestmark = pytest.mark.filterwarnings("ignore::rlvr_envs.sandbox.local.UnsafeSandboxWarning")
LIMITS = Limits(wall_time=1.0, memory_mb=256, max_processes=16)
SLOW_START = 1.5  # seconds each run's processes take to start here, more than its wall_time


def calls_task() -> Task:
    return Task(prompt="double", answer="", family="code", source="t",
                metadata={"mode": "calls", "function": "f",
                          "tests": [{"args": ["list", [["int", "2"]]], "expected": ["int", "4"]}]})


def check_task() -> Task:
    return Task(prompt="double", answer="", family="code", source="t",
                metadata={"mode": "check", "entry": "f",
                          "test": "def check(candidate):\n    assert candidate(2) == 4\n"})


def test_a_program_over_the_size_cap_scores_zero_without_being_compiled(monkeypatch):
    compiled = []
    monkeypatch.setattr("rlvr_envs.tasks.code.scoring.syntax_error",
                        lambda code: compiled.append(code))
    scorer = CodeScorer("local-unsafe", limits=LIMITS, max_code_chars=1000)
    padding = "\n".join(f"x{i} = f'{{1}}{{2}}'" for i in range(100))
    score = scorer.score(calls_task(), "```python\ndef f(x):\n    return 2 * x\n" + padding + "\n```")
    assert (score.reward, score.verifier) == (0.0, "too_long") and not compiled
    assert "at most 1,000" in score.details["first_failure"]
    assert CodeScorer("local-unsafe").max_code_chars == MAX_CODE_CHARS
    for bad in (0, -5, 2.5, True, "100"):
        with pytest.raises(ValueError, match="max_code_chars"):
            CodeScorer("local-unsafe", max_code_chars=bad)


@pytest.fixture
def slow_starts(monkeypatch):
    """Every candidate and test driver takes SLOW_START seconds to start."""
    prepare, start = grader._prepare_candidate, grader._start_driver

    def slow_prepare(server, limits):
        time.sleep(SLOW_START)
        return prepare(server, limits)

    def slow_driver(server, limits):
        time.sleep(SLOW_START)
        return start(server, limits)

    monkeypatch.setattr(grader, "_prepare_candidate", slow_prepare)
    monkeypatch.setattr(grader, "_start_driver", slow_driver)


@pytest.mark.parametrize("backend", ["local", "local-unsafe"])
@pytest.mark.parametrize("make_task", [calls_task, check_task])
def test_starting_the_run_s_processes_is_not_the_run_s_time(backend, make_task, slow_starts):
    sandbox = get_sandbox(backend, fork_servers=1)
    try:
        score = CodeScorer(sandbox, limits=LIMITS).score(
            make_task(), "```python\ndef f(x):\n    return 2 * x\n```")
    finally:
        sandbox.close()
    assert (score.reward, score.verifier) == (1.0, "correct"), score


def test_a_task_s_own_limits_only_tighten_the_scorer_s(monkeypatch):
    """A task record (which may arrive with a label, over HTTP too) cannot give its run more
    than whoever made the scorer allows."""
    seen = []
    monkeypatch.setattr("rlvr_envs.tasks.code.scoring.grade_calls",
                        lambda sandbox, program, **kw: seen.append(kw["limits"]) or
                        grader.CodeVerdict(True, "correct", 1, 1))
    scorer = CodeScorer("local-unsafe", limits=LIMITS)
    task = calls_task()
    task.metadata["limits"] = {"wall_time": 3600, "memory_mb": 65536, "max_processes": 8}
    scorer.grade(task, "def f(x):\n    return 2 * x\n")
    assert seen[0] == Limits(wall_time=1.0, memory_mb=256, max_processes=8)
    assert Limits(cpu_time=5).within(Limits(cpu_time=2)).cpu_time == 2
    assert Limits().within(Limits(cpu_time=2)).cpu_time == 2
