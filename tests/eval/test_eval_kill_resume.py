"""An eval killed mid-run (kill -9, or Ctrl-C) resumes with --resume and ends with exactly the
episodes of a clean run: none lost, none duplicated, the same completions."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from eval_helpers import SeededPolicy, math_suite
from rlvr_envs.eval.runner import evaluate
from rlvr_envs.eval.store import ResultStore

HERE = Path(__file__).resolve().parent
POLICY = "eval_helpers:SeededPolicy"
#: episodes stored after each unit: math has 7 tasks in units of 2, arith 3 (n=2 samples each)
UNIT_ENDS = (4, 8, 12, 14, 18, 20)


def _count(db: Path, run_id: str) -> int:
    if not db.exists():
        return 0
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return conn.execute("SELECT COUNT(*) FROM episodes WHERE run_id=?", (run_id,)).fetchone()[0]
    except sqlite3.OperationalError:  # tables not created yet
        return 0
    finally:
        conn.close()


def _start(suite: Path, runs: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
           "EVAL_TEST_POLICY_SLEEP": "1.0"}
    return subprocess.Popen([sys.executable, "-m", "rlvr_envs.cli", "eval", "--policy", POLICY,
                             "--suite", str(suite), "--runs-dir", str(runs), "--run", "victim",
                             "--quiet"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def _rows(store: ResultStore, run_id: str):
    return [(e.key, e.completion, e.reward, e.correct, e.num_tokens)
            for e in store.episodes(run_id)]


@pytest.mark.slow
@pytest.mark.parametrize("how", ["kill -9", "ctrl-c"])
def test_interrupted_run_resumes_to_exactly_the_clean_run(tmp_path, how):
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps(math_suite(n=2, k=[1, 2], batch_size=2)))
    runs = tmp_path / "runs"
    db = runs / "results.sqlite"
    proc = _start(suite, runs)
    deadline = time.monotonic() + 120
    while _count(db, "victim") < UNIT_ENDS[1]:
        assert proc.poll() is None, f"eval ended before it could be interrupted:\n{proc.stdout.read()}"
        assert time.monotonic() < deadline, "no progress from the eval subprocess"
        time.sleep(0.05)
    if how == "kill -9":
        proc.kill()
    else:
        proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=60)
    partial = _count(db, "victim")
    assert partial in UNIT_ENDS[1:-1], partial  # whole units only, and not finished
    with ResultStore(runs) as store:
        status = store.get_run("victim").status
    if how == "kill -9":
        assert proc.returncode == -signal.SIGKILL and status == "running"
    else:
        assert proc.returncode == 130, output
        assert status == "interrupted" and "--resume" in output

    resumed = evaluate(POLICY, suite, runs_dir=runs, run_id="victim", resume=True)
    assert resumed.new_episodes == 20 - partial
    clean = evaluate(SeededPolicy(sleep=0), suite, runs_dir=runs, run_id="clean")
    with ResultStore(runs) as store:
        got, want = _rows(store, "victim"), _rows(store, "clean")
        assert store.get_run("victim").status == "complete"
        assert store.get_run("victim").sessions == 2
    assert len(got) == len(set(r[0] for r in got)) == 20
    assert got == want
    assert resumed.summary["pass_at_k"] == clean.summary["pass_at_k"]
