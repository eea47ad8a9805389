"""A verifier worker process: reads JSON requests line by line on stdin, answers on stdout.

Started by `deadline.WorkerPool` as `python -m rlvr_envs.verify.math.worker`. Every request
carries a CPU budget in seconds: an interval timer on this process's own CPU time
(ITIMER_PROF, user + system) interrupts a comparison that uses it up, and the reply says
`{"timeout": true}`. The budget counts the work of the comparison only, so a loaded machine
(which slows the wall clock, not the CPU seconds a comparison needs) does not change a
verdict. Work stuck inside C code, where the interrupt cannot land, is killed by the caller,
which reads this process's CPU time from outside.

Requests (one JSON object per line) and their replies:

    {"op": "judge", "gold": g, "answers": [a, ...], "budget": s}  -> {"reason": r, "cpu": s}
    {"op": "judge_many", "items": [{"gold": g, "answers": [...]}, ...], "budget": s}
        -> one reply line per item, in order, each with "i": its index
    {"op": "parse", "text": t, "budget": s}                       -> {"parses": bool, "cpu": s}
    {"op": "clear"} / {"op": "ping"}
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time


class CpuBudgetExceeded(BaseException):
    """Raised by the CPU timer. A BaseException, so `except Exception` in a library (math-verify
    catches broadly) cannot swallow it and turn a timeout into a wrong answer."""


_armed = False
_fired = False


def _on_cpu_timer(signum, frame) -> None:
    global _fired
    if _armed:
        _fired = True
        raise CpuBudgetExceeded


def run_with_cpu_budget(budget: float, work, *args):
    """(result, cpu seconds, timed_out): `work(*args)` stopped once it used `budget` CPU seconds.

    The timer repeats every 50 ms of CPU, so a library that catches the first interrupt gets
    another; a result computed after the budget ran out still counts as a timeout.
    """
    global _armed, _fired
    started = time.process_time()
    _fired = False
    _armed = True
    signal.setitimer(signal.ITIMER_PROF, budget, 0.05)
    result, timed_out = None, False
    try:
        result = work(*args)
    except CpuBudgetExceeded:
        timed_out = True
    finally:
        _armed = False
        signal.setitimer(signal.ITIMER_PROF, 0)
    return result, time.process_time() - started, timed_out or _fired


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


def _budget(request: dict) -> float:
    budget = request.get("budget")
    if not isinstance(budget, int | float) or not budget > 0:
        raise ValueError(f"a request needs a CPU budget > 0 seconds, got {budget!r}")
    return float(budget)


def _judge_reply(gold: str, answers: list[str], budget: float) -> dict:
    from rlvr_envs.verify.math import symbolic

    try:
        reason, cpu, timed_out = run_with_cpu_budget(budget, symbolic.judge_symbolic, gold,
                                                     answers)
    except symbolic.GoldUnparsed as exc:
        return {"error": str(exc), "gold": True}
    if timed_out:
        return {"timeout": True, "cpu": cpu}
    return {"reason": reason, "cpu": cpu}


def handle(request: dict) -> dict:
    from rlvr_envs.verify.math import symbolic

    op = request.get("op")
    if op == "judge":
        return _judge_reply(request["gold"], request["answers"], _budget(request))
    if op == "parse":
        parses, cpu, timed_out = run_with_cpu_budget(_budget(request), symbolic.gold_parses,
                                                     request["text"])
        return {"timeout": True, "cpu": cpu} if timed_out else {"parses": parses, "cpu": cpu}
    if op == "clear":
        symbolic.clear_caches()
        return {"cleared": True}
    if op == "ping":
        return {"pong": True}
    return {"error": f"unknown op {op!r}"}


def _safely(work, *args) -> dict:
    """A reply for every request, never a dead worker."""
    try:
        return work(*args)
    except (MemoryError, RecursionError) as exc:
        return {"error": type(exc).__name__}
    except Exception as exc:  # noqa: BLE001
        return {"error": f"{type(exc).__name__}: {exc}"}


def _write(reply: dict) -> None:
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()


def main() -> None:
    _limit_self()
    signal.signal(signal.SIGPROF, _on_cpu_timer)
    from rlvr_envs.verify.math import symbolic

    for gold, answer in _WARM_UP:  # load the grammar and sympy's lazy parts before "ready"
        symbolic.judge_symbolic(gold, [answer])
    symbolic.clear_caches()
    _write({"ready": True})
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            _write({"error": "a request must be one JSON object per line"})
            continue
        if request.get("op") == "judge_many":
            items = request.get("items") or []
            budget = _safely(_budget, request)
            for i, item in enumerate(items):
                reply = budget if isinstance(budget, dict) else _safely(
                    _judge_reply, item["gold"], item["answers"], budget)
                _write({"i": i, **reply})
            continue
        _write(_safely(handle, request))


if __name__ == "__main__":
    main()
