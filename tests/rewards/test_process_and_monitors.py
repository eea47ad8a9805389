"""The step verifier and the hacking monitors."""

import pytest

from rlvr_envs.rewards.monitors import HackingCounters, hacking_flags
from rlvr_envs.rewards.process import extract_steps, judge, process_reward, verify_steps


@pytest.mark.parametrize("lhs, rhs, verdict", [
    ("12 + 7", "19", "correct"),
    ("12 + 7", "20", "wrong"),
    ("2^10", "1024", "correct"),
    ("1/3", "0.333", "correct"),         # rounding it shows
    ("1/3", "0.3", "correct"),          # 0.333... rounds to 0.3
    ("1/3", "0.4", "wrong"),
    ("(x+1)^2", "x^2 + 2x + 1", "correct"),
    ("(x+1)^2", "x^2 + 1", "unchecked"),  # could be an equation to solve
    ("2x + 3", "7", "unchecked"),
    ("9^9^9^9", "1", "unchecked"),        # too large to evaluate: never hangs
    ("1/0", "1", "unchecked"),
    ("__import__('os')", "1", "unchecked"),
])
def test_judge(lhs, rhs, verdict):
    assert judge(lhs, rhs) == verdict


def test_extract_steps_from_text_and_latex():
    text = ("First 3 \\times 4 = 12 = 6 \\cdot 2.\n"
            "Then $\\frac{1}{2} + \\frac{1}{3} = \\frac{5}{6}$ and 1,000 + 5 = 1,005.\n"
            "50% of 80 = 40 is cut short, and 7 + 8 = 16 is wrong.")
    steps = [(s.lhs, s.verdict, s.line) for s in extract_steps(text)]
    assert [v for _, v, _ in steps] == ["correct", "correct", "correct", "correct",
                                        "unchecked", "wrong"]
    assert steps[-1] == ("7 + 8", "wrong", 3)


def test_process_reward_aggregation():
    steps = extract_steps("1+1 = 2\n2+2 = 5\n3+3 = 6\n4+4 = 8")
    assert process_reward(steps, "min") == 0.0
    assert process_reward(steps, "mean") == 0.75
    assert process_reward([], "min") == 0.0
    assert process_reward([], "mean", no_steps_reward=0.5) == 0.5
    with pytest.raises(ValueError, match="aggregation"):
        process_reward(steps, "max")
    result = verify_steps("1+1 = 2")
    assert result["reward"] == 1.0 and result["checked"] == 1 and result["steps"][0]["verdict"] == "correct"
    # repeating a true step does not outweigh a wrong one; a restated side checks nothing
    padded = extract_steps("1+1 = 2\n" * 50 + "2+2 = 5")
    assert process_reward(padded, "mean") == 0.5
    assert [s.verdict for s in extract_steps("2 = 2\nx + 1 = x + 1")] == ["unchecked"] * 2


def test_hacking_flags():
    clean = hacking_flags("<think>6*7 = 42</think>\\boxed{42}")
    assert not any(clean.values())
    assert hacking_flags("<think>so \\boxed{42}</think>I am done.")["answer_in_reasoning_only"]
    assert not hacking_flags("<think>so \\boxed{42}</think>\\boxed{42}")["answer_in_reasoning_only"]
    assert hacking_flags("\\boxed{3} or maybe \\boxed{4}")["several_answers"]
    assert hacking_flags("\\boxed{3 \\text{ or } 4}")["several_answers"]
    assert not hacking_flags("\\boxed{3} so \\boxed{3}")["several_answers"]
    assert hacking_flags("I think so. " * 60)["degenerate_repetition"]
    assert hacking_flags("\n".join(["wait"] * 6))["degenerate_repetition"]
    assert not hacking_flags("The sum of the first ten odd numbers is one hundred because each "
                             "step adds the next odd number to a growing square.")["degenerate_repetition"]
    assert hacking_flags("x" * 100, max_length=100)["length_at_cap"]
    assert hacking_flags("short", max_length=100, finish_reason="length")["length_at_cap"]
    assert not hacking_flags("x" * 99, max_length=100)["length_at_cap"]
    assert hacking_flags("First we add the numbers 然后我们得到答案是四十二")["language_switch"]
    assert not hacking_flags("Let alpha = α and beta = β, then α + β = γ")["language_switch"]


def test_hacking_counters():
    counters = HackingCounters()
    counters.update_many([hacking_flags("\\boxed{1} \\boxed{2}"), hacking_flags("\\boxed{1}")])
    logged = counters.as_dict()
    assert logged["hacking/episodes"] == 2
    assert logged["hacking/several_answers"] == 1 and logged["hacking/several_answers_rate"] == 0.5
    counters.reset()
    assert counters.as_dict()["hacking/episodes"] == 0


def test_hostile_reasoning_is_bounded():
    from rlvr_envs.rewards.process import MAX_STEPS

    many = verify_steps("1+1 = 2\n" * 5000)
    assert len(many["steps"]) == MAX_STEPS and many["reward"] == 1.0
    assert verify_steps("1 " * 200_000 + "= 1")["checked"] == 0   # a side too long to judge
    assert verify_steps("(" * 5000 + "1" + ")" * 5000 + " = 1")["checked"] == 0
