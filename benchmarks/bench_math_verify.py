"""Benchmark: our math verifier against math-verify's own parse+verify, on the labelled cases.

    .venv/bin/python benchmarks/bench_math_verify.py [--rounds 5] [--cases PATH] [--hogs 2]

Both graders run on the same cases in one process, warm (imports done, our workers started,
one untimed pass first). Every cache of both graders (math-verify's lru caches; our verdict
cache and parse caches, here and in the workers) is cleared before each timed round, so each
round sees every completion for the first time. math-verify is used as a grader would use
it: parse(gold) with $…$ around it, parse(completion), verify(gold, answer).

Printed, side by side: agreement with the labels, false positives (accepted, label wrong)
and false negatives, per category and overall; throughput in cases/s on all cases (median
over rounds of a pass) and on the cases that reach our symbolic path (sympy, in a worker:
both graders timed on that same subset, each case's median over rounds, summed), with the
milliseconds per symbolic case of both, the fraction of cases that reach it, the worst
per-case latency (the largest of the per-case medians over rounds), and the CPU time per
symbolic case (this process plus our workers), which a loaded machine's scheduling does not
change. Ours is timed one call at a
time (`verify_math`) and as one batch (`verify_batch`). With `--hogs N`, N busy-loop processes are started and our
verdicts are taken again: the number that change is printed (the target is 0).

With `--agreement`, nothing is timed: one pass of each grader, and a markdown table of
agreement, false positives and false negatives per category and per completion style
(docs/math.md quotes it).
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import subprocess
import sys
import time
from pathlib import Path

import math_verify.parser as mv_parser
from math_verify import parse, verify

from rlvr_envs.verify.math import deadline, verify_batch, verify_math, warm_up
from rlvr_envs.verify.math.verifier import clear_caches

CASES = Path(__file__).resolve().parents[1] / "tests" / "verify" / "math" / "math_cases.jsonl"


def ours(case: dict) -> bool:
    return bool(verify_math(case["completion"], case["gold"],
                            answer_format=case.get("answer_format", "boxed"),
                            question=case.get("question")).correct)


def ours_batch(cases: list[dict]) -> list[bool]:
    verdicts: dict[int, bool] = {}
    for fmt in sorted({c.get("answer_format", "boxed") for c in cases}):
        idx = [i for i, c in enumerate(cases) if c.get("answer_format", "boxed") == fmt]
        results = verify_batch([cases[i]["completion"] for i in idx],
                               [cases[i]["gold"] for i in idx], answer_format=fmt,
                               questions=[cases[i].get("question") for i in idx])
        verdicts.update((i, bool(v.correct)) for i, v in zip(idx, results))
    return [verdicts[i] for i in range(len(cases))]


def math_verify_grader(case: dict) -> bool:
    return bool(verify(parse(f"${case['gold']}$"), parse(case["completion"])))


def clear_math_verify_caches() -> None:
    for cached in (mv_parser.parse_latex_cached, mv_parser.parse_expr_cached,
                   mv_parser.extract_latex):
        cached.cache_clear()


def reaching_symbolic(cases: list[dict]) -> list[int]:
    """Indices of the cases whose comparison goes to our symbolic workers."""
    pool = deadline.pool()
    real_call = pool.call
    reached: list[int] = []
    current = [0]

    def counting_call(payload, *args, **kwargs):
        if payload.get("op") == "judge":
            reached.append(current[0])
        return real_call(payload, *args, **kwargs)

    pool.call = counting_call
    try:
        clear_caches()
        for i, case in enumerate(cases):
            current[0] = i
            ours(case)
    finally:
        pool.call = real_call
    return sorted(set(reached))


def timed_rounds(grader, clear, cases: list[dict], rounds: int) -> tuple[list[bool], float, list[float]]:
    """Verdicts, median seconds per pass, and each case's median latency."""
    verdicts = [grader(c) for c in cases]  # warm pass, untimed
    totals, per_case = [], [[] for _ in cases]
    for _ in range(rounds):
        clear()
        start = time.perf_counter()
        for i, case in enumerate(cases):
            t = time.perf_counter()
            if grader(case) != verdicts[i]:
                print(f"warning: a verdict changed between passes: {case['gold']!r}")
            per_case[i].append(time.perf_counter() - t)
        totals.append(time.perf_counter() - start)
    return verdicts, statistics.median(totals), [statistics.median(t) for t in per_case]


def cpu_ms_per_case(grader, clear, cases: list[dict], rounds: int) -> float:
    """Median CPU milliseconds per case: this process plus our symbolic workers. Unlike
    cases/s, this does not depend on how a loaded machine schedules the worker processes."""
    def cpu_now() -> float:
        workers = sum(w.cpu_seconds() or 0.0 for w in list(deadline.pool()._all))
        return time.process_time() + workers

    per_round = []
    for _ in range(rounds):
        clear()
        start = cpu_now()
        for case in cases:
            grader(case)
        per_round.append((cpu_now() - start) / max(1, len(cases)) * 1e3)
    return statistics.median(per_round)


def timed_batch(cases: list[dict], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        clear_caches()
        start = time.perf_counter()
        ours_batch(cases)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def rate(n: int, seconds: float) -> str:
    return f"{n / seconds:,.0f}" if seconds > 0 else "-"


def counts(verdicts: list[bool], labels: list[bool], idx: list[int]) -> tuple[int, int, int]:
    agree = sum(verdicts[i] == labels[i] for i in idx)
    false_pos = sum(verdicts[i] and not labels[i] for i in idx)
    false_neg = sum(labels[i] and not verdicts[i] for i in idx)
    return agree, false_pos, false_neg


def verdicts_under_load(cases: list[dict], hogs: int) -> int:
    clear_caches()
    idle = [ours(c) for c in cases]
    procs = [subprocess.Popen([sys.executable, "-c", "while True:\n    pass\n"])
             for _ in range(hogs)]
    try:
        clear_caches()
        loaded = [ours(c) for c in cases]
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
    return sum(a != b for a, b in zip(idle, loaded))


def agreement_table(cases: list[dict], field: str) -> None:
    """Markdown rows: agreement (FP, FN) of ours and of math-verify for each value of `field`."""
    labels = [bool(c["label"]) for c in cases]
    ours_v = [ours(c) for c in cases]
    mv_v = [math_verify_grader(c) for c in cases]
    print(f"\n| {field} | cases | ours: agreement (FP, FN) | math-verify: agreement (FP, FN) |")
    print("|---|---|---|---|")
    groups = sorted({c.get(field, "-") for c in cases}) + ["all"]
    for group in groups:
        idx = [i for i, c in enumerate(cases) if group in ("all", c.get(field, "-"))]
        cells = []
        for verdicts in (ours_v, mv_v):
            agree, fp, fn = counts(verdicts, labels, idx)
            cells.append(f"{agree / len(idx):.3f} ({fp}, {fn})")
        name = f"**{group}**" if group == "all" else group
        print(f"| {name} | {len(idx)} | {cells[0]} | {cells[1]} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cases", type=Path, default=CASES)
    parser.add_argument("--hogs", type=int, default=0,
                        help="busy-loop processes for the verdicts-under-load check (0: skip)")
    parser.add_argument("--agreement", action="store_true",
                        help="only the per-category and per-style agreement tables (no timing)")
    args = parser.parse_args()
    logging.getLogger("math_verify").setLevel(logging.CRITICAL)
    cases = [json.loads(line) for line in args.cases.read_text(encoding="utf-8").splitlines()
             if line]
    labels = [bool(c["label"]) for c in cases]
    warm_up()
    if args.agreement:
        print(f"{len(cases)} labelled cases from {args.cases}")
        for field in ("category", "style"):
            agreement_table(cases, field)
        return
    print(f"{len(cases)} labelled cases from {args.cases}; {args.rounds} timed rounds")

    symbolic = reaching_symbolic(cases)
    symbolic_cases = [cases[i] for i in symbolic]
    ours_v, ours_s, ours_lat = timed_rounds(ours, clear_caches, cases, args.rounds)
    mv_v, mv_s, mv_lat = timed_rounds(math_verify_grader, clear_math_verify_caches, cases,
                                      args.rounds)
    batch_s = timed_batch(cases, args.rounds)
    sym_ours = sum(ours_lat[i] for i in symbolic)
    sym_mv = sum(mv_lat[i] for i in symbolic)
    sym_batch_s = timed_batch(symbolic_cases, args.rounds) if symbolic else 0.0
    sym_cpu = {name: cpu_ms_per_case(grader, clear, symbolic_cases, args.rounds)
               for name, grader, clear in (("ours", ours, clear_caches),
                                           ("math-verify", math_verify_grader,
                                            clear_math_verify_caches))} if symbolic else {}

    print(f"\n{'category':<14}{'n':>5} | {'ours agree':>10}{'FP':>4}{'FN':>4} | "
          f"{'math-verify agree':>17}{'FP':>4}{'FN':>4}")
    for cat in sorted({c["category"] for c in cases}):
        idx = [i for i, c in enumerate(cases) if c["category"] == cat]
        a, fp, fn = counts(ours_v, labels, idx)
        b, mfp, mfn = counts(mv_v, labels, idx)
        print(f"{cat:<14}{len(idx):>5} | {a:>10}{fp:>4}{fn:>4} | {b:>17}{mfp:>4}{mfn:>4}")

    n, everything = len(cases), list(range(len(cases)))
    print(f"\n{'grader':<22}{'agreement':>10}{'FP':>5}{'FN':>5}{'cases/s':>10}"
          f"{'symbolic cases/s':>18}{'worst ms':>10}")
    for name, verdicts, seconds, sym_seconds, lat in (
            ("ours (verify_math)", ours_v, ours_s, sym_ours, ours_lat),
            ("ours (verify_batch)", ours_v, batch_s, sym_batch_s, None),
            ("math-verify", mv_v, mv_s, sym_mv, mv_lat)):
        agree, fp, fn = counts(verdicts, labels, everything)
        worst = f"{max(lat) * 1e3:,.1f}" if lat else "-"
        print(f"{name:<22}{agree / n:>10.2%}{fp:>5}{fn:>5}{rate(n, seconds):>10}"
              f"{rate(len(symbolic), sym_seconds):>18}{worst:>10}")
    print(f"\ncases reaching our symbolic path: {len(symbolic)} of {n} ({len(symbolic) / n:.1%})")
    if symbolic:
        print(f"wall ms per symbolic case (median per case): ours {sym_ours / len(symbolic) * 1e3:.1f}, "
              f"math-verify {sym_mv / len(symbolic) * 1e3:.1f}")
    print(f"throughput ratio ours / math-verify: all cases {mv_s / ours_s:.1f}x "
          f"(batch {mv_s / batch_s:.1f}x)", end="")
    if symbolic:
        print(f", symbolic part {sym_mv / sym_ours:.1f}x (batch {sym_mv / sym_batch_s:.1f}x)")
        print(f"CPU per symbolic case (this process + our workers): ours {sym_cpu['ours']:.1f} ms, "
              f"math-verify {sym_cpu['math-verify']:.1f} ms, ratio "
              f"{sym_cpu['math-verify'] / max(sym_cpu['ours'], 1e-9):.1f}x")
    else:
        print()
    if args.hogs:
        changed = verdicts_under_load(cases, args.hogs)
        print(f"verdicts changed under {args.hogs} busy-loop processes: {changed} of {n}")


if __name__ == "__main__":
    main()
