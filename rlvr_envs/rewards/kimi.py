"""Kimi k1.5 length penalty, computed over the G completions of one prompt.

lambda_i = 0.5 - (len_i - min_len) / (max_len - min_len)
reward_i = lambda_i            if completion i is correct
reward_i = min(0, lambda_i)    if it is wrong
and every reward is 0 when max_len == min_len (Kimi Team, 2025, "Kimi k1.5", sec. 2.3.3).
The penalty is multiplied by `weight` and is 0 for the first `warmup_steps` training steps.
"""

from __future__ import annotations

from collections.abc import Sequence


def kimi_length_penalty(lengths: Sequence[int], correct: Sequence[bool], *, weight: float = 1.0,
                        step: int | None = None, warmup_steps: int = 0) -> list[float]:
    """The length rewards of one group (one prompt's completions), weight applied."""
    if len(lengths) != len(correct):
        raise ValueError(f"got {len(lengths)} lengths for {len(correct)} correctness verdicts")
    if warmup_steps < 0:
        raise ValueError(f"warmup_steps must be >= 0, got {warmup_steps}")
    if not lengths:
        return []
    shortest, longest = min(lengths), max(lengths)
    if longest == shortest or (step is not None and step < warmup_steps):
        return [0.0] * len(lengths)
    out = []
    for length, ok in zip(lengths, correct):
        lam = 0.5 - (length - shortest) / (longest - shortest)
        out.append(weight * (lam if ok else min(0.0, lam)))
    return out
