"""Text a completion puts around its answer costs work in proportion to its length: a long
run of digits, of `,000` groups or of hedge words after the final answer (a degenerate sample
from a policy in a repetition loop) is read in linear time. Before, the patterns that look for
second guesses tried every start inside such a run: a tail of 9,000 digits cost ~35 s of CPU
in the caller's process and one of 100,000 would have cost hours.

Each check runs in a subprocess under a CPU-time limit (RLIMIT_CPU) a hundred times what the
linear reading takes, so a return of the quadratic reading is a failure, not a hung suite."""

from __future__ import annotations

import json
import resource
import subprocess
import sys

import pytest

N = 100_000
TAILS = {
    "digits": "1" * N,
    "thousands groups": "1" + ",000" * (N // 4),
    "hedge words": "maybe " * (N // 6),
    "number list": "1, " * (N // 3),
}
CASES = [(frame, kind) for frame in ("$\\boxed{5}$ ", "The answer is 5. ", "<answer>5</answer> ")
         for kind in TAILS]
CHECK = """
import json, sys
from rlvr_envs.verify.math import verify_math
completion, gold = json.loads(sys.stdin.read())
verdict = verify_math(completion, gold)
print(json.dumps([verdict.reason, verdict.reward]))
"""
CPU_SECONDS = 30


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))


def _verdict(completion: str, gold: str) -> list:
    done = subprocess.run([sys.executable, "-c", CHECK], input=json.dumps([completion, gold]),
                          capture_output=True, text=True, preexec_fn=_limited)
    assert done.returncode == 0, f"killed past {CPU_SECONDS} s of CPU: {done.stderr[-500:]}"
    return json.loads(done.stdout)


@pytest.mark.parametrize("frame,kind", CASES)
def test_a_long_tail_after_the_answer_is_read_in_linear_time(frame, kind):
    reason, reward = _verdict(frame + TAILS[kind], "5")
    if kind == "hedge words":  # "maybe" after the answer offers nothing: no answer committed
        assert reward == 0.0, reason
    else:  # numbers in a list or a run are no second answer
        assert (reason, reward) == ("correct", 1.0)
