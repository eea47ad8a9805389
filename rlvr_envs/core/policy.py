"""The policy interface every agent, evaluator and trainer speaks, and its plain data types.

Imports no torch: scripted policies and the evaluation side use it without the `train` extra.
A policy maps a batch of chat conversations to `n` completions each.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence, runtime_checkable

from rlvr_envs.core.scoring import Scorer
from rlvr_envs.core.task import Task

Messages = list[dict[str, Any]]


@dataclass(frozen=True)
class SamplingParams:
    """How to sample. `n` completions per prompt of at most `max_completion_length` tokens
    each; `seed` makes sampling reproducible. (`max_new_tokens`, the old name of the cap, is
    still accepted, with a DeprecationWarning.)"""

    temperature: float = 1.0
    top_p: float = 1.0
    max_completion_length: int = 256
    n: int = 1
    seed: int | None = None
    stop: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")
        if self.max_completion_length < 1:
            raise ValueError(f"max_completion_length must be >= 1, got "
                             f"{self.max_completion_length}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")

    @property
    def max_new_tokens(self) -> int:
        """Deprecated name of `max_completion_length`."""
        warnings.warn(DEPRECATED_CAP, DeprecationWarning, stacklevel=2)
        return self.max_completion_length


DEPRECATED_CAP = "SamplingParams: 'max_new_tokens' is now 'max_completion_length'"
_dataclass_init = SamplingParams.__init__


@functools.wraps(_dataclass_init)
def _init_accepting_the_old_name(self, *args, max_new_tokens: int | None = None, **kwargs):
    if max_new_tokens is not None:
        if "max_completion_length" in kwargs:
            raise TypeError("SamplingParams: give max_completion_length only "
                            "(max_new_tokens is its deprecated name)")
        warnings.warn(DEPRECATED_CAP, DeprecationWarning, stacklevel=2)
        kwargs["max_completion_length"] = max_new_tokens
    _dataclass_init(self, *args, **kwargs)


SamplingParams.__init__ = _init_accepting_the_old_name  # type: ignore[method-assign]


@dataclass
class Completion:
    """One sampled completion. Token ids and log-probs are filled by local models."""

    text: str
    num_tokens: int | None = None
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    finish_reason: str = "stop"  # "stop" | "length" | "error"
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Policy(Protocol):
    """`generate(batch, params, tasks=, scorers=)` → for each conversation, `params.n`
    completions. `tasks` and `scorers` (one per conversation) are given by envs and evaluators;
    model policies ignore them, scripted ones (gold) need them."""

    name: str

    def generate(self, batch: Sequence[Messages], params: SamplingParams, *,
                 tasks: Sequence[Task] | None = None,
                 scorers: Sequence[Scorer] | None = None) -> list[list[Completion]]: ...
