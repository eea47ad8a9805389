"""Verdicts on repository test runs: the pytest report plugin and how its report is read.

The grader never parses pytest's printed output (an agent can print `PASSED`). It loads a
small plugin, under a module name drawn at random per run, that writes a JSON report of
every test phase to a path the agent cannot know in advance; the verdict needs the real
exit status 0 *and* every required test id reported `passed` in its call phase. Skipped,
xfailed, xpassed, deselected, errored or missing tests count as failures.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Iterable, Sequence

#: the plugin's source; it reads its output path from RLVR_REPORT_PATH at import time
REPORT_PLUGIN = '''"""rlvr-envs test report plugin (written by the grader, not the repo)."""
import json, os

_PATH = os.environ.pop("RLVR_REPORT_PATH")
_RESULTS = {}


def pytest_runtest_logreport(report):
    entry = _RESULTS.setdefault(report.nodeid, {})
    outcome = report.outcome
    if hasattr(report, "wasxfail"):
        outcome = "xfailed" if report.skipped else "xpassed"
    entry[report.when] = outcome
    if report.failed and "message" not in entry:
        crash = getattr(report.longrepr, "reprcrash", None)
        entry["message"] = str(getattr(crash, "message", "") or "")[:300]
        try:  # the failing line of the test itself (what was called), for problem statements
            first = report.longrepr.reprtraceback.reprentries[0]
            entry["source"] = next(l[1:].strip() for l in first.lines if l.startswith(">"))[:300]
        except Exception:
            pass


def pytest_deselected(items):
    for item in items:
        _RESULTS.setdefault(item.nodeid, {})["deselected"] = "deselected"


def pytest_sessionfinish(session, exitstatus):
    with open(_PATH, "w", encoding="utf-8") as fh:
        json.dump({"exitstatus": int(exitstatus), "tests": _RESULTS}, fh)
'''


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


def outcome_of(phases: dict[str, str] | None) -> str:
    """One test's outcome from its phases: "passed" only when setup, call and teardown
    all passed (no skip, no xfail)."""
    if not phases:
        return "missing"
    if "deselected" in phases:
        return "deselected"
    phases = {k: v for k, v in phases.items() if k not in ("message", "source")}
    for when in ("setup", "call", "teardown"):
        outcome = phases.get(when)
        if outcome is None:
            if when == "call":
                return "not_run"
            continue
        if outcome != "passed":
            return outcome if when == "call" else f"{when}_{outcome}"
    return "passed"


def read_report(report_text: str | None, exit_code: int | None, required: Sequence[str], *,
                timed_out: bool = False) -> RunVerdict:
    """The verdict from the plugin's JSON report and the process's real exit status."""
    verdict = RunVerdict(exit_status=exit_code)
    results = parse_report(report_text)
    for test_id in required:
        outcome = outcome_of((results or {}).get(test_id))
        if outcome == "passed":
            verdict.passed.append(test_id)
        else:
            verdict.failed[test_id] = outcome
    report_status = json.loads(report_text).get("exitstatus") if results is not None else None
    if timed_out:
        verdict.reason = "timeout"
    elif report_text is None:
        verdict.reason = "no_report"  # pytest never finished (killed, os._exit, crash)
    elif results is None:
        verdict.reason = "bad_report"
    elif verdict.failed:
        verdict.reason = "tests_failed"
    elif exit_code != 0 or report_status != 0:
        verdict.reason = f"exit_status_{exit_code}"
    return verdict


def parse_report(report_text: str | None) -> dict[str, dict[str, str]] | None:
    """test id → phases from a plugin report (None when there is no usable report)."""
    if report_text is None:
        return None
    try:
        tests = json.loads(report_text)["tests"]
    except (ValueError, KeyError, TypeError):
        return None
    return tests if isinstance(tests, dict) else None


def unique_ids(*groups: Iterable[str]) -> list[str]:
    """Test ids from several lists, in order, without repeats."""
    seen: dict[str, None] = {}
    for group in groups:
        for test_id in group:
            seen.setdefault(test_id, None)
    return list(seen)
