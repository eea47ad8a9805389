"""TRL's environment_factory over a multi-turn tool env: tools as methods, schemas, rewards."""

from __future__ import annotations

import inspect

import pytest

from rlvr_envs.core.multiturn import MultiTurnEnv, ToolCall, ToolCallError, ToolResult, ToolSpec
from rlvr_envs.core.scoring import Score
from rlvr_envs.core.sources import TaskList
from rlvr_envs.core.task import Task
from rlvr_envs.integrations.ground_truth import encode_ground_truth
from rlvr_envs.integrations.trl_environment import EPISODE_OVER, environment_factory
from rlvr_envs.registry import register_env

COUNTER_ENV = "rlvr-test/Counter-v0"
SPECS = [
    ToolSpec("add", "Add a number to the counter.",
             {"type": "object", "properties": {
                 "amount": {"type": "integer", "description": "how much to add"},
                 "note": {"type": "string", "description": "an optional note"}},
              "required": ["amount"]}),
    ToolSpec("submit", "Say you are done; the counter is graded.",
             {"type": "object", "properties": {}}),
]


class CounterEnv(MultiTurnEnv):
    """Reach the task's answer by adding numbers, then submit."""

    def __init__(self, max_turns: int = 4):
        tasks = [Task(prompt=f"Reach {n}.", answer=str(n), family="counter", source="counter",
                      source_id=f"counter/{n}") for n in (3, 5)]
        super().__init__(TaskList(tasks, family="counter", name="counter"), "Use the tools.",
                         max_turns=max_turns)
        self.total = 0

    def tool_specs(self):
        return SPECS

    def begin_episode(self, task):
        self.total = 0
        return task.prompt

    def call_tool(self, call: ToolCall) -> ToolResult:
        if call.name == "add":
            if call.arguments["amount"] < 0:
                raise ToolCallError("amount must be >= 0")
            self.total += call.arguments["amount"]
            return ToolResult(f"counter is {self.total}")
        correct = str(self.total) == self._task.answer
        score = Score(float(correct), correct, {"correctness": float(correct)},
                      "correct" if correct else "mismatch", str(self.total))
        return ToolResult("graded", score=score)


register_env(COUNTER_ENV, CounterEnv, "test: a counter driven by tools", family="counter")


def row(n: int) -> dict:
    env = CounterEnv()
    return {"ground_truth": encode_ground_truth(env.resolve_task(f"counter/{n}")),
            "task_id": f"counter/{n}"}


def test_tools_become_methods_whose_schemas_are_the_envs():
    from transformers.utils import get_json_schema

    cls = environment_factory(COUNTER_ENV)
    names = [n for n, _ in inspect.getmembers(cls, predicate=inspect.isfunction)
             if n not in ("reset", "get_reward") and not n.startswith("_")]
    assert names == ["add", "submit"]  # what TRL exposes as tools
    instance = cls()
    add = get_json_schema(instance.add)["function"]
    assert add["name"] == "add" and add["description"] == SPECS[0].description
    assert add["parameters"]["required"] == ["amount"]
    assert add["parameters"]["properties"]["amount"] == {"type": "integer",
                                                         "description": "how much to add"}
    assert add["parameters"]["properties"]["note"]["type"] == "string"


def test_an_episode_through_the_methods_earns_the_verified_reward():
    cls = environment_factory(COUNTER_ENV)
    env = cls()
    assert env.reset(**row(5)) is None
    assert env.add(amount=2) == "counter is 2"
    assert env.add(amount=3, note="done") == "counter is 5"
    assert "amount must be >= 0" in env.add(amount=-1)  # a bad call is an observation
    env.submit()
    assert env.get_reward() == 1.0
    assert env.add(amount=1) == EPISODE_OVER  # nothing runs after the episode ended
    env.reset(**row(3))  # pooled instances are reset between rollouts
    env.add(amount=5)
    env.submit()
    assert env.get_reward() == 0.0


def test_an_episode_never_closed_is_graded_as_a_spent_budget():
    env = environment_factory(COUNTER_ENV)()
    env.reset(**row(3))
    env.add(amount=3)
    assert env.get_reward() == 0.0


def test_single_turn_envs_and_missing_columns_are_refused():
    with pytest.raises(TypeError, match="not a multi-turn tool env"):
        environment_factory("rlvr/Math-v0")
    env = environment_factory(COUNTER_ENV)()
    with pytest.raises(ValueError, match="ground_truth"):
        env.reset(task_id="counter/3")
