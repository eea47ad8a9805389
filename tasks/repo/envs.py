"""Registration of the repo-editing env id (keyword arguments: see RepoEditEnv)."""

from __future__ import annotations

from rlvr_envs.tasks.repo.env import RepoEditEnv

from rlvr_envs.registry import register_env

register_env("rlvr/RepoEdit-v0", RepoEditEnv,
             "Multi-turn tool use: fix a bug in a real Python repository (graded by its tests)",
             family="repo")
