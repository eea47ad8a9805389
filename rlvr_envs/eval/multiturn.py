"""Running one multi-turn (tool-using) episode for an evaluation.

The agents' tool-calling loop (`rlvr_envs.agents.tool_loop.run_episode`) is used when it is
installed; until then `play_episode` below runs the plain loop of the multi-turn env contract:
reset pins the task, the policy answers the conversation so far, `step` returns the tool's
output, until the env terminates or truncates (or `max_turns` is spent).
"""

from __future__ import annotations

import importlib
import importlib.util
import time
from dataclasses import dataclass, field, replace
from typing import Any

from rlvr_envs.agents.policy import Policy, SamplingParams
from rlvr_envs.core.task import Task

DEFAULT_MAX_TURNS = 30


@dataclass
class EpisodeOutcome:
    """What an evaluation stores of a multi-turn episode."""

    transcript: str
    reward: float
    info: dict[str, Any]
    turns: int
    num_tokens: int | None
    finish_reason: str
    generate_seconds: float
    step_seconds: float
    messages: list[dict[str, Any]] = field(default_factory=list)
    #: characters the policy wrote (all assistant turns), the episode's completion length
    generated_chars: int = 0


def _agents_tool_loop():
    if importlib.util.find_spec("rlvr_envs.agents.tool_loop") is None:
        return None
    return getattr(importlib.import_module("rlvr_envs.agents.tool_loop"), "run_episode", None)


def transcript_of(messages: list[dict[str, Any]]) -> str:
    return "\n\n".join(f"[{m.get('role', '?')}] {m.get('content', '')}" for m in messages)


def run_multi_turn(env: Any, policy: Policy, params: SamplingParams, task: Task, *,
                   scorer: Any = None, max_turns: int | None = None) -> EpisodeOutcome:
    """One episode on a multi-turn env, through the agents' loop when it is installed."""
    tool_loop = _agents_tool_loop()
    if tool_loop is None:
        return play_episode(env, policy, params, task, scorer=scorer, max_turns=max_turns)
    start = time.perf_counter()
    result = tool_loop(env, policy, params, options={"task": task},
                       max_turns=max_turns or DEFAULT_MAX_TURNS)
    messages = list(getattr(result, "messages", []) or [])
    return EpisodeOutcome(
        transcript=transcript_of(messages), reward=float(result.reward),
        info=dict(getattr(result, "info", {}) or {}), turns=int(getattr(result, "turns", 0)),
        num_tokens=getattr(result, "num_tokens", None),
        finish_reason=str(getattr(result, "finish_reason", "stop")),
        generate_seconds=float(getattr(result, "generate_seconds", time.perf_counter() - start)),
        step_seconds=float(getattr(result, "step_seconds", 0.0)), messages=messages,
        generated_chars=sum(len(str(m.get("content") or "")) for m in messages
                            if m.get("role") == "assistant"))


def play_episode(env: Any, policy: Policy, params: SamplingParams, task: Task, *,
                 scorer: Any = None, max_turns: int | None = None) -> EpisodeOutcome:
    """The plain loop: the policy's text is the action; the env's observation comes back as a
    tool message (or the env's own `info["messages"]` when it keeps the conversation)."""
    limit = max_turns or DEFAULT_MAX_TURNS
    _, info = env.reset(options={"task": task})
    messages = list(info.get("messages") or [])
    tokens: int | None = 0
    gen_seconds = step_seconds = 0.0
    reward, finish, turns, generated = 0.0, "max_turns", 0, 0
    base_seed = params.seed
    for turn in range(limit):
        turn_params = replace(params, n=1, seed=None if base_seed is None else base_seed + turn)
        t0 = time.perf_counter()
        [[completion]] = policy.generate([messages], turn_params, tasks=[task],
                                         scorers=[scorer] if scorer is not None else None)
        gen_seconds += time.perf_counter() - t0
        generated += len(completion.text)
        if tokens is not None and completion.num_tokens is not None:
            tokens += completion.num_tokens
        else:
            tokens = None
        t0 = time.perf_counter()
        observation, reward, terminated, truncated, info = env.step(completion.text)
        step_seconds += time.perf_counter() - t0
        turns = turn + 1
        messages = list(info.get("messages") or (
            messages + [{"role": "assistant", "content": completion.text},
                        {"role": "tool", "content": observation}]))
        if terminated or truncated:
            finish = "terminated" if terminated else "truncated"
            break
    else:
        reward = 0.0  # the loop's own turn cap: the episode never ended, so nothing was graded
        info = {**info, "verifier": "max_turns", "correct": False}
    return EpisodeOutcome(transcript=transcript_of(messages), reward=float(reward),
                          info=dict(info), turns=turns, num_tokens=tokens, finish_reason=finish,
                          generate_seconds=gen_seconds, step_seconds=step_seconds,
                          messages=messages, generated_chars=generated)
