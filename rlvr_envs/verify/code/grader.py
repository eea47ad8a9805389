"""Host side of code grading: start the sandboxed processes, relay calls, judge the results.

Three ways a task is tested, all with the candidate's code in its own sandboxed process:
- `check`: the task's test code (HumanEval `check(candidate)`, MBPP asserts) runs in a second
  sandboxed process, the test driver; each call it makes to the candidate travels as tagged
  JSON through this process to the candidate server and back. The candidate cannot reach the
  test code's frames, source or files; it only ever sees the arguments of its own calls.
- `calls`: this process calls the candidate's function with each test's arguments and compares
  the returned value to the expected one itself (exact types; a float tolerance only when the
  task sets one). Expected values never leave this process.
- `stdio`: the candidate's program runs once per test with the input on stdin; its stdout is
  compared here to the expected output (whitespace at line ends ignored).
A run passes only when every test produced a result and every result was right.
"""

from __future__ import annotations

import json
import os
import select
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from rlvr_envs.sandbox import Limits, Sandbox, SandboxedProcess
from rlvr_envs.verify.code import wire

_HERE = Path(__file__).parent
_WIRE_SRC = (_HERE / "wire.py").read_text()
CANDIDATE_SERVER = _WIRE_SRC + "\n" + (_HERE / "candidate_server.py").read_text()
TEST_DRIVER = _WIRE_SRC + "\n" + (_HERE / "test_driver.py").read_text()
MAX_MESSAGE_BYTES = 32 * 2**20


@dataclass
class CodeVerdict:
    """Outcome of grading one program against one task's tests."""

    passed: bool
    reason: str  # correct | tests_failed | timeout | load_error | crashed | sandbox_error
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


class Channel:
    """Line-delimited JSON over a sandboxed process's stdin/stdout, with a deadline."""

    def __init__(self, proc: SandboxedProcess, deadline: float):
        self.proc, self.deadline = proc, deadline
        self.buffer = b""
        self.out_fd = proc.stdout.fileno()
        os.set_blocking(self.out_fd, False)
        os.set_blocking(proc.stdin.fileno(), False)

    def send(self, message: dict) -> None:
        data = memoryview(json.dumps(message).encode("utf-8") + b"\n")
        fd = self.proc.stdin.fileno()
        while data:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise ChannelTimeout()
            _, writable, _ = select.select([], [fd], [], left)
            if writable:
                try:
                    data = data[os.write(fd, data[:65536]):]
                except (BrokenPipeError, OSError) as err:
                    raise ChannelClosed() from err

    def receive(self) -> dict:
        while b"\n" not in self.buffer:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise ChannelTimeout()
            readable, _, _ = select.select([self.out_fd], [], [], left)
            if not readable:
                continue
            chunk = os.read(self.out_fd, 1 << 16)
            if not chunk:
                raise ChannelClosed()
            self.buffer += chunk
            if len(self.buffer) > MAX_MESSAGE_BYTES:
                raise ChannelClosed()
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            message = json.loads(line)
        except ValueError as err:
            raise ChannelClosed() from err
        if not isinstance(message, dict):
            raise ChannelClosed()
        return message


def _python(sandbox: Sandbox, script: str) -> list[str]:
    return [sandbox.python, "-I", "-S", script]


def _exit_note(proc: SandboxedProcess) -> str:
    code = proc.popen.poll()
    return f"candidate process ended (exit code {code})" if code is not None else \
        "candidate process stopped answering"


def _start_candidate(sandbox: Sandbox, code: str, limits: Limits,
                     deadline: float) -> tuple[SandboxedProcess, Channel, str | None]:
    proc = sandbox.spawn(_python(sandbox, "server.py"), files={"server.py": CANDIDATE_SERVER},
                         limits=limits)
    channel = Channel(proc, deadline)
    try:
        channel.send({"op": "load", "code": code})
        reply = channel.receive()
    except ChannelClosed:
        return proc, channel, "crashed"
    if not reply.get("ok"):
        return proc, channel, "load_error:" + str(reply.get("error"))[:2000]
    return proc, channel, None


def _early_verdict(status: str, proc: SandboxedProcess, started: float) -> CodeVerdict:
    if status.startswith("load_error:"):
        return CodeVerdict(False, "load_error", first_failure=status.split(":", 1)[1],
                           isolation=proc.isolation, duration=time.monotonic() - started)
    return CodeVerdict(False, "crashed", first_failure=_exit_note(proc),
                       isolation=proc.isolation, duration=time.monotonic() - started)


def grade_check(sandbox: Sandbox, code: str, *, test: str, setup: str = "",
                entry: str | None = None, names: Sequence[str] = (),
                limits: Limits = Limits()) -> CodeVerdict:
    """Run test code (HumanEval `check`, MBPP asserts) in the driver against the candidate."""
    limits = Limits.coerce(limits)
    started = time.monotonic()
    deadline = started + limits.wall_time
    driver = sandbox.spawn(_python(sandbox, "driver.py"), files={"driver.py": TEST_DRIVER},
                           limits=limits)
    candidate = None
    try:
        candidate, cand_chan, status = _start_candidate(sandbox, code, limits, deadline)
        if status is not None:
            return _early_verdict(status, candidate, started)
        drv_chan = Channel(driver, deadline)
        proxied = sorted({*names, *([entry] if entry else [])})
        drv_chan.send({"op": "check", "setup": setup, "test": test, "entry": entry,
                       "names": proxied})
        candidate_alive = True
        while True:
            message = drv_chan.receive()
            if message.get("op") == "done":
                break
            reply: dict[str, Any]
            if not candidate_alive:
                reply = {"ok": False, "dead": True, "error": _exit_note(candidate)}
            else:
                try:
                    cand_chan.send({"op": "call", "name": message.get("name"),
                                    "args": message.get("args"), "kwargs": message.get("kwargs")})
                    answer = cand_chan.receive()
                    reply = {"ok": bool(answer.get("ok"))}
                    if reply["ok"]:
                        reply["value"] = answer.get("value")
                    else:
                        reply["error"] = str(answer.get("error"))[:2000]
                except ChannelClosed:
                    candidate_alive = False
                    reply = {"ok": False, "dead": True, "error": _exit_note(candidate)}
            drv_chan.send(reply)
    except ChannelTimeout:
        return CodeVerdict(False, "timeout", first_failure=f"no result within "
                           f"{limits.wall_time:g}s", isolation=sandbox.name,
                           duration=time.monotonic() - started)
    except ChannelClosed:
        return CodeVerdict(False, "sandbox_error", first_failure="the test driver stopped: "
                           + driver.popen.stderr.read1(4000).decode(errors="replace")
                           if driver.popen.poll() is not None else "the test driver stopped",
                           isolation=sandbox.name, duration=time.monotonic() - started)
    finally:
        driver.close()
        if candidate is not None:
            candidate.close()
    total = int(message.get("asserts_total", 0))
    passed_asserts = int(message.get("asserts_passed", 0))
    ok = (bool(message.get("completed")) and message.get("failures") == 0
          and message.get("call_errors") == 0 and message.get("asserts_run", 0) > 0
          and message.get("calls", 0) > 0)
    first = message.get("first_failure")
    if not ok and first is None:
        first = "no assert ran against the candidate" if not message.get("calls") else None
    return CodeVerdict(ok, "correct" if ok else "tests_failed",
                       tests_passed=total if ok else min(passed_asserts, total),
                       tests_total=total, first_failure=first, isolation=sandbox.name,
                       duration=time.monotonic() - started,
                       extra={"calls": message.get("calls"), "asserts_run": message.get("asserts_run")})


def grade_calls(sandbox: Sandbox, code: str, *, function: str, tests: Sequence[dict],
                float_tolerance: float | None = None, limits: Limits = Limits(),
                stop_at_first_failure: bool = False) -> CodeVerdict:
    """Call `function` with each test's tagged `args`; compare to its tagged `expected` here."""
    limits = Limits.coerce(limits)
    started = time.monotonic()
    deadline = started + limits.wall_time
    candidate, chan, status = _start_candidate(sandbox, code, limits, deadline)
    passed, first = 0, None
    try:
        if status is not None:
            verdict = _early_verdict(status, candidate, started)
            verdict.tests_total = len(tests)
            return verdict
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
                except (wire.WireError, ValueError, TypeError):
                    got, first = None, first or f"test {index}: malformed return value"
                else:
                    if wire.same_value(got, wire.decode(test["expected"]), float_tolerance):
                        passed += 1
                    else:
                        first = first or f"test {index}: wrong result {got!r:.200}"
            if first and stop_at_first_failure:
                break
    except ChannelTimeout:
        return CodeVerdict(False, "timeout", passed, len(tests),
                           f"no result within {limits.wall_time:g}s", sandbox.name,
                           time.monotonic() - started)
    finally:
        candidate.close()
    ok = passed == len(tests) and len(tests) > 0
    return CodeVerdict(ok, "correct" if ok else "tests_failed", passed, len(tests), first,
                       sandbox.name, time.monotonic() - started)


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
    deadline = started + limits.wall_time
    passed, first, reason = 0, None, "tests_failed"
    for index, test in enumerate(tests):
        left = deadline - time.monotonic()
        if left <= 0:
            reason, first = "timeout", first or f"no result within {limits.wall_time:g}s"
            break
        run_limits = Limits(**{**limits.__dict__, "wall_time": left})
        result = sandbox.run([sandbox.python, "-I", "-S", "solution.py"],
                             files={"solution.py": code}, stdin=test["input"], limits=run_limits)
        if result.timed_out:
            reason, first = "timeout", first or f"test {index}: timed out"
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
