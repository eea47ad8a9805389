"""The result store refuses files it cannot trust (empty, damaged, foreign) with one line naming
the file and never rewrites them; built-in policies are seeded per unit, so a resumed run is
the clean run episode by episode."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest

from eval_helpers import math_suite
from rlvr_envs.eval.runner import evaluate
from rlvr_envs.eval.store import ResultStore, StoreError


@pytest.fixture
def suite_file(tmp_path):
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(math_suite(n=2, k=[1, 2], batch_size=2)))
    return path


def _damaged(path):
    """A real store with its pages after the header overwritten."""
    with ResultStore(path.parent) as store:
        store.create_run("r", policy="p", suite="s", config={}, package_version="0")
    data = bytearray(path.read_bytes())
    data[100:] = b"\xff" * (len(data) - 100)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage, message", [
    (lambda path: path.write_bytes(b""), "is empty (0 bytes)"),
    (lambda path: path.write_text("episode,reward\n1,0.5\n"), "is not an SQLite result store"),
    (_damaged, "is damaged"),
])
def test_untrusted_store_files_are_refused_and_left_as_they_are(tmp_path, suite_file, rlvr_cli,
                                                                  damage, message):
    runs = tmp_path / "runs"
    runs.mkdir()
    path = runs / "results.sqlite"
    damage(path)
    before = path.read_bytes()
    with pytest.raises(StoreError, match=re.escape(message)):
        ResultStore(runs)
    for args in (["leaderboard", "--runs-dir", str(runs)],
                 ["eval", "-p", "null", "--suite", str(suite_file), "--runs-dir", str(runs),
                  "--resume", "--quiet"]):
        result = rlvr_cli(*args)
        assert result.exit_code == 1, result.output
        assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
        assert message in result.stderr and str(path) in result.stderr
    assert path.read_bytes() == before
    assert sorted(p.name for p in runs.iterdir()) == ["results.sqlite"]


def test_an_sqlite_file_of_another_program_is_not_taken_for_a_store(tmp_path):
    path = tmp_path / "results.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (text TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="not an rlvr result store"):
        ResultStore(tmp_path)


def test_resumed_random_policy_run_equals_the_clean_run(tmp_path, suite_file):
    runs = tmp_path / "runs"
    clean = evaluate("random", suite_file, runs_dir=runs, run_id="clean", seed=3)
    evaluate("random", suite_file, runs_dir=runs, run_id="resumed", seed=3)
    with ResultStore(runs) as store:  # as if killed once the first entry was done
        total = store.count_episodes("resumed")
        with store.transaction() as conn:
            conn.execute("DELETE FROM episodes WHERE run_id='resumed' AND env='arith'")
        missing = total - store.count_episodes("resumed")
        store.set_status("resumed", "interrupted")
    # a fresh process's policy, whose own random stream starts over
    resumed = evaluate("random", suite_file, runs_dir=runs, run_id="resumed", seed=3,
                       resume=True)
    assert resumed.new_episodes == missing > 0
    with ResultStore(runs) as store:
        got = [(e.key, e.completion, e.reward) for e in store.episodes("resumed")]
        want = [(e.key, e.completion, e.reward) for e in store.episodes("clean")]
    assert got == want and len({c for _, c, _ in got}) > 1
    assert resumed.summary["pass_at_k"] == clean.summary["pass_at_k"]
