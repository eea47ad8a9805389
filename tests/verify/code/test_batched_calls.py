"""A check's calls travel to the candidate in one batch (fork-server backends): verdicts are
those of live calls, in order, also when the test code's arguments depend on earlier results,
draw random numbers, or would loop forever without real results."""

from __future__ import annotations

import os
import time

import pytest

from rlvr_envs.sandbox import Limits, get_sandbox
from rlvr_envs.sandbox.bwrap import bwrap_problem
from rlvr_envs.verify.code.grader import grade_check

needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None,
                                 reason=f"bubblewrap unavailable: {bwrap_problem()}")
LIMITS = Limits(wall_time=10.0, memory_mb=256, max_processes=16)
DOUBLE = "def f(x):\n    return 2 * x\n"


@pytest.fixture(scope="module", params=["local", pytest.param("bwrap", marks=needs_bwrap)])
def sandbox(request):
    sandbox = get_sandbox(request.param)
    yield sandbox
    sandbox.close()


def check(sandbox, test: str, code: str = DOUBLE):
    return grade_check(sandbox, code, test=test, entry="f", limits=LIMITS)


def test_every_call_of_a_plain_check_is_batched(sandbox):
    verdict = check(sandbox, "def check(candidate):\n"
                             "    for i in range(20):\n"
                             "        assert candidate(i) == 2 * i\n")
    assert verdict.passed, verdict
    assert verdict.extra["calls"] == 20 and verdict.extra["batched"] == 20


def test_wrong_answers_in_a_batch_fail_as_live_ones(sandbox):
    verdict = check(sandbox, "def check(candidate):\n"
                             "    for i in range(4):\n"
                             "        assert candidate(i) == 2 * i\n",
                    code="def f(x):\n    return 2 * x if x < 2 else -1\n")
    assert not verdict.passed and verdict.reason == "tests_failed"
    assert verdict.first_failure.startswith("line 3")


def test_arguments_that_depend_on_results_go_live(sandbox):
    verdict = check(sandbox, "def check(candidate):\n"
                             "    x = candidate(1)\n"
                             "    assert candidate(x) == 4\n"
                             "    for i in range(5):\n"
                             "        assert candidate(i) == 2 * i\n")
    assert verdict.passed, verdict
    # the first call comes from the batch; the second's argument was unknown in the first
    # pass, so from there on every call is live
    assert verdict.extra["calls"] == 7 and verdict.extra["batched"] == 1


def test_unseeded_random_test_code_sees_the_same_numbers_twice(sandbox):
    verdict = check(sandbox, "import random\n"
                             "def check(candidate):\n"
                             "    for _ in range(10):\n"
                             "        x = random.randint(0, 10**9)\n"
                             "        assert candidate(x) == 2 * x\n")
    assert verdict.passed, verdict
    assert verdict.extra["batched"] == 10


def test_a_stateful_candidate_sees_its_calls_in_order(sandbox):
    counter = "n = [0]\ndef f(x):\n    n[0] += 1\n    return n[0]\n"
    verdict = check(sandbox, "def check(candidate):\n"
                             "    assert candidate(0) == 1\n"
                             "    assert candidate(0) == 2\n"
                             "    assert [candidate(0), candidate(0)] == [3, 4]\n",
                    code=counter)
    assert verdict.passed, verdict
    assert verdict.extra["batched"] == 4


def test_a_first_pass_that_would_never_end_is_cut_short(sandbox):
    started = time.monotonic()
    verdict = check(sandbox, "def check(candidate):\n"
                             "    while True:\n"
                             "        try:\n"
                             "            value = candidate(3) + 0\n"
                             "            break\n"
                             "        except BaseException:\n"
                             "            continue\n"
                             "    assert value == 6\n")
    assert verdict.passed, verdict
    assert verdict.extra["calls"] == 1
    assert time.monotonic() - started < LIMITS.wall_time / 2


def test_a_candidate_that_dies_mid_batch_fails_the_calls_after(sandbox):
    verdict = check(sandbox, "def check(candidate):\n"
                             "    for i in range(6):\n"
                             "        assert candidate(i) == 2 * i\n",
                    code="import os\ndef f(x):\n    if x == 3:\n        os._exit(0)\n"
                         "    return 2 * x\n")
    assert not verdict.passed and verdict.reason == "tests_failed"
    assert "candidate process ended" in verdict.first_failure


#: a candidate that answers its batch with one forged line of ~30 MiB (780k short strings):
#: hundreds of MiB once the driver has decoded it
HUGE_BATCH = """
import os
def f(x):
    if x == 3:
        value = b'["list", [' + b",".join([b'["str", "abcdefghijabcdefghijabcdefghij"]'] * 780000)
        answers = [b'{"ok": true, "value": ' + value + b']]}'] + \
            [b'{"ok": true, "value": ["int", "0"]}'] * 3
        line = memoryview(b'{"batch": [' + b", ".join(answers) + b']}\\n')
        while line:
            line = line[os.write(3, line):]
        os._exit(0)
    return 2 * x
"""


def driver_sizes() -> dict[int, int]:
    """The resident MiB of every reusable test driver on this machine, by pid."""
    sizes = {}
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/comm") as fh:
                if fh.read().strip() != "rlvr-driver":
                    continue
            with open(f"/proc/{entry}/status") as fh:
                sizes[int(entry)] = next(int(line.split()[1]) // 1024 for line in fh
                                         if line.startswith("VmRSS"))
        except (OSError, ValueError, StopIteration):
            continue
    return sizes


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["local", pytest.param("bwrap", marks=needs_bwrap)])
def test_a_driver_keeps_nothing_of_a_check_while_it_waits(backend):
    """A reusable driver waiting for its next check holds none of the last candidate's
    answers: a forged batch of ~30 MiB, hundreds of MiB once decoded, would otherwise stay in
    a trusted process, outside any run's memory budget, until that driver's next check."""
    before = set(driver_sizes())
    sandbox = get_sandbox(backend, fork_servers=1)
    try:
        verdict = grade_check(sandbox, HUGE_BATCH, entry="f",
                              test="def check(candidate):\n"
                                   "    for i in range(4):\n"
                                   "        assert candidate(i) == 2 * i\n",
                              limits=Limits(wall_time=20.0, memory_mb=1024, max_processes=16))
        assert not verdict.passed and verdict.reason == "tests_failed", verdict
        ours = {}
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # freeing what it decoded takes the driver a moment
            ours = {pid: size for pid, size in driver_sizes().items() if pid not in before}
            if ours and max(ours.values()) < 128:
                break
            time.sleep(0.2)
        assert ours and max(ours.values()) < 128, ours
    finally:
        sandbox.close()
