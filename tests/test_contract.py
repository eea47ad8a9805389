"""The env contract every registered id keeps (README: "Environment contract")."""

import json
import subprocess
import sys

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import rlvr_envs
from rlvr_envs.registry import env_entry, retire_env

ALL_IDS = sorted(i for i in rlvr_envs.list_envs() if i.startswith("rlvr/"))  # not test-only ids


def make(env_id, **kwargs):
    return gym.make(env_id, **{**env_entry(env_id).check_kwargs, **kwargs})


def test_every_id_has_a_description():
    assert "rlvr/Math-v0" in ALL_IDS
    assert all(desc.strip() for desc in rlvr_envs.list_envs().values())


@pytest.mark.parametrize("env_id", [pytest.param(i, marks=pytest.mark.slow)  # a second or so
                                    if i in ("rlvr/CHAMP-v0", "rlvr/RepoEdit-v0") else i
                                    for i in ALL_IDS])
def test_check_env_passes(env_id):
    env = make(env_id)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


@pytest.mark.slow
def test_make_with_module_prefix_in_a_fresh_interpreter():
    code = ("import gymnasium as gym; env = gym.make('rlvr_envs:rlvr/Math-v0'); "
            "p, i = env.reset(seed=1); print(i['task']['id'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().startswith("math-")


@pytest.mark.slow
def test_same_seed_same_task_across_processes():
    code = ("import gymnasium as gym, rlvr_envs, json; env = gym.make('rlvr/Math-v0'); "
            "print(json.dumps([env.reset(seed=s)[1]['task'] for s in range(5)]))")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout for _ in range(2)]
    assert json.loads(runs[0]) == json.loads(runs[1])


def test_import_does_not_import_torch():
    code = "import sys, rlvr_envs, rlvr_envs.agents.scripted; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_reset_info_and_step_info():
    env = gym.make("rlvr/Math-v0")
    prompt, info = env.reset(seed=0)
    task = info["task"]
    assert set(task) >= {"id", "prompt", "answer", "family", "source", "difficulty", "split",
                         "metadata"}
    assert task["difficulty"]["level"] >= 1
    assert info["messages"][0]["role"] == "system" and "\\boxed" in info["messages"][0]["content"]
    assert task["prompt"] in prompt
    obs, reward, terminated, truncated, info = env.step(f"\\boxed{{{task['answer']}}}")
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["correct"] is True and info["reward_breakdown"] == {"correctness": 1.0}
    assert info["verifier"] == "correct" and info["extracted_answer"] is not None


def test_pin_a_task_by_plain_dict_and_by_id():
    env = gym.make("rlvr/Math-v0")
    _, info = env.reset(options={"task": {"prompt": "What is 6*7?", "answer": "42"}})
    assert info["task"]["family"] == "math" and info["task"]["answer"] == "42"
    assert env.step("\\boxed{42}")[1] == 1.0
    _, first = env.reset(seed=5)
    _, pinned = env.reset(options={"task": first["task"]["id"]})
    assert pinned["task"] == first["task"]
    _, by_source = env.reset(options={"task": first["task"]["source_id"]})
    assert by_source["task"]["id"] == first["task"]["id"]


def test_scoring_without_stepping_is_the_step_path():
    env = gym.make("rlvr/Math-v0")
    _, info = env.reset(seed=2)
    gold = "\\boxed{%s}" % info["task"]["answer"]
    scorer = rlvr_envs.scorer_for("rlvr/Math-v0")
    direct = scorer.score(env.unwrapped.resolve_task(info["task"]), gold)
    batch = env.unwrapped.score_batch([gold, "no idea"], [info["task"]] * 2)
    stepped = env.step(gold)
    assert direct.reward == batch[0].reward == stepped[1] == 1.0
    assert batch[1].reward == 0.0 and batch[1].verifier == "no_answer"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_vector_envs(mode):
    envs = gym.make_vec("rlvr/Arithmetic-v0", num_envs=3, vectorization_mode=mode)
    prompts, infos = envs.reset(seed=7)
    assert len(prompts) == 3 and all(isinstance(p, str) and p for p in prompts)
    golds = [f"\\boxed{{{answer}}}" for answer in infos["task"]["answer"]]
    _, rewards, terminated, _, _ = envs.step((golds[0], "wrong", golds[2]))
    assert list(rewards) == [1.0, 0.0, 1.0] and all(terminated)
    envs.close()


def test_bad_input_errors():
    env = gym.make("rlvr/Math-v0").unwrapped
    with pytest.raises(gym.error.ResetNeeded, match="reset"):
        env.step("\\boxed{1}")
    env.reset(seed=0)
    with pytest.raises(TypeError, match="must be a str"):
        env.step(42)
    with pytest.raises(ValueError, match="unknown reset options"):
        env.reset(options={"tsk": "x"})
    with pytest.raises(TypeError, match="valid ones are"):
        gym.make("rlvr/Math-v0", difficuly=2)
    with pytest.raises(gym.error.UnregisteredEnv, match="rlvr/Math-v0"):
        rlvr_envs.make("rlvr/Mathh-v0")
    with pytest.raises(KeyError, match="procedural id"):
        env.reset(options={"task": "not-a-task"})


def test_too_long_completion_scores_zero():
    env = gym.make("rlvr/Math-v0", max_completion_chars=100)
    env.reset(seed=0)
    _, reward, _, _, info = env.step("\\boxed{1}" + " " * 200)
    assert reward == 0.0 and info["verifier"] == "too_long"


def test_retired_id_names_its_successor():
    retire_env("rlvr/OldMath-v0", "rlvr/Math-v0")
    with pytest.raises(gym.error.DeprecatedEnv, match="use rlvr/Math-v0"):
        gym.make("rlvr/OldMath-v0")


@pytest.mark.parametrize("env_id", ["rlvr/Math-v0", "rlvr/RepoEdit-v0"])
def test_metadata_declares_render_modes_and_fps(env_id):
    metadata = gym.spec(env_id) and make(env_id).unwrapped.metadata
    assert metadata["render_modes"] == ["ansi"] and metadata["render_fps"] > 0
