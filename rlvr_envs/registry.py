"""Env registry: our catalogue of ids on top of gymnasium's registry.

The package's own ids come from `rlvr_envs.catalogue` and register with a "module:function"
entry point string, as gymnasium's own envs do: nothing of a family loads until one of its
envs is made, and `env.spec` pickles and converts with `to_json()`. A family's factories are
decorated with `env_factory`, which adds the shaping keyword arguments and checks keyword
arguments (an unknown one names the valid ones). `register_env` adds further ids (a callable or
an entry point string); `retire_env` keeps an old id answering with an error that names its
successor.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
from gymnasium.envs.registration import load_env_creator

from rlvr_envs.catalogue import ENVS


@dataclass(frozen=True)
class EnvEntry:
    id: str
    description: str
    #: "module:function", or the factory itself for ids registered at run time
    entry_point: str | Callable[..., gym.Env]
    family: str
    #: the id's fixed keyword arguments (gymnasium's spec kwargs)
    kwargs: dict[str, Any] = field(default_factory=dict)
    #: kwargs that `rlvr check` and the contract tests use, e.g. a bundled sample file for a
    #: dataset env whose default data lives on the hub; None: the factory's own `check_kwargs`
    explicit_check_kwargs: dict[str, Any] | None = None

    @property
    def factory(self) -> Callable[..., gym.Env]:
        """The factory (the family's module loads on first use), with the id's fixed kwargs."""
        creator = (load_env_creator(self.entry_point) if isinstance(self.entry_point, str)
                   else self.entry_point)
        return functools.partial(creator, **self.kwargs) if self.kwargs else creator

    @property
    def check_kwargs(self) -> dict[str, Any]:
        if self.explicit_check_kwargs is not None:
            return dict(self.explicit_check_kwargs)
        return dict(getattr(self.factory, "check_kwargs", {}))


_CATALOGUE: dict[str, EnvEntry] = {}
_RETIRED: dict[str, str] = {}


def _accepted_kwargs(factory: Callable[..., Any]) -> list[str] | None:
    params = inspect.signature(factory).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return [p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]


def _ids_served_by(factory: Callable[..., Any]) -> str:
    """The id(s) whose entry point is `factory`, for error messages."""
    entry_point = f"{factory.__module__}:{factory.__name__}"
    ids = [e.id for e in _CATALOGUE.values() if e.entry_point == entry_point]
    return ids[0] if ids else entry_point


def _checked_factory(env_id: str | None, factory: Callable[..., gym.Env]
                     ) -> Callable[..., gym.Env]:
    valid = _accepted_kwargs(factory)

    @functools.wraps(factory)
    def make(**kwargs: Any) -> gym.Env:
        if valid is not None:
            unknown = sorted(set(kwargs) - set(valid))
            if unknown:
                raise TypeError(f"{env_id or _ids_served_by(factory)}: unknown keyword "
                                f"argument(s) {unknown}; valid ones are {sorted(valid)}")
        return factory(**kwargs)

    if env_id is not None:
        make.__name__ = f"make_{env_id.replace('/', '_').replace('-', '_')}"
    return make


def env_factory(factory: Callable[..., gym.Env] | None = None, *,
                check_kwargs: Mapping[str, Any] | None = None) -> Any:
    """Decorate a family's env factory: it also takes the shaping keyword arguments
    (`rlvr_envs.wrappers.with_shaping`) and refuses unknown ones naming the valid ones;
    `check_kwargs` are what `rlvr check` and the contract tests make it with."""

    def decorate(func: Callable[..., gym.Env]) -> Callable[..., gym.Env]:
        from rlvr_envs.wrappers.shaping import with_shaping

        made = _checked_factory(None, with_shaping(func))
        made.check_kwargs = dict(check_kwargs or {})  # type: ignore[attr-defined]
        return made

    return decorate(factory) if factory is not None else decorate


def register_env(env_id: str, factory: Callable[..., gym.Env] | str, description: str, *,
                 family: str, max_episode_steps: int | None = None,
                 check_kwargs: dict[str, Any] | None = None,
                 kwargs: dict[str, Any] | None = None) -> None:
    """Register `env_id` (e.g. "rlvr/Math-v0") with gymnasium and in our catalogue; `factory`
    is a callable or a "module:function" entry point string."""
    if env_id in _CATALOGUE:
        return
    _CATALOGUE[env_id] = EnvEntry(env_id, description, factory, family, dict(kwargs or {}),
                                  None if check_kwargs is None else dict(check_kwargs))
    entry_point = factory if isinstance(factory, str) else _checked_factory(env_id, factory)
    gym.register(id=env_id, entry_point=entry_point, kwargs=dict(kwargs or {}),
                 max_episode_steps=max_episode_steps, disable_env_checker=True)


def retire_env(old_id: str, successor: str) -> None:
    """Keep `old_id` answering, with an error naming `successor`."""
    _RETIRED[old_id] = successor

    def refuse(**_: Any) -> gym.Env:
        raise gym.error.DeprecatedEnv(f"{old_id} is retired; use {successor} instead")

    gym.register(id=old_id, entry_point=refuse, disable_env_checker=True)


def register_catalogue() -> None:
    """Register every id of `rlvr_envs.catalogue` (no family module is imported)."""
    for listing in ENVS:
        register_env(listing.id, listing.entry_point, listing.description,
                     family=listing.family, kwargs=listing.kwargs)


def list_envs(family: str | None = None) -> dict[str, str]:
    """Registered ids (not retired ones) → one-line description; ValueError for a family
    no id belongs to."""
    families = sorted({e.family for e in _CATALOGUE.values()})
    if family is not None and family not in families:
        raise ValueError(f"no env family {family!r}; families: {families}")
    return {e.id: e.description for e in _CATALOGUE.values() if family in (None, e.family)}


def env_entry(env_id: str) -> EnvEntry:
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
