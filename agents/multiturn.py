"""Running a policy on a multi-turn (tool-calling) env.

The env contract: `reset` gives `info["messages"]` (the chat so far) and `info["tools"]` (JSON
schemas of the tools); `step(text)` takes the model's whole turn, in which a tool call is
`<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, and returns the tool's output as the
observation; calling `submit` ends the episode with the verified reward.

Two loops over that contract:
- `run_tool_loop(policy, env, task)`: any Policy, message level (evaluation, scripted audits);
- `token_rollout(model, tokenizer, env, task)`: a local model at the token level, for GRPO's
  `rollout_func` — the completion is every token after the prompt, with `env_mask` 1 on the
  model's own tokens and 0 on the env's (tool outputs and chat-template glue), so the loss
  trains only what the model wrote.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from rlvr_envs.core.policy import Policy, SamplingParams

if TYPE_CHECKING:
    import gymnasium as gym

    from rlvr_envs.core.task import Task

TOOL_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)


def parse_tool_calls(text: str) -> list[dict[str, Any]]:
    """The well-formed tool calls in a turn (`name` str, `arguments` dict), in order."""
    calls = []
    for raw in TOOL_CALL.findall(text):
        try:
            call = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if isinstance(call, dict) and isinstance(call.get("name"), str):
            arguments = call.get("arguments", {})
            calls.append({"name": call["name"],
                          "arguments": arguments if isinstance(arguments, dict) else {}})
    return calls


def format_tool_call(name: str, arguments: dict[str, Any] | None = None) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments or {}})}</tool_call>"


@dataclass
class Episode:
    """One multi-turn episode: the transcript, the final reward and the last step's info."""

    messages: list[dict[str, Any]]
    reward: float = 0.0
    turns: int = 0
    terminated: bool = False
    truncated: bool = False
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def breakdown(self) -> dict[str, float]:
        return dict(self.info.get("reward_breakdown") or {})


def run_tool_loop(policy: Policy, env: gym.Env, task: Task | Mapping[str, Any] | str | None = None,
                  *, max_turns: int = 16,
                  params: SamplingParams | None = None, observation_role: str = "tool",
                  seed: int | None = None) -> Episode:
    """Play one episode: the policy writes a turn, the env answers, until the env ends it or
    `max_turns` pass (then the episode counts as truncated, reward as the env last gave)."""
    params = params or SamplingParams(max_completion_length=512)
    options = {"task": task} if task is not None else None
    _, info = env.reset(seed=seed, options=options)
    messages = [dict(m) for m in info["messages"]]
    episode = Episode(messages=messages, info=info)
    for _ in range(max_turns):
        completion = policy.generate([messages], SamplingParams(
            temperature=params.temperature, top_p=params.top_p,
            max_completion_length=params.max_completion_length, n=1, seed=params.seed,
            stop=params.stop))[0][0]
        messages.append({"role": "assistant", "content": completion.text})
        observation, reward, terminated, truncated, info = env.step(completion.text)
        episode.turns += 1
        episode.reward, episode.info = float(reward), info
        if terminated or truncated:
            episode.terminated, episode.truncated = bool(terminated), bool(truncated)
            return episode
        messages.append({"role": observation_role, "content": str(observation)})
    episode.truncated = True
    return episode


@dataclass
class TokenEpisode:
    """A token-level episode for GRPO: prompt ids, then every later token with its mask."""

    prompt_ids: list[int]
    completion_ids: list[int]
    env_mask: list[int]  # 1 = written by the model, 0 = written by the env / template
    logprobs: list[float]  # 0.0 on env tokens
    reward: float
    breakdown: dict[str, float]
    turns: int
    text: str  # the model's turns, joined


def _closing_after_content(tokenizer: Any, messages: list[dict[str, Any]],
                           tools: list[dict[str, Any]] | None = None) -> str:
    """What the chat template writes after an assistant message's content (e.g. "<|im_end|>\n")."""
    marker = "\x00CONTENT\x00"
    before = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False,
                                           add_generation_prompt=True)
    rendered = tokenizer.apply_chat_template(messages + [{"role": "assistant", "content": marker}],
                                             tools=tools, tokenize=False)
    if not rendered.startswith(before) or marker not in rendered:
        raise ValueError("the chat template is not prefix-preserving (rendering a longer chat "
                         "changes the text of the earlier turns); multi-turn training needs one "
                         "that is, e.g. ChatML")
    return rendered[rendered.index(marker) + len(marker):]


def token_rollout(model: Any, tokenizer: Any, env: gym.Env, task: Task, *, max_turns: int = 8,
                  max_turn_tokens: int = 64, max_total_tokens: int = 256,
                  temperature: float = 1.0, top_p: float = 1.0,
                  observation_role: str = "tool") -> TokenEpisode:
    """Play one episode with a local model, keeping the exact sampled tokens: at most
    `max_turn_tokens` per model turn, `max_total_tokens` (the episode's completion, model and
    env tokens) in all."""
    from rlvr_envs.agents.generation import encode, render_prompt, sample_from_ids

    _, info = env.reset(options={"task": task})
    messages = [dict(m) for m in info["messages"]]
    tools = info.get("tools") or None
    prompt_ids = encode(tokenizer, render_prompt(tokenizer, messages, tools))
    ids: list[int] = []
    mask: list[int] = []
    logprobs: list[float] = []
    reward, breakdown, turns, texts = 0.0, {}, 0, []
    eos_text = tokenizer.eos_token or ""
    for _ in range(max_turns):
        budget = max_total_tokens - len(ids)
        if budget <= 0:
            break
        sample = sample_from_ids(model, tokenizer, [prompt_ids + ids], n=1,
                                 max_completion_length=min(max_turn_tokens, budget),
                                 temperature=temperature, top_p=top_p)[0][0]
        ids += sample.completion_ids
        mask += [1] * len(sample.completion_ids)
        logprobs += sample.logprobs
        texts.append(sample.text)
        closing = _closing_after_content(tokenizer, messages, tools)
        messages.append({"role": "assistant", "content": sample.text})
        observation, r, terminated, truncated, step_info = env.step(sample.text)
        turns += 1
        reward, breakdown = float(r), dict(step_info.get("reward_breakdown") or {})
        if terminated or truncated:
            break
        before = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False)
        messages.append({"role": observation_role, "content": str(observation)})
        after = tokenizer.apply_chat_template(messages, tools=tools, tokenize=False,
                                              add_generation_prompt=True)
        if not after.startswith(before):
            raise ValueError("the chat template is not prefix-preserving; multi-turn training "
                             "needs one that is, e.g. ChatML")
        glue = closing[len(eos_text):] if (sample.finish_reason == "stop" and eos_text
                                           and closing.startswith(eos_text)) else closing
        env_ids = encode(tokenizer, glue + after[len(before):])
        if len(ids) + len(env_ids) >= max_total_tokens:
            break
        ids += env_ids
        mask += [0] * len(env_ids)
        logprobs += [0.0] * len(env_ids)
    return TokenEpisode(prompt_ids, ids, mask, logprobs, reward, breakdown, turns,
                        "\n".join(texts))


def multi_turn_rollout_func(env_factory: Callable[[], gym.Env], tasks_by_prompt: dict[str, Task],
                            *, max_turns: int = 8, max_turn_tokens: int = 64,
                            observation_role: str = "tool"):
    """A TRL GRPO `rollout_func(prompts, trainer)` that plays each prompt's task in a fresh
    env (one completion per prompt row; the sampler already repeats each prompt G times)."""

    def rollout(prompts: Sequence[Any], trainer: Any) -> dict[str, list[Any]]:
        model = trainer.accelerator.unwrap_model(trainer.model)
        tokenizer = trainer.processing_class
        out: dict[str, list[Any]] = {k: [] for k in ("prompt_ids", "completion_ids", "logprobs",
                                                     "env_mask", "episode_reward",
                                                     "episode_breakdown")}
        env = env_factory()
        try:
            for prompt in prompts:
                key = prompt_key(prompt)
                if key not in tasks_by_prompt:
                    raise KeyError("rollout_func got a prompt that is not in the training set")
                episode = token_rollout(model, tokenizer, env, tasks_by_prompt[key],
                                        max_turns=max_turns, max_turn_tokens=max_turn_tokens,
                                        max_total_tokens=trainer.max_completion_length,
                                        temperature=trainer.temperature or 1.0,
                                        top_p=trainer.top_p, observation_role=observation_role)
                if not episode.completion_ids:  # TRL needs at least one completion token
                    episode.completion_ids, episode.env_mask = [tokenizer.eos_token_id], [1]
                    episode.logprobs = [0.0]
                out["prompt_ids"].append(episode.prompt_ids)
                out["completion_ids"].append(episode.completion_ids)
                out["logprobs"].append(episode.logprobs)
                out["env_mask"].append(episode.env_mask)
                out["episode_reward"].append(episode.reward)
                out["episode_breakdown"].append(episode.breakdown)
        finally:
            env.close()
        return out

    return rollout


def prompt_key(messages: Any) -> str:
    return json.dumps(messages, sort_keys=True)
