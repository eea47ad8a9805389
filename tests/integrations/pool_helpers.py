"""Work functions for pool tests; a module of its own so spawned workers can import it."""

import os
import time


def hostile_or_fine(item):
    kind, value = item
    if kind == "sleep":
        time.sleep(value)
    elif kind == "crash":
        os._exit(3)  # a worker dying the way a segfaulting verifier would
    return {"ok": True, "reward": 1.0, "correct": True, "verifier": "fine", "pid": os.getpid(),
            "finished": time.monotonic()}  # one clock for every process on the machine


def spin(item):
    """`("spin", seconds)`: that much CPU in this process, then a record."""
    _, seconds = item
    began = time.process_time()
    while time.process_time() - began < seconds:
        pass
    return {"ok": True, "reward": 1.0, "correct": True, "verifier": "fine", "pid": os.getpid()}
