"""Closed intervals and the set operations on lists of them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True, order=True)
class Interval:
    start: int
    end: int

    def __post_init__(self) -> None:
        if self.end < self.start:
            raise ValueError(f"interval end {self.end} is before its start {self.start}")

    def __len__(self) -> int:
        return self.end - self.start

    def overlaps(self, other: Interval) -> bool:
        """True when the two closed intervals share at least one point."""
        return self.start <= other.end and other.start <= self.end


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """The union as a sorted list of disjoint intervals; touching intervals are merged."""
    merged: list[Interval] = []
    for interval in sorted(intervals):
        if merged and merged[-1].overlaps(interval):
            last = merged.pop()
            merged.append(Interval(last.start, max(last.end, interval.end)))
        else:
            merged.append(interval)
    return merged


def intersect(a: Iterable[Interval], b: Iterable[Interval]) -> list[Interval]:
    """Points in both unions, as disjoint intervals."""
    left, right = merge(a), merge(b)
    out: list[Interval] = []
    i = j = 0
    while i < len(left) and j < len(right):
        start = max(left[i].start, right[j].start)
        end = min(left[i].end, right[j].end)
        if start <= end:
            out.append(Interval(start, end))
        if left[i].end < right[j].end:
            i += 1
        else:
            j += 1
    return out


def total_length(intervals: Iterable[Interval]) -> int:
    """Total length covered by the union."""
    return sum(len(interval) for interval in merge(intervals))
