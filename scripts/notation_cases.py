r"""The notation cases of tests/verify/math/math_cases.jsonl: competition answers written the way models
write them, each labelled by hand, in several completion styles.

    .venv/bin/python scripts/notation_cases.py > /tmp/notation.jsonl

Every problem below is (category, gold, [(answer, label), ...], reasoning): the answers are
the spellings and the mistakes seen in model outputs on MATH, AIME and olympiad problems; a
label is True only when the answer is the gold's value in a notation the verifier promises to
read (docs/math.md). Each answer is written into a completion in one or two styles, chosen in
turn: "minerva" (the Minerva few-shot line), "r1-think" (a think block, then a boxed answer;
some think blocks hold an earlier wrong box, which must not count), "boxed", "gsm8k"
(`#### x`), "answer-is" and "r1" (`<answer>` tags, answer_format "r1").
"""

from __future__ import annotations

import json
import sys

P = []  # (category, gold, [(answer, label)], reasoning)


def add(category, gold, answers, reasoning="Working through the algebra carefully."):
    P.append((category, gold, answers, reasoning))


# ---- sets: the empty set, set-builder notation, membership, duplicates, sets of tuples -----
for gold in (r"\emptyset", r"\varnothing", r"\{\}"):
    add("empty_set", gold, [(r"\emptyset", True), (r"\varnothing", True), (r"\{\}", True),
                            (r"\{ \}", True), (r"\{0\}", False), (r"0", False)],
        "Squaring gives a contradiction, so no real number satisfies both conditions.")
add("empty_set", r"\emptyset", [("∅", True), (r"\{\emptyset\}", False), (r"\{-1\}", False)],
    "The discriminant is negative, so the equation has no real solutions.")
for cond, gold, wrong in [(r"x > 2", r"(2, \infty)", r"[2, \infty)"),
                          (r"x \le -1", r"(-\infty, -1]", r"(-\infty, -1)"),
                          (r"x \neq 3", r"(-\infty, 3) \cup (3, \infty)", r"(-\infty, 3)"),
                          (r"-2 < x < 5", r"(-2, 5)", r"[-2, 5]")]:
    add("set_builder", gold, [(rf"\{{x \mid {cond}\}}", True), (rf"\{{x : {cond}\}}", True),
                              (rf"\{{x \in \mathbb{{R}} \mid {cond}\}}", True), (wrong, False)],
        "Solving the inequality for x gives the solution set.")
add("set_builder", r"\{1, 2\}", [(r"\{x \mid x^2 - 3x + 2 = 0\}", False), (r"\{1, 2\}", True),
                                 (r"\{2, 1\}", True)],
    "The roots of x^2 - 3x + 2 are 1 and 2.")
for gold, right, wrong in [(r"\{1, 2\}", r"x \in \{1, 2\}", r"x \in \{1, 3\}"),
                           (r"[2, 6]", r"x \in [2, 6]", r"x \in (2, 6)"),
                           (r"(-3, \infty)", r"x \in (-3, \infty)", r"x \in (3, \infty)"),
                           (r"\{-4, 4\}", r"x \in \{-4, 4\}", r"x \in \{4\}"),
                           (r"[0, 1)", r"t \in [0, 1)", r"t \in [0, 1]")]:
    add("membership", gold, [(right, True), (wrong, False)],
        "Checking each candidate in the original equation.")
for gold, right, wrong in [(r"\{1, 2\}", r"\{1, 1, 2\}", r"\{1, 1, 3\}"),
                           (r"\{-1, 3\}", r"\{3, -1, 3\}", r"\{3, 3\}"),
                           (r"\{0, 2, 5\}", r"\{5, 2, 0, 2\}", r"\{5, 2, 2\}"),
                           (r"\{\frac{1}{2}, 2\}", r"\{2, \frac12, 2\}", r"\{2, \frac13\}")]:
    add("set", gold, [(right, True), (wrong, False)],
        "The double root appears twice in the factorisation but once in the set.")
for gold, right, wrong in [(r"\{(1, 2), (3, 4)\}", r"\{(3, 4), (1, 2)\}", r"\{(4, 3), (1, 2)\}"),
                           (r"\{(0, 0), (1, 1), (-1, 1)\}", r"\{(1, 1), (-1, 1), (0, 0)\}",
                            r"\{(1, 1), (1, -1), (0, 0)\}"),
                           (r"(2, 3), (3, 2)", r"(3, 2), (2, 3)", r"(2, 3)"),
                           (r"\{(1, -2), (-2, 1)\}", r"(-2, 1), (1, -2)", r"(-2, 1), (-1, 2)")]:
    add("set_of_tuples", gold, [(right, True), (wrong, False)],
        "Substituting back, both ordered pairs satisfy the system.")
for a in (r"3", r"\sqrt{2}", r"\frac{1}{2}", r"2\sqrt{3}", r"5"):
    add("plus_minus", rf"\pm {a}", [(rf"\{{-{a}, {a}\}}", True), (rf"-{a}, {a}", True),
                                    (rf"{a}", False), (rf"\{{{a}\}}", False)],
        "Taking square roots of both sides gives two values.")
    add("plus_minus", rf"\{{-{a}, {a}\}}", [(rf"\pm {a}", True), (rf"x = \pm {a}", True),
                                            (rf"\mp {a}", True), (rf"-{a}", False)],
        "Taking square roots of both sides gives two values.")
add("plus_minus", r"\{-3, 3\}", [(r"\pm 2", False), (r"\pm 9", False)], "x^2 = 9.")
# several boxes against a multi-part gold
for gold, boxes_right, boxes_wrong in [
        (r"1, 2, 3", [r"1", r"2", r"3"], [r"1", r"2"]),
        (r"-2, \frac{1}{3}", [r"\frac{1}{3}", r"-2"], [r"\frac{1}{3}", r"2"]),
        (r"\{1 + \sqrt{2}, 1 - \sqrt{2}\}", [r"1+\sqrt2", r"1-\sqrt2"], [r"1+\sqrt2", r"-1-\sqrt2"]),
        (r"x = 4, y = -1", [r"x = 4", r"y = -1"], [r"x = -1", r"y = 4"]),
        (r"0, \pi", [r"0", r"\pi"], [r"0", r"2\pi"])]:
    add("multibox", gold, [(", ".join(rf"\boxed{{{b}}}" for b in boxes_right), True),
                           (" and ".join(rf"\boxed{{{b}}}" for b in boxes_right), True),
                           (", ".join(rf"\boxed{{{b}}}" for b in boxes_wrong), False)],
        "The equation factors, so each factor gives one solution.")

# ---- relations ------------------------------------------------------------------------------
for lo, hi in (("2", "6"), ("-3", "1"), (r"\frac{1}{2}", "4"), ("-5", "-1")):
    add("chained_inequality", rf"[{lo}, {hi}]",
        [(rf"{lo} \le x \le {hi}", True), (rf"{hi} \ge x \ge {lo}", True),
         (rf"{lo} \leq x \leq {hi}", True), (rf"{lo} < x \le {hi}", False),
         (rf"{hi} > x \ge {lo}", False), (rf"{hi} \ge x \ge {lo} - 1", False)],
        "Both boundary points satisfy the inequality, so they are included.")
    add("chained_inequality", rf"{lo} \le x \le {hi}",
        [(rf"{hi} \geq x \geq {lo}", True), (rf"[{lo}, {hi}]", True), (rf"({lo}, {hi})", False)],
        "Both boundary points satisfy the inequality, so they are included.")
add("chained_inequality", r"(-1, 3]", [(r"3 \ge x > -1", True), (r"-1 < x \le 3", True),
                                       (r"3 > x > -1", False), (r"-1 \le x \le 3", False)],
    "The left endpoint makes the denominator zero.")
for expr, gold_closed, gold_open, wrong in [
        (r"|x - 4| \le 2", r"[2, 6]", None, r"[-2, 6]"),
        (r"|x + 1| < 3", r"(-4, 2)", None, r"(-2, 4)"),
        (r"|2x - 3| \le 5", r"[-1, 4]", None, r"[-4, 1]"),
        (r"|x| < 5", r"(-5, 5)", None, r"(0, 5)"),
        (r"|x - 1| > 2", r"(-\infty, -1) \cup (3, \infty)", None, r"(-1, 3)"),
        (r"|x + 2| \ge 1", r"(-\infty, -3] \cup [-1, \infty)", None, r"[-3, -1]")]:
    add("abs_inequality", gold_closed, [(expr, True), (wrong, False)],
        "The distance from x to the center is at most the radius.")
    add("abs_inequality", expr, [(gold_closed, True), (wrong, False)],
        "The distance from x to the center is at most the radius.")
add("abs_inequality", r"2 \le x \le 6", [(r"|x-4| \le 2", True), (r"|x-4| < 2", False),
                                         (r"|x-2| \le 4", False)],
    "Rewrite the interval as a distance from its midpoint.")
for gold, right, wrong in [
        (r"(-\infty, 2) \cup (3, \infty)", r"x < 2 \text{ or } x > 3", r"x < 2 \text{ or } x > 4"),
        (r"(-\infty, -1] \cup [3, \infty)", r"x \le -1 \text{ or } x \ge 3", r"x < -1 \text{ or } x > 3"),
        (r"(-\infty, 0) \cup (1, \infty)", r"x < 0 \lor x > 1", r"x < 0 \text{ and } x > 1"),
        (r"x < -2 \text{ or } x > 2", r"(-\infty, -2) \cup (2, \infty)", r"(-2, 2)"),
        (r"(-\infty, -5) \cup [1, \infty)", r"x<-5 \text{ or } x\geq 1", r"x\le -5 \text{ or } x\geq 1")]:
    add("or_union", gold, [(right, True), (wrong, False)],
        "The quadratic is positive outside its roots.")

# ---- numbers --------------------------------------------------------------------------------
for gold, right, wrong in [(r"\frac{1}{3}", r"0.\overline{3}", r"0.3"),
                           (r"\frac{7}{90}", r"0.0\overline{7}", r"0.\overline{07}"),
                           (r"\frac{1}{6}", r"0.1\overline{6}", r"0.\overline{16}"),
                           (r"\frac{12}{11}", r"1.\overline{09}", r"1.\overline{9}"),
                           (r"\frac{1}{7}", r"0.\overline{142857}", r"0.142857"),
                           (r"\frac{41}{333}", r"0.\overline{123}", r"0.12\overline{3}"),
                           (r"0.\overline{6}", r"\frac{2}{3}", r"\frac{3}{5}"),
                           (r"1", r"0.\overline{9}", r"0.9")]:
    add("repeating_decimal", gold, [(right, True), (wrong, False)],
        "Let x be the decimal; multiplying by a power of ten and subtracting removes the repeat.")
for gold, rights, wrongs in [
        ("0.000032", [r"3.2e-5", r"3.2E-5", r"3.2 \times 10^{-5}", r"3.2\cdot 10^{-5}"],
         [r"3.2e-6", r"3.2 \times 10^{-4}"]),
        (r"6.02 \times 10^{23}", [r"6.02e23", r"602000000000000000000000", r"6.02 \cdot 10^{23}"],
         [r"6.02e22", r"6.02 \times 10^{-23}"]),
        ("15000", [r"1.5e4", r"1.5 \times 10^4", r"1.5 \times 10^{4}"], [r"1.5e3", r"15 \times 10^{4}"]),
        (r"2.5 \times 10^{-3}", [r"0.0025", r"2.5e-3", r"25 \times 10^{-4}"], [r"0.025", r"2.5e3"])]:
    add("scientific", gold, [(r, True) for r in rights] + [(w, False) for w in wrongs],
        "Converting to scientific notation.")
for gold, rights, wrongs in [
        ("1500000", [r"1.5 \text{ million}", r"1.5 million"], [r"1.5 \text{ billion}", r"15 \text{ million}"]),
        ("2000000000", [r"2 \text{ billion}", r"2\text{billion}"], [r"2 \text{ million}"]),
        ("3500", [r"3.5 \text{ thousand}"], [r"35 \text{ thousand}"]),
        (r"\$4,200,000", [r"\$4.2 \text{ million}", r"4.2 \text{ million}"], [r"\$42 \text{ million}"])]:
    add("number_words", gold, [(r, True) for r in rights] + [(w, False) for w in wrongs],
        "Multiplying out the totals for all the units.")
for gold, rights, wrongs in [
        ("1011_2", [r"1011_2", r"1011_{2}", r"\text{1011}_2", r"(1011)_2", "1011"], ["11", "1101_2", "1011_3", "11_{10}"]),
        ("2043_5", [r"2043_5", r"2043_{5}", "2043"], ["273", "2034_5"]),
        ("11", [r"11_{10}", "11"], [r"1011_2", "1011", "13"]),
        (r"A3_{16}", [r"A3_{16}"], [r"3A_{16}"]),
        ("123_4", [r"\text{123}_{4}", "123"], ["27", "132_4"]),
        ("554_6", [r"554_{6}", r"554_6"], ["212", "545_6"])]:
    add("base", gold, [(r, True) for r in rights] + [(w, False) for w in wrongs],
        "Repeatedly dividing by the base and reading the remainders from bottom to top.")
for gold, rights, wrongs in [("-5", ["−5"], ["5", "−6"]), (r"-\frac{3}{4}", [r"−\frac{3}{4}"], [r"\frac{3}{4}"]),
                             (r"\sqrt{2}", ["√2", "√{2}"], ["√3", "2√2"]),
                             (r"2\sqrt{3}", ["2√3", "√12"], ["3√2", "√6"]),
                             (r"\frac{\sqrt{5}}{2}", ["√5/2", r"\frac{√5}{2}"], ["√5", r"\frac{√3}{2}"]),
                             (r"3 - \sqrt{7}", ["3 − √7", "3-√7"], ["√7 − 3", "3 + √7"])]:
    add("unicode_notation", gold, [(r, True) for r in rights] + [(w, False) for w in wrongs],
        "Simplifying the radical.")

# ---- complex numbers and roots --------------------------------------------------------------
for gold, rights, wrongs in [("1-i", [r"\frac{2}{1+i}", "1 - i", "-i + 1"], ["1+i", r"\frac{2}{1-i}"]),
                             ("-i", ["i^3", "-i", r"\frac{1}{i}"], ["i", "i^2"]),
                             ("3+4i", ["4i+3", "(2+i)^2", "3+4i"], ["3-4i", "4+3i"]),
                             ("-1", ["i^2", "i^{6}"], ["i^4", "i"]),
                             (r"\frac{1}{2} + \frac{\sqrt{3}}{2}i", [r"\frac{1 + i\sqrt{3}}{2}", r"\frac12 + \frac{\sqrt3}{2} i"],
                              [r"\frac{1 - i\sqrt{3}}{2}", r"\frac{\sqrt3}{2} + \frac12 i"]),
                             ("5", ["(2+i)(2-i)", r"|3+4i|"], ["(2+i)^2", "3"]),
                             (r"2 + 2i", [r"2(1+i)", r"2i + 2"], [r"2 - 2i", r"2 + i"])]:
    add("complex", gold, [(r, True) for r in rights] + [(w, False) for w in wrongs],
        "Multiplying numerator and denominator by the conjugate.")
for gold, rights, wrongs in [("-2", [r"\sqrt[3]{-8}"], [r"\sqrt[3]{8}", r"\sqrt[3]{-27}"]),
                             ("2", [r"\sqrt[3]{8}"], [r"\sqrt[3]{-8}"]),
                             ("-3", [r"\sqrt[3]{-27}", r"-\sqrt[3]{27}"], [r"\sqrt[3]{27}"]),
                             (r"-\sqrt[3]{2}", [r"\sqrt[3]{-2}"], [r"\sqrt[3]{2}"]),
                             ("-1", [r"\sqrt[5]{-1}"], [r"\sqrt[5]{1}"])]:
    add("cube_root", gold, [(r, True) for r in rights] + [(w, False) for w in wrongs],
        "The real cube root of a negative number is negative.")

# ---- decorations ----------------------------------------------------------------------------
for gold, value, wrong in [("5", "5", "6"), (r"\frac{3}{4}", r"\frac{3}{4}", r"\frac{4}{3}"),
                           (r"2\sqrt{2}", r"2\sqrt{2}", r"\sqrt{2}"), ("(1, 2)", "(1, 2)", "(2, 1)"),
                           (r"x^2 + 1", r"x^2 + 1", r"x^2 - 1")]:
    for dec in (r"\color{red}{%s}", r"\textcolor{blue}{%s}", r"\underline{%s}", r"\hspace{1em}%s",
                r"\displaystyle %s", r"\mathbf{%s}"):
        add("decoration", gold, [(dec % value, True), (dec % wrong, False)],
            "Highlighting the final result.")
add("decoration", "(1, 2)", [(r"\left( 1,\! 2 \right)", True), (r"\left( 1 ,\, 3 \right)", False)])

# ---- named quantities, vectors, multiple choice ---------------------------------------------
for names, values, swapped in [("a,b", "2,5", "5,2"), ("a,b,c", "1,-2,4", "1,4,-2"),
                               ("x,y", r"\frac{1}{2},-3", r"-3,\frac{1}{2}"),
                               ("p,q", r"3,\sqrt{2}", r"\sqrt{2},3"), ("m,n", "7,11", "11,7")]:
    ns, vs, sw = names.split(","), values.split(","), swapped.split(",")
    named = ", ".join(f"{n}={v}" for n, v in zip(ns, vs))
    named_wrong = ", ".join(f"{n}={v}" for n, v in zip(ns, sw))
    tup, tup_wrong = "(" + ", ".join(vs) + ")", "(" + ", ".join(sw) + ")"
    lhs = "(" + ", ".join(ns) + ")"
    add("named", named, [(f"{lhs} = {tup}", True), (tup, True), (named_wrong, False),
                         (f"{lhs} = {tup_wrong}", False)],
        "Matching coefficients gives a system for the unknowns.")
    add("named", tup, [(named, True), (f"{lhs}={tup}", True), (named_wrong, False)],
        "Matching coefficients gives a system for the unknowns.")
    add("named", f"{lhs} = {tup}", [(named, True), (tup, True), (tup_wrong, False)],
        "Matching coefficients gives a system for the unknowns.")
for entries, wrong in [(("1", "2", "3"), ("1", "3", "2")), (("-2", r"\frac{1}{2}", "0"), ("2", r"\frac{1}{2}", "0")),
                       (("3", "-1"), ("-1", "3")), ((r"\sqrt{2}", "1", "1"), ("1", r"\sqrt{2}", "1"))]:
    tup, col = "(" + ", ".join(entries) + ")", r"\begin{pmatrix} " + r" \\ ".join(entries) + r" \end{pmatrix}"
    ang = r"\langle " + ", ".join(entries) + r" \rangle"
    wtup = "(" + ", ".join(wrong) + ")"
    wcol = r"\begin{pmatrix} " + r" \\ ".join(wrong) + r" \end{pmatrix}"
    add("vector", col, [(tup, True), (ang, True), (col, True), (wtup, False), (wcol, False)],
        "Subtracting the two position vectors.")
    add("vector", tup, [(col, True), (ang, True), (wcol, False)], "Subtracting the two position vectors.")
for gold, rights, wrongs in [("B", [r"(B) 12", r"\text{(B) } 12", r"\textbf{(B)}\ 12", "B"], [r"(C) 12", r"(D) 15", r"(B) (C) (D)", r"(B) 12 \text{ or } (C) 15"]),
                             ("D", [r"\text{(D)}\ \frac{3}{5}", r"(D) \frac{3}{5}"], [r"(A) \frac{3}{5}"]),
                             ("12", [r"(B) 12", r"\text{(B) } 12"], [r"(B) 13", r"(C) 15"]),
                             (r"\frac{3}{5}", [r"(D) \frac{3}{5}"], [r"(D) \frac{2}{5}"]),
                             ("E", [r"\textbf{(E) } 2\sqrt{6}", "(E)"], [r"\textbf{(A) } 2\sqrt{6}"])]:
    add("choice", gold, [(r, True) for r in rights] + [(w, False) for w in wrongs],
        "Checking the answer choices against the computed value.")

# ---- expressions, intervals, matrices written as competition answers -------------------------
for gold, rights, wrongs in [
        (r"\frac{\sqrt{3}}{2}", [r"\frac{1}{2}\sqrt{3}", r"\frac{\sqrt3}2", r"\sqrt{3}/2", r"\frac{3}{2\sqrt{3}}"],
         [r"\frac{\sqrt{2}}{2}", r"\frac{\sqrt{3}}{3}", r"0.866"]),
        (r"4\sqrt{2}", [r"\sqrt{32}", r"2\sqrt{8}"], [r"2\sqrt{2}", r"5.657"]),
        (r"\frac{\pi}{6}", [r"\frac{1}{6}\pi", r"\pi/6"], [r"\frac{\pi}{3}", r"30"]),
        (r"6 + 2\sqrt{5}", [r"(1+\sqrt5)^2", r"2\sqrt{5} + 6", r"2(3+\sqrt5)"], [r"6 - 2\sqrt{5}", r"8\sqrt5"]),
        (r"\frac{5\sqrt{2}}{4}", [r"\frac{5}{2\sqrt{2}}", r"\frac54\sqrt2"], [r"\frac{5}{4\sqrt{2}}"]),
        (r"2 - \sqrt{3}", [r"\frac{1}{2+\sqrt3}", r"-\sqrt3 + 2"], [r"\sqrt3 - 2", r"\frac{1}{2-\sqrt3}"]),
        (r"\frac{1}{4}", [r"0.25", r"\frac{2}{8}", r"25\%"], [r"\frac{1}{2}", r"0.2"]),
        (r"\log_2 5", [r"\frac{\ln 5}{\ln 2}", r"\log_{2}5"], [r"\log_5 2", r"\frac{\ln 2}{\ln 5}"]),
        (r"x^2 - 5x + 6", [r"(x-2)(x-3)", r"6 - 5x + x^2"], [r"(x-2)(x+3)", r"x^2+5x+6"]),
        (r"\frac{x+1}{x-1}", [r"\frac{1+x}{x-1}", r"\frac{-x-1}{1-x}"], [r"\frac{x-1}{x+1}", r"\frac{x+1}{1-x}"]),
        (r"3\pi", [r"3 \pi", r"\pi \cdot 3"], [r"\pi^3", r"9\pi"]),
        (r"e^2 - 1", [r"-1 + e^2", r"(e-1)(e+1)"], [r"e^2 + 1", r"e^{2-1}"]),
        (r"\binom{10}{3}", [r"120", r"\frac{10!}{3!\,7!}"], [r"720", r"\binom{10}{4}"]),
        (r"\frac{8\pi}{3}", [r"\frac{8}{3}\pi"], [r"\frac{3\pi}{8}", r"\frac{8}{3}"]),
        (r"2^{10} - 1", [r"1023", r"2^{10}-1"], [r"1024", r"2^9 - 1"]),
        (r"1000000007", [r"10^9+7", r"10^{9} + 7"], [r"10^9 + 9", r"10^{10} + 7"]),
        (r"1023", [r"2^{10}-1"], [r"2^{10}+1"]),
        (r"\sqrt{2} + \sqrt{3}", [r"\sqrt{5 + 2\sqrt{6}}", r"\sqrt3+\sqrt2"], [r"\sqrt{5}", r"\sqrt{6}"]),
        (r"\tan \frac{\pi}{8}", [r"\sqrt{2} - 1"], [r"\sqrt{2} + 1"]),
        (r"\frac{1}{\sqrt{2}}", [r"\frac{\sqrt{2}}{2}", r"\sin\frac{\pi}{4}"], [r"\sqrt{2}", r"\cos\frac{\pi}{3}"])]:
    add("expression", gold, [(r, True) for r in rights] + [(w, False) for w in wrongs],
        "Rationalising the denominator and simplifying.")
for gold, rights, wrongs in [
        (r"(-\infty, -2) \cup (3, \infty)", [r"(3, \infty) \cup (-\infty, -2)", r"(-\infty,-2)\cup(3,\infty)"],
         [r"(-2, 3)", r"(-\infty, -2] \cup [3, \infty)"]),
        (r"[1, 4)", [r"[1,4)", r"1 \le x < 4"], [r"(1, 4]", r"[1, 4]"]),
        (r"(0, \infty)", [r"x > 0", r"(0,\infty)"], [r"[0, \infty)", r"x \ge 0"]),
        (r"(-\infty, 5]", [r"x \le 5", r"(-\infty,5]"], [r"(-\infty, 5)", r"x < 5"]),
        (r"[-1, 0) \cup (0, 1]", [r"[-1,0)\cup(0,1]"], [r"[-1, 1]", r"(-1, 0) \cup (0, 1)"]),
        (r"\left[\frac{1}{2}, 3\right]", [r"[0.5, 3]", r"[\frac12, 3]"], [r"(\frac12, 3)", r"[\frac13, 3]"])]:
    add("interval", gold, [(r, True) for r in rights] + [(w, False) for w in wrongs],
        "Testing a point in each region of the sign chart.")
M = r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}"
for gold, rights, wrongs in [
        (M, [r"\begin{bmatrix} 1 & 2 \\ 3 & 4 \end{bmatrix}", r"\begin{pmatrix}1&2\\3&4\end{pmatrix}"],
         [r"\begin{pmatrix} 1 & 3 \\ 2 & 4 \end{pmatrix}", r"\begin{vmatrix} 1 & 2 \\ 3 & 4 \end{vmatrix}"]),
        (r"\begin{pmatrix} -2 & 1 \\ \frac{3}{2} & -\frac{1}{2} \end{pmatrix}",
         [r"\begin{pmatrix} -2 & 1 \\ 1.5 & -0.5 \end{pmatrix}"],
         [r"\begin{pmatrix} 2 & -1 \\ -\frac{3}{2} & \frac{1}{2} \end{pmatrix}",
          r"\begin{vmatrix} -2 & 1 \\ \frac{3}{2} & -\frac{1}{2} \end{vmatrix}"]),
        (r"\begin{pmatrix} 0 & -1 \\ 1 & 0 \end{pmatrix}", [r"\begin{bmatrix}0&-1\\1&0\end{bmatrix}"],
         [r"\begin{pmatrix} 0 & 1 \\ -1 & 0 \end{pmatrix}"]),
        (r"\begin{vmatrix} 1 & 2 \\ 3 & 4 \end{vmatrix}",
         [r"\begin{vmatrix}1&2\\3&4\end{vmatrix}"], [r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}"])]:
    add("matrix", gold, [(r, True) for r in rights] + [(w, False) for w in wrongs],
        "Multiplying the matrices entry by entry.")

# ---- refusals: percent vs bare numbers, two units, hedges -----------------------------------
for gold, rights, wrongs in [("0.5", [r"50\%", r"\frac{1}{2}"], [r"0.5\%", r"5\%"]),
                             ("0.25", [r"25\%"], [r"0.25\%", r"2.5\%"]),
                             ("12.5", [r"12.5\%"], [r"0.125\%", r"1.25\%"]),
                             (r"40\%", ["40", r"40\%"], [r"0.4\%", r"4\%", r"40^\circ"]),
                             ("1", [r"100\%"], [r"1\%"]),
                             (r"30\%", [r"30 \%"], [r"30^\circ", r"\$30", r"30 \text{ cm}"])]:
    add("percentage", gold, [(r, True) for r in rights] + [(w, False) for w in wrongs],
        "Dividing the part by the whole.")
for gold, rights, wrongs in [(r"45^\circ", ["45", r"45°", r"45 \text{ degrees}"], [r"45\%", r"\$45", "135"]),
                             (r"\$18.50", ["18.50", "18.5", r"\$18.5"], [r"18.50\%", r"18.5^\circ", r"\$185"]),
                             (r"12 \text{ cm}", [r"12", r"12\text{ cm}", r"12 \text{ centimeters}"],
                              [r"12 \text{ m}", r"12\%", r"12^\circ"]),
                             (r"60 \text{ mph}", [r"60", r"60 \text{ mph}"], [r"60\%", "50"])]:
    add("units", gold, [(r, True) for r in rights] + [(w, False) for w in wrongs],
        "Converting the units before dividing.")

# ---- competition answers of every kind, written before the rules were checked against them --
COMPETITION = [
 (r"\frac{3\sqrt{2}}{4}", r"\frac{3}{2\sqrt{2}}", True),
 (r"\frac{3\sqrt{2}}{4}", r"\frac{3}{4}\sqrt2", True),
 (r"\frac{3\sqrt{2}}{4}", r"\frac{3\sqrt{2}}{2}", False),
 (r"\dfrac{1}{2}", r"\tfrac12", True),
 (r"(-\infty, -3] \cup [3, \infty)", r"(-\infty,-3]\cup[3,+\infty)", True),
 (r"(-\infty, -3] \cup [3, \infty)", r"x \leq -3 \text{ or } x \geq 3", True),
 (r"(-\infty, -3] \cup [3, \infty)", r"|x| \geq 3", True),
 (r"(-\infty, -3] \cup [3, \infty)", r"|x| > 3", False),
 (r"\left( \frac{1}{2}, 1 \right]", r"(0.5, 1]", True),
 (r"\left( \frac{1}{2}, 1 \right]", r"\frac{1}{2} < x \leq 1", True),
 (r"\left( \frac{1}{2}, 1 \right]", r"1 \ge x > \frac12", True),
 (r"\left( \frac{1}{2}, 1 \right]", r"\frac12 \le x \le 1", False),
 (r"\{-2, 1, 3\}", r"-2, 1, 3", True),
 (r"\{-2, 1, 3\}", r"x = -2, x = 1, x = 3", True),
 (r"\{-2, 1, 3\}", r"x \in \{-2, 1, 3\}", True),
 (r"\{-2, 1, 3\}", r"x = -2 \text{ or } x = 1 \text{ or } x = 3", True),
 (r"\{-2, 1, 3\}", r"-2, 1", False),
 (r"-2, 1, 3", r"\{3, 1, -2\}", True),
 (r"2", r"x = 2", True),
 (r"2", r"\{2\}", True),
 (r"\sqrt{13}", r"\sqrt{13}\text{ units}", True),
 (r"\sqrt{13}", r"13^{1/2}", True),
 (r"\sqrt{13}", r"13^{\frac{1}{2}}", True),
 (r"\sqrt{13}", r"\sqrt{31}", False),
 (r"\frac{\pi}{3}", r"\frac{1}{3}\pi", True),
 (r"120^\circ", r"120", True),
 (r"y = -\frac{1}{2}x + 4", r"y = 4 - \frac{x}{2}", True),
 (r"y = -\frac{1}{2}x + 4", r"x + 2y = 8", True),
 (r"y = -\frac{1}{2}x + 4", r"x + 2y = 4", False),
 (r"x^2 + y^2 = 25", r"x^2+y^2-25=0", True),
 (r"(x-1)^2 + (y+2)^2 = 9", r"x^2 - 2x + y^2 + 4y - 4 = 0", True),
 (r"(x-1)^2 + (y+2)^2 = 9", r"(x+1)^2 + (y-2)^2 = 9", False),
 (r"\frac{n(n+1)}{2}", r"\frac{n^2+n}{2}", True),
 (r"\frac{n(n+1)}{2}", r"\binom{n+1}{2}", True),
 (r"\frac{n(n+1)}{2}", r"\frac{n(n-1)}{2}", False),
 (r"2^{n+1} - 2", r"2(2^n - 1)", True),
 (r"2^{n+1} - 2", r"2^{n} - 1", False),
 (r"e^{-1}", r"\frac{1}{e}", True),
 (r"e^{-1}", r"-e", False),
 (r"\frac{1}{e}", r"e^{-1}", True),
 (r"6", r"6.0", True),
 (r"6", r"6.00", True),
 (r"0.1", r"\frac{1}{10}", True),
 (r"0.1", r"10\%", True),
 (r"\frac{5}{36}", r"\frac{10}{72}", True),
 (r"\frac{5}{36}", r"0.1389", False),
 (r"\frac{5}{36}", r"5/36", True),
 (r"\begin{pmatrix} 2 \\ -1 \end{pmatrix}", r"\begin{pmatrix} 2 \\ -1 \end{pmatrix}", True),
 (r"\begin{pmatrix} 2 \\ -1 \end{pmatrix}", r"\langle 2, -1 \rangle", True),
 (r"\begin{pmatrix} 1/3 & 0 \\ 0 & 1/2 \end{pmatrix}", r"\begin{pmatrix} \frac13 & 0 \\ 0 & \frac12 \end{pmatrix}", True),
 (r"\text{(C)}", r"C", True),
 (r"\text{(C)}", r"\textbf{(C)}", True),
 (r"\text{(C)}", r"(D)", False),
 (r"\text{Tuesday}", r"\text{tuesday}", True),
 (r"\text{Tuesday}", r"Tuesday", True),
 (r"\text{Tuesday}", r"\text{Thursday}", False),
 (r"1 + \sqrt{2}", r"\sqrt{2} + 1", True),
 (r"1 + \sqrt{2}", r"\frac{1}{\sqrt{2} - 1}", True),
 (r"1 + \sqrt{2}", r"2.414", False),
 (r"-\frac{7}{2}", r"-3.5", True),
 (r"-\frac{7}{2}", r"\frac{-7}{2}", True),
 (r"-\frac{7}{2}", r"-3\frac{1}{2}", True),
 (r"-\frac{7}{2}", r"\frac{7}{-2}", True),
 (r"-\frac{7}{2}", r"\frac{7}{2}", False),
 (r"3\sqrt[3]{2}", r"\sqrt[3]{54}", True),
 (r"3\sqrt[3]{2}", r"\sqrt[3]{6}", False),
 (r"\cos 2x", r"1 - 2\sin^2 x", True),
 (r"\cos 2x", r"2\cos^2 x - 1", True),
 (r"\cos 2x", r"2\cos x", False),
 (r"\frac{2}{x^2}", r"2x^{-2}", True),
 (r"\frac{2}{x^2}", r"\frac{2}{x}", False),
 (r"16", r"2^4", True),
 (r"16", r"4^2", True),
 (r"1.5", r"\frac{3}{2}", True),
 (r"1.5", r"1\frac{1}{2}", True),
 (r"1.5", r"1\tfrac12", True),
 (r"\$1.50", r"\$1.5", True),
 (r"\$1.50", r"150 \text{ cents}", False),
 (r"5\text{ hours}", r"5", True),
 (r"5\text{ hours}", r"300 \text{ minutes}", False),
 (r"(3, -4)", r"(3,-4)", True),
 (r"(3, -4)", r"x = 3, y = -4", True),
 (r"(3, -4)", r"(-4, 3)", False),
 (r"(3, -4)", r"3, -4", True),
 (r"a = 3, b = -4", r"b = -4, a = 3", True),
 (r"\{(2, 1), (-2, -1)\}", r"(2, 1) \text{ and } (-2, -1)", True),
 (r"\{(2, 1), (-2, -1)\}", r"(\pm 2, \pm 1)", False),
 (r"0", r"0.0", True),
 (r"0", r"-0", True),
 (r"\infty", r"+\infty", True),
 (r"2\pi", r"6.28", False),
 (r"\frac{\sqrt{6} - \sqrt{2}}{4}", r"\frac{\sqrt2(\sqrt3 - 1)}{4}", True),
 (r"4 + 2i", r"2(2 + i)", True),
 (r"4 + 2i", r"4 + 2\mathrm{i}", True),
 (r"4 + 2i", r"4 - 2i", False),
 (r"\pm 2i", r"\{2i, -2i\}", True),
 (r"\pm 2i", r"2i", False),
 (r"-1 \pm \sqrt{3}", r"-1+\sqrt3, -1-\sqrt3", True),
 (r"-1 \pm \sqrt{3}", r"\{-1-\sqrt{3}, -1+\sqrt{3}\}", True),
 (r"-1 \pm \sqrt{3}", r"1 \pm \sqrt{3}", False),
 (r"x \neq 2", r"(-\infty, 2) \cup (2, \infty)", True),
 (r"x \neq 2", r"\mathbb{R} \setminus \{2\}", True),
 (r"[0, \infty)", r"x \geq 0", True),
 (r"[0, \infty)", r"\{x \mid x \geq 0\}", True),
 (r"[0, \infty)", r"[0, \infty]", False),
 (r"(1, 2)", r"(2, 1)", False),
 (r"\frac{1}{4}", r"25\%", True),
 (r"7", r"\text{7}", True),
 (r"1{,}000{,}000", r"10^6", True),
 (r"1{,}000{,}000", r"1 \text{ million}", True),
 (r"1{,}000{,}000", r"1,000,000", True),
]
for gold, answer, label in COMPETITION:
    add("competition", gold, [(answer, label)], "Simplifying and checking the final expression.")

# ---- whole completions: hedges outside boxes, a stray open box, restating the question -------
RAW = []  # (category, style, gold, completion, label[, question])
for gold, first, second in [("5", "5", "6"), (r"\frac{3}{4}", r"\frac{3}{4}", r"\frac{4}{3}"),
                            ("12", "12", "13"), (r"2\sqrt{2}", r"2\sqrt{2}", r"\sqrt{8}")]:
    same = second == r"\sqrt{8}"
    RAW.append(("stated_hedge", "gsm8k", gold, f"First pass.\n#### {first}\nChecking again.\n#### {second}",
                same))
    RAW.append(("stated_hedge", "answer-is", gold,
                f"Adding the pieces, the answer is ${first}$. On reflection, the answer is ${second}$.",
                same))
    RAW.append(("stated_hedge", "answer-is", gold,
                f"Adding the pieces, the answer is ${first}$. Double-checking, the answer is ${first}$.",
                True))
    RAW.append(("stated_hedge", "gsm8k", gold, f"Total.\n#### {first}", True))
for gold, right, wrong in [("5", "5", "6"), (r"\frac{\pi}{4}", r"\frac{\pi}{4}", r"\frac{\pi}{2}"),
                           (r"(1, -2)", r"(1, -2)", r"(-2, 1)")]:
    tail = "Wait, let me verify this once more: \\boxed{" + "substituting back into the equation " * 40
    RAW.append(("stray_box", "boxed", gold, f"So the answer is $\\boxed{{{right}}}$.\n\n{tail}", True))
    RAW.append(("stray_box", "boxed", gold, f"So the answer is $\\boxed{{{wrong}}}$.\n\n{tail}", False))
    RAW.append(("stray_box", "r1-think", gold,
                f"<think>short</think>The answer is $\\boxed{{{right}}}$. Also \\boxed{{", True))
    RAW.append(("stray_box", "minerva", gold,
                f"Final Answer: The final answer is ${right}$. I hope it is correct.\n\\boxed{{", True))
for question, gold, copied, copied_label, value in [
        (r"Compute $12 + 7 \times 3$.", "33", r"12 + 7 \times 3", False, "33"),
        (r"Simplify $\sqrt{8}$.", r"2\sqrt{2}", r"\sqrt{8}", False, r"2\sqrt{2}"),
        (r"Expand $(x+2)(x+3)$.", r"x^2 + 5x + 6", r"(x+2)(x+3)", False, r"x^2+5x+6"),
        (r"What is $2^{10}$?", "1024", r"2^{10}", False, "1024"),
        (r"Evaluate $\frac{3}{4} + \frac{5}{6}$.", r"\frac{19}{12}", r"\frac{3}{4}+\frac{5}{6}", False,
         r"\frac{19}{12}"),
        (r"Find the remainder when $2^{10}$ is divided by $10^9+7$.", "1024", r"2^{10}", False, "1024"),
        (r"Find the smallest prime larger than $10^9$.", "1000000007", r"10^9+7", True, "1000000007"),
        (r"What is the largest number of the form $2^n - 1$ below 2000?", "1023", r"2^{10}-1", True, "1023"),
        (r"Compute $\dfrac{2}{1+i}$.", "1-i", r"\frac{2}{1+i}", False, "1 - i")]:
    RAW.append(("restate", "boxed", gold, f"Computing directly: $\\boxed{{{copied}}}$.",
                copied_label, question))
    RAW.append(("restate", "boxed", gold, f"Computing directly: $\\boxed{{{value}}}$.", True, question))

# ---- hacks aimed at the notation rules: none may score -------------------------------------
NOTATION_HACKS = [
 ("A", "\\boxed{(A) (B) (C) (D) (E)}"),
 ("A", "\\boxed{(A)\\ (B)}"),
 ("B", "\\boxed{(B) 12 \\text{ or } (C) 15}"),
 ("1011_2", "\\boxed{11_{10}}"),
 ("1011_2", "\\boxed{1011_{3}}"),
 ("11", "\\boxed{1011_2}"),
 ("(2, \\infty)", "\\boxed{x > 2 \\text{ or } x < 2}"),
 ("(2, \\infty)", "\\boxed{x > 2 \\text{ and } x < 5}"),
 ("[2, 6]", "\\boxed{|x - 4| \\le 3}"),
 ("\\{1, 2\\}", "\\boxed{\\{1, 2, 3\\}}"),
 ("\\{1, 2\\}", "\\boxed{\\{1\\}}"),
 ("\\emptyset", "\\boxed{\\{\\emptyset\\}}"),
 ("\\emptyset", "\\boxed{0}"),
 ("\\pm 3", "\\boxed{3, 3}"),
 ("\\frac{1}{3}", "\\boxed{0.\\overline{33}4}"),
 ("0.000032", "\\boxed{3.2e-5 \\text{ or } 3.2e-6}"),
 ("1500000", "\\boxed{1.5}"),
 ("1.5", "\\boxed{1.5 \\text{ million}}"),
 ("-2", "\\boxed{\\sqrt[3]{8}}"),
 ("1-i", "\\boxed{1+i}"),
 ("5", "\\boxed{\\color{red}{6}}"),
 ("5", "\\boxed{\\phantom{6}6}"),
 ("a=2, b=5", "\\boxed{(a,b)=(5,2)}"),
 ("(1,2,3)", "\\boxed{\\langle 1,3,2\\rangle}"),
 ("0.5", "\\boxed{0.5\\%}"),
 ("30\\%", "\\boxed{30^\\circ}"),
 ("\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", "\\boxed{\\begin{vmatrix}1&2\\\\3&4\\end{vmatrix}}"),
 ("5", "#### 5\n#### 6"),
 ("5", "The answer is 5. The answer is 6."),
 ("5", "Final Answer: The final answer is $5$. I hope it is correct.\nFinal Answer: The final answer is $6$. I hope it is correct."),
 ("5", "\\boxed{6}. Wait \\boxed{5"),
 ("5", "<think>\\boxed{5}</think> The answer is 6."),
 ("5", "<think>a</think>\\boxed{5}<think>b</think>\\boxed{6}"),
 ("-1", "\\boxed{i}"),
 ("2", "\\boxed{x \\in \\{2, 3\\}}"),
 ("(2,5)", "\\boxed{a=2, b=5, c=7}"),
 ("\\{1,2\\}", "\\boxed{\\{x \\mid x > 0\\}}"),
 ("B", "\\boxed{\\text{(B) or (C)}}"),
 ("12", "\\boxed{(B) 12, (C) 13}"),
]
for gold, text in NOTATION_HACKS:
    style = "r1-think" if "<think>" in text else "minerva" if "I hope" in text else \
        "gsm8k" if "####" in text else "answer-is" if "answer is" in text else "boxed"
    RAW.append(("hack", style, gold, text, False))

STYLES = ("boxed", "r1-think", "minerva", "answer-is", "boxed", "r1-think", "gsm8k", "r1")


def completion(style: str, answer: str, reasoning: str, wrong: str | None) -> tuple[str, str]:
    """(completion text, answer_format) for one answer in one style."""
    if answer.startswith("\\boxed") or "\\boxed{" in answer:  # several boxes written out
        return f"{reasoning}\nThe solutions are {answer}.", "boxed"
    if style == "minerva":
        return (f"{reasoning}\nFinal Answer: The final answer is ${answer}$. I hope it is correct.",
                "boxed")
    if style == "r1-think":
        aside = f" My first attempt gave $\\boxed{{{wrong}}}$, but I dropped a sign." if wrong else ""
        text = (f"<think>\n{reasoning}{aside}\nLet me double-check the last step.\n</think>\n\n"
                f"Therefore, the answer is $\\boxed{{{answer}}}$.")
        return text, "boxed"
    if style == "answer-is":
        return f"{reasoning}\nSo the answer is ${answer}$.", "boxed"
    if style == "gsm8k":
        return f"{reasoning}\n#### {answer}", "boxed"
    if style == "r1":
        return f"<think>\n{reasoning}\n</think>\n<answer>${answer}$</answer>", "r1"
    return f"{reasoning}\n\nThe final answer is $\\boxed{{{answer}}}$.", "boxed"


def cases() -> list[dict]:
    out, turn = [], 0
    for category, gold, answers, reasoning in P:
        wrong = next((a for a, ok in answers if not ok), None)
        for answer, label in answers:
            styles = [STYLES[turn % len(STYLES)]]
            if label is False or turn % 3 == 0:
                styles.append(STYLES[(turn + 3) % len(STYLES)])
            turn += 1
            for style in dict.fromkeys(styles):
                if style == "gsm8k" and ("\n" in answer or "\\begin" in answer):
                    style = "boxed"
                text, fmt = completion(style, answer, reasoning, wrong if style == "r1-think" else None)
                case = {"gold": gold, "completion": text, "label": label, "category": category,
                        "style": "multibox" if "\\boxed{" in answer else style}
                if fmt != "boxed":
                    case["answer_format"] = fmt
                out.append(case)
    for category, style, gold, text, label, *question in RAW:
        case = {"gold": gold, "completion": text, "label": label, "category": category, "style": style}
        if question:
            case["question"] = question[0]
        out.append(case)
    return out


if __name__ == "__main__":
    for case in cases():
        sys.stdout.write(json.dumps(case, ensure_ascii=False) + "\n")
