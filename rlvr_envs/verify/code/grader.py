"""Host side of code grading: start the sandboxed processes, relay calls, judge the results.

Three ways a task is tested, all with the candidate's code in its own sandboxed process:
- `check`: the task's test code (HumanEval `check(candidate)`, MBPP asserts) runs in a second
  process, the test driver; each call it makes to the candidate travels as tagged JSON to the
  candidate server and back. The candidate cannot reach the test code's frames, source or
  files; it only ever sees the arguments of its own calls.
- `calls`: this process calls the candidate's function with each test's arguments and compares
  the returned value to the expected one itself (exact types; a float tolerance only when the
  task sets one). Expected values never leave this process.
- `stdio`: the candidate's program runs once per test with the input on stdin; its stdout is
  compared here to the expected output (whitespace at line ends ignored); stdout that is not
  UTF-8 or longer than `max_output_bytes` fails the run as `bad_output`.
A run passes only when every test produced a result and every result was right.

Where the sandbox has a warm fork server (local, bwrap), every candidate server is a fresh
child of it in its own namespaces, forked ahead of use, and the test driver is a reusable
trusted child that receives the candidate's socket with each request and calls it directly;
otherwise (docker, `warm=False`) both are fresh sandboxed interpreters and this process relays
the driver's messages to the candidate.
"""

from __future__ import annotations

import json
import marshal
import os
import select
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from rlvr_envs.sandbox import Limits, Sandbox, SandboxedProcess
from rlvr_envs.sandbox.base import ForkedRun, WarmForkServer
from rlvr_envs.sandbox.cpu_wait import BACKSTOP, RunClock
from rlvr_envs.verify.code import wire
from rlvr_envs.verify.code.extract import compile_solution

_HERE = Path(__file__).parent
_WIRE_SRC = (_HERE / "wire.py").read_text()
CANDIDATE_SERVER = _WIRE_SRC + "\n" + (_HERE / "candidate_server.py").read_text()
TEST_DRIVER = _WIRE_SRC + "\n" + (_HERE / "test_driver.py").read_text()
#: what the fork server preloads: name → source defining `main(*channel_fds)`
PROGRAMS = {"candidate": CANDIDATE_SERVER, "driver": TEST_DRIVER}


@dataclass
class CodeVerdict:
    """Outcome of grading one program against one task's tests."""

    passed: bool
    reason: str  # correct | tests_failed | timeout | memory | bad_output | load_error | crashed
    #              | sandbox_error
    tests_passed: int = 0
    tests_total: int = 0
    first_failure: str | None = None
    isolation: str = ""
    duration: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


class ChannelClosed(Exception):
    """The process closed its end (exited or crashed)."""


class ChannelTimeout(Exception):
    """The deadline passed while waiting on a process."""


class BadOutput(Exception):
    """A process sent something that is not a well-formed, bounded protocol message."""


class Channel:
    """Line-delimited JSON over a pair of fds (a process's pipes, or one socket), with a
    deadline."""

    def __init__(self, in_fd: int, out_fd: int, deadline: float):
        self.in_fd, self.out_fd, self.deadline = in_fd, out_fd, deadline
        #: the run's clock, when it has one: it moves the deadline on by the time the run's
        #: processes waited for a CPU (`RunClock`)
        self.clock: RunClock | None = None
        self.buffer = bytearray()
        self.scanned = 0  # how much of the buffer is known to hold no newline
        os.set_blocking(in_fd, False)
        os.set_blocking(out_fd, False)

    @classmethod
    def of_process(cls, proc: SandboxedProcess, deadline: float) -> Channel:
        channel = cls(proc.stdout.fileno(), proc.stdin.fileno(), deadline)
        channel.buffer += proc.early_stdout
        return channel

    def _left(self) -> float:
        if self.clock is not None:
            return self.clock.remaining()
        return self.deadline - time.monotonic()

    def send(self, message: dict) -> None:
        data = memoryview(json.dumps(message).encode("utf-8") + b"\n")
        fd = self.out_fd
        while data:
            left = self._left()
            if left <= 0:
                raise ChannelTimeout()
            _, writable, _ = select.select([], [fd], [], left)
            if writable:
                try:
                    data = data[os.write(fd, data[:65536]):]
                except (BrokenPipeError, OSError) as err:
                    raise ChannelClosed() from err

    def receive(self) -> dict:
        """The next message. Raises ChannelClosed (the peer ended), ChannelTimeout, or
        BadOutput (a line that is not a bounded, well-formed JSON object)."""
        while True:
            end = self.buffer.find(b"\n", self.scanned)
            if end >= 0:
                break
            self.scanned = len(self.buffer)
            if len(self.buffer) > wire.MAX_MESSAGE_BYTES:
                raise BadOutput(f"a reply longer than {wire.MAX_MESSAGE_BYTES} bytes")
            left = self._left()
            if left <= 0:
                raise ChannelTimeout()
            readable, _, _ = select.select([self.in_fd], [], [], left)
            if not readable:
                continue
            try:
                chunk = os.read(self.in_fd, 1 << 16)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError as err:  # ECONNRESET: the peer died
                raise ChannelClosed() from err
            if not chunk:
                raise ChannelClosed()
            self.buffer += chunk
        line = bytes(self.buffer[:end])
        del self.buffer[:end + 1]
        self.scanned = 0
        try:
            return wire.load_message(line)
        except wire.WireError as err:
            raise BadOutput(str(err)) from None


def _python(sandbox: Sandbox, script: str) -> list[str]:
    return [sandbox.python, "-I", "-S", script]


#: tasks' setup and assert-rewritten test code as compiled by a fork-server driver (same
#: interpreter), by their (setup, test) source; the oldest go first beyond `MAX_KEPT_CHECKS`
_KEPT_CHECKS: dict[tuple[str, str], dict] = {}
MAX_KEPT_CHECKS = 4096


def kept_check(setup: str, test: str) -> dict | None:
    """A task's compiled check, when a driver already handed one back (`keep_check`): sent
    with each request, so a driver that has not compiled it yet does not have to. Trusted
    code, from the grader's own drivers; the candidate never sees it."""
    return _KEPT_CHECKS.get((setup, test))


def keep_check(setup: str, test: str, compiled: Any) -> None:
    """Keep what a fork-server driver compiled for this task (the `compiled` of its verdict,
    when it has the expected shape). Compiling happens there, in parallel with the
    candidate's start, instead of in this process (which every graded run passes through)."""
    if not (type(compiled) is dict and compiled.get("python") == sys.version
            and type(compiled.get("code")) is str and type(compiled.get("counted")) is list):
        return
    while len(_KEPT_CHECKS) >= MAX_KEPT_CHECKS:
        _KEPT_CHECKS.pop(next(iter(_KEPT_CHECKS)), None)
    _KEPT_CHECKS[(setup, test)] = compiled


def compiled_solution(code: str) -> dict | None:
    """The candidate's code as the grader compiled it (marshal), for a fork-server candidate
    (same interpreter) to run instead of compiling it again; None when it does not compile
    (the candidate then reports the error itself)."""
    compiled, _ = compile_solution(code)
    if compiled is None:
        return None
    return {"python": sys.version, "code": marshal.dumps(compiled).hex()}


def _exit_note(proc: SandboxedProcess | None) -> str:
    code = proc.popen.poll() if proc is not None else None
    return f"candidate process ended (exit code {code})" if code is not None else \
        "candidate process ended"


class _Prepared:
    """A run's processes forked ahead of use (by the fork server, waiting on their channels):
    the run and this process's end of its channel."""

    def __init__(self, job: ForkedRun, sock: socket.socket):
        self.job, self.sock = job, sock

    def usable(self) -> bool:
        """Nothing arrived yet: a child that died while waiting shows as end of file."""
        readable, _, _ = select.select([self.sock], [], [], 0)
        return not readable

    def close(self) -> None:
        self.sock.close()
        self.job.close()


def _prepare_candidate(server: WarmForkServer, limits: Limits) -> _Prepared:
    job = server.job(limits, deadline=False)
    ours, theirs = socket.socketpair()
    try:
        job.spawn("candidate", [theirs], isolate=True)
    finally:
        theirs.close()
    return _Prepared(job, ours)


class _Driver(_Prepared):
    """A reusable test driver (trusted; it never runs candidate code): one check at a time,
    each against a fresh candidate whose socket it receives with the request."""

    MAX_CHECKS = 500
    checks = 0


#: how long a new test driver may take to start (its imports) before it counts as failed
DRIVER_START_SECONDS = 30.0


def _start_driver(server: WarmForkServer, limits: Limits) -> _Driver:
    """A new reusable driver, once it has said it is ready."""
    job = server.job(limits, deadline=False)
    ours, theirs = socket.socketpair()
    try:
        job.spawn("driver", [theirs], isolate=False, cpu_limit=False)
    finally:
        theirs.close()
    driver = _Driver(job, ours)
    try:
        ready = Channel(ours.fileno(), ours.fileno(),
                        time.monotonic() + DRIVER_START_SECONDS).receive()
    except (ChannelClosed, ChannelTimeout, BadOutput) as err:
        driver.close()
        raise ChannelClosed(f"the test driver did not start: {type(err).__name__}") from None
    if ready.get("op") != "ready":
        driver.close()
        raise ChannelClosed(f"the test driver did not start: it sent {str(ready)[:200]}")
    return driver


def warm_up(sandbox: Sandbox, limits: Limits | dict = Limits(), drivers: int = 4) -> bool:
    """Start now what grading on `sandbox` keeps warm, instead of during the first graded
    runs: its fork servers, on each `drivers` reusable test drivers (one per check in flight;
    a scorer's `batch_workers`) and the pooled network namespaces (four runs per driver:
    running, prepared, being emptied) and cgroups (as many again per zygote, which all share
    them) of the runs in flight. Returns False where the sandbox has no fork server (Docker,
    `warm=False`): there every run starts fresh processes and nothing is kept."""
    limits = Limits.coerce(limits)
    servers = sandbox.start_fork_servers(PROGRAMS)
    runs = 4 * max(1, drivers)
    for server in servers:  # runs go to the least busy: each may serve them all
        for driver in [_start_driver(server, limits) for _ in range(max(0, drivers))]:
            server.put_back(("driver", limits), driver)
        server.warm(limits, runs, groups=runs * len(servers))
    return bool(servers)


class _Run:
    """The processes of one graded run: on the sandbox's warm fork server when it has one (a
    fresh candidate child forked ahead of use, used once; a reusable driver), else fresh
    sandboxed interpreters."""

    def __init__(self, sandbox: Sandbox, limits: Limits):
        self.sandbox, self.limits = sandbox, limits
        self.server = sandbox.fork_server(PROGRAMS)
        self.job = None
        self.driver: _Driver | None = None
        self.procs: list[SandboxedProcess] = []
        self.sockets: list[socket.socket] = []
        self._oom: bool | None = None
        self.clock: RunClock | None = None

    def out_of_memory(self) -> bool:
        """Whether a process of the run was killed (or refused memory) at the memory budget;
        read once, before the run's cgroups go back to their pool."""
        if self._oom is None:
            self._oom = bool((self.job is not None and self.job.out_of_memory())
                             or any(proc.out_of_memory() for proc in self.procs))
        return self._oom

    @property
    def isolation(self) -> str:
        return self.sandbox.name

    def _take(self, kind: str, prepare) -> Channel:
        item = self.server.prepared((kind, self.limits), lambda: prepare(self.server,
                                                                         self.limits))
        self.job = item.job
        self.sockets.append(item.sock)
        return Channel(item.sock.fileno(), item.sock.fileno(), 0.0)

    def members(self) -> list[int]:
        """The run's processes (host pids): the candidate's (its cgroup's members on a fork
        server: a reusable driver's own waiting for a CPU is not counted) or, without a fork
        server, every process started for the run."""
        found = list(self.job.pids()) if self.job is not None else []
        for proc in self.procs:
            found += proc.members()
        return found

    def cpu_used(self) -> float | None:
        """CPU seconds every process of the run used (their cgroups' counts); None where one
        is not counted."""
        parts = ([self.job.cpu_used()] if self.job is not None else []) + \
            [proc.cpu_used() for proc in self.procs]
        return None if not parts or None in parts else sum(parts)

    def clocked(self, deadline: float, *channels: Channel | None) -> None:
        """One clock for the run's channels: `wall_time` until `deadline`, moved on by the
        time the run's processes waited for a CPU."""
        self.clock = RunClock(self.limits.wall_time, self.members, cpu_used=self.cpu_used,
                              started=deadline - self.limits.wall_time)
        for channel in channels:
            if channel is not None:
                channel.deadline, channel.clock = deadline, self.clock

    def candidate(self, deadline: float) -> tuple[Channel, SandboxedProcess | None]:
        """A fresh candidate server talking to this process."""
        if self.server is not None:
            began = time.monotonic()
            channel = self._take("candidate", _prepare_candidate)
            # forking it, when none was prepared ahead, is not the run's time
            self.clocked(deadline + time.monotonic() - began, channel)
            return channel, None
        began = time.monotonic()
        proc = self.sandbox.spawn(_python(self.sandbox, "server.py"),
                                  files={"server.py": CANDIDATE_SERVER}, limits=self.limits)
        self.procs.append(proc)
        # the sandbox's start-up (a container's, until the process runs) is not the run's time
        channel = Channel.of_process(proc, 0.0)
        self.clocked(deadline + time.monotonic() - began, channel)
        return channel, proc

    def driver_with_candidate(self, deadline: float):
        """A test driver whose candidate calls reach a fresh candidate server: a reusable
        driver handed the candidate's socket, or a fresh driver whose calls this process
        relays to the candidate."""
        if self.server is not None:
            began = time.monotonic()
            candidate = self.server.prepared(("candidate", self.limits), lambda: (
                _prepare_candidate(self.server, self.limits)))
            self.job = candidate.job
            try:
                self.driver = self.server.reusable(("driver", self.limits), lambda: (
                    _start_driver(self.server, self.limits)))
                socket.send_fds(self.driver.sock, [b"C"], [candidate.sock.fileno()])
            finally:
                candidate.sock.close()  # the driver holds the candidate's other end now
            # forking the candidate or starting a driver (its imports, a cold fork server's
            # first children) is not the run's time: on a busy machine it would be taken
            # from a correct program's limit
            deadline += time.monotonic() - began
            channel = Channel(self.driver.sock.fileno(), self.driver.sock.fileno(), deadline)
            self.clocked(deadline, channel)
            return channel, None, None
        began = time.monotonic()
        driver = self.sandbox.spawn(_python(self.sandbox, "driver.py"),
                                    files={"driver.py": TEST_DRIVER}, limits=self.limits)
        self.procs.append(driver)
        candidate_channel, candidate = self.candidate(deadline)
        deadline += time.monotonic() - began
        channel = Channel.of_process(driver, deadline)
        self.clocked(deadline, channel, candidate_channel)  # both started: the run's time
        return channel, candidate_channel, candidate

    def close(self, clean: bool, driver_done: bool = False) -> None:
        """End the run's processes; unless the run ended `clean`ly, wait until every process
        it started is gone. A reusable driver that delivered its verdict (`driver_done`)
        goes back to the pool."""
        self.out_of_memory()
        for sock in self.sockets:
            sock.close()  # the children see end of file and end on their own
        if self.driver is not None:
            self.driver.checks += 1
            if driver_done and self.driver.checks < self.driver.MAX_CHECKS:
                self.server.put_back(("driver", self.limits), self.driver)
            else:
                self.driver.job.close(wait=not clean)
                self.driver.sock.close()
        if self.job is not None:
            self.job.close(wait=not clean)
        for proc in self.procs:
            proc.close()


def _relay_until_done(driver: Channel, candidate: Channel | None) -> tuple[dict, str | None]:
    """Read the driver's messages until its verdict; relay its candidate requests when the
    two are not connected directly (a reply {"dead": true} tells it the candidate ended).
    Returns the verdict and what was wrong with the candidate's output, if anything."""
    alive, bad = True, None
    while True:
        message = driver.receive()
        if message.get("op") == "done":
            return message, bad
        if candidate is None:
            raise ChannelClosed()  # a connected driver sends nothing but its verdict
        answer: dict[str, Any] = {"ok": False, "dead": True}
        if alive:
            try:
                candidate.send(message)
                answer = candidate.receive()
            except ChannelClosed:
                alive = False
            except BadOutput as err:
                alive, bad = False, str(err)
        driver.send(answer if alive else {"ok": False, "dead": True})


def _verdict(run: _Run, reason: str, started: float, first_failure: str | None,
             passed: int = 0, total: int = 0, **extra: Any) -> CodeVerdict:
    """A failed run's verdict; `memory` replaces the reason when the run hit its memory
    budget (whatever the candidate's process reported, the kernel's count decides)."""
    if run.out_of_memory():
        reason = "memory"
        first_failure = (f"the run exceeded its memory budget of {run.limits.memory_mb} MiB "
                         f"({first_failure})" if first_failure else
                         f"the run exceeded its memory budget of {run.limits.memory_mb} MiB")
    return CodeVerdict(False, reason, passed, total, first_failure, run.isolation,
                       time.monotonic() - started, extra=extra)


def grade_check(sandbox: Sandbox, code: str, *, test: str, setup: str = "",
                entry: str | None = None, names: Sequence[str] = (),
                limits: Limits = Limits()) -> CodeVerdict:
    """Run test code (HumanEval `check`, MBPP asserts) in the driver against the candidate."""
    limits = Limits.coerce(limits)
    run = _Run(sandbox, limits)
    # compiled before the run's clock starts: the grader's work is not the candidate's time
    solution = compiled_solution(code) if run.server is not None else None
    started = time.monotonic()
    deadline = started + limits.wall_time
    candidate, clean, done = None, False, False
    try:
        driver, candidate_channel, candidate = run.driver_with_candidate(deadline)
        proxied = sorted({*names, *([entry] if entry else [])})
        request = {"op": "check", "code": code, "setup": setup, "test": test, "entry": entry,
                   "names": proxied}
        if run.server is not None:  # the driver runs this interpreter: compiled code travels
            kept = kept_check(setup, test)
            if kept is not None:
                request["compiled"] = kept
            else:
                request["want_compiled"] = True
            request["compiled_solution"] = solution
        driver.send(request)
        message, bad = _relay_until_done(driver, candidate_channel)
        if run.server is not None and message.get("compiled") is not None:
            keep_check(setup, test, message["compiled"])
        bad = bad or message.get("bad_output")
        done = True
        clean = message.get("load") == "ok" and message.get("call_errors") == 0
    except ChannelTimeout:
        return _verdict(run, "timeout", started, f"no result within {limits.wall_time:g}s")
    except ChannelClosed:
        return _verdict(run, "sandbox_error", started, "the test driver stopped")
    except BadOutput as err:
        return _verdict(run, "sandbox_error", started, f"the test driver sent {err}")
    finally:
        run.close(clean, done)
    if bad:
        return _verdict(run, "bad_output", started, f"the candidate sent {str(bad)[:300]}",
                        0, int(message.get("asserts_total") or 0))
    if message.get("load") == "error":
        return _verdict(run, "load_error", started, message.get("load_error"))
    if message.get("load") != "ok":
        return _verdict(run, "crashed", started, _exit_note(candidate))
    total = int(message.get("asserts_total", 0))
    passed_asserts = int(message.get("asserts_passed", 0))
    ok = (bool(message.get("completed")) and message.get("failures") == 0
          and message.get("call_errors") == 0 and message.get("asserts_run", 0) > 0
          and message.get("calls", 0) > 0)
    first = message.get("first_failure")
    if not ok and first is None:
        first = "no assert ran against the candidate" if not message.get("calls") else None
    extra = {"calls": message.get("calls"), "asserts_run": message.get("asserts_run"),
             "batched": message.get("batched")}
    if not ok:
        return _verdict(run, "tests_failed", started, first, min(passed_asserts, total), total,
                        **extra)
    return CodeVerdict(True, "correct", total, total, first, run.isolation,
                       time.monotonic() - started, extra=extra)


def grade_calls(sandbox: Sandbox, code: str, *, function: str, tests: Sequence[dict],
                float_tolerance: float | None = None, limits: Limits = Limits(),
                stop_at_first_failure: bool = False) -> CodeVerdict:
    """Call `function` with each test's tagged `args`; compare to its tagged `expected` here."""
    limits = Limits.coerce(limits)
    run = _Run(sandbox, limits)
    # compiled before the run's clock starts: the grader's work is not the candidate's time
    compiled = compiled_solution(code) if run.server is not None else None
    started = time.monotonic()
    deadline = started + limits.wall_time
    passed, first, candidate, clean = 0, None, None, False
    try:
        chan, candidate = run.candidate(deadline)
        try:
            chan.send({"op": "load", "compiled": compiled} if compiled else
                      {"op": "load", "code": code})
            reply = chan.receive()
        except ChannelClosed:
            return _verdict(run, "crashed", started, _exit_note(candidate), 0, len(tests))
        if not reply.get("ok"):
            return _verdict(run, "load_error", started, str(reply.get("error"))[:2000], 0,
                            len(tests))
        for index, test in enumerate(tests):
            try:
                chan.send({"op": "call", "name": function, "args": test["args"],
                           "kwargs": wire.encode({})})
                answer = chan.receive()
            except ChannelClosed:
                first = first or f"test {index}: {_exit_note(candidate)}"
                break
            if not answer.get("ok"):
                first = first or f"test {index}: raised {str(answer.get('error'))[:500]}"
            else:
                try:
                    got = wire.decode(answer.get("value"))
                except wire.WireError as err:
                    return _verdict(run, "bad_output", started,
                                    f"test {index}: the candidate sent {err}", passed,
                                    len(tests))
                if wire.same_value(got, wire.decode(test["expected"]), float_tolerance):
                    passed += 1
                else:
                    first = first or f"test {index}: wrong result {wire.short_repr(got)}"
            if first and stop_at_first_failure:
                break
        clean = first is None
    except ChannelTimeout:
        return _verdict(run, "timeout", started, f"no result within {limits.wall_time:g}s",
                        passed, len(tests))
    except BadOutput as err:
        return _verdict(run, "bad_output", started, f"the candidate sent {err}", passed,
                        len(tests))
    finally:
        run.close(clean)
    if passed == len(tests) and len(tests) > 0:
        return CodeVerdict(True, "correct", passed, len(tests), first, run.isolation,
                           time.monotonic() - started)
    return _verdict(run, "tests_failed", started, first, passed, len(tests))


def normalise_output(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def grade_stdio(sandbox: Sandbox, code: str, *, tests: Sequence[dict],
                limits: Limits = Limits(), stop_at_first_failure: bool = True) -> CodeVerdict:
    """Run the program once per test (`input` on stdin); compare stdout to `output` here."""
    limits = Limits.coerce(limits)
    started = time.monotonic()
    # the runs' own time (a sandbox's start-up before each is not counted), without the time
    # they waited for a CPU on a busy machine; and their whole time, held to the backstop
    used = spent = 0.0
    passed, first, reason = 0, None, "tests_failed"
    for index, test in enumerate(tests):
        left = limits.wall_time - used
        if left <= 0 or spent >= BACKSTOP * limits.wall_time:
            reason, first = "timeout", first or f"no result within {limits.wall_time:g}s"
            break
        run_limits = Limits(**{**limits.__dict__, "wall_time": left})
        result = sandbox.run([sandbox.python, "-I", "-S", "solution.py"],
                             files={"solution.py": code}, stdin=test["input"], limits=run_limits)
        used += max(0.0, result.duration - result.cpu_wait)
        spent += result.duration
        if result.out_of_memory:
            reason = "memory"
            first = (f"test {index}: the run exceeded its memory budget of "
                     f"{limits.memory_mb} MiB")
            break
        if result.truncated:  # settled when it happens, however the run then ended
            reason = "bad_output"
            first = f"test {index}: output longer than {limits.max_output_bytes} bytes"
            break
        if result.timed_out:
            reason, first = "timeout", first or f"test {index}: timed out"
            break
        if not result.stdout_utf8:  # whatever the expected output holds (U+FFFD too)
            reason, first = "bad_output", f"test {index}: output is not UTF-8"
            break
        if result.exit_code != 0:
            tail = result.stderr.strip().splitlines()[-1:] or [""]
            first = first or f"test {index}: exit code {result.exit_code} {tail[0][:300]}"
        elif normalise_output(result.stdout) == normalise_output(test["output"]):
            passed += 1
        else:
            first = first or f"test {index}: wrong output {result.stdout[:200]!r}"
        if first and stop_at_first_failure:
            break
    ok = passed == len(tests) and len(tests) > 0
    return CodeVerdict(ok, "correct" if ok else reason, passed, len(tests), first,
                       sandbox.name, time.monotonic() - started)
