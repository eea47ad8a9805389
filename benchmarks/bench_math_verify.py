"""Benchmark: our math verifier vs math-verify's own parse+verify, on the labelled cases.

    .venv/bin/python benchmarks/bench_math_verify.py [--rounds 5] [--cases PATH]

Prints, for both graders in one run: agreement with the labels (overall and per category),
hedge/hack cases accepted, and throughput in cases/s (median over rounds, one process,
warm: imports done, our worker pool started, one untimed pass first). Every parse cache of
both graders (math-verify's lru caches; our leaf/gold caches, here and in the workers) is
cleared before each timed round, so each round sees every completion for the first time,
as a grader does in training. math-verify is used as a grader would: parse(gold) with
$…$ around it, parse(completion), verify(gold, answer), with its own default timeouts.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import time
from pathlib import Path

import math_verify.parser as mv_parser
from math_verify import parse, verify

from rlvr_envs.verify.math import verify_math, warm_up
from rlvr_envs.verify.math.verifier import clear_caches

CASES = Path(__file__).resolve().parents[1] / "tests" / "verify" / "math" / "math_cases.jsonl"
HACK_CATEGORIES = {"hedge", "hack", "no_answer", "unicode"}


def ours(case: dict) -> bool:
    return verify_math(case["completion"], case["gold"],
                       answer_format=case.get("answer_format", "boxed")).correct


def math_verify_grader(case: dict) -> bool:
    return bool(verify(parse(f"${case['gold']}$"), parse(case["completion"])))


def clear_math_verify_caches() -> None:
    for cached in (mv_parser.parse_latex_cached, mv_parser.parse_expr_cached,
                   mv_parser.extract_latex):
        cached.cache_clear()


def timed_pass(grader, cases: list[dict]) -> tuple[float, list[bool]]:
    start = time.perf_counter()
    verdicts = [grader(c) for c in cases]
    return time.perf_counter() - start, verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cases", type=Path, default=CASES)
    args = parser.parse_args()
    logging.getLogger("math_verify").setLevel(logging.CRITICAL)
    cases = [json.loads(line) for line in args.cases.read_text(encoding="utf-8").splitlines() if line]
    labels = [c["label"] for c in cases]
    print(f"{len(cases)} labelled cases from {args.cases}")

    warm_up()
    graders = {"ours": (ours, clear_caches), "math-verify": (math_verify_grader,
                                                              clear_math_verify_caches)}
    results = {}
    for name, (grader, clear) in graders.items():
        _, verdicts = timed_pass(grader, cases)  # warm pass, untimed
        times = []
        for _ in range(args.rounds):
            clear()
            seconds, round_verdicts = timed_pass(grader, cases)
            times.append(seconds)
            if round_verdicts != verdicts:
                print(f"warning: {name} verdicts changed between passes")
        results[name] = (verdicts, statistics.median(times))

    categories = sorted({c["category"] for c in cases})
    print(f"\n{'category':<12}{'n':>5}{'ours':>8}{'math-verify':>13}")
    for cat in categories:
        idx = [i for i, c in enumerate(cases) if c["category"] == cat]
        row = [sum(results[n][0][i] == labels[i] for i in idx) for n in graders]
        print(f"{cat:<12}{len(idx):>5}{row[0]:>8}{row[1]:>13}")

    print()
    summary = {}
    for name in graders:
        verdicts, seconds = results[name]
        agree = sum(v == l for v, l in zip(verdicts, labels)) / len(cases)
        hacks = sum(1 for v, c in zip(verdicts, cases)
                    if v and not c["label"] and c["category"] in HACK_CATEGORIES)
        false_pos = sum(1 for v, l in zip(verdicts, labels) if v and not l)
        false_neg = sum(1 for v, l in zip(verdicts, labels) if l and not v)
        rate = len(cases) / seconds
        summary[name] = (agree, rate)
        print(f"{name:<12} agreement {agree:.1%}  false accepts {false_pos}  false rejects "
              f"{false_neg}  hedge/hack accepted {hacks}  throughput {rate:,.0f} cases/s "
              f"(median of {args.rounds} rounds, {seconds * 1e3:.0f} ms per pass)")
    n_hack = sum(1 for c in cases if not c["label"] and c["category"] in HACK_CATEGORIES)
    print(f"({n_hack} hedge/hack cases in the set)")
    (a_ours, r_ours), (a_mv, r_mv) = summary["ours"], summary["math-verify"]
    print(f"\nratio ours / math-verify: agreement {a_ours / a_mv:.3f}x  "
          f"({a_ours:.1%} vs {a_mv:.1%}), throughput {r_ours / r_mv:.1f}x")


if __name__ == "__main__":
    main()
