"""Each shaping formula against hand-computed values, with the edge cases."""

import pytest

from rlvr_envs.rewards.format import check_format, format_reward, split_reasoning
from rlvr_envs.rewards.kimi import kimi_length_penalty
from rlvr_envs.rewards.lengths import measure_length
from rlvr_envs.rewards.overlong import OverlongConfig, is_truncated, soft_overlong_penalty
from rlvr_envs.rewards.thinking import (
    ThinkingBudget,
    episode_mode,
    mode_from_prompt,
    tag_prompt,
    thinking_budget_penalty,
)

# -- R1 format -------------------------------------------------------------------------------------

GOOD_R1 = "<think>2+2 is 4</think><answer>4</answer>"


@pytest.mark.parametrize("completion, reason", [
    (GOOD_R1, "ok"),
    ("  <think>x</think>\n<answer>4</answer>\n", "ok"),
    ("<think>x</think><answer>4</answer> That is all.", "ok"),
    ("", "missing_think"),
    ("<answer>4</answer>", "missing_think"),
    ("<think>x<answer>4</answer>", "think_tags_unbalanced"),
    ("</think>x<think><answer>4</answer>", "think_tags_out_of_order"),
    ("<think>a<think>b</think>c</think><answer>4</answer>", "nested_think"),
    ("<think>a</think><think>b</think><answer>4</answer>", "several_think_blocks"),
    ("Sure. <think>a</think><answer>4</answer>", "think_not_first"),
    ("<think>a</think>", "missing_answer"),
    ("<think>a</think><answer>4</answer><answer>5</answer>", "several_answers"),
    ("<think>a</think><answer>4</answer> or \\boxed{5}", "several_answers"),
    ("<think>a</think></answer>4<answer>", "answer_tags_out_of_order"),
    ("<think>a</think><answer>4", "answer_tags_unbalanced"),
    ("<think>a</think>so <answer>4</answer>", "text_before_answer"),
    ("<think>a</think><answer>  </answer>", "empty_answer"),
    ("<think> </think><answer>4</answer>", "empty_reasoning"),
])
def test_r1_format_verdicts(completion, reason):
    verdict = check_format(completion, "r1", "on")
    assert verdict.reason == reason
    assert verdict.reward == (1.0 if reason == "ok" else 0.0)


@pytest.mark.parametrize("completion, reason", [
    ("<think>7*6=42</think>The answer is \\boxed{42}.", "ok"),
    ("<think>a</think>\\boxed{4} or \\boxed{5}", "several_answers"),
    ("<think>a</think>\\boxed{}", "empty_answer"),
    ("<think>a</think>42", "missing_answer"),
    ("<think>a</think><answer>4</answer>", "unexpected_answer_tags"),
    ("<think>\\boxed{4}</think>", "missing_answer"),
])
def test_boxed_format_verdicts(completion, reason):
    assert check_format(completion, "boxed", "on").reason == reason


def test_thinking_modes_in_the_format_reward():
    empty = "<think></think><answer>4</answer>"
    reasoned = GOOD_R1
    assert format_reward(empty, "r1", "off") == 1.0
    assert check_format(reasoned, "r1", "off").reason == "reasoning_in_no_think"
    assert format_reward(empty, "r1", "on") == 0.0
    assert format_reward(empty, "r1", "hybrid") == format_reward(reasoned, "r1", "hybrid") == 1.0
    with pytest.raises(ValueError, match="thinking must be one of"):
        check_format(empty, "r1", "sometimes")
    with pytest.raises(TypeError):
        check_format(None, "r1")  # type: ignore[arg-type]


def test_split_reasoning_sections():
    assert split_reasoning("<think>r</think>a") == split_reasoning("<think>r</think>a")
    s = split_reasoning("<think>r</think>a")
    assert (s.reasoning, s.answer, s.has_think_block) == ("r", "a", True)
    s = split_reasoning("<think>never closed \\boxed{3}")
    assert s.answer == "" and s.has_think_block
    s = split_reasoning("no tags \\boxed{3}")
    assert (s.reasoning, s.answer, s.has_think_block) == ("", "no tags \\boxed{3}", False)
    s = split_reasoning("stray r</think>after")
    assert (s.reasoning, s.answer) == ("stray r", "after")


# -- Kimi k1.5 length penalty ----------------------------------------------------------------------

def test_kimi_hand_computed():
    # lengths 10, 20, 30: lambda = 0.5, 0.0, -0.5
    assert kimi_length_penalty([10, 20, 30], [True, True, True]) == [0.5, 0.0, -0.5]
    # wrong ones get min(0, lambda)
    assert kimi_length_penalty([10, 20, 30], [False, False, False]) == [0.0, 0.0, -0.5]
    # mixed, weight 0.1: [0.05, min(0,0.25)=0 wrong, 0.1*-0.5]
    got = kimi_length_penalty([10, 15, 30], [True, False, True], weight=0.1)
    assert got == pytest.approx([0.05, 0.0, -0.05])


def test_kimi_edge_cases():
    assert kimi_length_penalty([], []) == []
    assert kimi_length_penalty([17], [True]) == [0.0]            # one completion
    assert kimi_length_penalty([5, 5, 5], [True, False, True]) == [0.0, 0.0, 0.0]  # equal lengths
    assert kimi_length_penalty([0, 10], [True, True]) == [0.5, -0.5]  # empty completion
    # warm-up: no penalty before step `warmup_steps`
    assert kimi_length_penalty([1, 3], [True, True], step=4, warmup_steps=5) == [0.0, 0.0]
    assert kimi_length_penalty([1, 3], [True, True], step=5, warmup_steps=5) == [0.5, -0.5]
    with pytest.raises(ValueError, match="2 lengths for 1"):
        kimi_length_penalty([1, 2], [True])


def test_lengths_in_tokens_or_chars():
    class WordTokenizer:
        def encode(self, text, add_special_tokens=False):
            return text.split()

    assert measure_length("a bb ccc") == 8
    assert measure_length("a bb ccc", WordTokenizer()) == 3
    assert measure_length("a bb ccc", lambda t: 42) == 42


# -- DAPO soft overlong ----------------------------------------------------------------------------

@pytest.mark.parametrize("length, expected", [
    (0, 0.0), (80, 0.0), (90, -0.5), (95, -0.75), (100, -1.0), (101, -1.0), (10_000, -1.0)])
def test_soft_overlong_hand_computed(length, expected):
    # L_max = 100, L_cache = 20: free up to 80, then (80 - L) / 20
    assert soft_overlong_penalty(length, 100, 20) == pytest.approx(expected)


def test_overlong_config_and_truncation():
    assert soft_overlong_penalty(100, 100, 0) == 0.0 and soft_overlong_penalty(101, 100, 0) == -1.0
    assert OverlongConfig.coerce((100, 20)) == OverlongConfig(100, 20)
    with pytest.raises(ValueError, match="L_cache"):
        OverlongConfig(100, 200)
    with pytest.raises(TypeError):
        OverlongConfig.coerce("100")
    assert is_truncated(100, 100) and not is_truncated(99, 100)
    assert is_truncated(3, 100, token_ids=[5, 6, 7], eos_token_ids=[2])
    assert not is_truncated(3, 100, token_ids=[5, 6, 2], eos_token_ids=[2])


# -- thinking budget and modes ---------------------------------------------------------------------

def test_thinking_budget_penalty():
    assert thinking_budget_penalty(100, 100) == 0.0
    assert thinking_budget_penalty(101, 100, weight=0.5) == -0.5           # step
    assert thinking_budget_penalty(150, 100, weight=0.4, ramp=100) == pytest.approx(-0.2)
    assert thinking_budget_penalty(500, 100, weight=0.4, ramp=100) == pytest.approx(-0.4)
    assert ThinkingBudget.coerce((10, 1.0, 5)) == ThinkingBudget(10, 1.0, 5)


def test_mode_tags():
    assert tag_prompt("Compute 1+1.", "off") == "Compute 1+1. /no_think"
    assert mode_from_prompt("x /think") == "on"
    assert mode_from_prompt([{"role": "user", "content": "x /no_think"}]) == "off"
    assert mode_from_prompt("/no_think then /think") == "on"
    assert mode_from_prompt("plain") is None
    assert episode_mode("hybrid", {"thinking_mode": "off"}) == "off"
    assert episode_mode("hybrid", {}) == "hybrid"
    assert episode_mode("on", {"thinking_mode": "off"}) == "on"


@pytest.mark.parametrize("max_length, cache", [(100, 20), (64, 64), (50, 1)])
def test_soft_overlong_agrees_with_trl(max_length, cache):
    """The env side cannot import trl (it brings torch); the formula is kept equal to TRL's."""
    from trl.rewards import get_soft_overlong_punishment

    trl_reward = get_soft_overlong_punishment(max_completion_len=max_length,
                                              soft_punish_cache=cache)
    lengths = list(range(0, max_length + 5))
    theirs = trl_reward(completion_ids=[[1] * n for n in lengths])
    ours = [soft_overlong_penalty(n, max_length, cache) for n in lengths]
    assert ours == pytest.approx(theirs)
