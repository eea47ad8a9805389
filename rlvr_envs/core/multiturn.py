"""The multi-turn tool-use env contract, shared by every env where a model acts through tools.

- `reset` → the task statement as the first observation; `info["tools"]` holds the tools as
  JSON schemas in the OpenAI/Hermes function format (pass them straight to a chat template's
  `tools=`), `info["messages"]` the conversation so far, `info["task"]` the task record
  with its gold hidden (`answer` empty, the env's `hidden_metadata` keys removed,
  `metadata["gold_hidden"] = True`) until the step that ends the episode; whoever needs the
  gold asks `env.unwrapped.gold(task)`.
- `step(action)`: `action` is the model's text holding one call,
  `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (the Hermes/Qwen convention), or
  that call as a dict. The observation is the tool's output, capped with a truncation note.
  A malformed call is answered with an error observation (never an exception) and counts
  toward the turn budget. `truncated=True` once the budget is spent; the tool that ends the
  episode (e.g. `submit`) returns the graded reward with `terminated=True`.

Subclasses supply the tools and their effects (`tool_specs`, `begin_episode`, `call_tool`,
`end_episode`); this module owns parsing, budgets, capping and the message log.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

import gymnasium as gym

from rlvr_envs.core.scoring import Score, zero_score
from rlvr_envs.core.sources import TaskSource, resolve_task
from rlvr_envs.core.spaces import RENDER_FPS, UnicodeText
from rlvr_envs.core.task import Task

RESET_OPTIONS = ("task",)
_TOOL_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its name, what it does, and a JSON schema of its arguments."""

    name: str
    description: str
    parameters: Mapping[str, Any]

    def schema(self) -> dict[str, Any]:
        """The OpenAI/Hermes function schema (what chat templates take as `tools=`)."""
        return {"type": "function",
                "function": {"name": self.name, "description": self.description,
                             "parameters": copy.deepcopy(dict(self.parameters))}}

    def check_arguments(self, arguments: Mapping[str, Any]) -> None:
        """Raise ToolCallError naming what is missing, unknown or of the wrong type."""
        props = self.parameters.get("properties", {})
        missing = [k for k in self.parameters.get("required", ()) if k not in arguments]
        unknown = sorted(set(arguments) - set(props))
        if missing or unknown:
            raise ToolCallError(f"tool {self.name!r} takes arguments {sorted(props)} "
                                f"(required: {list(self.parameters.get('required', ()))}); "
                                f"missing {missing}, unknown {unknown}")
        kinds = {"string": str, "integer": int, "boolean": bool, "number": (int, float),
                 "array": list, "object": dict}
        if _holds_nul(arguments):  # no path, command or argv can carry one
            raise ToolCallError(f"the arguments of tool {self.name!r} contain a NUL character "
                                f"(\\u0000)")
        for key, value in arguments.items():
            want = props[key].get("type")
            python_type = kinds.get(want)
            if python_type is None:
                continue
            bad_bool = want in ("integer", "number") and isinstance(value, bool)
            if not isinstance(value, python_type) or bad_bool:
                raise ToolCallError(f"argument {key!r} of tool {self.name!r} must be {want}, "
                                    f"got {type(value).__name__}: {value!r:.60}")


def _holds_nul(value: Any) -> bool:
    """Whether a NUL character is in any string of `value` (walked without recursion)."""
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, Mapping):
            todo.extend(item.keys())
            todo.extend(item.values())
        elif isinstance(item, (list, tuple)):
            todo.extend(item)
    return False


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]


class ToolCallError(ValueError):
    """A call the env cannot run; its message becomes the observation."""


def format_tool_call(name: str, arguments: Mapping[str, Any]) -> str:
    """A call as model text, the inverse of `parse_tool_call` (used by scripted agents)."""
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": dict(arguments)}) + \
        "\n</tool_call>"


def parse_tool_call(action: str | Mapping[str, Any]) -> ToolCall:
    """The one tool call in `action` (text with a <tool_call> block, or the call as a dict).
    Raises ToolCallError with a message that tells the model how to fix its call."""
    if isinstance(action, Mapping):
        payload: Any = dict(action)
        if "function" in payload and isinstance(payload["function"], Mapping):
            payload = dict(payload["function"])  # an OpenAI-style tool_calls entry
    elif isinstance(action, str):
        blocks = _TOOL_CALL.findall(action)
        if not blocks:
            raise ToolCallError('no tool call found: answer with exactly one '
                                '<tool_call>{"name": "<tool>", "arguments": {...}}</tool_call>')
        if len(blocks) > 1:
            raise ToolCallError(f"found {len(blocks)} tool calls; make exactly one call per turn")
        try:
            payload = json.loads(blocks[0])
        except json.JSONDecodeError as err:
            raise ToolCallError(f"the tool call is not valid JSON ({err.msg} at char {err.pos})"
                                ) from None
        except RecursionError:
            raise ToolCallError("the tool call nests too deeply to read") from None
    else:
        raise ToolCallError(f"an action is the model's text (str) or a tool call (dict), "
                            f"got {type(action).__name__}")
    if not isinstance(payload, dict) or not isinstance(payload.get("name"), str):
        raise ToolCallError('a tool call is a JSON object {"name": "<tool>", "arguments": {...}}')
    arguments = payload.get("arguments", {})
    if isinstance(arguments, str):  # some templates emit arguments as a JSON string
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (json.JSONDecodeError, RecursionError):
            raise ToolCallError("'arguments' is a string that is not a JSON object") from None
    if not isinstance(arguments, dict):
        raise ToolCallError(f"'arguments' must be a JSON object, got {type(arguments).__name__}")
    return ToolCall(payload["name"], arguments)


def cap_text(text: str, max_chars: int) -> str:
    """`text` cut to `max_chars` with a note saying how much was dropped (head and tail kept)."""
    if len(text) <= max_chars:
        return text
    note = f"\n[... output truncated: showing {{}} of {len(text)} characters ...]\n"
    keep = max(0, max_chars - len(note) - 10)
    head, tail = keep * 2 // 3, keep - keep * 2 // 3
    return text[:head] + note.format(head + tail) + (text[-tail:] if tail else "")


@dataclass
class ToolResult:
    """What a tool returns: its output, and for the closing tool the episode's score."""

    output: str
    score: Score | None = None
    details: dict[str, Any] = field(default_factory=dict)


class MultiTurnEnv(gym.Env[str, str]):
    """Base class of tool-using envs. Subclasses implement the four hooks below."""

    metadata = {"render_modes": ["ansi"], "render_fps": RENDER_FPS}

    def __init__(self, source: TaskSource, system_prompt: str, *, max_turns: int = 30,
                 max_observation_chars: int = 16_000, max_action_chars: int = 200_000,
                 render_mode: str | None = None):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of "
                             f"{self.metadata['render_modes']}, got {render_mode!r}")
        if not isinstance(max_turns, int) or max_turns < 1:
            raise ValueError(f"max_turns must be a positive int, got {max_turns!r}")
        self.source, self.system_prompt = source, system_prompt
        self.max_turns = max_turns
        self.max_observation_chars = max_observation_chars
        self.render_mode = render_mode
        # the first observation is the task statement: allow long ones
        self.observation_space = UnicodeText(max(max_observation_chars, 65_536))
        self.action_space = UnicodeText(max_action_chars)
        self._task: Task | None = None
        self._messages: list[dict[str, Any]] = []
        self._turns = 0

    # -- hooks -----------------------------------------------------------------------------------

    def tool_specs(self) -> list[ToolSpec]:  # pragma: no cover - abstract
        raise NotImplementedError

    def begin_episode(self, task: Task) -> str:  # pragma: no cover - abstract
        """Prepare the episode's state; return the first observation (the task statement)."""
        raise NotImplementedError

    def call_tool(self, call: ToolCall) -> ToolResult:  # pragma: no cover - abstract
        """Run one validated call. Raise ToolCallError for a bad call; return a ToolResult
        with `score` set to end the episode."""
        raise NotImplementedError

    def end_episode(self) -> None:
        """Release the episode's state (called on termination, truncation, reset and close)."""

    def score_on_truncation(self) -> Score:
        """The score when the turn budget runs out before the closing tool: 0 by default."""
        return zero_score("turn_budget_exhausted")

    def scripted_agents(self) -> dict[str, Any]:
        """Agents for the audit behind `rlvr check`: "null" must score 0 and "gold" 1 on every
        task. Each has `start(task_dict)` and `act(observation, info) -> action`."""
        return {}

    # -- tasks -----------------------------------------------------------------------------------

    def resolve_task(self, task: Task | Mapping[str, Any] | str) -> Task:
        """A Task from an id, a record or a Task; a record whose gold `info` hid is looked up
        by its id in the env's source (it cannot be graded as it is)."""
        metadata = task.metadata if isinstance(task, Task) else \
            task.get("metadata") if isinstance(task, Mapping) else None
        if isinstance(metadata, Mapping) and metadata.get("gold_hidden"):
            task_id = task.id if isinstance(task, Task) else task.get("id")
            if not task_id:
                raise ValueError("this task record has its gold hidden (it came from info); "
                                 "pass the task id or the full task")
            return self.source.get(task_id)
        return resolve_task(self.source, task)

    @property
    def task(self) -> Task | None:
        return self._task

    @property
    def messages(self) -> list[dict[str, Any]]:
        """A copy of the conversation so far (callers keep what they are given)."""
        return copy.deepcopy(self._messages)

    #: metadata keys that carry the gold (or hidden tests) and stay out of `info` mid-episode
    hidden_metadata: tuple[str, ...] = ()

    def task_record(self, task: Task, *, final: bool = False) -> dict[str, Any]:
        """The task as `info["task"]` shows it: whole once the episode is over (`final`),
        else with the gold hidden, so a trainer that logs `info` or feeds it to a prompt never
        leaks the answer."""
        record = copy.deepcopy(task.to_dict())
        if not final:
            record["answer"] = ""
            record["metadata"] = {k: v for k, v in record["metadata"].items()
                                  if k not in self.hidden_metadata}
            record["metadata"]["gold_hidden"] = True
        return record

    def gold(self, task: Task | Mapping[str, Any] | str | None = None) -> str:
        """The gold completion of `task` (default: the current episode's)."""
        task = self._task if task is None else self.resolve_task(task)
        if task is None:
            raise ValueError("no task given and no episode running: pass a task or an id")
        return task.answer

    # -- gymnasium API ---------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = set(options) - set(RESET_OPTIONS)
        if unknown:
            raise ValueError(f"unknown reset options {sorted(unknown)}; "
                             f"valid: {list(RESET_OPTIONS)}")
        self.end_episode()
        task = (self.resolve_task(options["task"]) if "task" in options
                else self.source.sample(self.np_random))
        statement = self.begin_episode(task)
        self._task, self._turns = task, 0
        self._messages = [{"role": "system", "content": self.system_prompt},
                          {"role": "user", "content": statement}]
        info = {"messages": self.messages, "tools": [t.schema() for t in self.tool_specs()],
                "task": self.task_record(task), "turn": 0, "max_turns": self.max_turns}
        return statement, info

    def step(self, action: str | Mapping[str, Any]):
        if self._task is None:
            raise gym.error.ResetNeeded("step() called before reset() (or after the episode "
                                        "ended): call env.reset() first")
        self._turns += 1
        self._messages.append(_assistant_message(action))
        error, result, name = None, None, None
        try:
            if isinstance(action, str) and len(action) > self.action_space.max_length:
                raise ToolCallError(f"the action is {len(action)} characters; the limit is "
                                    f"{self.action_space.max_length}")
            call = parse_tool_call(action)
            name = call.name
            specs = {t.name: t for t in self.tool_specs()}
            if call.name not in specs:
                raise ToolCallError(f"unknown tool {call.name!r}; tools: {sorted(specs)}")
            specs[call.name].check_arguments(call.arguments)
            result = self.call_tool(call)
        except ToolCallError as err:
            error = str(err)
        observation = cap_text(f"error: {error}" if error is not None else result.output,
                               self.max_observation_chars)
        self._messages.append({"role": "tool", "name": name or "error", "content": observation})
        info: dict[str, Any] = {"turn": self._turns, "max_turns": self.max_turns,
                                "tool": name, "tool_error": error}
        score = result.score if result is not None else None
        terminated = score is not None
        truncated = not terminated and self._turns >= self.max_turns
        if truncated:
            score = self.score_on_truncation()
        if result is not None:
            info.update(result.details)
        reward = 0.0
        if score is not None:
            reward = float(score.reward)
            info.update(score.info())
        info["task"] = self.task_record(self._task, final=terminated or truncated)
        info["messages"] = self.messages
        if terminated or truncated:
            self._task = None
            self.end_episode()
        return observation, reward, terminated, truncated, info

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return "\n\n".join(f"[{m['role']}] {m['content']}" for m in self._messages)
        return None

    def close(self) -> None:
        self.end_episode()
        super().close()


def _assistant_message(action: str | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(action, str):
        return {"role": "assistant", "content": action}
    if isinstance(action, Mapping):
        try:
            call = parse_tool_call(action)
            return {"role": "assistant", "content": "",
                    "tool_calls": [{"type": "function", "function": {
                        "name": call.name, "arguments": call.arguments}}]}
        except ToolCallError:
            pass
    return {"role": "assistant", "content": repr(action)[:1000]}


@dataclass
class Episode:
    """What `run_episode` returns."""

    reward: float
    terminated: bool
    truncated: bool
    turns: int
    info: dict[str, Any]
    observations: list[str]


def run_episode(env: gym.Env, agent: Any, *, task: Any = None, seed: int | None = None) -> Episode:
    """Play one episode of a multi-turn env with an agent that has `start(task_dict)` and
    `act(observation, info) -> action` (scripted agents, audits, demos). An agent with
    `needs_gold = True` (the gold-patch agent) starts from the whole task record; every other
    agent sees what `info` shows, the gold hidden."""
    options = {"task": task} if task is not None else None
    observation, info = env.reset(seed=seed, options=options)
    if getattr(agent, "needs_gold", False):
        base = env.unwrapped
        agent.start(base.task_record(base.task, final=True))
    else:
        agent.start(info["task"])
    observations = [observation]
    turns = 0
    while True:
        observation, reward, terminated, truncated, info = env.step(
            agent.act(observation, info))
        observations.append(observation)
        turns += 1
        if terminated or truncated:
            return Episode(float(reward), terminated, truncated, turns, info, observations)
