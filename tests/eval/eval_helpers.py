"""Helpers for the evaluation tests: suite builders, toy envs and policies (importable as
`eval_helpers:<Name>`, also from a subprocess with this folder on PYTHONPATH)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import time

import gymnasium as gym

from rlvr_envs import registry
from rlvr_envs.core.policy import Completion, SamplingParams
from rlvr_envs.core.env import SingleTurnEnv
from rlvr_envs.core.prompts import answer_system_prompt
from rlvr_envs.core.scoring import Score, Scorer
from rlvr_envs.core.sources import TaskList
from rlvr_envs.core.spaces import UnicodeText
from rlvr_envs.core.task import Difficulty, Task
from rlvr_envs.tasks.math.scoring import MathScorer


class SeededPolicy:
    """Right or wrong per sample as a pure function of (seed, prompt, sample index): a stand-in
    for a sampling model whose output is fixed by the seed. `EVAL_TEST_POLICY_SLEEP` seconds
    per call make it slow enough to interrupt."""

    name = "seeded"

    def __init__(self, sleep: float | None = None):
        self.sleep = float(os.environ.get("EVAL_TEST_POLICY_SLEEP", "0")) if sleep is None else sleep
        self.calls = 0

    def generate(self, batch, params: SamplingParams, *, tasks=None, scorers=None):
        self.calls += 1
        if self.sleep:
            time.sleep(self.sleep)
        out = []
        for messages, task, scorer in zip(batch, tasks, scorers):
            group = []
            for i in range(params.n):
                digest = hashlib.sha256(f"{params.seed}|{messages[-1]['content']}|{i}".encode())
                if digest.digest()[0] % 2:
                    group.append(Completion(scorer.gold_completion(task), num_tokens=12))
                else:
                    group.append(Completion(f"I think it is \\boxed{{{digest.hexdigest()[:6]}}}",
                                            num_tokens=9))
            out.append(group)
        return out


class FailingPolicy(SeededPolicy):
    """Works for `ok_calls` calls, then raises like an endpoint that went down; with
    `recover_after`, works again after that many failures."""

    def __init__(self, ok_calls: int, recover_after: int | None = None):
        super().__init__(sleep=0)
        self.ok_calls, self.recover_after, self.failures = ok_calls, recover_after, 0

    def generate(self, batch, params, *, tasks=None, scorers=None):
        if self.calls >= self.ok_calls and (self.recover_after is None
                                            or self.failures < self.recover_after):
            self.calls += 1
            self.failures += 1
            raise ConnectionError("endpoint http://127.0.0.1:9/v1 refused the connection")
        return super().generate(batch, params, tasks=tasks, scorers=scorers)


class CountingNull:
    """The null policy, counting calls (a suite error must come before any call)."""

    name = "counting-null"
    calls = 0

    def generate(self, batch, params, **_):
        CountingNull.calls += 1
        return [[Completion("", num_tokens=0) for _ in range(params.n)] for _ in batch]


class ToolReader:
    """For the fake multi-turn env: first calls `look`, then submits what the tool said."""

    name = "tool-reader"

    def generate(self, batch, params, **_):
        out = []
        for messages in batch:
            said = [m["content"] for m in messages if m["role"] == "tool"]
            if said and said[-1].startswith("the answer is "):
                answer = said[-1][len("the answer is "):]
                text = ('<tool_call>{"name": "submit", "arguments": {"answer": "%s"}}'
                        '</tool_call>' % answer)
            else:
                text = '<tool_call>{"name": "look", "arguments": {}}</tool_call>'
            out.append([Completion(text, num_tokens=10) for _ in range(params.n)])
        return out


def math_suite(**overrides) -> dict:
    suite = {"name": "mathtest", "n": 3, "k": [1, 2, 3], "batch_size": 3,
             "entries": [{"env": "rlvr/Math-v0", "name": "math", "kwargs": {"difficulty": [1, 2]},
                          "seeds": {"count": 7}},
                         {"env": "rlvr/Arithmetic-v0", "name": "arith", "kwargs": {"difficulty": 3},
                          "seeds": [100, 101, 102]}]}
    suite.update(overrides)
    return suite


# -- a toy multi-turn env: `look` reveals the answer, `submit` ends the episode --------------

TOY_TASKS = [Task(prompt=f"Find the secret number of box {i}.", answer=str(10 * i + 7),
                  family="toy", source="toy", source_id=f"box/{i}",
                  difficulty=Difficulty(1 + i % 2)) for i in range(3)]
_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)


class ToyToolScorer(Scorer):
    def gold_completion(self, task: Task) -> str:
        return ('<tool_call>{"name": "submit", "arguments": {"answer": "%s"}}</tool_call>'
                % task.answer)


class ToyToolEnv(gym.Env):
    """Multi-turn: observations are tool outputs; 4 turns at most."""

    multi_turn = True
    max_turns = 4

    def __init__(self):
        self.source = TaskList(TOY_TASKS, family="toy", name="toy")
        self.scorer = ToyToolScorer()
        self.observation_space = UnicodeText(10_000)
        self.action_space = UnicodeText(10_000)
        self.task = None

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        task = (options or {}).get("task")
        if isinstance(task, Task):
            self.task = task
        elif isinstance(task, str):
            self.task = self.source.get(task)
        else:
            self.task = self.source.sample(self.np_random)
        self.turns = 0
        self.messages = [{"role": "system", "content": "Use the tools."},
                         {"role": "user", "content": self.task.prompt}]
        return self.task.prompt, {"messages": list(self.messages), "task": self.task.to_dict(),
                                  "tools": [{"name": "look"}, {"name": "submit"}]}

    def step(self, action):
        self.turns += 1
        self.messages.append({"role": "assistant", "content": action})
        reward, terminated, observation = 0.0, False, "error: no tool call found"
        match = _CALL.search(action)
        if match:
            call = json.loads(match.group(1))
            if call["name"] == "look":
                observation = f"the answer is {self.task.answer}"
            elif call["name"] == "submit":
                terminated = True
                reward = float(call["arguments"].get("answer") == self.task.answer)
                observation = "submitted"
        self.messages.append({"role": "tool", "content": observation})
        truncated = not terminated and self.turns >= self.max_turns
        info = {"messages": list(self.messages), "correct": reward == 1.0,
                "verifier": "correct" if reward else ("mismatch" if terminated else "open"),
                "reward_breakdown": {"correctness": reward}}
        return observation, reward, terminated, truncated, info


# -- a math env whose scorer raises hacking-monitor flags --------------------------------------

class MonitoredMathScorer(MathScorer):
    def score(self, task: Task, completion: str) -> Score:
        score = super().score(task, completion)
        score.details["monitors"] = {"empty_answer": completion == "",
                                     "at_length_cap": False,
                                     "repetition_ratio": 0.0}  # not a flag: must not count
        return score


def make_monitored_math(**_):
    env = SingleTurnEnv(registry.env_entry("rlvr/Arithmetic-v0").factory().source,
                        MonitoredMathScorer(), answer_system_prompt("boxed"))
    return env
