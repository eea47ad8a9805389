"""Second guesses after the final answer, what the question says about an answer (options,
operations to carry out, simplest form, rounding) and notation models write (red team of
2026-12-06, round 5: benchmarks/data/math_redteam_r5_cases.jsonl)."""

import pytest

from rlvr_envs.verify.math import verify_math
from rlvr_envs.verify.math.question import question_options

WORK = "Let the number be $n$. Then $3n - 7 = 8$, so $3n = 15$ and $n = 5$.\n\n"


@pytest.mark.parametrize("tail", [
    "The answer is $\\boxed{5}$. Hmm, actually maybe it's $6$.",
    "The answer is $\\boxed{5}$. Although 6 is also plausible.",
    "The answer is $\\boxed{5}$. I'm not sure; 6 is also possible.",
    "The answer is $\\boxed{5}$. Could also be 6 depending on interpretation.",
    "The answer is $\\boxed{5}$. Then again, 6 might be right.",
    "The answer is between 5 and 6, I'd say $\\boxed{5}$, but $6$ is also plausible.",
    "The answer is $\\boxed{5}$. On reflection I think it's 6.",
    "So $\\boxed{5}$ if the items are distinct; for identical items, the count is 6.",
])
def test_a_second_value_after_the_box_is_a_hedge(tail):
    verdict = verify_math(WORK + tail, "5")
    assert not verdict.correct and verdict.reason == "hedged"


@pytest.mark.parametrize("tail", [
    "<answer>5</answer> Actually 6.",
    "<answer>5</answer>\nOr maybe 6.",
    "<answer>5</answer>\nOn reflection I think it's 6.",
])
def test_a_second_value_after_the_answer_tag_is_a_hedge(tail):
    completion = "<think>\n" + WORK + "</think>\n" + tail
    assert verify_math(completion, "5", answer_format="r1").reason == "hedged"


def test_a_second_choice_after_a_stated_answer_is_a_hedge():
    assert verify_math("The answer is (A). Actually, B) might also work.", "A").reason == "hedged"


@pytest.mark.parametrize("tail", [
    "The answer is $\\boxed{5}$. Check: $3(5) - 7 = 8$ is correct.",
    "The answer is $\\boxed{5}$. Indeed, 5 is also correct when $n$ may be negative.",
    "The answer is $\\boxed{5}$; for the check, the difference $3n - 7$ is 8 as required.",
    "<answer>5</answer> Actually 5.",
])
def test_a_check_or_the_same_value_after_the_answer_is_no_hedge(tail):
    fmt = "r1" if tail.startswith("<answer>") else "boxed"
    assert verify_math(WORK + tail, "5", answer_format=fmt).correct


AMC = ("What is the smallest positive integer $n$ such that $n!$ ends in exactly two zeros? "
       "$\\textbf{(A)}\\ 5 \\qquad \\textbf{(B)}\\ 9 \\qquad \\textbf{(C)}\\ 10 \\qquad "
       "\\textbf{(D)}\\ 15 \\qquad \\textbf{(E)}\\ 20$")


def test_question_options_are_read_from_the_question():
    assert question_options(AMC) == {"A": "5", "B": "9", "C": "10", "D": "15", "E": "20"}
    assert question_options("Compute $(3)(4)$.") == {}


@pytest.mark.parametrize("boxed,correct", [
    ("\\textbf{(C)}\\ 10", True),
    ("\\textbf{(C)}~10", True),
    ("\\textbf{(C) }10", True),
    ("\\textbf{(C)}\\ 15", False),  # (C) is 10 in the question: the value is not the option's
    ("\\textbf{(D)}\\ 15", False),
])
def test_an_option_with_its_value_is_checked_against_the_question(boxed, correct):
    completion = f"So $n = 10$.\n\nTherefore, the answer is $\\boxed{{{boxed}}}$."
    assert verify_math(completion, "\\text{(C)}", question=AMC).correct is correct


@pytest.mark.parametrize("question,boxed,gold", [
    ("Compute $\\dbinom{8}{3}$.", "\\binom{8}{5}", "56"),
    ("Compute $\\dbinom{8}{3}$.", "\\binom{7}{2}+\\binom{7}{3}", "56"),
    ("Compute $\\dbinom{8}{3}$.", "\\frac{8!}{3!\\,5!}", "56"),
    ("Evaluate $\\log_4 8$.", "\\log_{16} 64", "\\frac{3}{2}"),
    ("Simplify $\\sqrt{72}$.", "2\\sqrt{18}", "6\\sqrt{2}"),
    ("Simplify $\\sqrt{72}$.", "3\\sqrt{8}", "6\\sqrt{2}"),
    ("Simplify $\\sqrt{72}$.", "\\sqrt{36}\\sqrt{2}", "6\\sqrt{2}"),
])
def test_the_task_written_again_in_another_form_is_refused(question, boxed, gold):
    verdict = verify_math(f"So the answer is $\\boxed{{{boxed}}}$.", gold, question=question)
    assert not verdict.correct and verdict.reason == "mismatch"


@pytest.mark.parametrize("question,boxed,gold", [
    ("Compute $\\dbinom{8}{3}$.", "56", "56"),
    ("How many committees of three can be chosen from ten people?", "\\binom{10}{3}", "120"),
    ("What is the length of the diagonal of a square with side 6?", "\\sqrt{72}", "6\\sqrt{2}"),
    ("Simplify $\\sqrt{72}$.", "6\\sqrt{2}", "6\\sqrt{2}"),
    ("Find $x$ if $2^x = 3$.", "\\log_2 3", "\\log_2 3"),
])
def test_a_value_in_final_or_allowed_form_still_pays(question, boxed, gold):
    assert verify_math(f"So the answer is $\\boxed{{{boxed}}}$.", gold, question=question).correct


ROUNDING = "A square has area 20. What is its side length, to the nearest hundredth?"


@pytest.mark.parametrize("boxed,question,correct", [
    ("\\sqrt{20} \\approx 4.47", ROUNDING, True),
    ("\\approx 4.47", ROUNDING, True),
    ("\\sqrt{20} \\approx 4.48", ROUNDING, False),  # approximates nothing: the exact side counts
    ("\\approx 4.47", None, False),  # without a rounding question, `\approx` is a qualifier
])
def test_a_rounding_question_takes_the_decimal(boxed, question, correct):
    completion = f"The side is $\\sqrt{{20}}$.\n\nTherefore, the answer is $\\boxed{{{boxed}}}$."
    assert verify_math(completion, "4.47", question=question).correct is correct


@pytest.mark.parametrize("boxed,gold", [
    ("{10 \\choose 3}", "120"),
    ("10 \\choose 3", "120"),
    ("{}_{10}C_3", "120"),
    ("\\text{-}5", "-5"),
    ("\\textdollar 18", "18"),
    ("12,", "12"),
    ("0.666\\ldots", "\\frac{2}{3}"),
    ("0.1666\\dots", "\\frac{1}{6}"),
    ("0.(6)", "\\frac{2}{3}"),
    ("0.142857142857\\ldots", "\\frac{1}{7}"),
    ("]2,3[", "(2,3)"),
    ("[1,4[", "[1,4)"),
    ("x > 2 \\text{ and } x < 3", "(2,3)"),
    ("x < 4 \\text{ and } x \\ge 1", "[1,4)"),
])
def test_notation_models_write(boxed, gold):
    assert verify_math(f"So the answer is $\\boxed{{{boxed}}}$.", gold).correct


@pytest.mark.parametrize("boxed,gold", [
    ("{10 \\choose 4}", "120"),
    ("0.666\\ldots", "\\frac{1}{6}"),
    ("3.3166\\ldots", "\\frac{199}{60}"),  # a digit twice is no cycle: a truncated decimal
    ("]2,3[", "[2,3]"),
    ("x > 2 \\text{ and } x < 3", "[2,3]"),
    ("x > 2 \\text{ and } y < 3", "(2,3)"),
])
def test_notation_keeps_the_value_it_reads(boxed, gold):
    assert not verify_math(f"So the answer is $\\boxed{{{boxed}}}$.", gold).correct


@pytest.mark.parametrize("question,boxed,correct", [
    ("Find the line $y = mx + b$ through $(1,1)$ and $(2,4)$. Enter $(m,b)$.", "b = -2, m = 3", True),
    ("Find the line $y = mx + b$ through $(1,1)$ and $(2,4)$. Enter $(m,b)$.", "m = 3, b = -2", True),
    ("Find the line $y = mx + b$ through $(1,1)$ and $(2,4)$. Enter $(m,b)$.", "(b,m) = (-2,3)", True),
    ("Find the line $y = mx + b$ through $(1,1)$ and $(2,4)$. Enter $(m,b)$.", "b = 3, m = -2", False),
    ("Find the line $y = mx + b$ through $(1,1)$ and $(2,4)$. Enter $(m,b)$.", "(b,m) = (3,-2)", False),
    ("Convert $(1,\\sqrt{3})$ to polar coordinates $(r,\\theta)$.",
     "\\theta = \\frac{\\pi}{3}, r = 2", True),
    ("Solve for $(y, x)$: $y = x + 2$, $y = 3x$. Enter $(y,x)$.", "x = 3, y = 1", False),
])
def test_named_values_follow_the_tuple_the_question_asks_for(question, boxed, correct):
    gold = "(2,\\frac{\\pi}{3})" if "polar" in question else "(3,1)" if "(y,x)" in question \
        else "(3,-2)"
    verdict = verify_math(f"So the answer is $\\boxed{{{boxed}}}$.", gold, question=question)
    assert verdict.correct is correct, verdict


@pytest.mark.parametrize("tail", [
    "Then again, 6 would work too.", ", though 6 also fits.", "I'd also accept 6.",
    "Honestly, **6** seems more likely.", "Hmm, **6** is also plausible.", "Correction: 6.",
    "Wait, I should double-check: it's 6.", "A case could be made for 6 as well.",
    "My second choice would be 6.", "6 is another possibility.", "Both 8 and 6 are defensible.",
    "The answer may well be 6.", "Probably 6 is intended.", "Vielleicht ist die Antwort 6.",
    "也可能是 6。",
])
def test_more_second_guesses_are_hedges(tail):
    completion = "The divisors are 1, 2, 3, 5, 6, 10, 15, 30.\n\nThe answer is $\\boxed{8}$. " + tail
    assert verify_math(completion, "8").reason == "hedged"


@pytest.mark.parametrize("question,boxed,gold,correct", [
    ("Compute $\\sum_{k=1}^{10} k$.", "\\sum_{j=1}^{10} j", "55", False),
    ("Compute $\\sum_{k=1}^{10} k$.", "1+2+\\cdots+10", "55", False),
    ("Compute $5!$.", "\\Gamma(6)", "120", False),
    ("Compute $\\dbinom{8}{3}$.", "\\binom{8}{3} = 56", "56", True),
    ("Simplify $\\sqrt{50}$.", "50^{1/2}", "5\\sqrt{2}", False),
    ("Simplify $\\sqrt{50}$.", "\\sqrt[4]{2500}", "5\\sqrt{2}", False),
    ("Simplify $\\sqrt{50}$.", "\\frac{10}{\\sqrt{2}}", "5\\sqrt{2}", False),
    ("To simplify the computation, find the diagonal of a 5 by 5 square.", "\\sqrt{50}",
     "5\\sqrt{2}", True),
    ("Round your answer to the nearest whole number: 100 miles in 3 hours, in mph?",
     "\\frac{100}{3} \\approx 33", "33", True),
    ("A round table seats 8. In how many ways?", "\\approx 5040", "5040", False),
    ("A round table seats 8. What is the probability?", "\\frac{25}{216} \\approx 0.116",
     "\\frac{25}{216}", True),
    ("How many primes are less than 20? A) 6 B) 7 C) 8 D) 9 E) 10", "(D) 8", "8", False),
    ("How many primes are less than 20? A. 6 B. 7 C. 8 D. 9 E. 10", "C. 8", "8", True),
    ("Which is largest? $\\textbf{(A)}\\ \\sqrt3 \\qquad \\textbf{(B)}\\ 2\\sqrt3$",
     "\\textbf{(A)}\\ 2\\sqrt3", "2\\sqrt{3}", False),
])
def test_what_the_question_asks_round_6(question, boxed, gold, correct):
    verdict = verify_math(f"So the answer is $\\boxed{{{boxed}}}$.", gold, question=question)
    assert verdict.correct is correct, verdict


@pytest.mark.parametrize("boxed,gold", [
    ("2 < x \\text{ and } x < 3", "(2,3)"),
    ("x \\geq 1 \\text{ and } 4 > x", "[1,4)"),
])
def test_both_bounds_on_either_side(boxed, gold):
    assert verify_math(f"So the answer is $\\boxed{{{boxed}}}$.", gold).correct


# After the final answer a hedge word is judged by the values it offers, not by the word:
# another method reaching the same value pays, another value (in digits, words, another
# language, an option letter, a change of the answer) stays 0.
@pytest.mark.parametrize("tail", [
    "The answer is $\\boxed{5}$. Alternatively, one can count the complement, which also gives 5.",
    "The answer is $\\boxed{5}$. Or, equivalently, $\\frac{10}{2}$.",
    "The answer is $\\boxed{5}$. Alternatively, subtract first: $15 - 10 = 5$.",
    "The answer is $\\boxed{5}$. Perhaps the intended answer is 5, though.",
    "The answer is $\\boxed{5}$. (or 5)",
    "The answer is $\\boxed{5}$, or five.",
    "The answer is $\\boxed{5}$ (or equivalently $\\frac{15}{3}$)",
    "The answer is $\\boxed{5}$. Maybe it's easier to see by listing: 1, 2, 3, 4, 5, which is 5 numbers.",
    "The answer is 5. Alternatively, $10/2 = 5$.",
])
def test_an_explanation_after_a_hedge_word_that_keeps_the_value_pays(tail):
    assert verify_math(WORK + tail, "5").correct


@pytest.mark.parametrize("tail", [
    "\\boxed{5}. Alternatively, one can count the complement, which gives 7.",
    "\\boxed{5}. Alternatively, count the complement.\n\nThis gives 7.",
    "\\boxed{5}. I am fairly sure. Or 6.",
    "\\boxed{5}. Maybe 6, 7, 8.",
    "\\boxed{5}. Alternatively 5. Or 6.",
    "\\boxed{5}. Maybe I miscounted: 6 apples.",
    "\\boxed{5}. Maybe not, and 6 instead.",
    "\\boxed{5}. Or, equivalently, $3 + 2 = 6$.",
    "\\boxed{5}. Alternatively, $n = 6$.",
    "\\boxed{5}. Alternatively, the answer is six.",
    "\\boxed{5}. Or maybe five-ish.",
    "\\boxed{5}. Alternatively, the count is $\\text{six}$.",
    "\\boxed{5}. Vielleicht sechs.",
    "\\boxed{5}. Alternatively, the answer is sieben.",
    "\\boxed{5}. Peut-être six.",
    "\\boxed{5}. Quizás seis.",
    "\\boxed{5}. 或者是六。",
    "\\boxed{5}. Или шесть.",
    "\\boxed{5}. Perhaps VI.",
    "\\boxed{5}. Alternatively, (B).",
    "\\boxed{5}. Or maybe B.",
    "\\boxed{5}. Or its negative.",
    "\\boxed{5}. Or perhaps twice that.",
    "\\boxed{5}. Alternatively, one more than that.",
    "\\boxed{5} or the other root",
    "\\boxed{5} (or possibly 6)",
    "$\\boxed{5}$ / $5$",
    "\\boxed{} Or maybe 5.",
    "The answer is 5. Alternatively, 6.",
    "#### 5\nAlternatively 6",
    "<answer>5</answer> or 6",
])
def test_another_value_after_a_hedge_word_stays_0(tail):
    assert not verify_math(WORK + tail, "5").correct


@pytest.mark.parametrize("completion,gold", [
    ("\\boxed{1}. Alternatively, $-3$.", "1, -3"),
    ("\\boxed{1}. It could also be -3", "\\{1, -3\\}"),
    ("\\boxed{C}. Alternatively, (D).", "C"),
    ("\\boxed{\\text{(C)}}. Alternatively, option D.", "\\text{(C)}"),
])
def test_a_second_guess_is_no_part_of_a_gold_of_several_parts(completion, gold):
    assert not verify_math(completion, gold).correct


def test_an_answer_tag_after_a_hedge_word_in_the_r1_format():
    think = "<think>\n" + WORK + "</think>\n"
    assert verify_math(think + "<answer>5</answer>\nAlternatively, $15/3 = 5$.", "5",
                       answer_format="r1").correct
    assert not verify_math(think + "<answer>5</answer>\nAlternatively, 6.", "5",
                           answer_format="r1").correct
