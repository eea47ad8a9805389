"""HackingMonitor: per-episode hacking flags in `info["hacking"]` and counters for logging.

Works on any single-turn env; when the env's scorer already computes the flags (a shaped env
made with `monitors=True`) they are reused, not recomputed.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from rlvr_envs.rewards.monitors import HackingCounters, MonitorConfig, hacking_flags


class HackingMonitor(gym.Wrapper):
    def __init__(self, env: gym.Env, *, max_length: int | None = None,
                 config: MonitorConfig | None = None):
        super().__init__(env)
        self.config = config or MonitorConfig(max_length=max_length)
        self.counters = HackingCounters()

    def step(self, action: Any):
        obs, reward, terminated, truncated, info = self.env.step(action)
        if "hacking" not in info:
            info["hacking"] = hacking_flags(action, length=info.get("length"), config=self.config)
        self.counters.update(info["hacking"])
        return obs, reward, terminated, truncated, info
