"""Gymnasium wrappers: reward shaping and thinking modes, measured difficulty, curricula,
group scoring, hacking monitors."""

from rlvr_envs.wrappers.curriculum import OnlineCurriculum, SolvabilityFilter
from rlvr_envs.wrappers.difficulty import MeasuredDifficulty
from rlvr_envs.wrappers.group import GroupScoring
from rlvr_envs.wrappers.monitors import HackingMonitor
from rlvr_envs.wrappers.shaping import RewardShaping, apply_shaping, with_shaping

__all__ = ["GroupScoring", "HackingMonitor", "MeasuredDifficulty", "OnlineCurriculum",
           "RewardShaping", "SolvabilityFilter", "apply_shaping", "with_shaping"]
