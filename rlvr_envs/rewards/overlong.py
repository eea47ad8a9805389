"""DAPO soft overlong punishment and the truncation flag.

R(L) = 0                              for L <= L_max - L_cache
R(L) = ((L_max - L_cache) - L) / L_cache   for L_max - L_cache < L <= L_max
R(L) = -1                             for L > L_max
(Yu et al., 2025, "DAPO", eq. 13). A completion that hit the generation cap is *truncated*;
trainers mask those out of the loss (DAPO's overlong filtering; TRL's
`mask_truncated_completions`), so the flag travels with the penalty.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class OverlongConfig:
    """max_length = L_max, cache_length = L_cache (same unit as the lengths measured)."""

    max_length: int
    cache_length: int
    weight: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.max_length, int) or self.max_length < 1:
            raise ValueError(f"overlong max_length (L_max) must be an int >= 1, got {self.max_length!r}")
        if not isinstance(self.cache_length, int) or not 0 <= self.cache_length <= self.max_length:
            raise ValueError(f"overlong cache_length (L_cache) must be an int in [0, L_max={self.max_length}], "
                             f"got {self.cache_length!r}")

    @classmethod
    def coerce(cls, value: OverlongConfig | Sequence[int] | dict | None) -> OverlongConfig | None:
        if value is None or isinstance(value, OverlongConfig):
            return value
        if isinstance(value, dict):
            return cls(**value)
        if isinstance(value, (tuple, list)) and len(value) in (2, 3):
            return cls(*value)
        raise TypeError(f"overlong must be (L_max, L_cache[, weight]), a dict or None, got {value!r}")


def soft_overlong_penalty(length: int, max_length: int, cache_length: int) -> float:
    """DAPO's soft overlong punishment for one completion length (0 … -1)."""
    if length < 0:
        raise ValueError(f"length must be >= 0, got {length}")
    free = max_length - cache_length
    if length <= free:
        return 0.0
    if length > max_length:
        return -1.0
    return (free - length) / cache_length


def is_truncated(length: int, max_length: int, token_ids: Sequence[int] | None = None,
                 eos_token_ids: Sequence[int] | None = None) -> bool:
    """True when the completion was cut at the cap: with token ids and EOS ids, it does not end
    in EOS (TRL's own test); otherwise its length reached `max_length`."""
    if token_ids is not None and eos_token_ids is not None:
        return not token_ids or token_ids[-1] not in set(eos_token_ids)
    return length >= max_length
