"""Verdicts on repository test runs: the program that starts pytest, and how its report is read.

The grader never parses pytest's printed output (an agent can print `PASSED`) and never reads
a report file the code under test could rewrite. `PYTEST_BOOT` starts pytest and, before any
code of the repository can be imported:

- takes a per-run key from stdin (never from the environment or argv, which the process can
  read back), then points stdin at /dev/null;
- keeps the real stdout as a private descriptor and sends fd 1 to stderr, so everything the
  tests print goes to stderr and the report stream is the only thing on stdout;
- notes the tree's conftest files (a conftest that appears later is no plugin of the project);
- drops the working directory from `sys.path`, imports pytest, and puts the repository's
  import roots *after* the standard library (a `pdb.py` in the repo cannot stand in for it);
- registers a plugin object (no module to find in `sys.modules`) that writes one line per
  test phase the moment it completes: a JSON record with a sequence number and an HMAC of
  the key;
- notes, when collection starts (pytest configured, no test module imported yet), every
  function of pytest's and pluggy's modules and every method of their classes with its code
  object, the registered plugins and the hook implementations; before every record it says
  so when one was replaced, had its `__code__` swapped or gained a method, when a plugin
  appeared other than a conftest module found at start or one a conftest names in
  `pytest_plugins`, or when a hook implementation belongs to no registered plugin
  (`{"tampered": name}`): the run then counts as tampered.

`read_stream` checks every line's MAC and the unbroken sequence; the first verdict of a test
phase wins (a rewrite later, e.g. from an `atexit` hook, changes nothing); a bad MAC or a
gap marks the run as tampered. The verdict needs the real exit status 0 *and* every required
test id passed in its setup, call and teardown. Skipped, xfailed, xpassed, deselected,
errored or missing tests count as failures.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

#: `python -s -c PYTEST_BOOT <pytest args>`, the key on stdin as hex and a newline;
#: environment: RLVR_IMPORT_ROOTS (os.pathsep-joined)
PYTEST_BOOT = (Path(__file__).with_name("repo_boot.py")).read_text(encoding="utf-8")


@dataclass
class RunVerdict:
    """The outcome of a graded run over the required tests."""

    passed: list[str] = field(default_factory=list)
    #: test id → why it counts as failed (failed, skipped, xfailed, missing, ...)
    failed: dict[str, str] = field(default_factory=dict)
    exit_status: int | None = None
    reason: str = "correct"

    @property
    def all_passed(self) -> bool:
        return not self.failed and self.reason == "correct"

    @property
    def fraction(self) -> float:
        total = len(self.passed) + len(self.failed)
        return len(self.passed) / total if total else 0.0


@dataclass
class StreamReport:
    """What a run's report stream said: test id → phase → outcome (plus "message"), pytest's
    own exit status, and why the stream cannot be trusted (None when it can)."""

    tests: dict[str, dict[str, str]] = field(default_factory=dict)
    exitstatus: int | None = None
    problem: str | None = None


def read_stream(stdout: str, key: bytes) -> StreamReport:
    """Parse the report stream of a run whose key is `key`: every line must carry a valid MAC
    and the next sequence number; the first record of each test phase wins."""
    report = StreamReport()
    expected = 1
    for line in stdout.splitlines():
        if not line.strip():
            continue
        body, _, mac = line.rpartition("\t")
        good = hmac.new(key, body.encode(), hashlib.sha256).hexdigest()
        if not body or not hmac.compare_digest(mac, good):
            report.problem = "tampered_report"
            return report
        try:
            record = json.loads(body)
        except ValueError:
            report.problem = "tampered_report"
            return report
        if not isinstance(record, dict) or record.get("n") != expected:
            report.problem = "tampered_report"
            return report
        expected += 1
        if "tampered" in record:  # the boot program saw pytest's verdict-making replaced
            report.problem = report.problem or "tampered_report"
            continue
        if "exitstatus" in record:
            if report.exitstatus is None:
                report.exitstatus = record["exitstatus"]
            continue
        phases = report.tests.setdefault(str(record.get("id")), {})
        if record.get("when") == "subtest":  # a passing subtest says nothing of its test
            if record.get("outcome") != "passed":
                phases.setdefault("subtest", str(record.get("outcome")))
            continue
        phases.setdefault(str(record.get("when")), str(record.get("outcome")))
        for extra in ("message", "source"):
            if record.get(extra) and extra not in phases:
                phases[extra] = str(record[extra])
    return report


def outcome_of(phases: dict[str, str] | None) -> str:
    """One test's outcome from its phases: "passed" only when setup, call and teardown
    all passed (no skip, no xfail)."""
    if not phases:
        return "missing"
    if "deselected" in phases:
        return "deselected"
    phases = {k: v for k, v in phases.items() if k not in ("message", "source")}
    if "subtest" in phases:
        return f"subtest_{phases['subtest']}"
    for when in ("setup", "call", "teardown"):
        outcome = phases.get(when)
        if outcome is None:
            if when == "call":
                return "not_run"
            continue
        if outcome != "passed":
            return outcome if when == "call" else f"{when}_{outcome}"
    return "passed"


def verdict_of(report: StreamReport, exit_code: int | None, required: Sequence[str], *,
               timed_out: bool = False) -> RunVerdict:
    """The verdict from a run's report stream and the process's real exit status."""
    verdict = RunVerdict(exit_status=exit_code)
    for test_id in required:
        outcome = outcome_of(report.tests.get(test_id))
        if outcome == "passed" and report.problem is None:
            verdict.passed.append(test_id)
        else:
            verdict.failed[test_id] = outcome
    if timed_out:
        verdict.reason = "timeout"
    elif report.problem is not None:
        verdict.reason = report.problem
    elif report.exitstatus is None:
        verdict.reason = "no_report"  # pytest never finished (killed, os._exit, crash)
    elif verdict.failed:
        verdict.reason = "tests_failed"
    elif exit_code != 0 or report.exitstatus != 0:
        verdict.reason = f"exit_status_{exit_code}"
    return verdict


def unique_ids(*groups: Iterable[str]) -> list[str]:
    """Test ids from several lists, in order, without repeats."""
    seen: dict[str, None] = {}
    for group in groups:
        for test_id in group:
            seen.setdefault(test_id, None)
    return list(seen)
