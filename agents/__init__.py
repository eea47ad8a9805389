"""Policies and trainers (installed as rlvr_envs.agents; trainers need the `train` extra).

Importing this package does not import torch: `resolve_policy` and the scripted policies work
without it; model policies and trainers import torch when they run.
"""

from rlvr_envs.agents.registry import PolicyNotFound, resolve_policy
from rlvr_envs.core.policy import Completion, Policy, SamplingParams

__all__ = ["Completion", "Policy", "PolicyNotFound", "SamplingParams", "resolve_policy"]
