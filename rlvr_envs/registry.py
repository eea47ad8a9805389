"""Env registry: our catalogue of ids on top of gymnasium's registry.

`register_env` records an id with a one-line description and registers it with gymnasium
through a factory that checks keyword arguments (an unknown kwarg names the valid ones).
`retire_env` keeps an old id answering with an error that names its successor.
Family modules listed in `FAMILY_MODULES` register their ids when `rlvr_envs` is imported.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

import gymnasium as gym

FAMILY_MODULES = (
    "rlvr_envs.tasks.math.envs",
    "rlvr_envs.tasks.code.envs",
    "rlvr_envs.tasks.repo.envs",
    "rlvr_envs.tasks.reasoning.envs",
)


@dataclass(frozen=True)
class EnvEntry:
    id: str
    description: str
    factory: Callable[..., gym.Env]
    family: str
    #: kwargs that `rlvr check` and the contract tests use, e.g. a bundled sample file for a
    #: dataset env whose default data lives on the hub
    check_kwargs: dict[str, Any] = field(default_factory=dict)


_CATALOGUE: dict[str, EnvEntry] = {}
_RETIRED: dict[str, str] = {}


def _accepted_kwargs(factory: Callable[..., Any]) -> list[str] | None:
    params = inspect.signature(factory).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return [p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _checked_factory(env_id: str, factory: Callable[..., gym.Env]) -> Callable[..., gym.Env]:
    valid = _accepted_kwargs(factory)

    def make(**kwargs: Any) -> gym.Env:
        if valid is not None:
            unknown = sorted(set(kwargs) - set(valid))
            if unknown:
                raise TypeError(f"{env_id}: unknown keyword argument(s) {unknown}; "
                                f"valid ones are {sorted(valid)}")
        return factory(**kwargs)

    make.__name__ = f"make_{env_id.replace('/', '_').replace('-', '_')}"
    return make


def register_env(env_id: str, factory: Callable[..., gym.Env], description: str, *,
                 family: str, max_episode_steps: int | None = None,
                 check_kwargs: dict[str, Any] | None = None) -> None:
    """Register `env_id` (e.g. "rlvr/Math-v0") with gymnasium and in our catalogue."""
    if env_id in _CATALOGUE:
        return
    _CATALOGUE[env_id] = EnvEntry(env_id, description, factory, family, dict(check_kwargs or {}))
    gym.register(id=env_id, entry_point=_checked_factory(env_id, factory),
                 max_episode_steps=max_episode_steps, disable_env_checker=True)


def retire_env(old_id: str, successor: str) -> None:
    """Keep `old_id` answering, with an error naming `successor`."""
    _RETIRED[old_id] = successor

    def refuse(**_: Any) -> gym.Env:
        raise gym.error.DeprecatedEnv(f"{old_id} is retired; use {successor} instead")

    gym.register(id=old_id, entry_point=refuse, disable_env_checker=True)


def load_families() -> None:
    for module in FAMILY_MODULES:
        importlib.import_module(module)


def list_envs(family: str | None = None) -> dict[str, str]:
    """Registered ids (not retired ones) → one-line description; ValueError for a family
    no id belongs to."""
    load_families()
    families = sorted({e.family for e in _CATALOGUE.values()})
    if family is not None and family not in families:
        raise ValueError(f"no env family {family!r}; families: {families}")
    return {e.id: e.description for e in _CATALOGUE.values() if family in (None, e.family)}


def env_entry(env_id: str) -> EnvEntry:
    load_families()
    if env_id.startswith("rlvr_envs:"):
        env_id = env_id.split(":", 1)[1]
    if env_id in _RETIRED:
        raise gym.error.DeprecatedEnv(f"{env_id} is retired; use {_RETIRED[env_id]} instead")
    if env_id not in _CATALOGUE:
        close = difflib.get_close_matches(env_id, list(_CATALOGUE), n=3, cutoff=0.5)
        hint = f" Did you mean {close}?" if close else ""
        raise gym.error.UnregisteredEnv(f"no rlvr env {env_id!r}.{hint} Known ids: "
                                        f"{sorted(_CATALOGUE)}")
    return _CATALOGUE[env_id]


def make(env_id: str, **kwargs: Any) -> gym.Env:
    """`gym.make` with our error for unknown ids (close matches listed)."""
    env_entry(env_id)
    return gym.make(env_id.split(":", 1)[-1] if env_id.startswith("rlvr_envs:") else env_id,
                    **kwargs)


def scorer_for(env_id: str, **kwargs: Any):
    """The scorer an env uses in `step`, for scoring without stepping (trainers, servers)."""
    env = make(env_id, **kwargs)
    try:
        return env.unwrapped.scorer
    finally:
        env.close()
