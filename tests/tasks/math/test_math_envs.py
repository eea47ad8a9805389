"""The math envs end to end: rlvr/Math-v0 and rlvr/Arithmetic-v0 (procedural), rlvr/GSM8K-v0
and rlvr/MATH-v0 (local files in the datasets' schemas): gold scores 1, empty and wrong 0."""

from __future__ import annotations

import gymnasium as gym
import pytest

import rlvr_envs
from rlvr_envs.checks import check_env_id
from rlvr_envs.tasks.math.generators import GENERATORS

MATH_IDS = ["rlvr/Math-v0", "rlvr/Arithmetic-v0", "rlvr/GSM8K-v0", "rlvr/MATH-v0"]


def test_math_ids_are_registered_with_one_line_descriptions():
    envs = rlvr_envs.list_envs("math")
    for env_id in MATH_IDS:
        assert env_id in envs and envs[env_id] and "\n" not in envs[env_id]


@pytest.mark.parametrize("env_id", MATH_IDS)
def test_rlvr_check_passes_offline_for_every_math_id(env_id):
    results = list(check_env_id(env_id, samples=3))
    assert [name for name, _, _ in results] == ["check_env", "seed determinism",
                                                 "gold scores 1", "empty scores 0"]
    assert all(ok for _, ok, _ in results), results


def _episode(env, seed, completion):
    _, info = env.reset(seed=seed)
    _, reward, terminated, truncated, step_info = env.step(completion)
    assert terminated and not truncated
    return info, reward, step_info


@pytest.mark.parametrize("answer_format", ["boxed", "r1"])
@pytest.mark.parametrize("fixture,env_id", [("gsm8k_jsonl", "rlvr/GSM8K-v0"),
                                            ("gsm8k_parquet", "rlvr/GSM8K-v0"),
                                            ("math_jsonl", "rlvr/MATH-v0"),
                                            ("math_parquet", "rlvr/MATH-v0")])
def test_dataset_envs_score_gold_one_and_empty_or_wrong_zero(fixture, env_id, answer_format,
                                                            request):
    env = gym.make(env_id, data_files=str(request.getfixturevalue(fixture)),
                   answer_format=answer_format)
    base = env.unwrapped
    assert ("<answer>" in base.system_prompt) == (answer_format == "r1")
    for task in base.source:
        gold = base.scorer.gold_completion(task)
        base.reset(options={"task": task.id})
        _, reward, _, _, info = base.step(gold)
        assert reward == 1.0 and info["correct"], (task.answer, info)
        base.reset(options={"task": task.id})
        assert base.step("")[1] == 0.0
        base.reset(options={"task": task.source_id})
        wrong = gold.replace(task.answer, "99999")
        _, reward, _, _, info = base.step(wrong)
        assert reward == 0.0 and info["verifier"] != "correct"
    info, _, _ = _episode(base, 0, "")
    assert info["task"]["family"] == "math" and info["task"]["difficulty"]["level"] >= 1
    assert info["messages"][0]["role"] == "system"
    env.close()


def test_dataset_env_kwargs_reach_the_source(gsm8k_jsonl, math_jsonl):
    env = gym.make("rlvr/MATH-v0", data_files=str(math_jsonl), difficulty=[2, 4])
    assert sorted(t.difficulty.level for t in env.unwrapped.source) == [2, 4]
    env = gym.make("rlvr/GSM8K-v0", data_files={"validation": str(gsm8k_jsonl)},
                   split="validation", limit=3)
    assert {t.split for t in env.unwrapped.source} == {"validation"}
    assert len(env.unwrapped.source) == 3
    with pytest.raises(TypeError, match="valid ones are"):
        gym.make("rlvr/GSM8K-v0", data_file=str(gsm8k_jsonl))


def test_dataset_env_without_data_raises_the_clear_error():
    with pytest.raises(FileNotFoundError, match="could not load the gsm8k dataset"):
        gym.make("rlvr/GSM8K-v0")


def test_math_env_mixes_the_chosen_families_at_the_chosen_levels():
    env = gym.make("rlvr/Math-v0", families=["fractions", "modular"], difficulty=[2, 7])
    seen = {(info["task"]["metadata"]["generator"], info["task"]["difficulty"]["level"])
            for info in (env.reset(seed=s)[1] for s in range(40))}
    assert {g for g, _ in seen} == {"fractions", "modular"}
    assert {lvl for _, lvl in seen} == {2, 7}
    env = gym.make("rlvr/Math-v0", difficulty=9)
    generators = {env.reset(seed=s)[1]["task"]["metadata"]["generator"] for s in range(60)}
    assert generators == set(GENERATORS)


def test_math_env_tasks_are_reproducible_by_procedural_id_and_score():
    env = gym.make("rlvr/Math-v0", families="linear_system", difficulty=6).unwrapped
    _, info = env.reset(seed=3)
    task = info["task"]
    assert task["source_id"].startswith("linear_system/L6/")
    assert env.resolve_task(task["source_id"]).id == task["id"]
    _, reward, *_ = env.step(f"\\boxed{{{task['answer']}}}")
    assert reward == 1.0
    scores = env.score_batch(["\\boxed{(0, 0)}", f"\\boxed{{{task['answer']}}}"],
                             [task["id"], task["id"]])
    assert [s.reward for s in scores] == [0.0, 1.0]


def test_math_env_bad_kwargs_are_explained():
    with pytest.raises(ValueError, match="unknown math families \\['calculus'\\]"):
        gym.make("rlvr/Math-v0", families=["calculus"])
    with pytest.raises(ValueError, match="levels must be ints in 1..10"):
        gym.make("rlvr/Math-v0", difficulty=11)
    with pytest.raises(ValueError, match="difficulty must be a level"):
        gym.make("rlvr/Math-v0", difficulty="hard")
    with pytest.raises(ValueError, match="weights name families"):
        gym.make("rlvr/Math-v0", families=["arithmetic"], weights={"fractions": 2.0})


def test_arithmetic_env_serves_only_arithmetic():
    env = gym.make("rlvr/Arithmetic-v0", difficulty=[1, 4]).unwrapped
    for seed in range(5):
        _, info = env.reset(seed=seed)
        assert info["task"]["metadata"]["generator"] == "arithmetic"
        _, reward, *_ = env.step(env.scorer.gold_completion(env.resolve_task(info["task"]["id"])))
        assert reward == 1.0


TOWER = "\\boxed{9^{9^{9^{9}}}}"


@pytest.mark.slow
@pytest.mark.parametrize("on_timeout, reward", [("zero", 0.0), ("none", None)])
def test_on_timeout_reaches_the_env_and_trl(on_timeout, reward):
    import math

    from rlvr_envs.integrations.ground_truth import encode_ground_truth
    from rlvr_envs.integrations.trl import EnvReward
    from rlvr_envs.verify.math.verifier import clear_caches

    clear_caches()
    env = gym.make("rlvr/Arithmetic-v0", timeout=0.5, on_timeout=on_timeout)
    _, info = env.reset(seed=0)
    _, got, _, _, step_info = env.step(TOWER)
    assert step_info["verifier"] == "timeout" and step_info["correct"] is False
    assert got == 0.0 if reward == 0.0 else math.isnan(got)
    task = env.unwrapped.resolve_task(info["task"])
    trl_reward = EnvReward("rlvr/Arithmetic-v0", {"timeout": 0.5}, on_timeout=on_timeout)
    gold = env.unwrapped.scorer.gold_completion(task)
    assert trl_reward([None, None], [TOWER, gold],
                      ground_truth=[encode_ground_truth(task)] * 2) == [reward, 1.0]


def test_math_score_batch_matches_score():
    env = gym.make("rlvr/Math-v0", families=["fractions", "linear_system"]).unwrapped
    tasks = [env.source.sample(env.np_random) for _ in range(6)]
    completions = [env.scorer.gold_completion(t) for t in tasks[:3]] + ["\\boxed{(1, 2)}",
                                                                       "\\boxed{0}", "none"]
    batch = env.scorer.score_batch(tasks, completions)
    assert batch == [env.scorer.score(t, c) for t, c in zip(tasks, completions)]
    assert [s.correct for s in batch[:3]] == [True] * 3
    with pytest.raises(ValueError, match="on_timeout"):
        gym.make("rlvr/Math-v0", on_timeout="skip")


def test_scorer_refuses_an_answer_that_copies_the_question():
    from rlvr_envs.core.task import Task
    from rlvr_envs.tasks.math.scoring import MathScorer

    scorer = MathScorer()
    task = Task(prompt="Compute $12 + 7 \\times 3$.", answer="33", family="math")
    copied, evaluated = "So \\boxed{12 + 7 \\times 3}.", "So \\boxed{33}."
    assert scorer.score(task, copied).reward == 0.0
    assert scorer.score(task, evaluated).reward == 1.0
    assert [s.reward for s in scorer.score_batch([task, task], [copied, evaluated])] == [0.0, 1.0]
    closed_form = Task(prompt="Find the smallest prime larger than $10^9$.", answer="1000000007",
                       family="math")
    assert scorer.score(closed_form, "\\boxed{10^9+7}").reward == 1.0
