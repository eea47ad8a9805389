"""MeasuredDifficulty: put stored pass rates into `info["task"]["difficulty"]["pass_rate"]`."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from rlvr_envs.curriculum.difficulty import PassRates


def annotate(info: dict[str, Any], rates: PassRates) -> dict[str, Any]:
    task = info.get("task")
    if isinstance(task, dict):
        rate = rates.get(task.get("id", ""))
        if rate is not None:
            task["difficulty"] = {**task.get("difficulty", {}), "pass_rate": rate}
    return info


class MeasuredDifficulty(gym.Wrapper):
    """Reloads a pass-rate file (or mapping task_id -> rate) into each episode's task record."""

    def __init__(self, env: gym.Env, pass_rates: Any):
        super().__init__(env)
        self.pass_rates = PassRates.coerce(pass_rates)

    def reset(self, **kwargs: Any):
        obs, info = self.env.reset(**kwargs)
        return obs, annotate(info, self.pass_rates)

    def step(self, action: Any):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, terminated, truncated, annotate(info, self.pass_rates)
