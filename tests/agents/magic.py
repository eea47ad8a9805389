"""Fixtures for the agents tests: a tiny offline model, and trivially learnable envs.

MagicWord: every task asks for one fixed short string; the reward is 1 when the completion
contains it (plus a 'brevity' component, so component logging is exercised). A random tiny
model says it now and then, so reward can rise within a few steps.
"""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

from rlvr_envs.core.env import SingleTurnEnv
from rlvr_envs.core.scoring import Score, Scorer
from rlvr_envs.core.sources import TaskList
from rlvr_envs.core.task import Task
from rlvr_envs.registry import register_env

MAGIC_ENV = "rlvr-test/MagicWord-v0"
MAGIC_TOOLS_ENV = "rlvr-test/MagicWordTools-v0"
PROMPTS = ("Say the magic word.", "The magic word, please.", "Say the word.", "Magic word?",
           "Tell me the magic word.", "What is the word?", "Say it.", "The word is?")


class MagicScorer(Scorer):
    components = {"correctness": 0.0, "brevity": 0.0}

    def __init__(self, family: str = "magic"):
        self.family = family

    def score(self, task: Task, completion: str) -> Score:
        correct = task.answer in completion
        brevity = 0.1 if correct and len(completion) <= 12 else 0.0
        breakdown = {"correctness": float(correct), "brevity": brevity}
        return Score(sum(breakdown.values()), correct, breakdown,
                     "correct" if correct else "mismatch", completion.strip() or None)

    def gold_completion(self, task: Task) -> str:
        return task.answer


def magic_tasks(family: str = "magic", answer: str = "yes", prompts=PROMPTS) -> TaskList:
    return TaskList([Task(prompt=p, answer=answer, family=family, source="magic",
                          source_id=f"{family}/{i}") for i, p in enumerate(prompts)],
                    family=family, name=family)


def make_magic_env(family: str = "magic", answer: str = "yes") -> SingleTurnEnv:
    return SingleTurnEnv(magic_tasks(family, answer), MagicScorer(family),
                         "Answer with one word.")


class MagicToolsEnv(gym.Env):
    """Multi-turn contract in miniature: tools `look` (returns a hint) and `submit(answer)`
    (ends the episode, reward 1 when the answer contains the magic word). A turn without a
    tool call ends the episode with reward 0 after `max_turns` turns."""

    TOOLS = [{"type": "function", "function": {"name": "look", "description": "a hint",
                                               "parameters": {"type": "object", "properties": {}}}},
             {"type": "function", "function": {
                 "name": "submit", "description": "final answer",
                 "parameters": {"type": "object",
                                "properties": {"answer": {"type": "string"}}}}}]

    def __init__(self, max_turns: int = 3):
        self.source = magic_tasks("magic-tools")
        self.scorer = MagicScorer("magic-tools")
        self.max_turns = max_turns
        self.observation_space = gym.spaces.Text(4096)
        self.action_space = gym.spaces.Text(4096)
        self._task, self._turns, self.calls = None, 0, []

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        task = (options or {}).get("task")
        if task is None:
            task = self.source.sample(self.np_random)
        elif isinstance(task, dict):
            task = Task.from_dict(task)
        self._task, self._turns = task, 0
        messages = [{"role": "system", "content": "Use tools. " + json.dumps(self.TOOLS)},
                    {"role": "user", "content": task.prompt}]
        return task.prompt, {"messages": messages, "tools": self.TOOLS, "task": task.to_dict()}

    def step(self, action: str):
        from rlvr_envs.agents.multiturn import parse_tool_calls

        self._turns += 1
        calls = parse_tool_calls(action)
        self.calls.append([c["name"] for c in calls])
        for call in calls:
            if call["name"] == "submit":
                score = self.scorer.score(self._task, str(call["arguments"].get("answer", "")))
                return "", score.reward, True, False, score.info()
            if call["name"] == "look":
                return "The magic word is yes.", 0.0, False, False, {}
        if self._turns >= self.max_turns:
            score = self.scorer.score(self._task, action)  # plain answer counts at the end
            return "", score.reward, True, False, score.info()
        return "no tool call; use <tool_call>", 0.0, False, False, {}


register_env(MAGIC_ENV, make_magic_env, "test: say the magic word", family="magic")
register_env(MAGIC_TOOLS_ENV, MagicToolsEnv, "test: magic word through tools",
             family="magic-tools")
