"""A gymnasium space of arbitrary unicode strings, the observation and action space of every
text env, with shared-memory support so `gym.make_vec(..., vectorization_mode="async")` works.

gymnasium's own `Text` space only holds characters from a fixed charset, which cannot carry
a prompt or a model's completion (any unicode). Shared memory stores each string as its code
points (int32) after a length slot.
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np
from gymnasium.spaces import Space
from gymnasium.vector.utils import (
    create_shared_memory,
    read_from_shared_memory,
    write_to_shared_memory,
)

#: `metadata["render_fps"]` of the text envs: "ansi" renders a frame per step, with no clock
RENDER_FPS = 1
_SAMPLE_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789 +-*/=()\\{}.,\nαβγ√π"


class UnicodeText(Space[str]):
    """Any `str` of at most `max_length` characters (code points)."""

    def __init__(self, max_length: int = 65_536, seed: int | np.random.Generator | None = None):
        if not isinstance(max_length, int) or max_length < 1:
            raise ValueError(f"max_length must be a positive int, got {max_length!r}")
        self.max_length = max_length
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        """A random short string; lengths are capped at 256 so sampling stays cheap."""
        length = int(self.np_random.integers(0, min(self.max_length, 256) + 1))
        picks = self.np_random.integers(0, len(_SAMPLE_ALPHABET), size=length)
        return "".join(_SAMPLE_ALPHABET[i] for i in picks)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText(max_length={self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, UnicodeText) and other.max_length == self.max_length

    def to_jsonable(self, sample_n: Any) -> list[str]:
        return list(sample_n)

    def from_jsonable(self, sample_n: list[str]) -> list[str]:
        return list(sample_n)


@create_shared_memory.register(UnicodeText)
def _create_unicode_shared_memory(space: UnicodeText, n: int = 1, ctx: ModuleType = mp):
    return ctx.Array(np.dtype(np.int32).char, n * (space.max_length + 1))


class SharedTextBatch(Sequence):
    """A live view of the strings in shared memory, like the numpy views gymnasium returns
    for array spaces: AsyncVectorEnv reads the buffer once and deep-copies the view on each
    step, and a deep copy of this view is a plain tuple of the current strings."""

    def __init__(self, data: np.ndarray):
        self._data = data

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        row = self._data[index]
        return row[1 : 1 + row[0]].astype("<u4").tobytes().decode("utf-32-le")

    def __deepcopy__(self, memo) -> tuple[str, ...]:
        return tuple(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __repr__(self) -> str:
        return f"SharedTextBatch({tuple(self)!r})"


@read_from_shared_memory.register(UnicodeText)
def _read_unicode_from_shared_memory(space: UnicodeText, shared_memory, n: int = 1):
    data = np.frombuffer(shared_memory.get_obj(), dtype=np.int32).reshape(n, space.max_length + 1)
    return SharedTextBatch(data)


@write_to_shared_memory.register(UnicodeText)
def _write_unicode_to_shared_memory(space: UnicodeText, index: int, value: str, shared_memory):
    if not space.contains(value):
        raise ValueError(f"observation of {len(value)} chars does not fit {space}")
    stride = space.max_length + 1
    destination = np.frombuffer(shared_memory.get_obj(), dtype=np.int32)
    codes = np.frombuffer(value.encode("utf-32-le"), dtype="<u4").astype(np.int32)
    destination[index * stride] = len(codes)
    destination[index * stride + 1 : index * stride + 1 + len(codes)] = codes
