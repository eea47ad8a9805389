"""Reward components and shaping: plain functions a trainer calls on (task, completions), and
the `ShapedScorer` that adds them to a family's reward on the one scoring path."""

from rlvr_envs.rewards.format import FormatVerdict, check_format, format_reward, split_reasoning
from rlvr_envs.rewards.kimi import kimi_length_penalty
from rlvr_envs.rewards.lengths import measure_length, measure_lengths
from rlvr_envs.rewards.monitors import HackingCounters, hacking_flags
from rlvr_envs.rewards.overlong import is_truncated, soft_overlong_penalty
from rlvr_envs.rewards.process import extract_steps, process_reward, verify_steps
from rlvr_envs.rewards.shaped import ShapedScorer, ShapingConfig, shape
from rlvr_envs.rewards.thinking import thinking_budget_penalty

__all__ = ["FormatVerdict", "HackingCounters", "ShapedScorer", "ShapingConfig", "check_format",
           "extract_steps", "format_reward", "hacking_flags", "is_truncated",
           "kimi_length_penalty", "measure_length", "measure_lengths", "process_reward",
           "shape", "soft_overlong_penalty", "split_reasoning", "thinking_budget_penalty",
           "verify_steps"]
