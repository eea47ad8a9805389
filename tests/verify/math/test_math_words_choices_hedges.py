"""Answers written in words, choice letters closed by a parenthesis, sizing commands, ticks and
labels inside the box, vulgar fractions, 0b/0x numbers, `U` for a union — and values offered
after the last box ("else 8", "the answer would be 8"), which are hedges."""

import pytest

from rlvr_envs.verify.math import verify_math
from rlvr_envs.verify.math.notation import canonical

RIGHT = [
    ("7", r"So the answer is $\boxed{\text{seven}}$."),
    ("21", r"$\boxed{\text{twenty-one}}$"),
    ("5", "The answer is five."),
    ("\\infty", r"$\boxed{\text{infinity}}$"),
    ("(-\\infty,\\infty)", r"The final answer is $\text{all real numbers}$. I hope it is correct."),
    ("\\emptyset", r"$\boxed{\text{no solution}}$"),
    ("\\text{no solution}", r"$\boxed{\emptyset}$"),
    ("A", r"$\boxed{\text{Option A}}$"),
    ("A", r"$\boxed{\text{Choice (A)}}$"),
    ("A", r"$\boxed{A)}$"),
    ("B", "The correct answer is B) 12"),
    ("7", r"$\boxed{\large 7}$"),
    ("7", r"The final answer is $\smash{7}$. I hope it is correct."),
    ("7", r"$\boxed{7 \quad \checkmark}$"),
    ("7", r"The answer is $\text{Answer: } 7$."),
    ("5", r"$\boxed{\text{\$}5}$"),
    ("1011_2", r"$\boxed{0b1011}$"),
    ("(-\\infty,1)\\cup(2,\\infty)", r"$\boxed{(-\infty,1) U (2,\infty)}$"),
    ("\\frac{1}{2}", "The answer is ½."),
    ("7", r"$\boxed{7}$. The answer would be 7 in either case."),
    ("4", "The answer is 4. Check: 2 + 2 = 4."),
    ("12", r"$\boxed{12}$ (3 for each of the 4 sides)"),
    ("4", r"$\boxed{4}$ — or four, in words."),
    ("4", r"$\boxed{4}$ (4 inclusive of both ends)"),
    ("5", r"$\boxed{5}$. Hmm, that's right."),
    ("5", "$\\boxed{5}$\n\nWait, is that right? Yes: 2+3 = 5."),
    ("-1, 0, 1", r"$\boxed{0, \pm 1}$"),
    ("-2, -1, 1, 2", r"$\boxed{\pm 1, \pm 2}$"),
    ("1+\\sqrt2, 1-\\sqrt2, 3", r"$\boxed{1 \pm \sqrt{2}, 3}$"),
    ("-4", r"$\boxed{y_{\min} = -4}$"),
    ("7", r"$\boxed{f_{\text{max}} = 7}$"),
    ("7", r"$\boxed{7}$. The answer would be the same if we started at 8."),
    ("18", r"The answer is $\boxed{18}$. Note: if tax were excluded, the total would be 16."),
    ("1, 2, 3", r"$\boxed{\{1,2\} \cup \{3\}}$"),
    ("2, 3", r"$\boxed{\{1,2,3\} \cap \{2,3\}}$"),
    ("\\{1,2\\}", r"$\boxed{\{1,2,3\} \setminus \{3\}}$"),
    ("\\emptyset", r"$\boxed{\{1\} \cap \{2\}}$"),
    ("\\frac{1}{7}", r"$\boxed{0.\dot{1}4285\dot{7}}$"),
    ("\\frac{1}{6}", r"$\boxed{0.1\dot{6}}$"),
    ("\\frac{1}{2}", r"$\boxed{\sin 30^\circ}$"),
    ("2-\\sqrt{3}", r"$\boxed{\tan(15^{\circ})}$"),
    # a sentence after the box that explains, with a number in it, is no second answer
    ("12", r"n=\boxed{12}, since n must exceed 3 (otherwise 2n - 6 would be negative)."),
    ("5", r"\boxed{5}, because if not, 3 of the points would be collinear."),
    ("3", r"\boxed{3} because a must be odd; else 2 would divide it."),
    ("5", r"\boxed{5}. So the answer should be 5, as expected."),
    ("7", r"\boxed{7}. The answer would be the same otherwise."),
    ("0.5", r"\boxed{0.5}. As a percentage, the answer would be 50%."),
    ("\\sqrt{2}", r"$\boxed{\sqrt{2} \approx 1.414}$"),
    ("7", r"So $\boxed{7}$. The answer could be either 7 or 7.0."),
    ("5", r"\boxed{5}; if we check, 5 works."),
    ("7", "$\\boxed{7}$.\nThis holds; otherwise the count would differ."),
]

WRONG = [
    # values offered after the last box
    ("7", r"\boxed{7}. If instead we count the endpoints, the answer would be 8."),
    ("7", r"\boxed{7} (assuming the order matters; else 8)"),
    ("7", r"\boxed{7} (if not, 8)"),
    ("7", r"\boxed{7}, or else 8"),
    ("7", r"\boxed{7}. Otherwise the answer would be $\frac{1}{2}$."),
    # a word that is another value, in a chain or alone
    ("7", r"$\boxed{\text{eight} = 7}$"),
    ("7", r"$\boxed{\text{eight}}$"),
    ("7", r"$\boxed{\text{seven or eight}}$"),
    # choices
    ("C", r"$\boxed{B)}$"),
    ("C", "The correct answer is B) 12"),
    ("A", r"$\boxed{A) or B)}$"),
    # the wrong named value
    ("\\emptyset", r"$\boxed{\text{all real numbers}}$"),
    ("\\infty", r"$\boxed{\text{no solution}}$"),
    # a tick does not hide a second value, a label does not change it
    ("7", r"$\boxed{7 \quad 8 \quad \checkmark}$"),
    ("7", r"$\boxed{\text{Answer: } 8}$"),
    # a mixed number stays what it is; a place-value word is refused, not scaled
    ("\\frac{1}{2}", "The answer is 1½."),
    ("300", r"$\boxed{3 \text{ hundreds}}$"),
    # another base than the one asked for
    ("1011_2", r"$\boxed{0x1011}$"),
    # set algebra that makes another set, or two values for one
    ("1, 2, 3", r"$\boxed{\{1,2\} \cap \{3\}}$"),
    ("7", r"$\boxed{\{7\} \cup \{8\}}$"),
    # a truncated repeating decimal, another angle
    ("\\frac{1}{7}", r"$\boxed{0.\dot{1}42}$"),
    ("\\frac{1}{2}", r"$\boxed{\cos 30^\circ}$"),
    # an approximation of a value no decimal approximates, or of another value
    ("7", r"$\boxed{\text{seven} \approx 8}$"),
    ("7", r"$\boxed{\text{Answer: } 7 \approx 8}$"),
    ("\\frac{1}{2}", r"$\boxed{½ \approx 0.9}$"),
    ("\\infty", r"$\boxed{\text{infinity} \approx 5}$"),
    ("1011_2", r"$\boxed{0b1011 \approx 12}$"),
    # a choice letter related to another one
    ("B", r"$\boxed{B) = D}$"),
    ("B", r"$\boxed{B) \ne C}$"),
    ("B", r"$\boxed{\text{Option B} = C}$"),
    ("C", r"$\boxed{B) = C}$"),
    ("C", r"$\boxed{\text{Option B} = C}$"),
    ("B", r"$\boxed{(B) \textbf{C}}$"),
    ("A", r"$\boxed{(A)\text{?}}$"),
    # more values offered after the box
    ("7", r"So $\boxed{7}$. The answer would be eight."),
    ("7", r"So $\boxed{7}$. The answer would probably be 8."),
    ("7", r"So $\boxed{7}$. It could also be 8."),
    ("7", r"So $\boxed{7}$. The answer would be **8**."),
    ("7", r"So $\boxed{7}$. The answer would be x = 8."),
    ("7", r"So $\boxed{7}$. Answer would've been 8."),
    ("7", r"So $\boxed{7}$ (8 if order doesn't matter)."),
    ("7", r"So $\boxed{7}$ unless n is even, in which case 8."),
    ("7", r"So $\boxed{7}$ (if not so, 8)"),
    ("7", r"So $\boxed{7}$ (assuming a 2.5 m rope; otherwise 8)"),
    ("7", r"So $\boxed{7}$ (assuming order matters; else eight)."),
    ("7", r"So $\boxed{7}$. The answer could be either 7 or 8."),
    ("7", "So $\\boxed{7}$; if order doesn't matter, 8."),
    ("7", "So $\\boxed{7}$ (if\nnot, 8)"),
    # the same after an answer stated without a box; a later number that ends in the answer's
    # digits does not hide the hedge before it
    ("4", "The answer is 4. But if the endpoints are included, it would be 6."),
    ("4", "The answer is 4. Or maybe 6, as 14 shows."),
    ("4", "The answer is 4. 6 might be right though, see 14."),
    ("4", "Final answer: 4. Otherwise 6."),
    # a value for another reading in the final answer's sentence
    ("4", r"$\boxed{4}$ — or 6 with endpoints."),
    ("4", r"Final answer: $\boxed{4}$ [6 if inclusive]"),
    ("4", r"$\boxed{4}$, and $6$ if inclusive."),
    ("4", "<answer>4</answer> though 6 if inclusive"),
    ("4", r"$\boxed{4}$, unless endpoints count (then $6$)."),
    ("5", r"**Answer:** $\boxed{5}$ *(7 inclusive)*"),
    ("4", "$\\boxed{4}$\n\nAlternative answers: 6, 7."),
    # a retraction after the answer commits to nothing
    ("142", "**Final answer:** $\\boxed{142}$. Hmm, wait, that's not right either. I need to recount"),
    ("5", "The answer is 5. Oops, that's wrong."),
    # a `\\pm` in a list of values is two of them
    ("-2, -1, 1, 2", r"$\boxed{\pm 1, 2}$"),
    ("0, 1", r"$\boxed{0, \pm 1}$"),
    ("-4", r"$\boxed{y_{\min} = -5}$"),
]


@pytest.mark.parametrize("gold,completion", RIGHT)
def test_right_answers_in_these_spellings_score_1(gold, completion):
    verdict = verify_math(completion, gold)
    assert verdict.correct, (gold, completion, verdict)


@pytest.mark.parametrize("gold,completion", WRONG)
def test_wrong_or_hedged_answers_score_0(gold, completion):
    verdict = verify_math(completion, gold)
    assert not verdict.correct, (gold, completion, verdict)


def test_values_offered_after_the_box_are_hedges():
    assert verify_math(r"\boxed{7} (assuming the order matters; else 8)", "7").reason == "hedged"
    assert verify_math(r"\boxed{7}. If instead we count, the answer would be 8.",
                       "7").reason == "hedged"


@pytest.mark.parametrize("text,expected", [
    (r"\text{Twenty-One}", "21"), (r"\text{ninety nine}", "99"), ("ninety nine", "ninety nine"), (r"\text{infinity}", "\\infty"),
    (r"\text{all real numbers}", "\\mathbb{R}"), (r"\text{the empty set}", "\\emptyset"),
    ("0x1f", "1F_{16}"), ("0o17", "17_{8}"), ("0b102", "0b102"),
    (r"[1,2] U [3,4]", r"[1,2] \cup [3,4]"), ("U", "U"), ("x", "x"), ("e", "e"),
    (r"\text{seven or eight}", r"\text{seven or eight}"), ("1½", "1½"),
    (r"\{1.50, 2\} \cup \{-3\}", r"\{-3, 1.5, 2\}"), (r"\{x\} \cup \{3\}", r"\{x\} \cup \{3\}"),
    (r"\{10\} \setminus \{2\}", r"\{10\}"),
    (r"1.\dot{2}\dot{3}", r"\frac{122}{99}"), (r"0.\dot 3", r"\frac{1}{3}"), (r"\dot{x}", r"\dot{x}"),
    (r"\sin 30^\circ", r"\sin(\frac{30\pi}{180})"), ("30^\\circ", "30^\\circ"),
    (r"\sin x^\circ", r"\sin x^\circ"),
])
def test_canonical_spellings(text, expected):
    assert canonical(text) == expected
