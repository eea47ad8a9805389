"""TRL's `environment_factory` for the multi-turn (tool-calling) envs.

`GRPOTrainer(environment_factory=environment_factory("rlvr/RepoEdit-v0"), ...)` hands each
rollout an instance whose public methods are the env's tools: TRL renders their schemas into
the chat template's `tools=`, parses the model's tool calls, calls the methods and feeds their
return values back as tool messages. `reset(**row)` pins the episode to the row's task (the
`ground_truth` column that `grpo_dataset` writes), and `get_reward()` is the episode's verified
reward (an episode the model never closed is graded as the env grades a spent turn budget).

The tool methods are made from the env's `ToolSpec`s, with a signature, type hints and a
Google-style docstring, so `transformers.utils.get_json_schema` gives back the env's own
schemas. Imports neither torch nor trl.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Mapping
from typing import Any

from rlvr_envs.core.multiturn import MultiTurnEnv, ToolSpec
from rlvr_envs.integrations.ground_truth import decode_ground_truth
from rlvr_envs.integrations.scoring import kwargs_key
from rlvr_envs.registry import make

_JSON_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool,
                               "array": list, "object": dict}
EPISODE_OVER = "The episode is over; no further tool calls are run."


def _tool_method(spec: ToolSpec) -> Callable[..., str]:
    props: Mapping[str, Any] = spec.parameters.get("properties", {})
    required = set(spec.parameters.get("required", ()))

    def tool(self: ToolEnvironment, **arguments: Any) -> str:
        return self._call(spec.name, {k: v for k, v in arguments.items() if v is not None})

    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {"return": str}
    for name, prop in props.items():
        kind = _JSON_TYPES.get(prop.get("type", "string"), str)
        annotations[name] = kind if name in required else kind | None
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                                        default=inspect.Parameter.empty if name in required
                                        else None, annotation=annotations[name]))
    args_doc = "\n".join(f"    {name}: {prop.get('description') or name}"
                         for name, prop in props.items())
    tool.__name__ = tool.__qualname__ = spec.name
    tool.__doc__ = f"{spec.description}\n\nArgs:\n{args_doc}\n" if props else spec.description
    tool.__annotations__ = annotations
    tool.__signature__ = inspect.Signature(params, return_annotation=str)  # type: ignore[attr-defined]
    return tool


class ToolEnvironment:
    """One rollout's env, with the env's tools as methods (see the module docstring)."""

    env_id: str
    env_kwargs: str

    def __init__(self) -> None:
        self.env = make(self.env_id, **json.loads(self.env_kwargs))
        if not isinstance(self.env.unwrapped, MultiTurnEnv):
            raise TypeError(f"{self.env_id} is not a multi-turn tool env; use grpo_inputs' "
                            f"EnvReward for single-turn envs")
        self._reward: float | None = None
        self._done = True

    def reset(self, ground_truth: Any = None, **_: Any) -> None:
        if ground_truth is None:
            raise ValueError(f"{self.env_id}: the dataset row has no 'ground_truth' column; build "
                             f"it with rlvr_envs.integrations.trl.grpo_dataset")
        task = decode_ground_truth(ground_truth, self.env.unwrapped)
        self.env.reset(options={"task": task})
        self._reward, self._done = None, False
        return None  # the statement is already the row's prompt

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        if self._done:
            return EPISODE_OVER
        observation, reward, terminated, truncated, _ = self.env.step(
            {"name": name, "arguments": arguments})
        if terminated or truncated:
            self._reward, self._done = float(reward), True
        return observation

    def get_reward(self) -> float:
        if self._reward is None:
            self._reward = float(self.env.unwrapped.score_on_truncation().reward)
            self._done = True
        return self._reward


def environment_factory(env_id: str, env_kwargs: Mapping[str, Any] | str | None = None
                        ) -> type[ToolEnvironment]:
    """A class (TRL calls it with no argument) whose instances play `env_id` through tools."""
    probe = make(env_id, **json.loads(kwargs_key(env_kwargs)))
    try:
        base = probe.unwrapped
        if not isinstance(base, MultiTurnEnv):
            raise TypeError(f"{env_id} is not a multi-turn tool env; environment_factory is for "
                            f"tool envs (single-turn envs train with grpo_inputs)")
        specs = base.tool_specs()
    finally:
        probe.close()
    reserved = {"reset", "get_reward", "env"}
    clash = [s.name for s in specs if s.name in reserved or s.name.startswith("_")]
    if clash:
        raise ValueError(f"{env_id}: tool names {clash} clash with TRL's environment methods")
    methods: dict[str, Any] = {spec.name: _tool_method(spec) for spec in specs}
    name = "".join(ch for ch in env_id.split("/")[-1].split("-v")[0] if ch.isalnum()) + "Tools"
    return type(name, (ToolEnvironment,), {"env_id": env_id,
                                           "env_kwargs": kwargs_key(env_kwargs), **methods})
