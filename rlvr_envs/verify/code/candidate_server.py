"""Runs inside the candidate's sandbox: load the candidate's code, then answer calls.

Protocol (one JSON object per line on the protocol channel):
  → {"op": "load", "code": str}           ← {"ok": true} | {"ok": false, "error": str}
    (or "compiled": {"python": sys.version, "code": hex of marshal} instead of "code": the
    grader's own compile of the same code, used when this is the same interpreter)
  → {"op": "call", "name": str, "args": wire, "kwargs": wire}
                                           ← {"ok": true, "value": wire} | {"ok": false, "error": str}
  → {"op": "batch", "calls": [{"name": str, "args": wire, "kwargs": wire}, ...]}
                                           ← {"batch": [one call reply per call, in order]}
A batch's replies go out together, in one line, once its last call has returned (a process
that dies during a batch delivers none of them); after a failed load, a batch's calls are
answered {"ok": false} without running anything.
The channel is a socket from the test driver or the grader (`main`, in a fork-server child) or
private copies of stdin/stdout (run as a script), read and written with plain os.read and
os.write (no buffered file objects: a fork-server child pays for every page it touches).
The candidate's own fds 0/1/2 point at /dev/null. Nothing here is trusted: its peer only ever receives plain tagged data from this
process and judges it elsewhere.
"""

import json as _json
import os as _os
import sys as _sys


def _lines(fd):
    """The newline-terminated lines that arrive on `fd`, without their newline."""
    pending = bytearray()
    while True:
        chunk = _os.read(fd, 1 << 16)
        if not chunk:
            return
        searched = len(pending)
        pending += chunk
        end = pending.find(b"\n", searched)
        while end >= 0:
            yield bytes(pending[:end])
            del pending[:end + 1]
            end = pending.find(b"\n")


def _write_all(fd, data):
    data = memoryview(data)
    while data:
        data = data[_os.write(fd, data):]


def _solution_code(request):
    """The code to run: the grader's compiled copy when it was made by this interpreter."""
    compiled = request.get("compiled")
    if compiled and compiled.get("python") == _sys.version:
        import marshal
        return marshal.loads(bytes.fromhex(compiled["code"]))
    return compile(request["code"], "solution.py", "exec")


def serve(in_fd, out_fd):
    dumps, loads = _json.dumps, _json.loads

    def reply(message):
        _write_all(out_fd, dumps(message).encode("utf-8") + b"\n")

    def call(request):
        try:
            function = namespace[request["name"]]
            args = decode(request["args"])
            kwargs = decode(request["kwargs"])
            value = encode(function(*args, **kwargs))
        except BaseException as err:  # noqa: BLE001 - reported to the grader
            try:
                return {"ok": False, "error": "%s: %s" % (type(err).__name__, err)}
            except BaseException:  # noqa: BLE001 - an exception whose str() raises
                return {"ok": False, "error": "exception in candidate"}
        return {"ok": True, "value": value}

    namespace = {"__name__": "solution", "__builtins__": __builtins__}
    loaded = False
    for line in _lines(in_fd):
        request = loads(line)
        if request["op"] == "load":
            try:
                exec(_solution_code(request), namespace)
            except BaseException as err:  # noqa: BLE001 - reported to the grader
                reply({"ok": False, "error": "%s: %s" % (type(err).__name__, err)})
                continue
            loaded = True
            reply({"ok": True})
        elif request["op"] == "call":
            reply(call(request))
        elif request["op"] == "batch":
            reply({"batch": [call(item) if loaded else {"ok": False, "error": "not loaded"}
                             for item in request["calls"]]})


_WARM_SOLUTION = """
def f(a, b=1, *rest, **named):
    if a == "raise":
        raise ValueError(a)
    return [a, b, str(a), (1.5, None, True), {"k": {2, 3}}]
"""


def warm_up(rounds=12):
    """Run by the fork server once, before it forks anything: serve canned requests (a load,
    single calls, a batch, a call that raises) so that what CPython settles on first use of
    this code (its adaptive bytecode, attribute caches) is settled in the zygote's memory,
    shared by every child, instead of being written, and its page copied, in each of them.
    Returns the last round's replies."""
    import marshal
    code = marshal.dumps(compile(_WARM_SOLUTION, "solution.py", "exec")).hex()
    calls = [{"name": "f", "args": encode(args), "kwargs": encode(kwargs)}
             for args, kwargs in (([1], {}), ([[1.5, "x", None, True], (1, 2)], {"c": {1: 2}}),
                                  (["raise"], {}), ([b"x", 2 ** 70, 1j, frozenset([1])], {}))]
    lines = [{"op": "load", "compiled": {"python": _sys.version, "code": code}},
             {"op": "call", **calls[0]}, {"op": "call", **calls[2]},
             {"op": "batch", "calls": calls}]
    payload = "".join(_json.dumps(line) + "\n" for line in lines).encode()
    answers = b""
    for _ in range(rounds):
        requests, feed = _os.pipe()
        replies, out = _os.pipe()
        _os.write(feed, payload)
        _os.close(feed)
        serve(requests, out)
        answers = _os.read(replies, 1 << 16)
        for fd in (requests, out, replies):
            _os.close(fd)
    return [_json.loads(line) for line in answers.splitlines()]


def main(channel):
    """Fork-server entry: one socket carries both directions (fds 0-2 are /dev/null)."""
    serve(channel, channel)


if __name__ == "__main__":
    _in, _out = _os.dup(0), _os.dup(1)
    _null = _os.open(_os.devnull, _os.O_RDWR)
    for _fd in (0, 1, 2):
        _os.dup2(_null, _fd)
    serve(_in, _out)
