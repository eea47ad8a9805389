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
from typing import Iterable, Sequence

#: `python -s -c PYTEST_BOOT <pytest args>`; environment: RLVR_IMPORT_ROOTS (os.pathsep-joined)
PYTEST_BOOT = r'''
import os, sys
_key = bytes.fromhex(sys.stdin.readline().strip())
_null = os.open(os.devnull, os.O_RDONLY)
os.dup2(_null, 0)
os.close(_null)
_out = os.dup(1)
os.set_inheritable(_out, False)
os.dup2(2, 1)
_cwd = os.getcwd()
sys.path[:] = [p for p in sys.path if p not in ("", ".", _cwd)]
_roots = [r for r in os.environ.pop("RLVR_IMPORT_ROOTS", "").split(os.pathsep) if r]
_conftests = set()  # the tree's conftest files before any of its code runs
for _dir, _dirs, _files in os.walk(_cwd):
    _dirs[:] = [d for d in _dirs if d != ".git"]
    if "conftest.py" in _files:
        _conftests.add(os.path.realpath(os.path.join(_dir, "conftest.py")))
import pytest, types
import importlib, _pytest.config

_OURS = ("_pytest", "pytest", "pluggy")

def _ours(name):
    return isinstance(name, str) and name.split(".")[0] in _OURS

def _code(value):
    """The code object behind a function, a classmethod/staticmethod or a property's getter
    (replacing `__code__` changes what runs without changing the function's identity)."""
    if isinstance(value, property):
        value = value.fget
    elif isinstance(value, (classmethod, staticmethod, types.MethodType)):
        value = value.__func__  # no getattr on anything else: pytest.mark makes a mark of it
    return value.__code__ if isinstance(value, types.FunctionType) else None

def _snapshot():
    """Everything of pytest and pluggy that could make a verdict, as it is when collection
    starts (before any code of the repository runs): every function of their modules (the default plugins imported first)
    and every function-valued attribute of their classes, compared by identity and by the
    identity of its code before every record, and each class's set of attribute names (a
    method added where none was, such as `__bool__`, counts too)."""
    for name in _pytest.config.default_plugins:
        try:
            importlib.import_module("_pytest." + name)
        except ImportError:
            pass
    functions, classes, seen = [], [], set()
    for module_name, module in sorted(sys.modules.items()):
        if not _ours(module_name) or module is None:
            continue
        for name, value in list(vars(module).items()):
            if isinstance(value, type) and _ours(value.__module__) and id(value) not in seen:
                seen.add(id(value))
                classes.append((value, frozenset(vars(value))))
                for attr, member in list(vars(value).items()):
                    if _code(member) is not None:
                        functions.append((value.__qualname__ + "." + attr, value, attr, member,
                                          _code(member)))
            elif _code(value) is not None and not isinstance(value, type):
                functions.append((module_name + "." + name, module, name, value, _code(value)))
    return functions, classes

def _plugin(fd, key):
    import hashlib, hmac, json
    seq = [0]
    functions, classes = [], []  # filled when collection starts (`Report.pytest_collection`)
    plugins = {}  # id -> plugin object, registered before any test module was imported

    def allowed_late(plugin, manager):
        """A plugin registered after collection began that pytest itself would register: a
        conftest module that was in the tree before any of the tree's code ran (library code
        that writes one where pytest looks later must not get a plugin in), or a module a
        conftest names in `pytest_plugins`."""
        if not isinstance(plugin, types.ModuleType):
            return False
        path = getattr(plugin, "__file__", "") or ""
        if os.path.basename(path) == "conftest.py":
            return os.path.realpath(path) in _conftests
        return any(plugin.__name__ in (getattr(p, "pytest_plugins", ()) or ())
                   for p in manager.get_plugins() if isinstance(p, types.ModuleType))

    def foreign_hookimpl(manager):
        for caller in list(vars(manager.hook).values()):
            if getattr(caller, "_hookexec", None) != manager._hookexec:
                return "HookCaller._hookexec of " + str(getattr(caller, "name", "?"))
            for impl in caller.get_hookimpls():
                if not manager.is_registered(impl.plugin) or getattr(
                        impl.plugin, getattr(impl.function, "__name__", ""), None) != impl.function:
                    return "hook implementation " + str(getattr(impl, "plugin_name", "?"))
        return None

    def replaced():
        for name, owner, attr, value, code in functions:
            now = vars(owner).get(attr)
            if now is not value or _code(now) is not code:
                return name
        for cls, names in classes:
            if len(vars(cls)) != len(names):  # a method added (data such as flags is not)
                added = [k for k in list(vars(cls)) if k not in names]
                if any(_code(vars(cls).get(k)) is not None for k in added):
                    return cls.__qualname__ + "." + added[0]
        manager = plugins.get("manager")
        if manager is not None:  # what imported code may have added to the hook machinery
            if getattr(manager, "_inner_hookexec", None) is not plugins.get("hookexec"):
                return "PluginManager._inner_hookexec"
            for plugin in manager.get_plugins():
                if id(plugin) not in plugins and not allowed_late(plugin, manager):
                    return "plugin " + type(plugin).__name__
            return foreign_hookimpl(manager)
        return None

    def emit(record):
        seq[0] += 1
        record["n"] = seq[0]
        line = json.dumps(record, sort_keys=True)
        mac = hmac.new(key, line.encode(), hashlib.sha256).hexdigest()
        data = (line + "\t" + mac + "\n").encode()
        while data:
            data = data[os.write(fd, data):]

    class Report:
        @pytest.hookimpl(tryfirst=True)
        def pytest_collection(self, session):
            # pytest's own plugins have configured (some add methods to pytest's classes);
            # no test module and so no library code has been imported yet
            found_functions, found_classes = _snapshot()
            functions.extend(found_functions)
            classes.extend(found_classes)
            manager = session.config.pluginmanager
            plugins.update((id(p), p) for p in manager.get_plugins())
            plugins["manager"] = manager
            plugins["hookexec"] = getattr(manager, "_inner_hookexec", None)

        def pytest_runtest_logreport(self, report):
            name = replaced()
            if name is not None:  # code of the repository replaced how verdicts are made
                emit({"tampered": name})
            outcome = report.outcome
            if hasattr(report, "wasxfail"):
                outcome = "xfailed" if report.skipped else "xpassed"
            record = {"id": report.nodeid, "when": report.when, "outcome": outcome}
            if report.failed:
                crash = getattr(report.longrepr, "reprcrash", None)
                record["message"] = str(getattr(crash, "message", "") or "")[:300]
                try:  # the test's own failing line (what it called), for problem statements
                    first = report.longrepr.reprtraceback.reprentries[0]
                    record["source"] = next(line[1:].strip() for line in first.lines
                                            if line.startswith(">"))[:300]
                except Exception:
                    pass
            emit(record)

        def pytest_deselected(self, items):
            for item in items:
                emit({"id": item.nodeid, "when": "deselected", "outcome": "deselected"})

        def pytest_sessionfinish(self, session, exitstatus):
            name = replaced()
            if name is not None:
                emit({"tampered": name})
            emit({"exitstatus": int(exitstatus)})

    return Report()

_site = next((i for i, p in enumerate(sys.path)
              if p.rstrip("/").endswith(("site-packages", "dist-packages"))), len(sys.path))
sys.path[_site:_site] = _roots
_report = _plugin(_out, _key)
del _key, _out
raise SystemExit(pytest.main(sys.argv[1:], plugins=[_report]))
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
