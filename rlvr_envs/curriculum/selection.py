"""Curriculum pieces as plain functions and small state machines (the wrappers use these).

- Solvability range (Kimi k1.5): keep tasks whose measured pass rate p lies in (lo, hi);
  exclusive by default with (0, 1), i.e. drop the never-solved and the always-solved.
- DAPO dynamic sampling: a group whose rewards all equal each other gives GRPO no signal
  (zero advantage); drop it and keep sampling until the batch holds enough informative groups.
- Online curriculum: raise the level when the running success rate over the last `window`
  episodes reaches `raise_at`, lower it when it falls to `lower_at`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rlvr_envs.core.task import Task


def in_solvability_range(pass_rate: float | None, lo: float = 0.0, hi: float = 1.0, *,
                         inclusive: bool = False) -> bool:
    """True when `pass_rate` lies in (lo, hi) ([lo, hi] with inclusive=True); None is outside."""
    if not 0.0 <= lo <= hi <= 1.0:
        raise ValueError(f"need 0 <= lo <= hi <= 1, got lo={lo}, hi={hi}")
    if pass_rate is None:
        return False
    return lo <= pass_rate <= hi if inclusive else lo < pass_rate < hi


def filter_by_pass_rate(tasks: Iterable[Task], pass_rates: Mapping[str, float] | None = None,
                        lo: float = 0.0, hi: float = 1.0, *, inclusive: bool = False,
                        keep_unmeasured: bool = False) -> list[Task]:
    """The tasks inside the solvability range. A task's rate comes from `pass_rates[task.id]`,
    else from its own `difficulty.pass_rate`; unmeasured ones are dropped unless asked."""
    kept = []
    for task in tasks:
        rate = (pass_rates or {}).get(task.id, task.difficulty.pass_rate)
        if rate is None:
            if keep_unmeasured:
                kept.append(task)
        elif in_solvability_range(rate, lo, hi, inclusive=inclusive):
            kept.append(task)
    return kept


def zero_variance(rewards: Sequence[float], tol: float = 1e-9) -> bool:
    """True when every reward of a group is the same (within `tol`)."""
    return not rewards or max(rewards) - min(rewards) <= tol


@dataclass
class DynamicSamplingResult:
    kept: list[int]
    dropped: list[int]

    @property
    def num_dropped(self) -> int:
        return len(self.dropped)


def drop_zero_variance_groups(group_rewards: Sequence[Sequence[float]], tol: float = 1e-9
                              ) -> DynamicSamplingResult:
    """Indices of the groups to keep and to drop (DAPO dynamic sampling)."""
    kept, dropped = [], []
    for i, rewards in enumerate(group_rewards):
        (dropped if zero_variance(rewards, tol) else kept).append(i)
    return DynamicSamplingResult(kept, dropped)


def split_groups(values: Sequence[Any], group_size: int) -> list[list[Any]]:
    """Flat per-completion values (G consecutive per prompt, TRL's layout) → groups."""
    if group_size < 1 or len(values) % group_size:
        raise ValueError(f"{len(values)} values do not split into groups of {group_size}")
    return [list(values[i:i + group_size]) for i in range(0, len(values), group_size)]


@dataclass
class DynamicSamplingBuffer:
    """Collects informative groups until `target_groups` are in hand (DAPO's over-sampling
    loop): `add(group, rewards)` keeps or drops a group; `full`; `take()` empties the batch.
    `dropped` and `seen` count over the buffer's life (log them)."""

    target_groups: int
    tol: float = 1e-9
    groups: list[Any] = field(default_factory=list)
    dropped: int = 0
    seen: int = 0

    def add(self, group: Any, rewards: Sequence[float]) -> bool:
        self.seen += 1
        if zero_variance(rewards, self.tol):
            self.dropped += 1
            return False
        self.groups.append(group)
        return True

    @property
    def full(self) -> bool:
        return len(self.groups) >= self.target_groups

    def take(self) -> list[Any]:
        batch, self.groups = self.groups[:self.target_groups], self.groups[self.target_groups:]
        return batch

    def stats(self) -> dict[str, float]:
        return {"dynamic_sampling/seen_groups": self.seen,
                "dynamic_sampling/dropped_groups": self.dropped,
                "dynamic_sampling/drop_rate": self.dropped / self.seen if self.seen else 0.0}


class LevelController:
    """The online curriculum's level from a running success rate.

    After each episode `update(correct)`; once the window holds `window` results, a success
    rate >= raise_at moves one level up, <= lower_at one level down (within `levels`), and the
    window starts afresh so the new level is judged on its own episodes.
    """

    def __init__(self, levels: Sequence[int], *, start: int | None = None, window: int = 32,
                 raise_at: float = 0.8, lower_at: float = 0.3):
        if not levels:
            raise ValueError("the curriculum needs at least one level")
        if not 0.0 <= lower_at < raise_at <= 1.0:
            raise ValueError(f"need 0 <= lower_at < raise_at <= 1, got lower_at={lower_at}, "
                             f"raise_at={raise_at}")
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        self.levels = sorted(set(levels))
        start = self.levels[0] if start is None else start
        if start not in self.levels:
            raise ValueError(f"start level {start} is not one of {self.levels}")
        self._index = self.levels.index(start)
        self.window, self.raise_at, self.lower_at = window, raise_at, lower_at
        self._results: deque[bool] = deque(maxlen=window)
        self.history: list[tuple[int, int]] = []  # (episode, new level)
        self.episodes = 0

    @property
    def level(self) -> int:
        return self.levels[self._index]

    @property
    def success_rate(self) -> float | None:
        return sum(self._results) / len(self._results) if self._results else None

    def update(self, correct: bool) -> int:
        self.episodes += 1
        self._results.append(bool(correct))
        if len(self._results) == self.window:
            rate = self.success_rate
            step = 1 if rate >= self.raise_at else -1 if rate <= self.lower_at else 0
            new = min(max(self._index + step, 0), len(self.levels) - 1)
            if new != self._index:
                self._index = new
                self._results.clear()
                self.history.append((self.episodes, self.level))
        return self.level
