"""Reward shaping and thinking modes on an env, as a wrapper and as gym.make kwargs.

`RewardShaping(env, format_reward=0.2, thinking="hybrid", overlong=(4096, 512), ...)` swaps
the env's scorer for a `ShapedScorer` (so `env.unwrapped.scorer`, `env.unwrapped.score` and
`rlvr_envs.scorer_for` give the shaped reward too), sets the thinking-mode system prompt, and
in `hybrid` mode draws `on`/`off` per episode: the user message gets Qwen3's `/think` or
`/no_think`, and the mode is stamped into the task (`info["task"]["metadata"]["thinking_mode"]`)
so whoever scores it later judges the format in the right mode.

`with_shaping(factory)` adds the same options as keyword arguments of an env factory, so
`gym.make("rlvr/Math-v0", format_reward=0.2, reward_mode="mix")` works.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import gymnasium as gym
import numpy as np

from rlvr_envs.core.multiturn import MultiTurnEnv
from rlvr_envs.core.prompts import render_plain, thinking_system_prompt
from rlvr_envs.core.task import Task
from rlvr_envs.curriculum.measured import MeasuredDifficulty
from rlvr_envs.rewards.shaped import ShapedScorer, ShapingConfig
from rlvr_envs.rewards.thinking import METADATA_KEY, tag_prompt

#: gym.make keyword arguments that `with_shaping` adds, with their defaults (all off)
SHAPING_KWARGS: dict[str, Any] = {name: getattr(ShapingConfig(), name)
                                  for name in ShapingConfig.names()}
SHAPING_KWARGS["pass_rates"] = None


class RewardShaping(gym.Wrapper):
    """Shape an env's reward (see the module docstring); `p_think` is the share of `/think`
    episodes in hybrid mode; `options={"thinking_mode": "on"|"off"}` pins one episode."""

    def __init__(self, env: gym.Env, config: ShapingConfig | None = None, *, p_think: float = 0.5,
                 **options: Any):
        super().__init__(env)
        base = env.unwrapped
        if (isinstance(base, MultiTurnEnv) or not hasattr(base, "scorer")
                or not hasattr(base, "system_prompt")):
            raise TypeError(f"RewardShaping needs a single-turn env with a scorer and a system "
                            f"prompt, got {type(base).__name__}")
        self.config = config if config is not None else ShapingConfig(**options)
        base.scorer = ShapedScorer(base.scorer, self.config)
        if self.config.thinking is not None:
            base.system_prompt = thinking_system_prompt(base.scorer.answer_format,
                                                        self.config.thinking)
        if not 0.0 <= p_think <= 1.0:
            raise ValueError(f"p_think must be in [0, 1], got {p_think}")
        self.p_think = p_think
        self._mode_rng = np.random.default_rng()

    @property
    def scorer(self) -> ShapedScorer:
        return self.env.unwrapped.scorer

    @property
    def hacking_counters(self):
        return self.scorer.counters

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        options = dict(options or {})
        pinned_mode = options.pop("thinking_mode", None)
        if self.config.thinking != "hybrid":
            if pinned_mode is not None:
                raise ValueError("options['thinking_mode'] needs an env made with thinking='hybrid'")
            return self.env.reset(seed=seed, options=options)
        if seed is not None:
            self._mode_rng = np.random.default_rng(seed)
        if pinned_mode not in (None, "on", "off"):
            raise ValueError(f"options['thinking_mode'] must be 'on' or 'off', got {pinned_mode!r}")
        _, info = self.env.reset(seed=seed, options=options)
        mode = pinned_mode or ("on" if self._mode_rng.random() < self.p_think else "off")
        task = Task.from_dict(info["task"])
        stamped = replace(task, metadata={**task.metadata, METADATA_KEY: mode})
        _, info = self.env.reset(options={"task": stamped})  # pins the stamped task for step()
        messages = [dict(m) for m in info["messages"]]
        messages[-1]["content"] = tag_prompt(messages[-1]["content"], mode)
        info["messages"] = messages
        return render_plain(messages), info


def apply_shaping(env: gym.Env, *, pass_rates: Any = None, **options: Any) -> gym.Env:
    """`env` with the shaping options applied (unchanged when none is set)."""
    unknown = sorted(set(options) - set(ShapingConfig.names()))
    if unknown:
        raise TypeError(f"unknown shaping option(s) {unknown}; valid: {sorted(SHAPING_KWARGS)}")
    config = ShapingConfig(**options)
    if config.active:
        env = RewardShaping(env, config)
    if pass_rates is not None:
        env = MeasuredDifficulty(env, pass_rates)
    return env


def with_shaping(factory: Callable[..., gym.Env]) -> Callable[..., gym.Env]:
    """An env factory that also takes the shaping keyword arguments (listed in its signature,
    so the registry's unknown-kwarg check still names every valid one)."""
    signature = inspect.signature(factory)

    @functools.wraps(factory)
    def make(**kwargs: Any) -> gym.Env:
        shaping = {k: kwargs.pop(k) for k in list(kwargs)
                   if k in SHAPING_KWARGS and k not in signature.parameters}
        return apply_shaping(factory(**kwargs), **shaping)

    extra = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)
             for name, default in SHAPING_KWARGS.items() if name not in signature.parameters]
    params = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    make.__signature__ = signature.replace(parameters=params + extra)  # type: ignore[attr-defined]
    return make
