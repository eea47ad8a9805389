"""CodeScorer: reward of a code completion = its program passing the task's tests in a sandbox.

The task's `metadata["mode"]` says how it is tested (see `rlvr_envs.verify.code.grader`):
"check" (test code in the grader's driver process), "calls" (expected values compared in this
process) or "stdio" (program output compared in this process).
"""

from __future__ import annotations

import threading
from typing import Any, Mapping

from rlvr_envs.core.scoring import Score, Scorer
from rlvr_envs.core.task import Task
from rlvr_envs.sandbox import Limits, Sandbox, get_sandbox
from rlvr_envs.verify.code.extract import extract_code, future_imports_first, syntax_error
from rlvr_envs.verify.code.grader import (CodeVerdict, grade_calls, grade_check, grade_stdio,
                                          warm_up)

MODES = ("check", "calls", "stdio")


def compose_program(task: Task, code: str) -> str:
    """The program that runs: for tasks with a prompt prefix (HumanEval), the prefix then the
    completion's code, so both a whole function and a body-only continuation work; a
    `from __future__` import of the code is moved to the top, where Python requires it."""
    prefix = task.metadata.get("prefix")
    if not prefix or code.startswith(prefix):
        return future_imports_first(code)
    return future_imports_first(prefix + ("" if prefix.endswith("\n") else "\n") + code)


def entry_names(task: Task) -> tuple[str, ...]:
    """The names of the functions a task's tests call (none for a stdio program)."""
    meta = task.metadata
    named = meta.get("entry") or meta.get("function")
    return (named,) if isinstance(named, str) else tuple(
        name for name in meta.get("names") or () if isinstance(name, str))


def check_task(task: Task) -> Mapping[str, Any]:
    """The task's metadata, or ValueError naming what a code task lacks."""
    meta = task.metadata
    mode = meta.get("mode")
    if mode not in MODES:
        raise ValueError(f"task {task.source_id or task.id}: metadata['mode'] must be one of "
                         f"{list(MODES)}, got {mode!r}")
    needed = {"check": ("test",), "calls": ("function", "tests"), "stdio": ("tests",)}[mode]
    missing = [key for key in needed if key not in meta]
    if missing:
        raise ValueError(f"task {task.source_id or task.id}: a {mode!r} code task needs "
                         f"metadata {missing}, got keys {sorted(meta)}")
    return meta


#: the longest program graded (characters): compiling, which happens in this process before
#: anything runs, costs more than linear time for some code (CPython 3.11 compiles an
#: f-string with many fields in quadratic time: 0.3 MB took 10 s), and real solutions to
#: HumanEval, MBPP, APPS or CodeContests tasks are a few kilobytes
MAX_CODE_CHARS = 1 << 16


class CodeScorer(Scorer):
    """Reward 1 when every test passes (or the passed fraction with `partial_credit`); a
    program over `max_code_chars` characters scores 0 (`too_long`) without being compiled."""

    batch_workers = 4

    def __init__(self, sandbox: str | Sandbox = "auto", limits: Limits | Mapping | None = None,
                 partial_credit: bool = False, max_code_chars: int = MAX_CODE_CHARS):
        if isinstance(max_code_chars, bool) or not isinstance(max_code_chars, int) \
                or max_code_chars < 1:
            raise ValueError(f"max_code_chars must be a positive int, got {max_code_chars!r}")
        self.max_code_chars = max_code_chars
        self._sandbox_spec = sandbox
        self._sandbox: Sandbox | None = sandbox if isinstance(sandbox, Sandbox) else None
        if isinstance(sandbox, str):
            from rlvr_envs.sandbox import BACKENDS
            if sandbox not in BACKENDS:
                raise ValueError(f"sandbox must be one of {list(BACKENDS)} or a Sandbox, "
                                 f"got {sandbox!r}")
        self.limits = Limits.coerce(limits)
        self.partial_credit = bool(partial_credit)
        self.component = "tests_passed_fraction" if self.partial_credit else "all_tests_pass"
        self.components = {self.component: 0.0}
        self._lock = threading.Lock()

    @property
    def sandbox(self) -> Sandbox:
        """The sandbox, created on first use (the Docker backend may build its image)."""
        with self._lock:
            if self._sandbox is None:
                self._sandbox = get_sandbox(self._sandbox_spec)
            return self._sandbox

    def warm_up(self) -> bool:
        """Start the sandbox's fork server and one test driver per batch worker now (e.g. when
        a scoring process starts), so the first graded batch does not pay for them. False
        where the sandbox keeps nothing warm (Docker, `warm=False`)."""
        return warm_up(self.sandbox, self.limits, drivers=self.batch_workers)

    def close(self) -> None:
        if self._sandbox is not None and not isinstance(self._sandbox_spec, Sandbox):
            self._sandbox.close()

    def _zero(self, reason: str, **details: Any) -> Score:
        return Score(0.0, False, {self.component: 0.0}, reason, details=details)

    def score(self, task: Task, completion: str) -> Score:
        code = extract_code(completion, entry_names(task))
        if code is None:
            return self._zero("no_code", tests_passed=0, tests_total=0,
                              first_failure="the completion holds no code")
        program = compose_program(task, code)
        if len(program) > self.max_code_chars:
            return self._zero("too_long", tests_passed=0, tests_total=0,
                              first_failure=f"the program has {len(program):,} characters; "
                                            f"at most {self.max_code_chars:,} are graded "
                                            f"(max_code_chars)")
        error = syntax_error(program)
        if error is not None:
            return self._zero("syntax_error", tests_passed=0, tests_total=0,
                              first_failure=error, error=error)
        verdict = self._grade_guarded(task, program)
        if verdict.passed:
            reward = 1.0
        elif self.partial_credit and verdict.tests_total:
            reward = verdict.tests_passed / verdict.tests_total
        else:
            reward = 0.0
        return Score(reward, verdict.passed, {self.component: reward}, verdict.reason,
                     extracted_answer=code,
                     details={"tests_passed": verdict.tests_passed,
                              "tests_total": verdict.tests_total,
                              "first_failure": verdict.first_failure,
                              "isolation": verdict.isolation,
                              "grade_seconds": round(verdict.duration, 4)})

    def _grade_guarded(self, task: Task, program: str) -> CodeVerdict:
        """`grade`, where nothing the candidate did can raise: a malformed task still raises
        (ValueError naming it), any failure while grading becomes a reward-0 verdict, so a
        batch loses no other item's reward."""
        check_task(task)
        sandbox = self.sandbox  # an unavailable backend is the caller's error: it raises
        try:
            return self.grade(task, program)
        except Exception as err:  # noqa: BLE001 - reported in info, never raised to the trainer
            return CodeVerdict(False, "sandbox_error",
                               first_failure=f"grading failed: {type(err).__name__}: "
                                             f"{str(err)[:300]}", isolation=sandbox.name)

    def grade(self, task: Task, program: str) -> CodeVerdict:
        meta = check_task(task)
        mode = meta["mode"]
        # a task's own limits may only tighten the scorer's: a task record arrives with a label
        # (over HTTP too), and a run's resources are set by whoever made the scorer
        limits = Limits.coerce(meta["limits"]).within(self.limits) if meta.get("limits") \
            else self.limits
        if mode == "check":
            return grade_check(self.sandbox, program, test=meta["test"], setup=meta.get("setup", ""),
                               entry=meta.get("entry"), names=meta.get("names", ()),
                               limits=limits)
        if mode == "calls":
            return grade_calls(self.sandbox, program, function=meta["function"],
                               tests=meta["tests"], float_tolerance=meta.get("float_tolerance"),
                               limits=limits, stop_at_first_failure=not self.partial_credit)
        return grade_stdio(self.sandbox, program, tests=meta["tests"], limits=limits,
                           stop_at_first_failure=not self.partial_credit)

    def gold_completion(self, task: Task) -> str:
        return f"```python\n{task.answer}\n```"
