"""Wrappers over gym.make'd envs: shaping, group scoring, monitors, measured difficulty,
solvability filter, online curriculum."""

import gymnasium as gym
import pytest
from rlvr_envs.tasks.math.scoring import MathScorer

from rlvr_envs.core.env import SingleTurnEnv
from rlvr_envs.core.prompts import answer_system_prompt
from rlvr_envs.core.sources import TaskList
from rlvr_envs.core.task import Difficulty, Task
from rlvr_envs.curriculum.difficulty import PassRates
from rlvr_envs.wrappers import (
    GroupScoring,
    HackingMonitor,
    MeasuredDifficulty,
    OnlineCurriculum,
    RewardShaping,
    SolvabilityFilter,
)


def list_env(tasks):
    return SingleTurnEnv(TaskList(tasks, family="math", name="tiny"), MathScorer(),
                         answer_system_prompt("boxed"))


TASKS = [Task(prompt=f"Compute {a} + {a}.", answer=str(2 * a), family="math",
              difficulty=Difficulty(level=1 + a % 3)) for a in range(1, 10)]


def test_reward_shaping_wrapper_matches_the_make_kwargs():
    wrapped = RewardShaping(gym.make("rlvr/Arithmetic-v0", difficulty=1), format_reward=0.3,
                            thinking="on")
    made = gym.make("rlvr/Arithmetic-v0", difficulty=1, format_reward=0.3, thinking="on")
    for env in (wrapped, made):
        _, info = env.reset(seed=1)
        text = f"<think>adding</think>\\boxed{{{info['task']['answer']}}}"
        _, reward, *_ = env.step(text)
        assert reward == pytest.approx(1.3)


def test_group_scoring_adds_the_kimi_penalty():
    env = GroupScoring(gym.make("rlvr/Arithmetic-v0", difficulty=1), length_penalty=1.0)
    _, info = env.reset(seed=0)
    gold = info["task"]["answer"]
    completions = [f"\\boxed{{{gold}}}",                     # 9-ish chars, correct
                   f"It is \\boxed{{{gold}}}, I'm sure of it", # longest, correct
                   "\\boxed{-1}"]                            # wrong
    rewards, infos = env.step_group(completions)
    lengths = [len(c) for c in completions]
    lo, hi = min(lengths), max(lengths)
    lam = [0.5 - (n - lo) / (hi - lo) for n in lengths]
    expected = [1 + lam[0], 1 + lam[1], min(0.0, lam[2])]
    assert rewards == pytest.approx(expected)
    assert infos[1]["reward_breakdown"]["length_penalty"] == pytest.approx(lam[1])
    assert not infos[0]["group"]["zero_variance"]
    with pytest.raises(gym.error.ResetNeeded):
        env.step_group(completions)
    env.reset(seed=1)
    rewards, infos = env.step_group(["", ""])       # equal lengths, all wrong: zero variance
    assert list(rewards) == [0.0, 0.0] and infos[0]["group"]["zero_variance"]
    assert env.dropped_groups == 1 and env.groups_scored == 2


def test_group_scoring_warmup():
    env = GroupScoring(gym.make("rlvr/Arithmetic-v0", difficulty=1), length_penalty=1.0,
                       warmup_steps=1)
    _, info = env.reset(seed=0)
    gold = info["task"]["answer"]
    rewards, _ = env.step_group([f"\\boxed{{{gold}}}", f"so so so \\boxed{{{gold}}}"])
    assert list(rewards) == [1.0, 1.0]                 # group 0 is inside the warm-up
    env.reset(seed=0)
    rewards, _ = env.step_group([f"\\boxed{{{gold}}}", f"so so so \\boxed{{{gold}}}"])
    assert list(rewards) == [1.5, 0.5]


def test_hacking_monitor_wrapper_counts():
    env = HackingMonitor(gym.make("rlvr/Arithmetic-v0", difficulty=1), max_length=50)
    for seed, text in enumerate(["\\boxed{1} or \\boxed{2}", "x" * 60, "\\boxed{3}"]):
        env.reset(seed=seed)
        *_, info = env.step(text)
    assert info["hacking"] == dict.fromkeys(info["hacking"], False)
    counts = env.counters.as_dict()
    assert counts["hacking/episodes"] == 3
    assert counts["hacking/several_answers"] == 1 and counts["hacking/length_at_cap"] == 1


def test_measured_difficulty_reloads_into_info(tmp_path):
    env = list_env(TASKS)
    rates = {TASKS[0].id: 0.25}
    wrapped = MeasuredDifficulty(env, rates)
    _, info = wrapped.reset(options={"task": TASKS[0].id})
    assert info["task"]["difficulty"]["pass_rate"] == 0.25
    *_, info = wrapped.step("\\boxed{2}")
    assert info["task"]["difficulty"]["pass_rate"] == 0.25
    _, info = wrapped.reset(options={"task": TASKS[1].id})
    assert info["task"]["difficulty"]["pass_rate"] is None


def test_solvability_filter_on_a_finite_source():
    rates = {t.id: r for t, r in zip(TASKS, [0.0, 1.0, 0.5, 0.125, 1.0, 0.0, 0.875, 0.0, 1.0])}
    env = SolvabilityFilter(list_env(TASKS), rates)   # default (0, 1) exclusive
    assert {t.id for t in env.eligible} == {TASKS[2].id, TASKS[3].id, TASKS[6].id}
    served = {env.reset(seed=s)[1]["task"]["id"] for s in range(30)}
    assert served == {TASKS[2].id, TASKS[3].id, TASKS[6].id}
    assert [env.reset(seed=s)[1]["task"]["id"] for s in range(5)] == \
        [env.reset(seed=s)[1]["task"]["id"] for s in range(5)]
    _, info = env.reset(seed=0)
    assert 0 < info["task"]["difficulty"]["pass_rate"] < 1
    inclusive = SolvabilityFilter(list_env(TASKS), rates, 0.5, 1.0, inclusive=True)
    assert len(inclusive.eligible) == 5
    with pytest.raises(ValueError, match="no task of 9"):
        SolvabilityFilter(list_env(TASKS), rates, 0.6, 0.7)


def test_solvability_filter_on_a_procedural_source():
    env = gym.make("rlvr/Arithmetic-v0", difficulty=1)
    tasks = [Task.from_dict(env.reset(seed=s)[1]["task"]) for s in range(6)]
    measured = PassRates()
    for task, successes in zip(tasks, [0, 4, 8, 4, 0, 4]):
        measured.add(task, successes, 8)
    filtered = SolvabilityFilter(gym.make("rlvr/Arithmetic-v0", difficulty=1), measured)
    assert [t.id for t in filtered.eligible] == [tasks[i].id for i in (1, 3, 5)]
    served = {filtered.reset(seed=s)[1]["task"]["id"] for s in range(20)}
    assert served == {tasks[i].id for i in (1, 3, 5)}
    # unmeasured tasks: rejection sampling on the task's own pass rate
    unmeasured = SolvabilityFilter(gym.make("rlvr/Arithmetic-v0", difficulty=1), max_tries=3)
    with pytest.raises(RuntimeError, match="no task with a pass rate"):
        unmeasured.reset(seed=0)
    assert unmeasured.rejected == 3


def test_online_curriculum_moves_the_procedural_level():
    env = OnlineCurriculum(gym.make("rlvr/Arithmetic-v0"), levels=[1, 2, 3], window=4,
                           raise_at=0.75, lower_at=0.25)
    assert env.level == 1
    for _ in range(4):                              # always right: up to level 2
        _, info = env.reset()
        assert info["task"]["difficulty"]["level"] == 1
        *_, info = env.step(f"\\boxed{{{info['task']['answer']}}}")
    assert env.level == 2 and info["curriculum"]["level"] == 2
    for _ in range(4):
        _, info = env.reset()
        assert info["task"]["difficulty"]["level"] == 2
        env.step(f"\\boxed{{{info['task']['answer']}}}")
    assert env.level == 3
    for _ in range(8):                              # stays at the top
        _, info = env.reset()
        env.step(f"\\boxed{{{info['task']['answer']}}}")
    assert env.level == 3
    for _ in range(3):   # always wrong: the sliding window [T, F, F, F] hits 0.25 on the third
        env.reset()
        env.step("")
    assert env.level == 2
    assert env.controller.history == [(4, 2), (8, 3), (19, 2)]


def test_online_curriculum_on_a_dataset_by_measured_pass_rate():
    rates = {t.id: r for t, r in zip(TASKS, [0.9, 0.9, 0.5, 0.5, 0.1, 0.1, 0.9, 0.5, 0.1])}
    env = OnlineCurriculum(list_env(TASKS), by="pass_rate", pass_rates=rates, bins=3,
                           window=2, raise_at=1.0, lower_at=0.0)
    assert sorted(env.buckets) == [1, 2, 3] and env.level == 1
    easy = {TASKS[i].id for i in (0, 1, 6)}
    for _ in range(2):
        _, info = env.reset(seed=7)
        assert info["task"]["id"] in easy
        env.step(f"\\boxed{{{info['task']['answer']}}}")
    assert env.level == 2
    _, info = env.reset()
    assert info["task"]["id"] in {TASKS[i].id for i in (2, 3, 7)}
    by_level = OnlineCurriculum(list_env(TASKS))       # dataset levels (1..3 here)
    assert sorted(by_level.buckets) == [1, 2, 3]
