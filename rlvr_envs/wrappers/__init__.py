"""Gymnasium wrappers: reward shaping and thinking modes, group scoring; the curriculum and
monitor wrappers (rlvr_envs.curriculum, rlvr_envs.rewards.monitors) are re-exported here too."""

from rlvr_envs.curriculum.measured import MeasuredDifficulty
from rlvr_envs.curriculum.wrappers import OnlineCurriculum, SolvabilityFilter
from rlvr_envs.rewards.monitors import HackingMonitor
from rlvr_envs.wrappers.group import GroupScoring
from rlvr_envs.wrappers.shaping import RewardShaping, apply_shaping, with_shaping

__all__ = ["GroupScoring", "HackingMonitor", "MeasuredDifficulty", "OnlineCurriculum",
           "RewardShaping", "SolvabilityFilter", "apply_shaping", "with_shaping"]
