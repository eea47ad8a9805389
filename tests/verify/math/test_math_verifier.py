"""The strict math verifier: labelled cases, hedges, caps, gold checks (the deadline: test_math_deadline.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlvr_envs.verify.math import (
    REASONS,
    MathVerdict,
    check_gold,
    extract_answer,
    verify_math,
    warm_up,
)

CASES_PATH = Path(__file__).resolve().parent / "math_cases.jsonl"
CASES = [json.loads(line) for line in CASES_PATH.read_text(encoding="utf-8").splitlines() if line]
HACK_CATEGORIES = {"hedge", "hack", "no_answer", "unicode"}
REQUIRED_CATEGORIES = {
    "integer", "decimal", "fraction", "expression", "interval", "set", "tuple", "matrix",
    "equation", "inequality", "percentage", "units", "degrees", "choice", "text", "gsm8k",
    "answer_is", "r1", "multipart", "thousands", "hedge", "hack", "no_answer", "unicode",
    # the notation rules of docs/math.md
    "empty_set", "set_builder", "membership", "set_of_tuples", "plus_minus", "multibox",
    "chained_inequality", "abs_inequality", "or_union", "repeating_decimal", "scientific",
    "number_words", "base", "unicode_notation", "complex", "cube_root", "decoration", "named",
    "vector", "stated_hedge", "stray_box", "restate", "competition"}
STYLES = {"boxed", "r1-think", "answer-is", "gsm8k", "r1", "minerva", "multibox", "bare"}
# Generous: the labelled cases test verdicts, not speed, and CI boxes are loaded.
CASE_TIMEOUT = 20.0


@pytest.fixture(scope="module", autouse=True)
def _workers():
    warm_up()


def test_case_set_is_large_and_covers_every_category():
    assert len(CASES) >= 1000
    assert {c["style"] for c in CASES} == STYLES
    integer_golds = sum(1 for c in CASES if c["gold"].lstrip("-").replace(",", "").isdigit())
    assert integer_golds < len(CASES) / 2
    categories = {c["category"] for c in CASES}
    assert REQUIRED_CATEGORIES <= categories, REQUIRED_CATEGORIES - categories
    for case in CASES:
        assert set(case) <= {"gold", "completion", "label", "category", "answer_format", "style",
                             "question"}
        assert isinstance(case["label"], bool)
    for category in categories - HACK_CATEGORIES - {"unicode"}:
        labels = {c["label"] for c in CASES if c["category"] == category}
        assert labels == {True, False} or category in {"multipart"}, category
    assert all(not c["label"] for c in CASES if c["category"] in {"hedge", "hack", "no_answer"})


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{c['category']}" for i, c in enumerate(CASES)])
def test_labelled_case(case):
    verdict = verify_math(case["completion"], case["gold"],
                          answer_format=case.get("answer_format", "boxed"), timeout=CASE_TIMEOUT,
                          question=case.get("question"))
    assert isinstance(verdict, MathVerdict) and verdict.reason in REASONS
    assert verdict.correct == case["label"], verdict
    assert verdict.correct == (verdict.reason == "correct")


@pytest.mark.parametrize("completion, gold, reason", [
    ("so \\boxed{42}", "42", "correct"),
    ("so \\boxed{41}", "42", "mismatch"),
    ("no box here", "42", "no_answer"),
    ("\\boxed{}", "42", "no_answer"),
    ("<think>\\boxed{42}</think>", "42", "no_answer"),
    ("<think>still thinking \\boxed{42}", "42", "no_answer"),
    ("\\boxed{41} or \\boxed{42}", "42", "hedged"),
    ("\\boxed{41 \\text{ or } 42}", "42", "hedged"),
    ("\\boxed{1, 2, 3, 4}", "3", "hedged"),
    ("\\boxed{42 42}", "42", "hedged"),
    ("\\boxed{" + "1" * 5000 + "}", "42", "too_long"),
])
def test_reasons(completion, gold, reason):
    verdict = verify_math(completion, gold, timeout=CASE_TIMEOUT)
    assert verdict.reason == reason
    assert verdict.correct == (reason == "correct")


def test_extraction_reads_the_answer_section_only():
    assert extract_answer("<think>\\boxed{1}</think>The answer is \\boxed{2}.") == "2"
    assert extract_answer("<think>\\boxed{1}</think>nothing") is None
    assert extract_answer("<think><answer>1</answer></think><answer>2</answer>", "r1") == "2"
    assert extract_answer("reasoning \\boxed{5}", "r1") is None
    assert extract_answer("<answer>\\boxed{\\frac{1}{2}}</answer>", "r1") == "\\frac{1}{2}"
    assert extract_answer("Total 3+4.\n#### 7") == "7"
    assert extract_answer("So the final answer is: $12$.") == "12"
    assert extract_answer("\\fbox{3} then \\boxed{\\boxed{4}}") == "3, 4"
    with pytest.raises(ValueError, match="answer_format"):
        extract_answer("\\boxed{1}", "latex")


def test_several_boxes_count_only_when_the_gold_has_several_parts():
    assert verify_math("\\boxed{2} and \\boxed{-3}", "-3, 2").correct
    assert verify_math("x=\\boxed{2}, y=\\boxed{-3}", "(2, -3)").correct
    assert not verify_math("x=\\boxed{-3}, y=\\boxed{2}", "(2, -3)").correct
    assert verify_math("\\boxed{2} and \\boxed{-3}", "2").reason == "hedged"
    assert verify_math("\\boxed{0.5}, i.e. \\boxed{\\frac{1}{2}}", "\\frac12").correct


def test_a_chain_of_equalities_with_two_different_values_is_a_mismatch():
    # read by its last side, `x = 8 = 7` scored 1 for the gold 7: a guess between 8 and 7
    for answer in ("x = 8 = 7", "2+6 = 7", "x = \\frac{16}{2} = 7", "7 = 8 = 7"):
        assert verify_math(f"\\boxed{{{answer}}}", "7").reason == "mismatch", answer
    for answer in ("x = 2 + 5 = 7", "x = \\frac{14}{2} = 7", "7 = 7"):
        assert verify_math(f"\\boxed{{{answer}}}", "7", timeout=CASE_TIMEOUT).correct, answer
    assert verify_math("\\boxed{x = 2 \\text{ or } 3}", "2, 3").correct


def test_a_named_number_with_thousands_separators_is_one_number():
    # `x = 1{,}000` was split at the comma and hedged
    for answer in ("x = 1,000", "x = 1{,}000", "y = 10,\\!000", "1\\!,\\!000"):
        assert verify_math(f"\\boxed{{{answer}}}", "1000" if "10," not in answer else "10000").correct, answer
    assert verify_math("\\boxed{x = 1,001}", "1000").reason == "mismatch"


def test_exact_comparison_of_decimals():
    assert verify_math("\\boxed{0.333}", "\\frac{1}{3}").reason == "mismatch"
    assert verify_math("\\boxed{0.3333333333}", "\\frac{1}{3}", timeout=CASE_TIMEOUT).reason == "mismatch"
    assert verify_math("\\boxed{0.25}", "\\frac{1}{4}").correct
    assert verify_math("\\boxed{1.41421356}", "\\sqrt{2}", timeout=CASE_TIMEOUT).reason == "mismatch"


def test_common_answers_never_start_the_symbolic_workers():
    script = (
        "from rlvr_envs.verify.math import verify_math\n"
        "from rlvr_envs.verify.math import deadline\n"
        "cases = [('\\\\boxed{42}', '42'), ('\\\\boxed{0.5}', '\\\\frac{1}{2}'), ('\\\\boxed{(C)}', 'C'),\n"
        "         ('#### 1,234', '1234'), ('\\\\boxed{25\\\\%}', '25'), ('\\\\boxed{[1, 2)}', '[1,2)'),\n"
        "         ('\\\\boxed{x^2+2x+1}', '(x+1)^2'), ('\\\\boxed{y = 3+2x}', 'y=2x+3'),\n"
        "         ('\\\\boxed{2} or \\\\boxed{3}', '2'), ('\\\\boxed{\\\\text{Monday}}', 'monday')]\n"
        "print([verify_math(c, g).reason for c, g in cases])\n"
        "print(deadline._pool is None)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, check=True).stdout.split("\n")
    assert out[0] == str(["correct"] * 8 + ["hedged", "correct"])
    assert out[1] == "True"


def test_ten_megabyte_completion_is_refused_before_parsing():
    huge = "x" * 10_000_000 + "\\boxed{42}"
    started = time.monotonic()
    assert verify_math(huge, "42").reason == "too_long"
    assert time.monotonic() - started < 5.0
    # read anyway when the cap allows it: the scan is linear and needs no sympy
    assert verify_math(huge, "42", max_completion_chars=20_000_000).correct


def test_nesting_and_box_spam_are_refused_quickly():
    deep = "\\boxed{" + "{" * 10_000 + "42" + "}" * 10_000 + "}"
    assert verify_math(deep, "42").reason == "too_long"
    parens = "\\boxed{" + "(" * 200 + "42" + ")" * 200 + "}"
    assert verify_math(parens, "42").reason == "too_long"
    unclosed = "\\boxed{" * 200_000
    started = time.monotonic()
    assert verify_math(unclosed, "42").reason in ("hedged", "too_long")
    assert verify_math("\\boxed{1}" * 1000, "1").reason == "hedged"
    # patterns that make naive regex extraction quadratic
    assert verify_math("<answer>" * 125_000, "42", answer_format="r1").reason == "no_answer"
    assert verify_math("the answer" + " " * 900_000, "42").reason == "no_answer"
    assert verify_math("{" * 900_000, "42").reason == "no_answer"
    assert time.monotonic() - started < 10.0


@pytest.mark.parametrize("gold, answer, expected", [
    ("2\\sqrt{2}", "\\sqrt{8}", True),
    ("\\frac{1}{\\sqrt{2}}", "\\frac{\\sqrt2}{2}", True),
    ("(1+\\sqrt2)^2", "3+2\\sqrt2", True),
    ("\\frac{\\pi}{4}", "\\frac{1}{4}\\pi", True),
    ("(x+1)^2", "x^2+2x+1", True),
    ("y = 2x + 3", "y = 3 + 2x", True),
    ("2x + 3y = 6", "4x + 6y = 12", True),
    ("120", "5!", True),
    ("10", "\\binom{5}{2}", True),
    ("4\\sqrt{3}", "3\\sqrt{4}", False),
    ("\\sqrt{2}", "1.41421356", False),
    ("\\frac{1}{3}", "0.3333333333333333", False),
    ("\\sqrt{x^2}", "x", False),
    ("y = 2x + 3", "y = 2x - 3", False),
    ("x^2 + y^2 = 25", "x^2 + y^2 = 5", False),
    ("x^2 + y^2 = 25", "2x^2 + 2y^2 = 50", True),
    ("(x-1)^2 = 0", "x - 1 = 0", None),  # same roots, not proportional: math-verify decides
    ("\\sin(1)^2", "1 - \\cos(1)^2", None),  # floating point agreement is never enough
    ("\\sin(x)", "\\sin(x) + 10^{-20}", None),
    ("9^{9^{9}}", "5", None),
    ("\\log_2 8", "3", None),
])
def test_evaluation_fast_path_decides_only_when_sound(gold, answer, expected):
    from rlvr_envs.verify.math.algebra import algebra_equal

    assert algebra_equal(gold, answer) is expected


@pytest.mark.parametrize("gold", ["", "   ", "\\frac{1}{", "x" * 2000, "\\boxed{}", "@@@",
                                  "\\frac{}{}", "(" * 40 + "1" + ")" * 40, None, 42])
def test_check_gold_refuses_unscorable_golds(gold):
    with pytest.raises(ValueError):
        check_gold(gold)


@pytest.mark.parametrize("gold", ["42", "-\\frac{3}{4}", "\\frac{\\sqrt{3}}{2}", "(1, 2]",
                                  "\\{1, 2\\}", "\\text{Monday}", "C", "x \\geq 2", "y = 2x + 3",
                                  "25\\%", "30^\\circ", "\\begin{pmatrix}1 & 2\\\\3 & 4\\end{pmatrix}"])
def test_check_gold_accepts_scorable_golds(gold):
    check_gold(gold)
    assert verify_math(f"\\boxed{{{gold}}}", gold, timeout=CASE_TIMEOUT).correct


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(TypeError, match="completion must be a str"):
        verify_math(b"\\boxed{1}", "1")
    with pytest.raises(ValueError, match="answer_format"):
        verify_math("\\boxed{1}", "1", answer_format="json")
    with pytest.raises(ValueError, match="timeout"):
        verify_math("\\boxed{1}", "1", timeout=0)
    with pytest.raises(ValueError, match="empty"):
        verify_math("\\boxed{1}", "")


_PIECES = ["\\boxed{", "}", "{", "\\frac", "\\sqrt", "^", "_", "(", ")", "[", "]", "\\{", "\\}",
           ",", " or ", "=", "<", "\\le", "x", "42", "0.5", "-", "\\pi", "\\text{", "cm", "%",
           "\\%", "</think>", "<think>", "<answer>", "</answer>", "####", "The answer is ",
           "\\infty", "\\cup", "&", "\\\\", "\\begin{pmatrix}", "\\end{pmatrix}", "\u200b", "."]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join),
       st.sampled_from(["42", "\\frac{1}{2}", "(1, 2]", "x > 2", "1, -3", "C", "\\sqrt{2}"]))
def test_any_completion_gets_a_verdict(completion, gold):
    verdict = verify_math(completion, gold, timeout=CASE_TIMEOUT)
    assert verdict.reason in REASONS
    assert verdict.correct == (verdict.reason == "correct")


def test_calls_from_many_threads_agree_with_sequential_calls():
    sample = CASES[::7]
    expected = [verify_math(c["completion"], c["gold"], answer_format=c.get("answer_format", "boxed"),
                            timeout=CASE_TIMEOUT).correct for c in sample]
    results: list = [None] * len(sample)

    def work(i):
        c = sample[i]
        results[i] = verify_math(c["completion"], c["gold"],
                                 answer_format=c.get("answer_format", "boxed"),
                                 timeout=CASE_TIMEOUT).correct

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(sample))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == expected
