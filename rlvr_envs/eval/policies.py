"""Turning a policy name from the command line into a Policy object.

Names are resolved, in order, by:
1. an import path `package.module:attribute` naming a Policy object, class or factory
   (your own policy, or a test's);
2. the agents' registry, `rlvr_envs.agents.registry.resolve_policy` (model policies such as
   `smollm2-135m`, endpoints, scripted ones) — or `rlvr_envs.agents.resolve_policy` — when
   it is installed;
3. otherwise the scripted policies of `rlvr_envs.agents.scripted` (gold, null, random).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
from typing import Any, Callable

from rlvr_envs.agents.policy import Policy

_IMPORT_PATH = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


class PolicyNotFound(ValueError):
    """No resolver knows the policy name."""


def _from_import_path(spec: str) -> Policy | None:
    if not _IMPORT_PATH.match(spec):
        return None
    module_name, attribute = spec.split(":", 1)
    try:
        if importlib.util.find_spec(module_name) is None:
            return None
    except (ImportError, ValueError):
        return None
    obj: Any = getattr(importlib.import_module(module_name), attribute, None)
    if obj is None:
        raise PolicyNotFound(f"policy {spec!r}: module {module_name!r} has no attribute "
                             f"{attribute!r}")
    if inspect.isclass(obj) or (not hasattr(obj, "generate") and callable(obj)):
        obj = obj()
    return _checked(obj, spec)


def _agents_resolver() -> Callable[[str], Policy] | None:
    """The agents' own resolver when it has landed (its import errors are not hidden)."""
    if importlib.util.find_spec("rlvr_envs.agents.registry") is not None:
        module = importlib.import_module("rlvr_envs.agents.registry")
        if hasattr(module, "resolve_policy"):
            return module.resolve_policy
    agents = importlib.import_module("rlvr_envs.agents")
    return getattr(agents, "resolve_policy", None)


def _checked(obj: Any, spec: str) -> Policy:
    if not callable(getattr(obj, "generate", None)):
        raise PolicyNotFound(f"policy {spec!r} resolved to {type(obj).__name__}, which has no "
                             f"generate(batch, params, tasks=, scorers=) method")
    if not getattr(obj, "name", None):
        obj.name = spec
    return obj


def resolve_policy(spec: str) -> Policy:
    """A Policy for a name such as `gold`, `null`, `smollm2-135m` or `my_module:MyPolicy`."""
    if not isinstance(spec, str) or not spec:
        raise PolicyNotFound(f"a policy name must be a non-empty string, got {spec!r}")
    found = _from_import_path(spec)
    if found is not None:
        return found
    resolver = _agents_resolver()
    if resolver is not None:
        try:
            policy = resolver(spec)
        except PolicyNotFound:
            raise
        except ValueError as err:  # the agents' "unknown policy" (and bad-spec) errors
            raise PolicyNotFound(str(err)) from err
        return _checked(policy, spec)
    from rlvr_envs.agents.scripted import SCRIPTED_POLICIES

    if spec in SCRIPTED_POLICIES:
        return SCRIPTED_POLICIES[spec]()
    raise PolicyNotFound(f"unknown policy {spec!r}: known here are the scripted policies "
                         f"{sorted(SCRIPTED_POLICIES)} and import paths 'module:attribute' "
                         f"(model policies such as 'smollm2-135m' come with the agents' "
                         f"registry, rlvr_envs.agents.registry, which is not installed)")
