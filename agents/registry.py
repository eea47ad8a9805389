"""`resolve_policy(name)`: the one resolver that turns a string into a policy.

- "package.module:attribute": your own policy (a Policy object, a Policy class, a factory, or a
  plain `prompt -> completion` function, which sees the prompt as the env renders it);
- "gold" | "null" | "random": the scripted policies;
- "openai:<base_url>#<model>": an OpenAI-compatible chat endpoint;
- "smollm2-135m" or a local checkpoint folder: a Hugging Face model (loaded on first use).

Importing this module does not import torch.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rlvr_envs.agents.scripted import SCRIPTED_POLICIES
from rlvr_envs.core.policy import Completion, Messages, Policy, SamplingParams
from rlvr_envs.core.prompts import render_plain

if TYPE_CHECKING:
    from rlvr_envs.core.scoring import Scorer
    from rlvr_envs.core.task import Task

_IMPORT_PATH = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


class PolicyNotFound(ValueError):
    """No policy answers to the name."""


class FunctionPolicy:
    """A plain `prompt -> completion` function as a Policy: it gets the conversation rendered
    as plain text, exactly the prompt `env.reset` returns, once per sample."""

    def __init__(self, function: Any, name: str):
        self.function, self.name = function, name

    def generate(self, batch: Sequence[Messages], params: SamplingParams, *,
                 tasks: Sequence[Task] | None = None,
                 scorers: Sequence[Scorer] | None = None) -> list[list[Completion]]:
        return [[Completion(str(self.function(render_plain(messages))))
                 for _ in range(params.n)] for messages in batch]


def _needs_an_argument(function: Any) -> bool:
    try:
        params = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
               for p in params)


def _checked(obj: Any, name: str) -> Policy:
    if not callable(getattr(obj, "generate", None)):
        raise PolicyNotFound(f"policy {name!r} resolved to {type(obj).__name__}, which has no "
                             f"generate(batch, params, tasks=, scorers=) method")
    if not getattr(obj, "name", None):
        obj.name = name
    return obj


def _from_import_path(name: str, **kwargs: Any) -> Policy:
    module_name, attribute = name.split(":", 1)
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise PolicyNotFound(f"cannot import policy {name!r}: {err}") from None
    obj: Any = getattr(module, attribute, None)
    if obj is None:
        raise PolicyNotFound(f"policy {name!r}: module {module_name!r} has no attribute "
                             f"{attribute!r}")
    if not inspect.isclass(obj) and not hasattr(obj, "generate") and _needs_an_argument(obj):
        return FunctionPolicy(obj, name)
    if inspect.isclass(obj) or (not hasattr(obj, "generate") and callable(obj)):
        obj = obj(**kwargs)
    return _checked(obj, name)


def resolve_policy(name: str, **kwargs: Any) -> Policy:
    """A policy from its name; `kwargs` go to the policy's constructor. PolicyNotFound (a
    ValueError) names what is known when nothing answers to `name`."""
    if not isinstance(name, str) or not name:
        raise PolicyNotFound(f"a policy name must be a non-empty string, got {name!r}")
    if _IMPORT_PATH.match(name):
        return _from_import_path(name, **kwargs)
    if name in SCRIPTED_POLICIES:
        return SCRIPTED_POLICIES[name](**kwargs)
    if name.startswith("openai:"):
        spec = name[len("openai:"):]
        base_url, sep, model = spec.rpartition("#")
        if not sep or not base_url or not model:
            raise PolicyNotFound(f"an endpoint policy is 'openai:<base_url>#<model>', e.g. "
                                 f"'openai:http://127.0.0.1:8000/v1#Qwen/Qwen2.5-0.5B'; "
                                 f"got {name!r}")
        from rlvr_envs.agents.openai_policy import OpenAIChatPolicy

        return OpenAIChatPolicy(base_url, model, **kwargs)
    from rlvr_envs.agents.hf_policy import HFPolicy
    from rlvr_envs.agents.models import EMBEDDED_MODELS, ModelLoadError

    try:
        return HFPolicy(name, **kwargs)
    except ModelLoadError as err:
        raise PolicyNotFound(f"unknown policy {name!r}: not one of {sorted(SCRIPTED_POLICIES)}, "
                             f"{sorted(EMBEDDED_MODELS)}, 'openai:<base_url>#<model>', "
                             f"'package.module:attribute', nor a model checkpoint ({err})"
                             ) from None
