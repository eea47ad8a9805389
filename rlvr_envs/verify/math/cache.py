"""The in-process verdict cache: a repeated (gold, extracted answers) pair is judged once.

GRPO samples many completions per prompt and they often end in the same answer; the cache
makes the second one free. Bounded (least recently used out first) and thread-safe. A
comparison that ran out of its CPU budget is remembered with that budget, so it counts as a
timeout again only for a budget no larger; one ended by the wall-clock backstop (a machine
too busy to give the worker any CPU) is not remembered at all.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from rlvr_envs.verify.math.verdict import TIMEOUT

MAX_ENTRIES = 100_000

Key = tuple[str, tuple[str, ...]]


class VerdictCache:
    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        if max_entries < 1:
            raise ValueError(f"the verdict cache needs max_entries >= 1, got {max_entries}")
        self.max_entries = max_entries
        self._entries: OrderedDict[Key, tuple[str, float]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, gold: str, answers: tuple[str, ...], budget: float) -> str | None:
        """The remembered reason for this pair under a CPU budget of `budget` s, or None."""
        key = (gold, answers)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            reason, timed_out_at = entry
            if reason == TIMEOUT and budget > timed_out_at:
                return None
            self._entries.move_to_end(key)
            return reason

    def put(self, gold: str, answers: tuple[str, ...], reason: str, budget: float = 0.0) -> None:
        """Remember `reason`; for TIMEOUT, `budget` is the CPU budget that ran out."""
        key = (gold, answers)
        with self._lock:
            self._entries[key] = (reason, budget)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


verdicts = VerdictCache()
