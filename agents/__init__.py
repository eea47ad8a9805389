"""Policies and trainers (installed as rlvr_envs.agents; needs the `train` extra)."""
