"""Runs inside the candidate's sandbox: load the candidate's code, then answer calls.

Protocol (one JSON object per line on the protocol channel):
  → {"op": "load", "code": str}           ← {"ok": true} | {"ok": false, "error": str}
  → {"op": "call", "name": str, "args": wire, "kwargs": wire}
                                           ← {"ok": true, "value": wire} | {"ok": false, "error": str}
  → {"op": "batch", "calls": [{"name": str, "args": wire, "kwargs": wire}, ...]}
                                           ← one call reply per call, in order
A batch's replies go out together, in one write, once its last call has returned (a process
that dies during a batch delivers none of them); after a failed load, a batch's calls are
answered {"ok": false} without running anything.
The channel is a socket from the test driver or the grader (`main`, in a fork-server child) or
private copies of stdin/stdout (run as a script). The candidate's own fds 0/1/2 point at
/dev/null. Nothing here is trusted: its peer only ever receives plain tagged data from this
process and judges it elsewhere.
"""

import json as _json
import os as _os


def serve(in_fd, out_fd):
    proto_in = _os.fdopen(in_fd, "rb")
    proto_out = _os.fdopen(out_fd, "wb", closefd=in_fd != out_fd)
    null = _os.open(_os.devnull, _os.O_RDWR)
    for fd in (0, 1, 2):
        _os.dup2(null, fd)
    dumps, loads = _json.dumps, _json.loads

    def reply(message, flush=True):
        proto_out.write(dumps(message).encode("utf-8") + b"\n")
        if flush:
            proto_out.flush()

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
    for line in proto_in:
        request = loads(line)
        if request["op"] == "load":
            try:
                exec(compile(request["code"], "solution.py", "exec"), namespace)
            except BaseException as err:  # noqa: BLE001 - reported to the grader
                reply({"ok": False, "error": "%s: %s" % (type(err).__name__, err)})
                continue
            loaded = True
            reply({"ok": True})
        elif request["op"] == "call":
            reply(call(request))
        elif request["op"] == "batch":
            for item in request["calls"]:
                reply(call(item) if loaded else {"ok": False, "error": "not loaded"}, False)
            proto_out.flush()


def main(channel):
    """Fork-server entry: one socket carries both directions."""
    serve(channel, channel)


if __name__ == "__main__":
    serve(_os.dup(0), _os.dup(1))
