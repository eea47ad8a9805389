"""Qwen3-style thinking modes and the thinking budget.

Modes: `on` (reason inside <think>…</think>, prompt tag `/think`), `off` (an empty think block,
prompt tag `/no_think`), `hybrid` (each episode draws one of the two; the mode travels in the
task's metadata under `thinking_mode`). The budget penalty:

penalty(T) = 0                                      for T <= budget
penalty(T) = -weight * min(1, (T - budget) / ramp)  for T > budget   (ramp > 0)
penalty(T) = -weight                                for T > budget   (ramp = 0)

with T the reasoning length (tokens with a tokenizer, else characters).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rlvr_envs.rewards.format import THINKING_MODES, check_thinking_mode

MODE_TAGS = {"on": "/think", "off": "/no_think"}
METADATA_KEY = "thinking_mode"


@dataclass(frozen=True)
class ThinkingBudget:
    budget: int
    weight: float = 0.5
    ramp: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.budget, int) or self.budget < 0:
            raise ValueError(f"thinking budget must be an int >= 0, got {self.budget!r}")
        if self.ramp < 0:
            raise ValueError(f"thinking budget ramp must be >= 0, got {self.ramp!r}")

    @classmethod
    def coerce(cls, value: Any) -> ThinkingBudget | None:
        if value is None or isinstance(value, ThinkingBudget):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return cls(value)
        if isinstance(value, Mapping):
            return cls(**value)
        if isinstance(value, (tuple, list)):
            return cls(*value)
        raise TypeError(f"thinking_budget must be an int, (budget, weight[, ramp]), a dict or None; "
                        f"got {value!r}")


def thinking_budget_penalty(reasoning_length: int, budget: int, *, weight: float = 0.5,
                            ramp: int = 0) -> float:
    """The penalty for reasoning beyond the budget (0 … -weight)."""
    excess = reasoning_length - budget
    if excess <= 0:
        return 0.0
    return -weight * (1.0 if ramp <= 0 else min(1.0, excess / ramp))


def episode_mode(thinking: str | None, task_metadata: Mapping[str, Any] | None) -> str | None:
    """The mode one episode runs in: hybrid envs stamp it into the task's metadata."""
    check_thinking_mode(thinking)
    if thinking == "hybrid":
        stamped = (task_metadata or {}).get(METADATA_KEY)
        return stamped if stamped in ("on", "off") else "hybrid"
    return thinking


def tag_prompt(text: str, mode: str) -> str:
    """Append Qwen3's soft switch (`/think` or `/no_think`) to a user or system message."""
    if mode not in MODE_TAGS:
        raise ValueError(f"a prompt is tagged for mode 'on' or 'off', got {mode!r}")
    return f"{text.rstrip()} {MODE_TAGS[mode]}"


def mode_from_prompt(prompt: Any) -> str | None:
    """The mode a prompt asks for, read from its last `/think` or `/no_think` tag (prompts may be
    strings or chat message lists, as TRL passes them)."""
    if isinstance(prompt, (list, tuple)):
        prompt = "\n".join(str(m.get("content", "")) for m in prompt if isinstance(m, Mapping))
    text = str(prompt)
    on, off = text.rfind(MODE_TAGS["on"]), text.rfind(MODE_TAGS["off"])  # "/think" is no
    if on < 0 and off < 0:  # substring of "/no_think", so the two never collide
        return None
    return "off" if off > on else "on"


__all__ = ["METADATA_KEY", "MODE_TAGS", "THINKING_MODES", "ThinkingBudget", "episode_mode",
           "mode_from_prompt", "tag_prompt", "thinking_budget_penalty"]
