"""Curricula and measured difficulty: stored pass rates per task (`difficulty`), the plain
filters and schedulers (`selection`: solvability range, DAPO dynamic sampling, the online
level controller), the wrappers that apply them to an env (`measured`, `wrappers`) and the
`rlvr difficulty` command (`cli`)."""

from rlvr_envs.curriculum.difficulty import (
                                             PassRates,
                                             TaskPassRate,
                                             default_store_path,
                                             estimate_pass_rates,
                                             pass_rate_histogram,
)
from rlvr_envs.curriculum.measured import MeasuredDifficulty
from rlvr_envs.curriculum.selection import (
                                             DynamicSamplingBuffer,
                                             DynamicSamplingResult,
                                             LevelController,
                                             drop_zero_variance_groups,
                                             filter_by_pass_rate,
                                             in_solvability_range,
                                             split_groups,
                                             zero_variance,
)
from rlvr_envs.curriculum.wrappers import OnlineCurriculum, SolvabilityFilter

__all__ = ["DynamicSamplingBuffer", "DynamicSamplingResult", "LevelController",
           "MeasuredDifficulty", "OnlineCurriculum", "PassRates", "SolvabilityFilter",
           "TaskPassRate", "default_store_path", "drop_zero_variance_groups",
           "estimate_pass_rates", "filter_by_pass_rate", "in_solvability_range",
           "pass_rate_histogram", "split_groups", "zero_variance"]
