"""`resolve_policy(name)`: one string names any policy.

- "gold" | "null" | "random": the scripted policies;
- "smollm2-135m" or a local checkpoint folder: a Hugging Face model (loaded on first use);
- "openai:<base_url>#<model>": an OpenAI-compatible chat endpoint.

Importing this module does not import torch.
"""

from __future__ import annotations

from typing import Any

from rlvr_envs.agents.policy import Policy
from rlvr_envs.agents.scripted import SCRIPTED_POLICIES


def resolve_policy(name: str, **kwargs: Any) -> Policy:
    """A policy from its name; `kwargs` go to the policy's constructor."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"a policy name must be a non-empty string, got {name!r}")
    if name in SCRIPTED_POLICIES:
        return SCRIPTED_POLICIES[name](**kwargs)
    if name.startswith("openai:"):
        spec = name[len("openai:"):]
        base_url, sep, model = spec.rpartition("#")
        if not sep or not base_url or not model:
            raise ValueError(f"an endpoint policy is 'openai:<base_url>#<model>', e.g. "
                             f"'openai:http://127.0.0.1:8000/v1#Qwen/Qwen2.5-0.5B'; got {name!r}")
        from rlvr_envs.agents.openai_policy import OpenAIChatPolicy

        return OpenAIChatPolicy(base_url, model, **kwargs)
    from rlvr_envs.agents.hf_policy import HFPolicy
    from rlvr_envs.agents.models import EMBEDDED_MODELS, ModelLoadError

    try:
        return HFPolicy(name, **kwargs)
    except ModelLoadError as err:
        raise ValueError(f"unknown policy {name!r}: not one of {sorted(SCRIPTED_POLICIES)}, "
                         f"{sorted(EMBEDDED_MODELS)}, 'openai:<base_url>#<model>', nor a model "
                         f"checkpoint ({err})") from None
