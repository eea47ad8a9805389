"""Red-team round 3 (findings/r3/math.md): words that change a number's value are never dropped
as units, every constant side of a chain of equalities must agree, the question-copy rule never
refuses a final value, and notes and congruences that keep the value are read."""

from __future__ import annotations

import pytest

from rlvr_envs.verify.math import verify_math, warm_up

TIMEOUT = 20.0  # generous: these test verdicts, not speed


@pytest.fixture(scope="module", autouse=True)
def _workers():
    warm_up()


def _verdicts(pairs, question=None):
    """{(answer, gold): reason} for each boxed answer, so one failure shows them all."""
    return {(a, g): verify_math(f"So the final answer is $\\boxed{{{a}}}$.", g, timeout=TIMEOUT,
                                question=question).reason for a, g in pairs}


def _wrong(verdicts, expected):
    return {pair: reason for pair, reason in verdicts.items() if (reason == "correct") != expected}


# --- 1. value words are not units ----------------------------------------------------------

VALUE_WORDS = [  # each scored 1.0 against the gold 3 (ours and math-verify)
    "3\\text{ thousands}", "3 \\text{ millions}", "3\\text{k}", "3 \\mathrm{k}", "3\\,\\mathrm{k}",
    "3\\text{M}", "3\\text{ bn}", "3 \\text{ lakh}", "3 \\text{ tens}", "3 \\text{ gross}",
    "3 \\text{ fifths}", "3 \\text{ eighths}", "3 \\text{ millionths}", "3 \\text{ ppm}",
    "3 \\text{ per mille}", "3 \\text{ basis points}", "3 \\text{ max}", "3 \\text{ maximum}",
    "3 \\text{ minimum}",
    # the rule, not the list: other scales, fractions, bounds and abbreviations
    "3 \\text{ crore}", "3 \\text{ twelfths}", "3 \\text{ sixteenths}", "3 \\text{ thirds}",
    "3 \\text{ twenties}", "3 \\text{ tops}", "3 \\text{ ppb}", "3 \\text{ bps}", "3\\text{K}",
    "3\\text{ mil}", "3\\text{ MM}", "3 \\text{ dozen eggs}", "3 \\text{ max apples}",
    "3 thousands", "3M", "x = 3\\text{k}", "\\$3\\text{k}", "3 \\textrm{ lakh}",
]


def test_words_that_change_a_number_are_never_dropped_as_units():
    assert _wrong(_verdicts([(a, "3") for a in VALUE_WORDS]), expected=False) == {}


def test_plural_scale_words_scale_the_number():
    # `3 \text{ thousands}` was 3 and not 3000: the verdict was inverted both ways
    right = [("3\\text{ thousands}", "3000"), ("3 thousands", "3000"),
             ("1.5\\text{ millions}", "1500000"), ("3 \\text{ thousand}", "3000")]
    assert _wrong(_verdicts(right), expected=True) == {}


REAL_UNITS = [  # answers models write, each equal to its bare gold
    ("5\\text{ cm}", "5"), ("12 \\text{ apples}", "12"), ("\\$5", "5"), ("5 \\text{ dollars}", "5"),
    ("30\\text{ minutes}", "30"), ("30\\text{ min}", "30"), ("3 \\text{ hours}", "3"),
    ("500 \\text{ mL}", "500"), ("5 \\text{ L}", "5"), ("2.5 \\text{ kg}", "2.5"),
    ("10 \\text{ cm}^2", "10"), ("12 \\text{ square units}", "12"), ("25\\text{ sq ft}", "25"),
    ("64 \\text{ cubic inches}", "64"), ("20 \\text{ miles per hour}", "20"),
    ("50 \\text{ mph}", "50"), ("60\\text{ km/h}", "60"), ("16 \\text{ years old}", "16"),
    ("18 \\text{ people}", "18"), ("5 \\text{ children}", "5"), ("4 \\text{ ways}", "4"),
    ("720 \\text{ arrangements}", "720"), ("3 \\text{ real roots}", "3"),
    ("5 \\text{ red marbles}", "5"), ("75 \\text{ cents}", "75"), ("45 \\text{ degrees}", "45"),
    ("6 \\text{ feet}", "6"), ("1 \\text{ hour}", "1"), ("2\\sqrt{2}\\text{ cm}", "2\\sqrt{2}"),
    ("\\frac{\\pi}{3} \\text{ radians}", "\\frac{\\pi}{3}"), ("3 \\text{ units squared}", "3"),
]


def test_real_units_are_still_dropped_and_value_words_refused_with_them():
    assert _wrong(_verdicts(REAL_UNITS), expected=True) == {}
    # the two kinds side by side: the unit word is dropped, the value word is not
    assert _wrong(_verdicts([("3 \\text{ apples}", "3"), ("3 \\text{ lakh}", "3")]),
                  expected=True) == {("3 \\text{ lakh}", "3"): "mismatch"}


# --- 2. chains of equalities ----------------------------------------------------------------

FALSE_CHAINS = [("8 = x = 7", "7"), ("8 = n = 7", "7"), ("\\frac{16}{2} = x = 7", "7"),
                ("a = 8 = b = 7", "7"), ("8 = f(2) = 7", "7"), ("7 = x = 8", "8"),
                ("8! = 7", "7"), ("|8| = 7", "7"), ("8\\% = 7", "7"), ("\\$8 = 7", "7"),
                ("8^\\circ = 7", "7"), ("0.\\overline{9} = 7", "7"), ("\\infty = 7", "7"),
                ("8 != 7", "7")]
TRUE_CHAINS = [("x = 2 + 5 = 7", "7"), ("x = \\frac{14}{2} = 7", "7"), ("5! = 120", "120"),
               ("\\binom{5}{2} = 10", "10"), ("2^{10} = 1024", "1024"), ("|-7| = 7", "7"),
               ("0.\\overline{9} = 1", "1"), ("\\frac{1}{2} = 0.5 = 50\\%", "\\frac12"),
               ("50\\% = \\frac{1}{2}", "\\frac12"), ("\\$8 = 8 \\text{ dollars}", "8"),
               ("90^\\circ = \\frac{\\pi}{2}", "\\frac{\\pi}{2}"), ("\\sqrt{49} = 7", "7"),
               ("A = \\pi r^2 = 25\\pi", "25\\pi"), ("P = \\frac{3}{8} = 0.375", "\\frac38")]


def test_every_constant_side_of_a_chain_must_agree_with_every_other():
    # only neighbouring sides of plain arithmetic were compared: `8 = x = 7` scored 1 for 7
    assert _wrong(_verdicts(FALSE_CHAINS), expected=False) == {}
    assert _wrong(_verdicts(TRUE_CHAINS), expected=True) == {}


# --- 3. the question-copy rule --------------------------------------------------------------

MARBLES = ("A bag holds 3 red marbles and 5 blue marbles, 8 marbles in all. One marble is drawn "
           "at random. What is the probability that it is red? Express your answer as a common "
           "fraction.")
COINS = ("A fair coin is flipped 3 times. What is the probability of exactly 2 heads? Express "
         "your answer as a common fraction. (There are 8 outcomes.)")
ANGLE = ("In triangle $ABC$, $AB = AC$ and $\\angle B = 70^\\circ$. "
         "What is the measure of $\\angle C$?")
SIDE = ("An isosceles triangle has two sides of length $5\\text{ cm}$ and a base of "
        "$8\\text{ cm}$. "
        "How long is the third side?")
CHOICES = ("Which of the following equals $\\sin 60^\\circ$? $\\textbf{(A)}\\ \\frac{1}{2} \\qquad "
           "\\textbf{(B)}\\ \\frac{1}{2}\\sqrt{3} \\qquad \\textbf{(C)}\\ \\sqrt{2}$")


COPIES = [("12 + 7 \\times 3", "33", "Compute $12 + 7 \\times 3$."),
          ("\\sqrt{8}", "2\\sqrt{2}", "Simplify $\\sqrt{8}$."),
          ("\\sqrt{8}", "2\\sqrt{2}", "Simplify $\\sqrt{8}$. (A) $\\sqrt{8}$ (B) $2\\sqrt2$"),
          ("(5 - 8 \\times (27 - 70)) + 0", "349",
           "Compute $5 - 8 \\times \\left(27 - 70\\right)$."),
          ("\\frac{6}{8}", "\\frac34", "Simplify $\\frac{6}{8}$."),
          ("6/8", "\\frac34", "Simplify $\\frac{6}{8}$."),
          ("\\frac{16}{2}", "8", "Compute $\\frac{16}{2}$."),
          ("0.\\overline{3}", "\\frac13", "Express $0.\\overline{3}$ as a common fraction."),
          ("2^{10}", "1024", "What is $2^{10}$?")]


def test_a_final_value_is_never_refused_for_sharing_the_questions_numbers():
    # `3/8` (the question has 3 and 8), `70^\circ` and `5\text{ cm}` (in the question) were refused
    right = [("3/8", "\\frac{3}{8}", MARBLES), ("3/8", "\\frac{3}{8}", COINS),
             ("x = 3/8", "\\frac{3}{8}", MARBLES), ("70^\\circ", "70", ANGLE),
             ("70^{\\circ}", "70", ANGLE), ("5\\text{ cm}", "5", SIDE),
             ("5 \\text{ cm}", "5", SIDE),
             ("\\frac{1}{2}\\sqrt{3}", "\\frac{\\sqrt{3}}{2}", CHOICES)]
    wrong = {}
    for answer, gold, question in right:
        wrong.update(_wrong(_verdicts([(answer, gold)], question), expected=True))
    # what the rule is for: a copy of the question's expression, left unevaluated
    for answer, gold, question in COPIES:
        wrong.update(_wrong(_verdicts([(answer, gold)], question), expected=False))
    assert wrong == {}


def test_the_copy_rule_reads_a_degree_mark_the_same_with_or_without_braces():
    from rlvr_envs.verify.math.question import restates_question

    question = "What is $x$ if $x = (35 + 35)^\\circ$?"
    assert restates_question("(35+35)^\\circ", question, "70")
    assert restates_question("(35+35)^{\\circ}", question, "70")  # was not: brace-dependent


# --- 4. notes and congruences that keep the value -------------------------------------------

def test_root_notes_and_congruences_keep_the_value():
    right = [("x = 2 \\text{ (double root)}", "2"), ("x = 2 \\text{ (multiplicity 2)}", "2"),
             ("2 \\text{ (repeated root)}", "2"), ("7 \\text{(verified)}", "7"),
             ("n \\equiv 3 \\pmod 4", "3"), ("x \\equiv 7 \\pmod{1000}", "7"),
             ("7 \\pmod{10}", "7"), ("7 \\bmod 1000", "7"), ("1007 \\bmod 1000", "7"),
             ("7 \\mod 4", "3"), ("2^{100} \\equiv 376 \\pmod{1000}", "376"),
             ("3^{2023} \\equiv 27 \\pmod{100}", "27"), ("10! \\equiv 0 \\pmod{7}", "0")]
    # a number on the left is worked out: a false congruence states no residue
    wrong = [("x = 3 \\text{ (double root)}", "2"), ("1007 \\pmod{1000}", "7"),
             ("5^2 \\equiv 376 \\pmod{1000}", "376"), ("4! \\equiv 2 \\pmod{7}", "2"),
             ("3 \\pmod{4}", "7"), ("7 \\mod 4", "7"), ("n \\equiv 3 \\pmod 4", "7"),
             ("3 \\text{ (thousands)}", "3"), ("3 \\text{ (max)}", "3")]
    assert _wrong(_verdicts(right), expected=True) == {}
    assert _wrong(_verdicts(wrong), expected=False) == {}
