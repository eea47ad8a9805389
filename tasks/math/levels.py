"""Difficulty levels shared by the procedural math generators (1 = easiest)."""

from __future__ import annotations

MAX_LEVEL = 10


def check_level(level: int, generator: str) -> int:
    """Return `level` if it is an int in 1..MAX_LEVEL, else raise naming the generator."""
    if not isinstance(level, int) or isinstance(level, bool) or not 1 <= level <= MAX_LEVEL:
        raise ValueError(f"{generator}: level must be an int in 1..{MAX_LEVEL}, got {level!r}")
    return level
