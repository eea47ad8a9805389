"""Registration of the repo-editing env id."""

from __future__ import annotations

from rlvr_envs.tasks.repo.env import RepoEditEnv

from rlvr_envs.registry import register_env


def make_repo_edit_env(**kwargs) -> RepoEditEnv:
    """rlvr/RepoEdit-v0; see RepoEditEnv for the keyword arguments."""
    return RepoEditEnv(**kwargs)


make_repo_edit_env.__signature__ = __import__("inspect").signature(RepoEditEnv.__init__).replace(
    parameters=list(__import__("inspect").signature(RepoEditEnv.__init__).parameters.values())[1:])

register_env("rlvr/RepoEdit-v0", make_repo_edit_env,
             "Multi-turn tool use: fix a bug in a real Python repository (graded by its tests)",
             family="repo")
