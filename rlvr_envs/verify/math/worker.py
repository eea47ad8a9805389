"""A verifier worker process: reads JSON requests line by line on stdin, answers on stdout.

Started by `deadline.WorkerPool` as `python -m rlvr_envs.verify.math.worker`. The caller
kills it when a request overruns its deadline, so nothing here needs a timeout of its own.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time


def _limit_self() -> None:
    """Exit with the parent, and cap memory so a runaway expression fails instead of swapping."""
    parent = os.getppid()

    def watch_parent() -> None:  # PR_SET_PDEATHSIG would fire when the spawning *thread* ends
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch_parent, daemon=True).start()
    try:
        import resource

        cap = 4 << 30
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    except (ImportError, ValueError, OSError):
        pass


_WARM_UP = [("(x+1)^2", "x^2+2x+1"), ("y=2x+3", "y=3+2x"), ("\\frac{\\sqrt{3}}{2}", "0.866"),
            ("x \\geq 2", "[2, \\infty)"), ("\\{1, \\sqrt{2}\\}", "\\{\\sqrt{2}, 1\\}"),
            ("\\begin{pmatrix} x \\\\ 1 \\end{pmatrix}", "\\begin{pmatrix} x \\\\ 2 \\end{pmatrix}")]


def handle(request: dict) -> dict:
    from rlvr_envs.verify.math import symbolic

    op = request.get("op")
    if op == "judge":
        return {"reason": symbolic.judge_symbolic(request["gold"], request["answers"])}
    if op == "parse":
        return {"parses": symbolic.gold_parses(request["text"])}
    if op == "clear":
        symbolic.clear_caches()
        return {"cleared": True}
    if op == "ping":
        return {"pong": True}
    return {"error": f"unknown op {op!r}"}


def main() -> None:
    _limit_self()
    from rlvr_envs.verify.math import symbolic

    for gold, answer in _WARM_UP:  # load the grammar and sympy's lazy parts before "ready"
        symbolic.judge_symbolic(gold, [answer])
    symbolic.clear_caches()
    out = sys.stdout
    out.write('{"ready": true}\n')
    out.flush()
    for line in sys.stdin:
        try:
            reply = handle(json.loads(line))
        except symbolic.GoldUnparsed as exc:
            reply = {"error": str(exc), "gold": True}
        except (MemoryError, RecursionError) as exc:
            reply = {"error": type(exc).__name__}
        except Exception as exc:  # noqa: BLE001 - a reply for every request, never a dead worker
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
