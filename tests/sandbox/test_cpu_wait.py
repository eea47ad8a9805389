"""A run's time limit does not count the time its processes waited for a CPU: the same
program gets the same verdict on an idle machine and beside busy processes, while a busy loop
and a sleeper still time out."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from rlvr_envs.sandbox import Limits, cpu_wait, get_sandbox
from rlvr_envs.sandbox.bwrap import bwrap_problem
from rlvr_envs.sandbox.cgroup import RunCgroup
from rlvr_envs.sandbox.cpu_wait import (
    BACKSTOP,
    RunClock,
    StallClock,
    cpu_stall_seconds,
    process_tree,
    thread_times,
)
from rlvr_envs.verify.code.grader import grade_check, grade_stdio

needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None,
                                 reason=f"bubblewrap unavailable: {bwrap_problem()}")

LOOP = "def work(n):\n    total = 0\n    for i in range(n):\n        total += i * i % 7\n    return total\n"


def iterations_for(cpu_seconds: float) -> int:
    """How many rounds of LOOP's `work` take `cpu_seconds` of CPU here (measured now)."""
    scope: dict = {}
    exec(LOOP, scope)
    best = float("inf")
    for _ in range(3):  # the fastest of three: a run then needs at least `cpu_seconds`
        began = time.process_time()
        scope["work"](300_000)
        best = min(best, time.process_time() - began)
    return int(300_000 * cpu_seconds / max(best, 1e-3))


def expected(n: int) -> int:
    scope: dict = {}
    exec(LOOP, scope)
    return scope["work"](n)


@pytest.fixture(params=["local", pytest.param("bwrap", marks=needs_bwrap)])
def sandbox(request):
    box = get_sandbox(request.param)
    yield box
    box.close()


LIMIT = 2.0


def test_a_correct_call_stays_correct_beside_busy_processes(sandbox, busy_machine):
    n = iterations_for(0.5 * LIMIT)
    verdict = grade_check(sandbox, LOOP, test=f"def check(c):\n    assert c({n}) == {expected(n)}\n",
                          entry="work", limits=Limits(wall_time=LIMIT))
    assert verdict.reason == "correct", verdict
    assert verdict.duration > LIMIT  # it did wait: a wall-clock deadline would have failed it


def test_a_stdio_program_keeps_its_budget_across_tests(sandbox, busy_machine):
    n = iterations_for(0.15 * LIMIT)
    program = LOOP + "print(work(int(input())))\n"
    tests = [{"input": f"{n}\n", "output": f"{expected(n)}\n"}] * 3  # 45% of the budget
    verdict = grade_stdio(sandbox, program, tests=tests, limits=Limits(wall_time=LIMIT))
    assert verdict.reason == "correct", verdict
    assert verdict.duration > LIMIT


def test_a_busy_loop_still_times_out_beside_busy_processes(sandbox, busy_machine):
    limit = 0.5
    verdict = grade_check(sandbox, "def work(n):\n    while True:\n        pass\n",
                          test="def check(c):\n    assert c(1) == 1\n", entry="work",
                          limits=Limits(wall_time=limit))
    assert verdict.reason == "timeout"
    assert verdict.duration < 6 * limit + 0.5  # a third of a CPU: ~3 x the limit, not 10


def test_a_run_that_keeps_itself_waiting_gains_no_time(sandbox):
    """Busy children of its own make the candidate wait for a CPU; the run's threads used
    the whole time between them, so its deadline does not move."""
    limit = 0.5
    code = ("import os\ndef work(n):\n    for _ in range(2 * os.cpu_count()):\n"
            "        if os.fork() == 0:\n            while True:\n                pass\n"
            "    while True:\n        pass\n")
    verdict = grade_check(sandbox, code, test="def check(c):\n    assert c(1) == 1\n",
                          entry="work", limits=Limits(wall_time=limit, max_processes=64))
    assert verdict.reason == "timeout"
    assert verdict.duration < 3 * limit  # counting its waiting would have given it ~5 x


@pytest.mark.parametrize("grade", ["call", "stdio"])
def test_a_sleeper_gets_no_more_time_on_a_busy_machine(sandbox, busy_machine, grade):
    limit = 0.5
    if grade == "call":
        verdict = grade_check(sandbox, "import time\ndef work(n):\n    time.sleep(30)\n",
                              test="def check(c):\n    assert c(1) == 1\n", entry="work",
                              limits=Limits(wall_time=limit))
    else:
        verdict = grade_stdio(sandbox, "import time\ntime.sleep(30)\n",
                              tests=[{"input": "", "output": ""}], limits=Limits(wall_time=limit))
    assert verdict.reason == "timeout"
    assert verdict.duration < 2 * limit + 1.0  # sleeping waits for no CPU: no extension


def test_spawn_moves_its_deadline_by_the_wait(sandbox, busy_machine):
    n = iterations_for(0.5 * LIMIT)
    result = sandbox.run([sandbox.python, "-I", "-S", "-c", LOOP + f"print(work({n}))"],
                         limits=Limits(wall_time=LIMIT))
    assert not result.timed_out and result.stdout.strip() == str(expected(n))
    assert result.cpu_wait > 0 and result.duration > LIMIT


@pytest.mark.parametrize("container", ["pooled", "fresh"])
def test_docker_moves_its_deadline_by_the_wait(docker_sandbox, busy_machine, container, tmp_path):
    n = iterations_for(0.5 * LIMIT)
    where = {"workdir": tmp_path} if container == "fresh" else {}  # a caller's directory
    result = docker_sandbox.run([docker_sandbox.python, "-I", "-S", "-c", LOOP + f"print(work({n}))"],
                                limits=Limits(wall_time=LIMIT), **where)
    assert not result.timed_out and result.stdout.strip() == str(expected(n)), result
    assert result.cpu_wait > 0 and result.duration > LIMIT  # read from the container's cgroup


def test_the_clock_reads_waiting_only_at_its_deadline():
    calls = []

    def members():
        calls.append(1)
        return [os.getpid()]

    clock = RunClock(0.05, members, cpu_used=lambda: 0.0)
    assert clock.remaining() > 0 and not calls  # nothing read before the deadline
    while clock.remaining() > 0:
        pass
    assert calls  # read once the plain deadline had passed
    assert clock.deadline <= clock.started + BACKSTOP * clock.limit


def test_without_members_the_clock_is_the_wall_clock():
    clock = RunClock(0.05, None, started=time.monotonic() - 1.0)
    assert clock.remaining() < 0 and clock.waited == 0.0


def test_a_run_never_gets_more_than_its_limit_of_cpu(monkeypatch):
    """However long one of its threads waited, the deadline moves by no more than the time
    the run's processes (its cgroup's count) left unused: at the deadline, the run has had at
    most `limit` seconds of CPU."""
    from rlvr_envs.sandbox import cpu_wait
    monkeypatch.setattr(cpu_wait, "longest_wait", lambda pids: 50.0)
    started = time.monotonic() - 2.0
    for cpu in (0.0, 0.5, 1.0, 1.9, 3.0):
        clock = RunClock(0.5, lambda: [os.getpid()], cpu_used=lambda: cpu, started=started)
        clock.sample()
        elapsed = time.monotonic() - started
        assert clock.waited <= max(0.0, elapsed - cpu) + 1e-6
        if clock.deadline > time.monotonic():  # still running: its CPU is within its limit
            assert cpu <= clock.limit


def test_without_a_count_of_the_run_s_cpu_the_clock_is_the_wall_clock():
    """No cgroup counting every process the run had: its waiting is never read (ended
    children's CPU could hide there)."""
    clock = RunClock(0.05, lambda: [os.getpid()], cpu_used=lambda: None,
                     started=time.monotonic() - 1.0)
    assert clock.remaining() < 0 and clock.waited == 0.0


def test_process_tree_and_thread_times_read_live_processes():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert child.pid in process_tree(os.getpid())
        times = thread_times([os.getpid(), child.pid])
        assert len(times) >= 2 and all(cpu >= 0 and wait >= 0 for cpu, wait in times)
        assert sum(cpu for cpu, _ in times) > 0
        assert thread_times([2 ** 22 + 17]) == []  # a pid that is not there reads as nothing
    finally:
        child.kill()
        child.wait()


BURN = ("import os, signal, time\n" +
        "signal.signal(signal.SIGCHLD, signal.SIG_IGN)\n"  # ended children: reaped by the kernel
        "pid = os.fork()\nif pid == 0:\n    t = time.process_time()\n"
        "    while time.process_time() - t < 0.3:\n        pass\n    os._exit(0)\n")


@pytest.mark.skipif(RunCgroup.create(8) is None, reason="no writable cgroup filesystem")
@pytest.mark.parametrize("ignored", [True, False])
def test_a_run_cgroup_counts_the_cpu_of_ended_children(ignored):
    """A child that burned 0.3 s and ended counts, also when its parent ignores SIGCHLD and
    the kernel reaped it (no process's counters show its CPU then)."""
    cgroup = RunCgroup.create(8)
    code = (BURN if ignored else BURN.replace("signal.SIG_IGN", "signal.SIG_DFL")
            + "os.waitpid(pid, 0)\n")
    try:
        if cgroup.cpu_used() is None:
            pytest.skip("this cgroup setup does not count CPU")
        joins = "".join(f"open({path!r}, 'w').write('0')\n" for path in cgroup.procs_files)
        done = subprocess.run([sys.executable, "-c", joins + code + "time.sleep(0.5)\n"],
                              timeout=30)
        assert done.returncode == 0
        assert cgroup.cpu_used() >= 0.25
    finally:
        cgroup.remove()


HIDDEN_WORK = """import os, signal, time
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # ended children are reaped by the kernel
def work(n):
    if os.fork() == 0:  # always runnable, low priority: it waits for a CPU most of the time
        os.nice(19)
        while True:
            pass
    for _ in range(n):  # the work, in children of 0.05 s of CPU each
        r, w = os.pipe()
        if os.fork() == 0:
            os.close(r)
            t = time.process_time()
            while time.process_time() - t < 0.05:
                pass
            os._exit(0)
        os.close(w)
        os.read(r, 1)  # returns when the child has ended
        os.close(r)
    return n
"""


def test_work_hidden_in_children_the_kernel_reaps_gets_no_more_than_its_limit(sandbox,
                                                                               busy_machine):
    """0.7 s of CPU behind a 0.5 s limit, done by children the kernel reaps while a lowest-
    priority process waits for a CPU the whole time: the run's cgroup counts the children, so
    its deadline moves by no more than the time the run left unused and it times out."""
    limit = 0.5
    verdict = grade_check(sandbox, HIDDEN_WORK, test="def check(c):\n    assert c(14) == 14\n",
                          entry="work", limits=Limits(wall_time=limit, max_processes=16))
    assert verdict.reason == "timeout", verdict


class FakeTime:
    def __init__(self):
        self.now = 100.0

    def monotonic(self):
        return self.now


@pytest.fixture
def fake_time(monkeypatch):
    clock = FakeTime()
    monkeypatch.setattr(cpu_wait.time, "monotonic", clock.monotonic)
    return clock


def test_stall_clock_moves_by_the_machines_cpu_stall_and_no_further_than_the_backstop(fake_time):
    stalled = [50.0]
    clock = StallClock(2.0, stalled=lambda: stalled[0])
    fake_time.now += 1.0
    assert clock.remaining() == pytest.approx(1.0)
    fake_time.now += 1.5  # past the plain deadline, tasks waited 1 s for a CPU meanwhile
    stalled[0] += 1.0
    assert clock.remaining() == pytest.approx(0.5)
    fake_time.now += 0.5  # no more waiting: the deadline holds
    assert clock.remaining() <= 0
    stalled[0] += 1000.0  # an oversubscribed machine: at most BACKSTOP × the limit in all
    assert clock.remaining() > 0
    assert clock.deadline - clock.started == pytest.approx(BACKSTOP * 2.0)
    fake_time.now = clock.started + BACKSTOP * 2.0
    stalled[0] += 1000.0
    assert clock.remaining() <= 0


def test_stall_clock_without_a_stall_count_is_the_wall_clock(fake_time):
    clock = StallClock(1.0, stalled=lambda: None)
    fake_time.now += 1.0
    assert clock.remaining() <= 0


def test_cpu_stall_seconds_reads_the_some_line(tmp_path):
    pressure = tmp_path / "cpu"
    pressure.write_text("some avg10=0.54 avg60=1.17 avg300=1.57 total=4038650065\n"
                        "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n")
    assert cpu_stall_seconds(str(pressure)) == pytest.approx(4038.650065)
    assert cpu_stall_seconds(str(tmp_path / "missing")) is None
    pressure.write_text("garbage")
    assert cpu_stall_seconds(str(pressure)) is None

