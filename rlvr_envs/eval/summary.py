"""Metrics of a run, computed from its stored episodes.

pass@k (unbiased, for every k up to the smallest sample count in the group), mean reward and
accuracy overall and per family, per suite entry and per difficulty level; completion lengths
in characters and tokens; token totals; time spent generating and scoring; verifier reasons;
and the hacking-monitor counters (how many episodes raised each boolean flag found in
`info["monitors"]`).
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from typing import Any, Iterable, Sequence

from rlvr_envs.eval.passk import pass_at_k_table
from rlvr_envs.eval.store import Episode


def length_stats(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    ordered = sorted(values)
    return {"mean": statistics.fmean(ordered), "median": statistics.median(ordered),
            "p90": ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))],
            "min": ordered[0], "max": ordered[-1]}


def _group_metrics(episodes: Sequence[Episode]) -> dict[str, Any]:
    per_task: dict[tuple[str, str], list[Episode]] = defaultdict(list)
    for ep in episodes:
        per_task[(ep.env, ep.task_id)].append(ep)
    groups = [(len(eps), sum(e.correct for e in eps)) for eps in per_task.values()]
    return {
        "tasks": len(per_task),
        "episodes": len(episodes),
        "samples_per_task": min(n for n, _ in groups) if groups else 0,
        "pass_at_k": {str(k): v for k, v in pass_at_k_table(groups).items()},
        "accuracy": statistics.fmean(e.correct for e in episodes) if episodes else None,
        "mean_reward": statistics.fmean(e.reward for e in episodes) if episodes else None,
    }


def monitor_counts(episodes: Iterable[Episode]) -> dict[str, int]:
    """Flag name → number of episodes where it was True (only boolean flags count)."""
    counts: Counter[str] = Counter()
    for ep in episodes:
        for name, value in (ep.monitors or {}).items():
            if value is True:
                counts[name] += 1
            elif value is False:
                counts.setdefault(name, 0)
    return dict(sorted(counts.items()))


def summarise(episodes: Sequence[Episode]) -> dict[str, Any]:
    """Everything the CLI prints and the leaderboard shows, as plain JSON-able data."""
    by_family: dict[str, list[Episode]] = defaultdict(list)
    by_env: dict[str, list[Episode]] = defaultdict(list)
    by_level: dict[str, dict[int, list[Episode]]] = defaultdict(lambda: defaultdict(list))
    for ep in episodes:
        by_family[ep.family].append(ep)
        by_env[ep.env].append(ep)
        by_level[ep.family][ep.level].append(ep)
    tokens = [ep.num_tokens for ep in episodes if ep.num_tokens is not None]
    monitors = monitor_counts(episodes)
    return {
        **_group_metrics(episodes),
        "by_family": {f: _group_metrics(eps) for f, eps in sorted(by_family.items())},
        "by_env": {e: _group_metrics(eps) for e, eps in sorted(by_env.items())},
        "by_difficulty": {f: {str(level): _group_metrics(eps)
                              for level, eps in sorted(levels.items())}
                          for f, levels in sorted(by_level.items())},
        "completion_chars": length_stats([ep.num_chars for ep in episodes]),
        "completion_tokens": length_stats(tokens) if len(tokens) == len(episodes) else None,
        "total_tokens": sum(tokens),
        "turns": length_stats([ep.turns for ep in episodes]),
        "generate_seconds": sum(ep.generate_seconds for ep in episodes),
        "score_seconds": sum(ep.score_seconds for ep in episodes),
        "verifier": dict(Counter(ep.verifier or "" for ep in episodes).most_common()),
        "finish_reasons": dict(Counter(ep.finish_reason or "" for ep in episodes).most_common()),
        "monitors": monitors,
        "monitor_flags": sum(monitors.values()),
    }
