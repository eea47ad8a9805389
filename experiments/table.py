"""Markdown tables of experiment results: `python experiments/table.py RESULTS_DIR...`
(each a folder holding results.json); mean ± standard deviation over seeds, and the seeds."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def cell(stat: dict) -> str:
    return f"{stat['mean']:.3f} ± {stat['std']:.3f}"


def rows(summary: dict) -> list[tuple[str, str, dict]]:
    """(arm, metric, statistics) for a summary {metric: stats} or {arm: {metric: stats}}."""
    out = []
    for key, value in summary.items():
        if "values" in value:
            out.append(("", key, value))
        else:
            out += [(key, metric, stat) for metric, stat in value.items()]
    return out


def table(results: dict) -> str:
    lines = [f"**{results['experiment']}** ({len(results['per_seed'])} seed(s), "
             f"{results['wall_seconds']:.0f} s, {results['date']})", "",
             "| arm | metric | mean ± sd | per seed |", "|---|---|---:|---|"]
    for arm, metric, stat in rows(results["summary"]):
        seeds = ", ".join(f"{v:.3f}" for v in stat["values"])
        lines.append(f"| {arm or '–'} | {metric} | {cell(stat)} | {seeds} |")
    lines += ["", f"`{results['command']}`"]
    return "\n".join(lines)


if __name__ == "__main__":
    for folder in sys.argv[1:]:
        print(table(json.loads((Path(folder) / "results.json").read_text())))
        print()
