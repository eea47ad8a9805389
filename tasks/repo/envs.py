"""The repo-editing env's factory, rlvr/RepoEdit-v0 (keyword arguments: see RepoEditEnv)."""

from __future__ import annotations

import inspect

from rlvr_envs.registry import env_factory
from rlvr_envs.tasks.repo.env import RepoEditEnv


def _make_repo_edit_env(**kwargs) -> RepoEditEnv:
    return RepoEditEnv(**kwargs)


_make_repo_edit_env.__signature__ = inspect.signature(RepoEditEnv)  # type: ignore[attr-defined]
_make_repo_edit_env.__name__ = "make_repo_edit_env"
make_repo_edit_env = env_factory(_make_repo_edit_env)
