"""Each experiment script runs end to end for a step or two on the tiny offline model and
writes its results (with per-seed figures and the command) and its plot."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SMALL = ["--model", "tiny", "--seeds", "0", "--tiny-warmup-epochs", "0.5", "--device", "cpu"]
GRPO_SMALL = ["--steps", "2", "--train-tasks", "8", "--eval-tasks", "4", "--prompts-per-step",
              "2", "--num-generations", "2", "--max-completion-length", "8"]
CASES = {
    "exp1_sft_then_rl": ["--train-tasks", "6", "--eval-tasks", "4", "--ei-rounds", "1",
                         "--samples-per-task", "2", "--grpo-steps", "1",
                         "--max-completion-length", "8"],
    "exp2_length_normalisation": GRPO_SMALL,
    "exp3_kimi_length_penalty": GRPO_SMALL,
    "exp4_difficulty_filtering": GRPO_SMALL + ["--k", "2", "--pool", "8"],
}


def seed_statistics(node):
    """Every {mean, std, min, max, values} block of a summary, however nested."""
    if isinstance(node, dict) and "values" in node:
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from seed_statistics(value)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_experiment_script_writes_results_and_plot(name, tmp_path):
    out = tmp_path / name
    done = subprocess.run([sys.executable, str(ROOT / "experiments" / f"{name}.py"), *SMALL,
                           *CASES[name], "--out", str(out)], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((out / "results.json").read_text())
    assert results["experiment"] == name and results["claim"]
    assert name in results["command"] and "--model tiny" in results["command"]
    assert list(results["per_seed"]) == ["0"]
    figures = list(seed_statistics(results["summary"]))
    assert figures
    for value in figures:
        assert len(value["values"]) == 1 and value["min"] <= value["mean"] <= value["max"]
    assert (out / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_probe_prints_one_line_of_figures_per_setting(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "experiments" / "probe_signal.py"),
                           "--model", "tiny", "--tiny-warmup-epochs", "0.5", "--device", "cpu",
                           "--prompts", "3", "--samples", "2", "--setting", "1.0:6", "0:4",
                           "--out", str(tmp_path / "probe")], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in done.stdout.splitlines()
             if line.startswith('{"model"')]  # (the tiny model's fit prints its own dicts)
    assert [(r["temperature"], r["max_completion_length"], r["samples"]) for r in lines] == [
        (1.0, 6, 6), (0.0, 4, 3)]
    for r in lines:
        assert 0 <= r["correct"] <= r["samples"] and r["prompts"] == 3
        assert r["prompts_with_a_correct_sample"] <= r["prompts"]
        assert 0 < r["tokens"] <= r["samples"] * r["max_completion_length"]
