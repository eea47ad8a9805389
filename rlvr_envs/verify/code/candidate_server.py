"""Runs inside the candidate's sandbox: load the candidate's code, then answer calls.

Protocol (one JSON object per line on the private copies of stdin/stdout made at start):
  → {"op": "load", "code": str}           ← {"ok": true} | {"ok": false, "error": str}
  → {"op": "call", "name": str, "args": wire, "kwargs": wire}
                                           ← {"ok": true, "value": wire} | {"ok": false, "error": str}
The candidate's own fds 0/1/2 point at /dev/null. Nothing here is trusted by the grader: it
only ever receives plain tagged data from this process and judges it elsewhere.
"""

import json as _json
import os as _os
import sys as _sys


def _serve():
    proto_in = _os.fdopen(_os.dup(0), "rb")
    proto_out = _os.fdopen(_os.dup(1), "wb")
    null = _os.open(_os.devnull, _os.O_RDWR)
    for fd in (0, 1, 2):
        _os.dup2(null, fd)
    dumps, loads = _json.dumps, _json.loads

    def reply(message):
        proto_out.write(dumps(message).encode("utf-8") + b"\n")
        proto_out.flush()

    namespace = {"__name__": "solution", "__builtins__": __builtins__}
    for line in proto_in:
        request = loads(line)
        if request["op"] == "load":
            try:
                exec(compile(request["code"], "solution.py", "exec"), namespace)
            except BaseException as err:  # noqa: BLE001 - reported to the grader
                reply({"ok": False, "error": "%s: %s" % (type(err).__name__, err)})
                continue
            reply({"ok": True})
        elif request["op"] == "call":
            try:
                function = namespace[request["name"]]
                args = decode(request["args"])
                kwargs = decode(request["kwargs"])
                value = encode(function(*args, **kwargs))
            except BaseException as err:  # noqa: BLE001 - reported to the grader
                try:
                    reply({"ok": False, "error": "%s: %s" % (type(err).__name__, err)})
                except BaseException:  # noqa: BLE001 - an exception whose str() raises
                    reply({"ok": False, "error": "exception in candidate"})
                continue
            reply({"ok": True, "value": value})


_serve()
