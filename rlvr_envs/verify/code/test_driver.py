"""Runs inside the grader's own sandbox (never the candidate's): executes a task's test code
against proxies whose calls travel as tagged JSON to the candidate's process via the grader.

Every `assert` in the test code is rewritten to record its verdict and go on, so the grader
learns how many of the asserts passed; the check passes only when it ran to the end, no
assert failed and every call produced a value.
  → {"op": "check", "setup": str, "test": str, "entry": str|null, "names": [str]}
  ← {"op": "call", ...} (answered with {"ok": ..., "value"|"error": ...}), repeated
  ← {"op": "done", "completed": bool, "asserts_total": int, "asserts_passed": int,
     "failures": int, "calls": int, "call_errors": int, "first_failure": str|null}
"""

import ast as _ast
import json as _json
import os as _os
import sys as _sys

_proto_in = _os.fdopen(_os.dup(0), "rb")
_proto_out = _os.fdopen(_os.dup(1), "wb")
_null = _os.open(_os.devnull, _os.O_RDWR)
for _fd in (0, 1, 2):
    _os.dup2(_null, _fd)


class CandidateError(Exception):
    """The candidate's call raised, returned something that cannot be sent, or died."""


class _State:
    dead = None
    calls = 0
    call_errors = 0
    first_failure = None
    asserts = {}


def _send(message):
    _proto_out.write(_json.dumps(message).encode("utf-8") + b"\n")
    _proto_out.flush()


def _note_failure(text):
    if _State.first_failure is None:
        _State.first_failure = text[:2000]


class _Proxy:
    def __init__(self, name):
        self.__name__ = name

    def __call__(self, *args, **kwargs):
        _State.calls += 1
        if _State.dead is not None:
            _State.call_errors += 1
            raise CandidateError(_State.dead)
        try:
            payload = {"op": "call", "name": self.__name__, "args": encode(list(args)),
                       "kwargs": encode(dict(kwargs))}
        except WireError as err:
            raise CandidateError("test argument cannot be sent: %s" % err)
        _send(payload)
        line = _proto_in.readline()
        if not line:
            _sys.exit(3)
        answer = _json.loads(line)
        if answer.get("dead"):
            _State.dead = answer.get("error", "candidate process ended")
        if not answer.get("ok"):
            _State.call_errors += 1
            raise CandidateError(answer.get("error", "candidate error"))
        try:
            return decode(answer["value"])
        except (WireError, ValueError, KeyError, TypeError) as err:
            _State.call_errors += 1
            raise CandidateError("candidate returned malformed data: %s" % err)


def _rlvr_assert(number, source, test, message=None):
    record = _State.asserts.setdefault(number, [0, 0])
    record[0] += 1
    try:
        ok = test()
    except BaseException as err:  # noqa: BLE001
        record[1] += 1
        _note_failure("%s raised %s: %s" % (source, type(err).__name__, err))
        return
    if not ok:
        record[1] += 1
        _note_failure("%s failed" % source)


class _AssertRewriter(_ast.NodeTransformer):
    def __init__(self, text):
        self.text = text
        self.counted = []

    def visit_Assert(self, node):
        number = len(self.counted)
        trivial = isinstance(node.test, _ast.Constant)
        self.counted.append(not trivial)
        source = (_ast.get_source_segment(self.text, node) or "assert").splitlines()[0][:300]
        call = _ast.Call(
            func=_ast.Name(id="_rlvr_assert", ctx=_ast.Load()),
            args=[_ast.Constant(number), _ast.Constant("line %d: %s" % (node.lineno, source)),
                  _ast.Lambda(args=_ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                                  kw_defaults=[], defaults=[]), body=node.test)],
            keywords=[])
        return _ast.copy_location(_ast.Expr(call), node)


def _check(request):
    namespace = {"__name__": "__test__", "_rlvr_assert": _rlvr_assert}
    exec(compile(request.get("setup") or "", "setup.py", "exec"), namespace)
    text = request["test"]
    rewriter = _AssertRewriter(text)
    tree = _ast.fix_missing_locations(rewriter.visit(_ast.parse(text)))
    for name in request.get("names") or []:
        namespace[name] = _Proxy(name)
    completed = True
    try:
        exec(compile(tree, "test.py", "exec"), namespace)
        if request.get("entry"):
            namespace["check"](_Proxy(request["entry"]))
    except BaseException as err:  # noqa: BLE001
        completed = False
        _note_failure("test code stopped: %s: %s" % (type(err).__name__, err))
    counted = [i for i, real in enumerate(rewriter.counted) if real]
    passed = sum(1 for i in counted
                 if _State.asserts.get(i, [0, 0])[0] > 0 and _State.asserts[i][1] == 0)
    failures = sum(rec[1] for rec in _State.asserts.values())
    _send({"op": "done", "completed": completed, "asserts_total": len(counted),
           "asserts_passed": passed, "asserts_run": sum(r[0] for r in _State.asserts.values()),
           "failures": failures, "calls": _State.calls, "call_errors": _State.call_errors,
           "first_failure": _State.first_failure})


_request = _json.loads(_proto_in.readline())
_check(_request)
