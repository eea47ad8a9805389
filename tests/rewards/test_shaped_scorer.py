"""ShapedScorer over the math scorer, and the math envs' shaping kwargs through gym.make."""

import gymnasium as gym
import pytest
from rlvr_envs.tasks.math.scoring import MathScorer

import rlvr_envs
from rlvr_envs.core.task import Task
from rlvr_envs.rewards.shaped import ShapedScorer, ShapingConfig, shape

TASK = Task(prompt="Compute 6 * 7.", answer="42", family="math")


def test_unshaped_config_is_a_no_op():
    base = MathScorer()
    assert shape(base) is base
    assert not ShapingConfig().active


def test_format_component_and_answer_section_grading():
    scorer = ShapedScorer(MathScorer("r1"), format_reward=0.5, thinking="on")
    good = scorer.score(TASK, "<think>6*7 = 42</think><answer>42</answer>")
    assert good.breakdown == {"correctness": 1.0, "format": 0.5}
    assert good.reward == 1.5 and good.details["format"] == {"ok": True, "reason": "ok"}
    # the answer only inside the reasoning earns nothing: graded from the answer section
    hidden = scorer.score(TASK, "<think><answer>42</answer></think>")
    assert hidden.breakdown == {"correctness": 0.0, "format": 0.0} and not hidden.correct
    # right answer, broken format (missing think block): correctness only
    bare = scorer.score(TASK, "<answer>42</answer>")
    assert bare.breakdown == {"correctness": 1.0, "format": 0.0}
    assert bare.details["format"]["reason"] == "missing_think"
    assert scorer.score(TASK, "").reward == 0.0


def test_thinking_off_penalises_reasoning():
    scorer = ShapedScorer(MathScorer("boxed"), format_reward=0.2, thinking="off")
    assert scorer.score(TASK, "<think></think>\\boxed{42}").reward == pytest.approx(1.2)
    reasoned = scorer.score(TASK, "<think>6*7 = 42</think>\\boxed{42}")
    assert reasoned.reward == pytest.approx(1.0)
    assert reasoned.details["format"]["reason"] == "reasoning_in_no_think"


def test_process_modes():
    wrong_step = "<think>6*7 = 41, no wait, 6*7 = 42</think>\\boxed{42}"
    outcome = ShapedScorer(MathScorer(), reward_mode="outcome").score(TASK, wrong_step)
    process = ShapedScorer(MathScorer(), reward_mode="process").score(TASK, wrong_step)
    mix = ShapedScorer(MathScorer(), reward_mode="mix", process_weight=0.25,
                       process_aggregation="mean").score(TASK, wrong_step)
    assert outcome.reward == 1.0 and "process" not in outcome.breakdown
    assert process.breakdown == {"process": 0.0} and process.correct  # min over steps: one wrong
    assert [s["verdict"] for s in process.details["process"]["steps"]] == ["wrong", "correct"]
    assert mix.breakdown == pytest.approx({"correctness": 0.75, "process": 0.125})
    assert mix.reward == pytest.approx(0.875)


def test_process_credit_needs_one_final_answer():
    """True but idle steps earn no process reward without a committed answer (the reward
    would otherwise be had by writing "1 + 1 = 2" many times), nor for a hedge."""
    scorer = ShapedScorer(MathScorer(), reward_mode="process")
    idle = scorer.score(TASK, "1 + 1 = 2\n" * 1000)
    assert idle.reward == 0.0 and idle.details["process"]["withheld"] == "no_answer"
    hedge = scorer.score(TASK, "6*7 = 42\n\\boxed{41} or \\boxed{42}")
    assert hedge.reward == 0.0 and hedge.details["process"]["withheld"] == "hedged"
    committed = scorer.score(TASK, "6*7 = 42\n\\boxed{42}")
    assert committed.reward == 1.0 and "withheld" not in committed.details["process"]


def test_overlong_budget_and_monitors():
    scorer = ShapedScorer(MathScorer(), overlong=(40, 10), thinking_budget=(5, 0.3),
                          monitors=True)
    short = scorer.score(TASK, "<think>42</think>\\boxed{42}")   # 26 chars, reasoning 2
    assert short.breakdown == {"correctness": 1.0, "overlong": 0.0, "thinking_budget": 0.0}
    long = "<think>" + "6 times 7 " + "</think>\\boxed{42}" + " " * 10   # 45 chars
    got = scorer.score(TASK, long)
    assert got.details["length"] == 45 and got.details["truncated"]
    assert got.breakdown["overlong"] == -1.0 and got.breakdown["thinking_budget"] == -0.3
    assert got.details["hacking"]["length_at_cap"]
    assert scorer.counters.as_dict()["hacking/episodes"] == 2
    assert set(scorer.components) == {"correctness", "overlong", "thinking_budget"}


def test_gold_completion_keeps_the_format():
    for answer_format in ("boxed", "r1"):
        for thinking in ("on", "off"):
            scorer = ShapedScorer(MathScorer(answer_format), format_reward=1.0, thinking=thinking)
            assert scorer.score(TASK, scorer.gold_completion(TASK)).reward == 2.0


def test_bad_options_are_named():
    with pytest.raises(ValueError, match="reward_mode must be one of"):
        ShapingConfig(reward_mode="both")
    with pytest.raises(ValueError, match="process_weight"):
        ShapingConfig(process_weight=2)
    with pytest.raises(TypeError, match=r"unknown keyword argument\(s\) \['format_rewards'\]"):
        gym.make("rlvr/Math-v0", format_rewards=0.2)


def test_gym_make_kwargs_shape_the_env_and_its_scorer():
    env = gym.make("rlvr/Arithmetic-v0", difficulty=1, answer_format="r1", format_reward=0.2,
                   thinking="on", overlong=(500, 100), reward_mode="mix", monitors=True)
    prompt, info = env.reset(seed=3)
    assert prompt.splitlines()[0].endswith("/think")
    task = Task.from_dict(info["task"])
    gold = env.unwrapped.scorer.gold_completion(task)
    _, reward, terminated, _, step_info = env.step(gold)
    assert terminated and step_info["correct"]
    assert set(step_info["reward_breakdown"]) == {"correctness", "process", "format", "overlong"}
    assert reward == pytest.approx(sum(step_info["reward_breakdown"].values()))
    assert step_info["hacking"] and "truncated" in step_info
    # trainers get the same shaped scorer
    scorer = rlvr_envs.scorer_for("rlvr/Arithmetic-v0", answer_format="r1", format_reward=0.2,
                                  thinking="on")
    assert isinstance(scorer, ShapedScorer) and scorer.score(task, gold).breakdown["format"] == 0.2
    # default kwargs: the env is untouched
    assert not isinstance(gym.make("rlvr/Math-v0").unwrapped.scorer, ShapedScorer)


def test_hybrid_mode_per_episode():
    env = gym.make("rlvr/Arithmetic-v0", difficulty=1, format_reward=1.0, thinking="hybrid")
    modes = []
    for seed in range(12):
        prompt, info = env.reset(seed=seed)
        mode = info["task"]["metadata"]["thinking_mode"]
        modes.append(mode)
        assert prompt.endswith("/think" if mode == "on" else "/no_think")
        assert info["messages"][-1]["content"].endswith(prompt.rsplit(" ", 1)[1])
        answer = info["task"]["answer"]
        reasoning = "" if mode == "on" else "thinking anyway"  # the wrong behaviour for the mode
        _, _, *_, step_info = env.step(f"<think>{reasoning}</think>\\boxed{{{answer}}}")
        assert step_info["reward_breakdown"]["format"] == 0.0, step_info["format"]
    assert set(modes) == {"on", "off"}
    again = [env.reset(seed=s)[1]["task"]["metadata"]["thinking_mode"] for s in range(12)]
    assert again == modes  # same seed, same mode
    _, info = env.reset(seed=0, options={"thinking_mode": "off"})
    assert info["task"]["metadata"]["thinking_mode"] == "off"
