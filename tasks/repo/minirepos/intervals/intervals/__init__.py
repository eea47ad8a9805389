"""intervals: operations on closed intervals [start, end]."""

from intervals.core import Interval, intersect, merge, total_length

__all__ = ["Interval", "intersect", "merge", "total_length"]
