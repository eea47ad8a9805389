"""Verdict rules: the report stream's outcomes plus the real exit status; skipped, xfailed,
deselected and missing tests are failures; a forged or rewritten stream is tampering;
protected paths."""

import hashlib
import hmac
import json

import pytest
from rlvr_envs.tasks.repo.grading import is_protected

from rlvr_envs.verify.repo import outcome_of, read_stream, verdict_of

KEY = b"k" * 32


def stream(tests, exitstatus=0, key=KEY, start=1):
    """A report stream as the boot program writes it: one MAC'd, numbered line per phase."""
    records = [{"id": t, "when": w, "outcome": o} for t, phases in tests.items()
               for w, o in phases.items()]
    if exitstatus is not None:
        records.append({"exitstatus": exitstatus})
    lines = []
    for n, record in enumerate(records, start):
        body = json.dumps({**record, "n": n}, sort_keys=True)
        lines.append(body + "\t" + hmac.new(key, body.encode(), hashlib.sha256).hexdigest())
    return "\n".join(lines) + "\n"


def read_report(text, exit_code, ids, timed_out=False):
    return verdict_of(read_stream(text, KEY), exit_code, ids, timed_out=timed_out)


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
    assert read_report(stream({i: PASS for i in ids}), 0, ids).all_passed
    verdict = read_report(stream({"t.py::a": PASS}), 0, ids)
    assert not verdict.all_passed and verdict.failed == {"t.py::b": "missing"}
    assert read_report(stream({i: PASS for i in ids}), 1, ids).reason == "exit_status_1"
    assert read_report(stream({i: PASS for i in ids}, exitstatus=1), 0, ids).reason != "correct"
    assert read_report("", 0, ids).reason == "no_report"
    assert read_report(stream({i: PASS for i in ids}, exitstatus=None), 0, ids).reason == \
        "no_report"
    assert read_report(stream({i: PASS for i in ids}), None, ids, timed_out=True).reason == \
        "timeout"


def test_forged_rewritten_or_unnumbered_streams_are_tampering():
    ids = ["t.py::a"]
    failing = {"t.py::a": {"setup": "passed", "call": "failed", "teardown": "passed"}}
    # a rewrite after the real verdict (an atexit hook re-emitting "passed") changes nothing
    honest = stream(failing, exitstatus=None)
    rewrite = stream({"t.py::a": PASS}, start=4)
    assert read_report(honest + rewrite, 0, ids).failed == {"t.py::a": "failed"}
    # lines without the run's key, or out of sequence, void the whole stream
    forged = stream({"t.py::a": PASS}, key=b"x" * 32)
    assert read_report(forged, 0, ids).reason == "tampered_report"
    assert read_report(stream({"t.py::a": PASS}, start=2), 0, ids).reason == "tampered_report"
    assert read_report("{garbage\n", 0, ids).reason == "tampered_report"
    assert not read_report(stream({"t.py::a": PASS}) + "junk\tdeadbeef\n", 0, ids).all_passed


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


def test_a_graded_run_that_fills_the_disk_is_killed(repo_sandbox, tmp_path):
    """The library's own code runs at grading in a tree on the host's disk: a run that adds
    more than its disk budget is killed and scores workspace_too_large."""
    from rlvr_envs.tasks.repo.grading import run_tests
    tree = tmp_path / "repo"
    (tree / "tests").mkdir(parents=True)
    (tree / "filler.py").write_text(
        "for i in range(60):\n"
        "    with open('fill%d.bin' % i, 'wb') as f:\n"
        "        f.write(bytes(4 << 20))\n")
    (tree / "tests" / "test_fill.py").write_text("import filler\n\ndef test_ok():\n    pass\n")
    verdict, _ = run_tests(repo_sandbox, tree, ["tests/test_fill.py::test_ok"], {},
                           timeout=120, disk_budget_mb=16)
    assert verdict.reason == "workspace_too_large", verdict
    assert len(list(tree.glob("fill*.bin"))) < 60  # killed long before the end
    verdict, _ = run_tests(repo_sandbox, tree, ["tests/test_fill.py::test_ok"], {},
                           timeout=120, disk_budget_mb=512)
    assert verdict.reason == "correct", verdict


def numbered(records, key=KEY):
    """A stream of the given records, numbered and MAC'd in order."""
    lines = []
    for n, record in enumerate(records, 1):
        body = json.dumps({**record, "n": n})
        lines.append(body + "\t" + hmac.new(key, body.encode(), hashlib.sha256).hexdigest())
    return "\n".join(lines) + "\n"


def test_a_failed_subtest_fails_its_test_whatever_passed_first():
    """unittest's `subTest` and pytest's subtests report each subtest under the test's id
    before the test's own call (which passes): a passing subtest changes nothing, a failed
    one fails the test."""
    test = "t.py::T::test_values"
    phases = [{"id": test, "when": "setup", "outcome": "passed"},
              {"id": test, "when": "subtest", "outcome": "passed"},
              {"id": test, "when": "subtest", "outcome": "failed"},
              {"id": test, "when": "call", "outcome": "passed"},
              {"id": test, "when": "teardown", "outcome": "passed"}, {"exitstatus": 1}]
    verdict = read_report(numbered(phases), 1, [test])
    assert verdict.failed == {test: "subtest_failed"}
    clean = [p for p in phases if p.get("outcome") != "failed"][:-1] + [{"exitstatus": 0}]
    assert read_report(numbered(clean), 0, [test]).all_passed


SUBTESTS = '''import asyncio, doctest, sys, unittest  # asyncio: types.coroutine sets __code__


class T(unittest.TestCase):
    def test_values(self):
        for value in (1, 2, 3):
            with self.subTest(value=value):
                self.assertNotEqual(value, 2)


def double(x):
    """
    >>> double(2)
    4
    """
    return 2 * x


def test_doctest_clears_the_tracer():
    assert doctest.testmod(sys.modules[__name__]).failed == 0
'''


def test_graded_runs_see_subtests_and_let_doctest_clear_the_tracer(repo_sandbox, tmp_path):
    """Through the real boot program: a unittest subTest that fails after one that passed
    fails its test; doctest (which calls `sys.settrace(None)`) runs."""
    from rlvr_envs.tasks.repo.grading import run_tests
    tree = tmp_path / "repo"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "test_sub.py").write_text(SUBTESTS)
    ids = ["tests/test_sub.py::T::test_values", "tests/test_sub.py::test_doctest_clears_the_tracer"]
    verdict, _ = run_tests(repo_sandbox, tree, ids, {}, timeout=120)
    assert verdict.failed == {ids[0]: "subtest_failed"}, verdict
    assert verdict.passed == [ids[1]]
    assert verdict.reason == "tests_failed"
