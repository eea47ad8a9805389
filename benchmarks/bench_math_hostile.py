"""Benchmark: CPU per completion whose final answer is followed by a long degenerate tail (a
policy stuck in a repetition loop), ours against math-verify, side by side.

    .venv/bin/python benchmarks/bench_math_hostile.py [--sizes 10000 100000 990000] [--cpu-limit 60]

Each (grader, tail, size) is graded once in a fresh subprocess under RLIMIT_CPU of
`--cpu-limit` seconds; the CPU it used beyond importing the grader is printed (the import is
timed apart, on an empty completion), or `> limit` when it was killed. math-verify is used as a
grader would use it: parse(gold), parse(completion), verify(gold, answer), with its own
timeouts off (they use SIGALRM; the CPU limit bounds it here). The verdicts are printed too: a
tail of numbers is no second answer, so the expected verdict is `correct` / True.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys

TAILS = {
    "digits": lambda n: "1" * n,
    "thousands groups": lambda n: "1" + ",000" * (n // 4),
    "number list": lambda n: "1, " * (n // 3),
    "spaced digits": lambda n: "1 " * (n // 2),
}
OURS = """
import json, resource, sys
from rlvr_envs.verify.math import verify_math
completion, gold = json.loads(sys.stdin.read())
start = resource.getrusage(resource.RUSAGE_SELF)
verdict = verify_math(completion, gold)
end = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps([verdict.reason, end.ru_utime + end.ru_stime - start.ru_utime - start.ru_stime]))
"""
THEIRS = """
import json, resource, sys
from math_verify import parse, verify
completion, gold = json.loads(sys.stdin.read())
start = resource.getrusage(resource.RUSAGE_SELF)
answer = parse(completion, parsing_timeout=None)
ok = verify(parse("$" + gold + "$", parsing_timeout=None), answer, timeout_seconds=None)
end = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps([bool(ok), end.ru_utime + end.ru_stime - start.ru_utime - start.ru_stime]))
"""


def grade(program: str, completion: str, limit: int) -> tuple[str, str]:
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit))

    done = subprocess.run([sys.executable, "-c", program], input=json.dumps([completion, "5"]),
                          capture_output=True, text=True, preexec_fn=limited)
    if done.returncode != 0:
        return "killed", f"> {limit} s"
    verdict, cpu = json.loads(done.stdout)
    return str(verdict), f"{cpu:.3f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 990_000])
    parser.add_argument("--cpu-limit", type=int, default=60)
    args = parser.parse_args()
    print(f"{'tail':18s} {'chars':>9s}  {'ours: verdict, CPU':28s} math-verify: verdict, CPU")
    for name, make in TAILS.items():
        for size in args.sizes:
            completion = "So $\\boxed{5}$. " + make(size)
            ours = grade(OURS, completion, args.cpu_limit)
            theirs = grade(THEIRS, completion, args.cpu_limit)
            print(f"{name:18s} {size:9d}  {ours[0] + ', ' + ours[1]:28s} {theirs[0]}, {theirs[1]}",
                  flush=True)


if __name__ == "__main__":
    main()
