"""One reader of the answer section: the verifier, the format reward and the hacking monitors
agree on think blocks, `\\fbox`, nested boxes and answers left inside the reasoning."""

from __future__ import annotations

import pytest

from rlvr_envs.rewards.format import check_format, split_reasoning
from rlvr_envs.rewards.monitors import hacking_flags
from rlvr_envs.verify.math import extract_answer, verify_math
from rlvr_envs.verify.math.extract import boxes, stated_answers

TWO_BLOCKS = "<think>first try \\boxed{1}</think>Hmm.<think>again: 6*7</think>So \\boxed{42}."


def test_two_think_blocks_answer_section_follows_the_last_close():
    assert split_reasoning(TWO_BLOCKS).answer == "So \\boxed{42}."
    assert extract_answer(TWO_BLOCKS) == "42"
    assert verify_math(TWO_BLOCKS, "42").correct
    assert not verify_math(TWO_BLOCKS, "1").correct
    verdict = check_format(TWO_BLOCKS, "boxed", "on")
    assert verdict.reason == "several_think_blocks"
    assert verdict.sections.answer == "So \\boxed{42}."
    flags = hacking_flags(TWO_BLOCKS)
    assert not flags["several_answers"] and not flags["answer_in_reasoning_only"]
    # the box between the two blocks is reasoning for all three readers
    assert "\\boxed{1}" in split_reasoning(TWO_BLOCKS).reasoning


def test_fbox_is_a_box_for_every_caller():
    completion = "<think>6*7</think>The result is \\fbox{42}."
    assert verify_math(completion, "42").correct
    assert check_format(completion, "boxed", "on").ok
    assert not any(hacking_flags(completion).values())
    hidden = "<think>so \\fbox{42}</think>Done."
    assert verify_math(hidden, "42").reason == "no_answer"
    assert check_format(hidden, "boxed", "on").reason == "missing_answer"
    assert hacking_flags(hidden)["answer_in_reasoning_only"]


def test_nested_boxes_are_one_answer():
    completion = "<think>6*7</think>\\boxed{\\boxed{42}}"
    assert boxes("\\boxed{\\boxed{42}}") == ["\\boxed{42}"]
    assert extract_answer(completion) == "42"
    assert verify_math(completion, "42").correct
    assert check_format(completion, "boxed", "on").ok
    assert not hacking_flags(completion)["several_answers"]


def test_an_answer_inside_the_reasoning_only_scores_nothing():
    for completion in ("<think>so the answer is 42</think>I am done.",
                       "<think>so \\boxed{42}</think>I am done."):
        assert verify_math(completion, "42").reason == "no_answer"
        assert check_format(completion, "boxed", "on").reason == "missing_answer"
        assert hacking_flags(completion)["answer_in_reasoning_only"]
    opened = "<think>so \\boxed{42}"
    assert verify_math(opened, "42").reason == "no_answer"
    assert check_format(opened, "boxed", "on").reason == "think_tags_unbalanced"
    assert hacking_flags(opened)["answer_in_reasoning_only"]


def test_a_close_tag_without_an_open_tag_ends_the_reasoning():
    completion = "reasoning from a chat template that opened the block</think>\\boxed{42}"
    sections = split_reasoning(completion)
    assert sections.has_think_block and sections.answer == "\\boxed{42}"
    assert verify_math(completion, "42").correct


@pytest.mark.parametrize("text, expected", [
    ("Final Answer: The final answer is $\\frac{3}{4}$. I hope it is correct.", ["$\\frac{3}{4}$"]),
    ("Final Answer: The final answer is 12. I hope it is correct.", ["12"]),
    ("Total.\n#### 5\n#### 6", ["5", "6"]),
    ("The answer is 5. Actually, the answer is 6.", ["5", "6"]),
    ("To find the answer: first we add the two numbers. The answer is 9.", ["9"]),
    ("So the final answer is: $12$.", ["$12$"]),
])
def test_stated_answers(text, expected):
    assert stated_answers(text) == expected


def test_stated_hedges_and_a_stray_open_box():
    assert verify_math("#### 5\n#### 6", "5").reason == "hedged"
    assert verify_math("The answer is 5. Actually, the answer is 6.", "6").reason == "hedged"
    assert verify_math("The answer is 5. So the answer is 5.", "5").correct
    stray = "So \\boxed{5}.\n\nWait, let me double check: \\boxed{" + "5 + 0 = 5 " * 200
    assert verify_math(stray, "5").correct
    assert verify_math("\\boxed{" + "1" * 2000 + "}", "1").reason == "too_long"
