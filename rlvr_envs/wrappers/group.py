"""GroupScoring: score the G completions of one prompt together (GRPO-style groups).

`env.step_group(completions)` grades each completion through the env's own scorer, then adds
the group-level components: the Kimi k1.5 length penalty (`length_penalty` in each
`reward_breakdown`) and the DAPO dynamic-sampling verdict (`info["group"]["zero_variance"]`;
`dropped_groups` counts them). Plain `step` still works for one completion.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from rlvr_envs.curriculum.selection import zero_variance
from rlvr_envs.rewards.kimi import kimi_length_penalty
from rlvr_envs.rewards.lengths import Tokenizer, measure_lengths


class GroupScoring(gym.Wrapper):
    def __init__(self, env: gym.Env, *, length_penalty: float = 0.0, warmup_steps: int = 0,
                 tokenizer: Tokenizer | None = None):
        super().__init__(env)
        self.length_penalty, self.warmup_steps, self.tokenizer = length_penalty, warmup_steps, tokenizer
        self.groups_scored = 0
        self.dropped_groups = 0
        self._task: dict[str, Any] | None = None

    def reset(self, **kwargs: Any):
        obs, info = self.env.reset(**kwargs)
        self._task = info["task"]
        return obs, info

    def step(self, action: Any):
        self._task = None
        return self.env.step(action)

    def step_group(self, completions: Sequence[str]) -> tuple[np.ndarray, list[dict[str, Any]]]:
        """Rewards (float array, one per completion) and one info dict per completion."""
        if self._task is None:
            raise gym.error.ResetNeeded("step_group() needs a reset() first (one group per episode)")
        if isinstance(completions, str) or not completions:
            raise TypeError("step_group takes a non-empty list of completion strings")
        task, self._task = self._task, None
        base = self.env.unwrapped
        scores = base.score_batch(list(completions), [task] * len(completions))
        rewards = [float(s.reward) for s in scores]
        infos = []
        for score in scores:
            info = score.info()
            info["task"] = task
            infos.append(info)
        if self.length_penalty:
            lengths = measure_lengths(list(completions), self.tokenizer)
            penalties = kimi_length_penalty(lengths, [s.correct for s in scores],
                                            weight=self.length_penalty, step=self.groups_scored,
                                            warmup_steps=self.warmup_steps)
            for i, penalty in enumerate(penalties):
                rewards[i] += penalty
                infos[i]["reward_breakdown"]["length_penalty"] = penalty
        flat = zero_variance(rewards)
        self.groups_scored += 1
        self.dropped_groups += flat
        for info in infos:
            info["group"] = {"size": len(completions), "zero_variance": flat,
                             "reward_mean": float(np.mean(rewards)),
                             "reward_std": float(np.std(rewards))}
        return np.asarray(rewards, dtype=np.float64), infos
