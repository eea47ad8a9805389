"""Counting words and sentences."""

from __future__ import annotations

import re
from collections import Counter

_WORD = re.compile(r"[A-Za-z']+")
_SENTENCE_END = re.compile(r"[.!?]+")


def words(text: str, *, lowercase: bool = True) -> list[str]:
    """The words of `text` in order (letters and apostrophes)."""
    found = _WORD.findall(text)
    return [w.lower() for w in found] if lowercase else found


def word_counts(text: str, *, lowercase: bool = True) -> Counter:
    return Counter(words(text, lowercase=lowercase))


def top_words(text: str, n: int = 3, *, lowercase: bool = True) -> list[tuple[str, int]]:
    """The `n` most frequent words, most frequent first; ties in alphabetical order."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    ranked = sorted(word_counts(text, lowercase=lowercase).items(),
                    key=lambda item: (-item[1], item[0]))
    return ranked[:n]


def sentence_count(text: str) -> int:
    """Sentences end with '.', '!' or '?' (runs like '?!' end one sentence); trailing text
    without an ending still counts as a sentence."""
    parts = [p for p in _SENTENCE_END.split(text) if p.strip()]
    return len(parts)
