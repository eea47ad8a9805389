"""Attacks shared by the code-sandbox tests (imported by name: no conftest clashes): hostile
protocol output and the routes by which a run can take memory."""

from __future__ import annotations

from rlvr_envs.sandbox import Limits

BUDGET_MB = 96
#: files may be as large as the budget: the budget, not RLIMIT_FSIZE, must be what stops them
LIMITS = Limits(wall_time=20.0, memory_mb=BUDGET_MB, max_processes=16,
                max_file_bytes=1024 * 2**20)
ATTEMPT_MB = 4 * BUDGET_MB
ROUTES = {
    "anonymous": f"keep = [b'x' * 2**20 for _ in range({ATTEMPT_MB})]",
    "memfd": f"fd = os.memfd_create('fill')\nfor _ in range({ATTEMPT_MB}):\n"
             f"    os.write(fd, b'x' * 2**20)",
    "tmp": f"with open('/tmp/fill', 'wb') as fh:\n    for _ in range({ATTEMPT_MB}):\n"
           f"        fh.write(b'x' * 2**20)\n        fh.flush()",
    "shm": f"with open('/dev/shm/fill', 'wb') as fh:\n    for _ in range({ATTEMPT_MB}):\n"
           f"        fh.write(b'x' * 2**20)\n        fh.flush()",
}
#: the spawn path also has a working directory of its own on the host
SPAWN_ROUTES = {**ROUTES, "workdir": ROUTES["tmp"].replace("/tmp/fill", "fill")}


PAYLOADS = {
    "nesting": 'b"[" * 100_000 + b"\\n"',
    "nested_value": 'b\'{"ok": true, "value": \' + b"[" * 100_000 + b"\\n"',
    "huge_json_number": 'b\'{"ok": true, "value": 1\' + b"0" * 100_000 + b"}\\n"',
    "huge_tagged_int": 'b\'{"ok": true, "value": ["int", "\' + b"9" * 100_000 + b\'"]}\\n\'',
    "invalid_utf8": 'b\'{"ok": true, "value": ["str", "\\xff\\xfe"]}\\n\'',
    "nul_bytes": 'b\'{"ok": true, "value": ["str", "a\\x00b"]}\\n\'',
    "not_an_object": 'b\'[["int", "1"]]\\n\'',
    "never_ends": 'b"[" * (1 << 20)',   # written again and again, no newline
}
#: replies only the test driver reads (check mode: a check's calls go out in one batch)
BATCH_PAYLOADS = {
    "short_batch": 'b\'{"batch": [{"ok": true, "value": ["bool", true]}]}\\n\'',
    "batch_of_strings": 'b\'{"batch": ["ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok"]}\\n\'',
}


def hostile(function: str, params: str, name: str) -> str:
    """A candidate that writes payload `name` on every fd it can (its channel among them)."""
    repeat = "while True:" if name == "never_ends" else "for _ in range(1):"
    payload = {**PAYLOADS, **BATCH_PAYLOADS}[name]
    return f"""```python
import os
def {function}({params}):
    data = {payload}
    {repeat}
        for fd in range(3, 64):
            try:
                os.write(fd, data)
            except OSError:
                pass
    os._exit(0)
```"""
