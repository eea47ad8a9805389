"""Verdict rules: the report plugin's outcomes plus the real exit status; skipped, xfailed,
deselected and missing tests are failures; protected paths."""

import json

import pytest
from rlvr_envs.tasks.repo.grading import is_protected

from rlvr_envs.verify.repo import outcome_of, read_report


def report(tests, exitstatus=0):
    return json.dumps({"exitstatus": exitstatus, "tests": tests})


PASS = {"setup": "passed", "call": "passed", "teardown": "passed"}


@pytest.mark.parametrize("phases, outcome", [
    (PASS, "passed"),
    ({"setup": "passed", "call": "failed", "teardown": "passed"}, "failed"),
    ({"setup": "skipped", "teardown": "passed"}, "setup_skipped"),
    ({"setup": "passed", "call": "xfailed", "teardown": "passed"}, "xfailed"),
    ({"setup": "passed", "call": "xpassed", "teardown": "passed"}, "xpassed"),
    ({"setup": "failed", "teardown": "passed"}, "setup_failed"),
    ({"setup": "passed", "teardown": "passed"}, "not_run"),
    ({"setup": "passed", "call": "passed", "teardown": "failed"}, "teardown_failed"),
    ({"deselected": "deselected"}, "deselected"),
    (None, "missing"),
])
def test_outcomes(phases, outcome):
    assert outcome_of(phases) == outcome


def test_all_pass_needs_exit_zero_and_every_required_id():
    ids = ["t.py::a", "t.py::b"]
    assert read_report(report({i: PASS for i in ids}), 0, ids).all_passed
    verdict = read_report(report({"t.py::a": PASS}), 0, ids)
    assert not verdict.all_passed and verdict.failed == {"t.py::b": "missing"}
    assert read_report(report({i: PASS for i in ids}), 1, ids).reason == "exit_status_1"
    assert read_report(report({i: PASS for i in ids}, exitstatus=1), 0, ids).reason != "correct"
    assert read_report(None, 0, ids).reason == "no_report"
    assert read_report("{garbage", 0, ids).reason == "bad_report"
    assert read_report(report({i: PASS for i in ids}), None, ids, timed_out=True).reason == "timeout"


@pytest.mark.parametrize("path, protected", [
    ("tests/test_x.py", True), ("pkg/tests/helpers.py", True), ("test_top.py", True),
    ("pkg/core_test.py", True), ("conftest.py", True), ("pkg/conftest.py", True),
    ("pytest.ini", True), ("setup.cfg", True), ("tox.ini", True), ("pyproject.toml", True),
    ("sitecustomize.py", True), ("evil.pth", True), ("tests", True),
    ("pkg/core.py", False), ("pkg/testing_utils.py", False), ("README.md", False),
])
def test_protected_paths(path, protected):
    assert is_protected(path) is protected


def test_task_test_files_are_protected_whatever_their_name():
    assert is_protected("checks/spec.py", {"checks/spec.py"})
