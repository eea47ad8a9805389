"""Runs in the grader's trusted process (never the candidate's): executes a task's test code
against proxies whose calls travel as tagged JSON to the candidate's process.

Two channels: the grader's (the request in, the verdict out) and the candidate's (load and
call requests out, replies in). In a fork-server child (`main`) they are two sockets, the
second connected straight to the candidate server (a reusable driver, `serve`, receives a new
candidate socket with every request); run as a script both are stdin/stdout and the grader
relays the candidate's messages (a reply {"dead": true} means it has ended).
Every `assert` in the test code is rewritten to record its verdict and go on, so the grader
learns how many of the asserts passed; the check passes only when it ran to the end, no
assert failed and every call produced a value.

Connected straight to the candidate (a fork-server child), a check costs one round trip
instead of one per call: a first pass runs the test code with proxies that only record the
calls' arguments (a result's any use stops its statement: an assert is skipped, the test code
goes on to its next calls), every recorded call goes to the candidate in one batch with the
load request, and the real pass then takes each call's answer from the batch while its
arguments are the recorded ones, in order; from the first call that differs (test code whose
arguments depend on earlier results, or that went another way) it calls the candidate live.
A candidate process that dies during the batch delivers none of its answers: every call of
the batch then fails, as the calls after its death would live.
Values are still decoded and compared here, in the real pass, exactly as live answers are.
The first pass starts from the same `random` state as the real one, and is cut short after
`COLLECT_SECONDS` (what it recorded by then is batched, the rest goes live).
  → {"op": "check", "code": str, "setup": str, "test": str, "entry": str|null, "names": [str],
     "compiled": {"python": sys.version, "code": hex marshal of (setup, test), "counted": [bool]}
                 (optional: the grader's compiled copy, used when the interpreter matches),
     "compiled_solution": {"python": sys.version, "code": hex marshal} (optional: the grader's
                 compile of "code", handed to the candidate in place of the source)}
  ⇄ candidate: {"op": "load", ...}, {"op": "call", ...} (see candidate_server)
     "want_compiled": bool (optional: without "compiled", send back what is compiled here)}
  ← {"op": "done", "load": "ok"|"error"|"crashed", "load_error": str|null,
     "completed": bool, "asserts_total": int, "asserts_passed": int, "asserts_run": int,
     "failures": int, "calls": int, "call_errors": int, "first_failure": str|null,
     "bad_output": str|null (what was malformed in the candidate's replies),
     "compiled": as in the request, or null (what "want_compiled" asked for)}
"""

import json as _json
import os as _os
import sys as _sys

#: bounds of one batch of calls (the first pass records no more) and of the first pass itself
MAX_BATCH_CALLS = 1000
MAX_BATCH_BYTES = 8 * 2**20
COLLECT_SECONDS = 0.2


class CandidateError(Exception):
    """The candidate's call raised, returned something that cannot be sent, or died."""


class _Link:
    """Line-delimited JSON over a pair of fds (or one socket), read and written with plain
    os.read and os.write (a buffered file object per check cost more than its decoding)."""

    def __init__(self, in_fd, out_fd, owned=True):
        self.in_fd, self.out_fd, self.owned = in_fd, out_fd, owned
        self.pending = bytearray()
        self.scanned = 0  # how much of `pending` is known to hold no newline

    def send(self, message):
        """Written straight to the fd, nothing kept back (a peer that died makes it raise)."""
        self.send_text(_json.dumps(message))

    def send_text(self, text):
        data = memoryview(text.encode("utf-8") + b"\n")
        while data:
            data = data[_os.write(self.out_fd, data):]

    def close(self):
        if self.owned:
            _os.close(self.in_fd)
            if self.out_fd != self.in_fd:
                _os.close(self.out_fd)

    def receive(self):
        """The next message, or None when the peer has ended; WireError (from
        `load_message`) when it sent something that is not a bounded protocol message.
        Reads stop at the message's end whenever the peer sends nothing after it (the grader
        sends a check's request last), so nothing sent later is read ahead."""
        while True:
            end = self.pending.find(b"\n", self.scanned)
            if end >= 0:
                break
            self.scanned = len(self.pending)
            if self.scanned > MAX_MESSAGE_BYTES:
                raise WireError("a reply longer than %d bytes" % MAX_MESSAGE_BYTES)
            chunk = _os.read(self.in_fd, 1 << 16)
            if not chunk:
                return None
            self.pending += chunk
        line = bytes(self.pending[:end])
        del self.pending[:end + 1]
        self.scanned = 0
        message = load_message(line)
        if message.get("dead"):
            return None
        return message


class _CheckState:
    """What one check has seen so far (one instance, `_State`: writing a class's own
    attributes would invalidate CPython's attribute caches for it at every call counted)."""

    grader = None
    candidate = None
    batch = False      # whether calls go to the candidate in one batch (a direct channel)
    collector = None   # the first pass's, while it runs
    replay = []        # [(call payload, answer)] the batch brought, in call order
    replay_at = 0
    batched = 0        # calls answered from the batch
    dead = None
    bad_output = None
    calls = 0
    call_errors = 0
    first_failure = None
    asserts = {}
    compiled = None    # what this check compiled, for the grader (`want_compiled`)


_State = _CheckState()


def _note_failure(text):
    if _State.first_failure is None:
        _State.first_failure = text[:2000]


def _receive_answer():
    """The candidate's next answer, or None once it has ended or sent bad output (noted)."""
    try:
        answer = _State.candidate.receive()
    except OSError:
        answer = None
    except WireError as err:
        _State.bad_output = str(err)[:300]
        _State.dead = "candidate sent %s" % _State.bad_output
        return None
    if answer is None:
        _State.dead = "candidate process ended"
    return answer


def _ask_candidate(message):
    """The candidate's answer, or None once it has ended or sent bad output."""
    try:
        _State.candidate.send(message)
    except OSError:
        _State.dead = "candidate process ended"
        return None
    return _receive_answer()


class _Collecting(BaseException):
    """Raised, during the first pass, at any use of a call's result (not known yet)."""


class _StopCollecting(BaseException):
    """Raised when the first pass has run for `COLLECT_SECONDS`."""


class _Pending:
    """A call's result during the first pass."""

    __slots__ = ()

    def __getattr__(self, name):
        raise _Collecting()


def _refuse(*_args, **_kwargs):
    raise _Collecting()


for _name in ("eq ne lt le gt ge hash bool len iter next reversed getitem setitem delitem "
              "contains call add radd sub rsub mul rmul truediv rtruediv floordiv rfloordiv "
              "mod rmod divmod rdivmod pow rpow matmul rmatmul lshift rlshift rshift rrshift "
              "and rand or ror xor rxor neg pos abs invert int float complex index round "
              "trunc floor ceil str repr format bytes fspath enter exit length_hint copy "
              "deepcopy reduce reduce_ex getstate").split():
    setattr(_Pending, "__%s__" % _name, _refuse)


def _stop_line(frame, event, arg):
    """Trace function of a first pass that ran too long: every line of the test code raises
    (test code that catches everything still unwinds; the tracer is unset at each raise and
    set again at the next alarm)."""
    if _State.collector is None:
        return None
    raise _StopCollecting()


def _on_alarm(_signum, frame):
    """SIGALRM during the first pass: trace the test code's frames (up to `_collect_calls`,
    whose own lines are never stopped)."""
    if _State.collector is None:
        return
    while frame is not None and frame.f_code is not _collect_calls.__code__:
        frame.f_trace = _stop_line
        frame = frame.f_back
    _sys.settrace(_stop_line)


class _Collector:
    """The first pass's record of the calls: their payloads and their JSON."""

    def __init__(self):
        # (payload, its JSON) in one list: one append records a call, so an alarm that ends
        # the pass between two statements never leaves a payload without its JSON
        self.calls, self.size, self.full = [], 0, False

    def record(self, name, args, kwargs):
        if self.full:
            raise _Collecting()
        try:
            payload = {"op": "call", "name": name, "args": encode(list(args)),
                       "kwargs": encode(dict(kwargs))}
            text = _json.dumps(payload)
        except (WireError, ValueError, RecursionError):
            raise _Collecting()  # the real pass reports it
        if len(self.calls) >= MAX_BATCH_CALLS or self.size + len(text) > MAX_BATCH_BYTES:
            self.full = True
            raise _Collecting()
        self.calls.append((payload, text))
        self.size += len(text)
        return _Pending()

    def message(self):
        return '{"op": "batch", "calls": [' + ", ".join(text for _, text in self.calls) + "]}"


def _replayed(payload):
    """The batch's answer to this call, if it is the next recorded one; after the first call
    that differs, None for every call (they go live)."""
    at = _State.replay_at
    if at < len(_State.replay):
        recorded, answer = _State.replay[at]
        if recorded == payload:
            _State.replay_at = at + 1
            _State.batched += 1
            return answer
        _State.replay_at = len(_State.replay)
    return None


class _Proxy:
    def __init__(self, name):
        self.__name__ = name

    def __call__(self, *args, **kwargs):
        if _State.collector is not None:
            return _State.collector.record(self.__name__, args, kwargs)
        _State.calls += 1
        if _State.dead is not None and _State.replay_at >= len(_State.replay):
            _State.call_errors += 1
            raise CandidateError(_State.dead)
        try:
            payload = {"op": "call", "name": self.__name__, "args": encode(list(args)),
                       "kwargs": encode(dict(kwargs))}
        except WireError as err:
            raise CandidateError("test argument cannot be sent: %s" % err)
        answer = _replayed(payload)
        if answer is None:
            if _State.dead is not None:
                _State.call_errors += 1
                raise CandidateError(_State.dead)
            answer = _ask_candidate(payload)
        if answer is None:
            _State.call_errors += 1
            raise CandidateError(_State.dead)
        if answer.get("ok") is not True:
            _State.call_errors += 1
            raise CandidateError(str(answer.get("error", "candidate error"))[:2000])
        try:
            return decode(answer["value"])
        except (WireError, KeyError) as err:
            _State.call_errors += 1
            _State.bad_output = _State.bad_output or ("malformed data: %s" % err)[:300]
            raise CandidateError("candidate returned malformed data: %s" % err)


def _rlvr_assert(number, source, test, message=None):
    if _State.collector is not None:  # the first pass: only the calls count
        try:
            test()
        except _StopCollecting:
            raise
        except BaseException:  # noqa: BLE001 - a result's use, or the assert failing
            pass
        return
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


def _assert_rewriter_class():
    """The class that rewrites asserts (`ast` is imported here, on first use: most of the
    fork server's children never need it)."""
    import ast as _ast

    class _AssertRewriter:
        """Rewrites every assert statement; only statement lists are walked (an assert is a
        statement, never inside an expression), in the order of each node's fields."""

        def __init__(self, text):
            self.lines = text.encode("utf-8").splitlines()  # AST column offsets count bytes
            self.counted = []

        def visit(self, tree):
            self._statements(tree.body)
            return tree

        def _statements(self, body):
            for index, node in enumerate(body):
                if type(node) is _ast.Assert:
                    body[index] = self.visit_Assert(node)
                    continue
                for field in node._fields:
                    if field in ("body", "orelse", "finalbody"):
                        value = getattr(node, field)
                        if type(value) is list:
                            self._statements(value)
                    elif field in ("handlers", "cases"):
                        for part in getattr(node, field):
                            self._statements(part.body)

        def _first_line(self, node):
            line = self.lines[node.lineno - 1] if node.lineno <= len(self.lines) else b""
            end = node.end_col_offset if node.end_lineno == node.lineno else None
            return line[node.col_offset:end].decode("utf-8", "replace").strip()[:300] or "assert"

        def visit_Assert(self, node):
            number = len(self.counted)
            trivial = isinstance(node.test, _ast.Constant)
            self.counted.append(not trivial)

            at = {"lineno": node.lineno, "col_offset": node.col_offset,  # the assert's place
                  "end_lineno": node.end_lineno, "end_col_offset": node.end_col_offset}
            call = _ast.Call(
                func=_ast.Name(id="_rlvr_assert", ctx=_ast.Load(), **at),
                args=[_ast.Constant(number, **at),
                      _ast.Constant("line %d: %s" % (node.lineno, self._first_line(node)), **at),
                      _ast.Lambda(args=_ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                                      kw_defaults=[], defaults=[]),
                                  body=node.test, **at)],
                keywords=[], **at)
            return _ast.Expr(call, **at)

    return _AssertRewriter


_REWRITER = []


def compile_check(setup, test):
    """(setup code, rewritten test code, which asserts count)."""
    if not _REWRITER:
        _REWRITER.append(_assert_rewriter_class())
    import ast as _ast
    rewriter = _REWRITER[0](test)
    tree = rewriter.visit(_ast.parse(test))  # every new node carries its assert's location
    return (compile(setup or "", "setup.py", "exec"), compile(tree, "test.py", "exec"),
            rewriter.counted)


#: checks a reusable driver compiled or received, by their (setup, test) source; emptied when
#: full
_KEPT_CHECKS = {}
MAX_KEPT_CHECKS = 512


def _compiled(request):
    """The request's (setup, test, counted asserts): kept from an earlier check, the grader's
    compiled copy, or compiled here (while the candidate loads its code: in parallel) — then,
    when the grader asks for it (`want_compiled`), handed back to it with the verdict, so
    that the grader compiles nothing and every driver gets this copy."""
    key = (request.get("setup") or "", request["test"])
    kept = _KEPT_CHECKS.get(key)
    if kept is not None:
        return kept
    import marshal
    blob = request.get("compiled")
    if blob and blob.get("python") == _sys.version:
        setup, test = marshal.loads(bytes.fromhex(blob["code"]))
        kept = (setup, test, blob["counted"])
    else:
        kept = compile_check(*key)
        if request.get("want_compiled"):
            _State.compiled = {"python": _sys.version, "code": marshal.dumps(kept[:2]).hex(),
                               "counted": kept[2]}
    if len(_KEPT_CHECKS) >= MAX_KEPT_CHECKS:
        _KEPT_CHECKS.clear()
    _KEPT_CHECKS[key] = kept
    return kept


def _run_test(setup, test, request):
    """Run the test code (setup, then the tests, then `check(candidate)` for an entry point)
    in a fresh namespace whose candidate names are proxies."""
    namespace = {"__name__": "__test__", "_rlvr_assert": _rlvr_assert}
    exec(setup, namespace)
    for name in request.get("names") or []:
        namespace[name] = _Proxy(name)
    exec(test, namespace)
    if request.get("entry"):
        namespace["check"](_Proxy(request["entry"]))


def _collect_calls(setup, test, request):
    """The first pass (see the module's docstring): the calls the test code makes, recorded,
    as the batch request's JSON. The test code's `random` state is put back afterwards."""
    import _signal as signal  # signal.py converts every handler and number to its enums
    random = _random_module(setup, test)
    state = random.getstate() if random is not None else None
    _State.collector = collector = _Collector()
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, COLLECT_SECONDS, 0.01)
    try:
        _run_test(setup, test, request)
    except BaseException:  # noqa: BLE001 - whatever stopped it, the real pass runs it all
        pass
    _State.collector = None  # a late alarm does nothing from here on
    signal.setitimer(signal.ITIMER_REAL, 0)
    _sys.settrace(None)
    if random is not None:
        random.setstate(state)
    return collector


def _names(code):
    """Every name and string constant of the code object and those nested in it."""
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _names(const)
        elif type(const) is str:
            names.add(const)
    return names


def _random_module(setup, test):
    """`random`, when the task's code may use its shared state (names it anywhere): the
    first pass then puts that state back for the real one."""
    if "random" not in _names(test) and "random" not in _names(setup):
        return None
    import random
    return random


def _receive_batch(collector):
    """The batch's answers, all in one line; none when the candidate ended first or sent
    something else (every call then fails, as live calls to it would)."""
    answers = _receive_answer()
    replay = []
    if answers is not None:
        batch = answers.get("batch")
        if type(batch) is list and len(batch) == len(collector.calls) and \
                all(type(answer) is dict for answer in batch):
            replay = [(payload, answer) for (payload, _), answer in zip(collector.calls, batch)]
        else:
            _State.bad_output = "a batch reply that is not one answer per call"
            _State.dead = "candidate sent %s" % _State.bad_output
    _State.replay, _State.replay_at = replay, 0


def _check(request):
    batch = _State.batch
    try:
        load = {"op": "load", "code": request.get("code", "")}
        if request.get("compiled_solution"):  # the grader's compile of the same code
            load = {"op": "load", "compiled": request["compiled_solution"]}
        _State.candidate.send(load)
    except OSError:
        pass  # it has ended: the receive below says so
    setup, test, counted_asserts = _compiled(request)  # while the candidate loads its code
    collector = None
    if batch:
        collector = _collect_calls(setup, test, request)
        try:
            _State.candidate.send_text(collector.message())
        except OSError:
            pass
    try:
        answer = _State.candidate.receive()
    except OSError:
        answer = None
    except WireError as err:
        _State.grader.send({"op": "done", "load": "crashed", "load_error": None,
                            "bad_output": str(err)[:300]})
        return
    if answer is None:
        _State.dead = "candidate process ended"
        load, load_error = "crashed", None
    elif answer.get("ok") is not True:
        load, load_error = "error", str(answer.get("error"))[:2000]
    else:
        load, load_error = "ok", None
    if load != "ok":
        _State.grader.send({"op": "done", "load": load, "load_error": load_error})
        return
    if collector is not None:
        _receive_batch(collector)
    completed = True
    try:
        _run_test(setup, test, request)
    except BaseException as err:  # noqa: BLE001
        completed = False
        _note_failure("test code stopped: %s: %s" % (type(err).__name__, err))
    counted = [i for i, real in enumerate(counted_asserts) if real]
    passed = sum(1 for i in counted
                 if _State.asserts.get(i, [0, 0])[0] > 0 and _State.asserts[i][1] == 0)
    failures = sum(rec[1] for rec in _State.asserts.values())
    _State.grader.send({"op": "done", "load": "ok", "load_error": None, "completed": completed,
                        "asserts_total": len(counted), "asserts_passed": passed,
                        "asserts_run": sum(r[0] for r in _State.asserts.values()),
                        "failures": failures, "calls": _State.calls,
                        "call_errors": _State.call_errors, "batched": _State.batched,
                        "first_failure": _State.first_failure,
                        "bad_output": _State.bad_output, "compiled": _State.compiled})


def _reset():
    _State.candidate = _State.dead = _State.bad_output = None
    _State.replay, _State.replay_at, _State.batched = [], 0, 0
    _State.calls = _State.call_errors = 0
    _State.first_failure = _State.compiled = None
    _State.asserts = {}


def _ignore_sigpipe():
    """A candidate that ended makes our next write fail with EPIPE (reported as its death),
    not kill this process."""
    import signal as _signal
    _signal.signal(_signal.SIGPIPE, _signal.SIG_IGN)


def _run(grader, candidate, batch=False):
    _ignore_sigpipe()
    null = _os.open(_os.devnull, _os.O_RDWR)
    for fd in (0, 1, 2):
        _os.dup2(null, fd)
    _State.grader, _State.candidate, _State.batch = grader, candidate, batch
    request = grader.receive()
    if request is None:
        _sys.exit(3)
    _check(request)


def serve(grader_fd):
    """Fork-server entry for a reusable driver: says {"op": "ready"} once started, then runs
    checks one after another, each against the candidate socket that arrives (SCM_RIGHTS, on
    a one-byte header) before its request.
    Every check starts from fresh state; the driver never runs candidate code."""
    import marshal  # noqa: F401 - what a check uses, imported now (a driver that is started
    import random  # noqa: F401   ahead of use is then ready for its first check)
    import socket as _socket
    _ignore_sigpipe()
    null = _os.open(_os.devnull, _os.O_RDWR)
    for fd in (0, 1, 2):
        _os.dup2(null, fd)
    sock = _socket.socket(fileno=grader_fd)
    sock.sendall(b'{"op": "ready"}\n')  # started: the grader may hand it a check
    grader = _Link(grader_fd, grader_fd, owned=False)
    while True:
        header, fds, _, _ = _socket.recv_fds(sock, 1, 1)
        if not header or len(fds) != 1:
            _sys.exit(0)
        _check_against(grader, _Link(fds[0], fds[0]))


def _check_against(grader, candidate):
    """One check of a reusable driver against a fresh candidate's link. Nothing of it is kept
    while the driver waits for the next: the candidate's answers (a batch of up to
    `MAX_MESSAGE_BYTES`, hundreds of MiB once decoded) would otherwise stay in this process,
    outside any run's memory budget, until its next check."""
    _reset()
    _State.grader, _State.candidate, _State.batch = grader, candidate, True
    try:
        request = grader.receive()
        if request is None:
            _sys.exit(3)
        _check(request)
    finally:
        candidate.close()
        _reset()


def main(grader_fd, candidate_fd=None):
    """Fork-server entry: a socket to the grader and, for a single check, one straight to
    the candidate server; without it, a reusable driver (`serve`)."""
    if candidate_fd is None:
        serve(grader_fd)
    else:
        _run(_Link(grader_fd, grader_fd), _Link(candidate_fd, candidate_fd), batch=True)


if __name__ == "__main__":
    _link = _Link(_os.dup(0), _os.dup(1))
    _run(_link, _link)
