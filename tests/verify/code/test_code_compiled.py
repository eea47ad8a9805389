"""The grader compiles a candidate's code once (its syntax check) and a fork-server candidate
runs that code object: the program behaves as if it had compiled its own source, compiler
warnings stay out of the grader's stderr, `warm_up` leaves ready drivers behind, and the
candidate server's own warm-up in the zygote answers like a candidate."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rlvr_envs.sandbox import Limits, get_sandbox
from rlvr_envs.verify.code import grader, wire
from rlvr_envs.verify.code.extract import syntax_error
from rlvr_envs.verify.code.grader import CANDIDATE_SERVER, PROGRAMS, grade_check, warm_up

LIMITS = Limits(wall_time=10, memory_mb=512, max_processes=16)


@pytest.fixture(scope="module")
def sandbox():
    box = get_sandbox("local")
    yield box
    box.close()


def test_errors_the_compiler_finds_are_syntax_errors_in_the_grader():
    assert syntax_error("def f():\n    return 1\n") is None
    assert "outside function" in syntax_error("return 1\n")
    assert "outside loop" in syntax_error("break\n")
    assert syntax_error("def f(:\n").startswith("SyntaxError")
    assert syntax_error("x" + "+x" * 100_000).startswith("RecursionError")


def test_compiler_warnings_about_a_candidate_never_reach_stderr():
    """In a process of its own (pytest replaces the warning filters while a test runs)."""
    script = ("from rlvr_envs.verify.code.extract import compile_solution\n"
              "code, error = compile_solution('x = 1\\nif x is 1:\\n    y = 2\\n')\n"
              "assert code is not None and error is None\n"
              "compile('x = 1\\nif x is 1:\\n    y = 2\\n', 'mine.py', 'exec')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    assert done.stderr.count("SyntaxWarning") == 1 and "mine.py" in done.stderr


def test_the_candidate_runs_the_grader_compile_as_its_own_source(sandbox):
    """No __future__ flag of the grader's module leaks in (annotations stay objects), asserts
    and __debug__ are kept, names and line numbers are the candidate's."""
    code = ("def f(x: int) -> int:\n"
            "    assert x >= 0, 'negative'\n"
            "    return x if __debug__ else -1\n"
            "def annotated():\n"
            "    return f.__annotations__['x'] is int\n"
            "def raises():\n"
            "    try:\n        f(-1)\n    except AssertionError:\n        return True\n"
            "    return False\n")
    test = "assert annotated() is True\nassert f(3) == 3\nassert raises() is True\n"
    verdict = grade_check(sandbox, code, test=test, names=["f", "annotated", "raises"],
                          limits=LIMITS)
    assert verdict.passed, verdict


def test_a_candidate_of_another_interpreter_compiles_the_source_itself():
    scope = {}
    exec(compile(CANDIDATE_SERVER, "candidate_server.py", "exec"), scope)
    request = {"code": "value = 41 + 1\n", "compiled": {"python": "another", "code": "00"}}
    namespace = {}
    exec(scope["_solution_code"](request), namespace)
    assert namespace["value"] == 42


def test_warm_up_starts_ready_drivers_on_every_zygote(sandbox):
    assert warm_up(sandbox, LIMITS, drivers=2)
    servers = sandbox.start_fork_servers(PROGRAMS)
    assert len(servers) == sandbox._fork_servers.max_servers >= 2
    for server in servers:
        idle = server._idle.get(("driver", Limits.coerce(LIMITS)), [])
        assert len(idle) >= 2 and all(driver.usable() for driver in idle)
    verdict = grade_check(sandbox, "def f():\n    return 1\n", test="assert f() == 1\n",
                          names=["f"], limits=LIMITS)
    assert verdict.passed, verdict


def test_warm_up_says_when_nothing_is_kept_warm():
    cold = get_sandbox("local", warm=False)
    try:
        assert warm_up(cold, LIMITS, drivers=1) is False
    finally:
        cold.close()


def test_the_candidate_server_warm_up_serves_every_kind_of_request_and_leaves_no_fd():
    """What the fork server runs once before forking (so that CPython's first-use writes to
    this code happen in the zygote, not in every child): a load, calls, a call that raises and
    a batch, each answered as a candidate would be; nothing stays open."""
    # the fds are counted in a process of its own: the test process's other threads (servers
    # left by earlier tests) open and close theirs at any time
    fd_check = (
        "import os, sys\n"
        "namespace = {'__name__': 'candidate'}\n"
        "exec(compile(sys.stdin.read(), 'candidate.py', 'exec'), namespace)\n"
        "before = sorted(os.listdir('/proc/self/fd'))\n"
        "namespace['warm_up'](rounds=2)\n"
        "print(before == sorted(os.listdir('/proc/self/fd')))\n"
    )
    done = subprocess.run([sys.executable, "-c", fd_check], input=CANDIDATE_SERVER, text=True,
                          capture_output=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, "True"), done.stderr
    namespace = {"__name__": "candidate"}
    exec(compile(CANDIDATE_SERVER, "candidate.py", "exec"), namespace)
    replies = namespace["warm_up"](rounds=2)
    load, call, raised, batch = replies
    assert (load["ok"], call["ok"], raised["ok"]) == (True, True, False)
    assert [reply["ok"] for reply in batch["batch"]] == [True, True, False, True]
    assert raised["error"] == "ValueError: raise"
    assert wire.decode(replies[1]["value"]) == [1, 1, "1", (1.5, None, True), {"k": {2, 3}}]


def test_a_task_s_test_is_compiled_by_its_first_driver_and_kept_for_the_others(sandbox):
    """The grader compiles no test code: the first driver to check a task compiles it (while
    the candidate loads) and hands it back; later checks, on any driver, get that copy and
    judge exactly as a fresh compile would."""
    test = "assert f(2) == 4\nassert f(3) == 9, 'squares'\nassert True\n"
    assert grader.kept_check("", test) is None
    first = grade_check(sandbox, "def f(x):\n    return x * x\n", test=test, names=["f"],
                        limits=LIMITS)
    assert first.passed and first.tests_total == 2, first
    kept = grader.kept_check("", test)
    assert kept["python"] == sys.version and kept["counted"] == [True, True, False]
    for _ in range(3):  # several drivers: each gets the kept copy
        wrong = grade_check(sandbox, "def f(x):\n    return x + x\n", test=test, names=["f"],
                            limits=LIMITS)
        assert (wrong.passed, wrong.reason, wrong.tests_passed, wrong.tests_total) == \
            (False, "tests_failed", 1, 2), wrong
        assert wrong.first_failure.startswith("line 2: assert f(3) == 9"), wrong


def test_the_grader_keeps_only_a_compiled_check_of_the_expected_shape():
    for blob in (None, "code", {"python": "another", "code": "00", "counted": []},
                 {"python": sys.version, "code": 3, "counted": []},
                 {"python": sys.version, "code": "00", "counted": "all"}):
        grader.keep_check("", "assert shape\n", blob)
        assert grader.kept_check("", "assert shape\n") is None
