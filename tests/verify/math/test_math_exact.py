"""Exact means exact: identities proved (never accepted from sample points), differences
proved only from well-conditioned evaluation, decimals read as rationals, tiny values
compared exactly. Each case names the rule it checks."""

from __future__ import annotations

import pytest

from rlvr_envs.verify.math import verify_math, warm_up
from rlvr_envs.verify.math.algebra import algebra_equal
from rlvr_envs.verify.math.symbolic import quick_compare

GENEROUS = 20.0  # CPU seconds: verdicts are under test, not the budget


@pytest.fixture(scope="module", autouse=True)
def _workers():
    warm_up()


# (rule, gold, answer, what the fast path must say: True/False proved, None = not decided)
FAST_PATH = [
    ("identity", "(x+1)^3", "x^3+3x^2+3x+1", True),
    ("identity", "(x+y)^2", "x^2+2xy+y^2", True),
    ("identity", "(a-b)(a+b)(a^2+b^2)", "a^4-b^4", True),
    ("identity", "\\frac{1}{x}+\\frac{1}{y}", "\\frac{x+y}{xy}", True),
    ("identity", "x+1", "\\frac{x^2-1}{x-1}", True),
    ("identity", "\\sqrt{2}-1", "\\frac{1}{1+\\sqrt{2}}", True),
    ("identity", "(\\sqrt{3}+\\sqrt{2})(\\sqrt{3}-\\sqrt{2})", "1", True),
    ("identity", "\\frac{\\pi x^2}{4}", "\\frac{1}{4}\\pi x^2", True),
    ("identity", "2x + 3y = 6", "\\frac{y}{2} + \\frac{x}{3} = 1", True),
    ("complex", "1-i", "\\frac{2}{1+i}", True),
    ("complex", "-i", "i^{7}", True),
    ("complex", "3+4i", "(2+i)^2", True),
    ("complex", "3+4i", "3-4i", False),
    ("complex", "0", "\\frac{1}{1+i^2}", None),  # division by zero: not decided here
    ("real root", "-2", "\\sqrt[3]{-8}", True),
    ("real root", "\\frac{2}{3}", "\\sqrt[4]{\\frac{16}{81}}", True),
    ("real root", "-\\sqrt[3]{2}", "\\sqrt[3]{2}", False),
    ("real root", "2", "\\sqrt[3]{7.999999999999999}", None),  # too close for intervals
    ("assignment", "2\\sqrt{3}", "x = 2\\sqrt{3}", True),
    ("assignment", "\\frac{x+1}{2}", "y = \\frac{1}{2}x + \\frac{1}{2}", True),
    ("assignment", "2\\sqrt{3}", "x = 3\\sqrt{3}", False),
    ("assignment", "x", "x = 2x", None),
    # agrees with the gold at every point the old fast path sampled (7/3, -5/4, 29/8)
    ("no sample points", "x", "x+(x-\\frac{7}{3})(x+\\frac{5}{4})(x-\\frac{29}{8})", False),
    ("no sample points", "x^2", "x^2+(x-\\frac{7}{3})(x+\\frac{5}{4})(x-\\frac{29}{8})(y-\\frac{11}{5})",
     False),
    ("no sample points", "(x+1)^2", "x^2+2x+1+10^{-30}", False),
    ("no sample points", "x^3", "x^3 + 10^{-40}x", False),
    # float evaluation proves a difference only when well-conditioned
    ("conditioning", "0", "\\sin(10^{100}\\pi)", None),
    ("conditioning", "1", "\\exp(40)+1-\\exp(40)", None),
    ("conditioning", "\\cos(x)", "\\cos(x + 2\\pi \\cdot 10^{30})", None),
    ("conditioning", "\\sin(x)", "\\sin(x) + 10^{-20}", None),
    ("conditioning", "\\sin(1)^2", "1 - \\cos(1)^2", None),  # float agreement is never a proof
    # the same expression tree, spelled differently, is the same value
    ("same tree", "e^2", "e^{2}", True),
    ("same tree", "\\sin x", "\\sin(x)", True),
    ("same tree", "\\cos 2x", "\\cos(2x)", True),
    ("same tree", "\\sin^2 x", "(\\sin x)^2", True),
    # functions without brackets, logarithms with a base, absolute values
    ("bare argument", "\\cos 2x", "2\\cos x", False),
    ("bare argument", "\\sin x \\cos x", "\\sin(x)\\cos(x)", True),
    ("bare argument", "\\sin x / 2", "\\frac{\\sin x}{2}", None),  # unclear: not read
    ("logarithm", "\\log_2 5", "\\log_5 2", False),
    ("logarithm", "\\log_2 5", "\\frac{\\ln 2}{\\ln 5}", False),
    ("logarithm", "\\log_2 5", "\\frac{\\ln 5}{\\ln 2}", None),  # equal: sympy proves it
    ("absolute value", "5", "|3+4i|", True),
    ("absolute value", "\\sqrt{2}", "|1-i|", True),
    ("absolute value", "\\frac{1}{2}", "|-0.5|", True),
    ("absolute value", "x", "|x|", False),  # x = -5/4
    ("mixed number", "\\frac{7}{2}x", "3\\frac{1}{2}x", None),  # not read as 3 * 1/2
    # e is transcendental: polynomials in e are equal exactly when their coefficients are
    ("euler", "1", "e^{40}+1-e^{40}", True),
    ("euler", "e^2 - 1", "(e-1)(e+1)", True),
    ("euler", "e^{-1}", "\\frac{1}{e}", True),
    ("euler", "\\frac{e^2}{2}", "\\frac{e}{2}", False),
    ("euler", "e + \\pi", "\\pi + e", True),
    ("euler", "e + \\pi", "e\\pi", False),      # proved by intervals, not by coefficients
    ("euler", "e^{2x}", "(e^x)^2", None),           # e^x is not a polynomial in e
    ("conditioning", "\\sqrt{x^2}", "x", False),  # x = -5/4: 5/4 against -5/4, well apart
    ("conditioning", "\\ln(x)", "\\ln(x)+1", False),
    # decimals inside roots and powers are exact rationals before the operation
    ("decimals", "\\frac{\\sqrt{2}}{2}", "\\sqrt{0.5}", True),
    ("decimals", "\\frac{\\sqrt{10}}{10}", "\\sqrt{0.1}", True),
    ("decimals", "1.1", "\\sqrt{1.21}", True),
    ("decimals", "4\\sqrt{2}", "2^{2.5}", True),
    ("decimals", "1", "\\sqrt{1.0000000000000001}", None),  # radicand too big to factor here
    ("decimals", "1", "1.0000000000000001^{10}", False),
    ("decimals", "1.1", "\\sqrt{1.2100000000000001}", None),
    # tiny exact values compare exactly
    ("tiny", "\\frac{1}{10!}", "\\frac{1}{11!}", False),
    ("tiny", "\\frac{1}{2^{100}}", "\\frac{1}{2^{101}}", False),
    ("tiny", "10^{-20}", "10^{-21}", False),
    ("tiny", "\\frac{\\pi}{10^{12}}", "\\frac{\\pi}{10^{13}}", False),
    ("tiny", "e^{-50}", "e^{-51}", False),
    ("tiny", "\\frac{1}{20!}", "\\frac{1}{2432902008176640000}", True),
]


@pytest.mark.parametrize("rule, gold, answer, expected", FAST_PATH,
                         ids=[f"{r}:{a}" for r, _, a, _ in FAST_PATH])
def test_fast_path_decides_only_what_it_proves(rule, gold, answer, expected):
    assert algebra_equal(gold, answer) is expected
    assert algebra_equal(answer, gold) is expected


# End to end, through whichever path reads the pair (cube roots and named functions reach
# the symbolic workers).
END_TO_END = [
    ("tiny", "\\sqrt[3]{2}\\cdot 10^{-30}", "\\sqrt[3]{3}\\cdot 10^{-30}", False),
    ("tiny", "\\frac{1}{e^{30}}", "\\frac{1}{e^{31}}", False),
    ("tiny", "\\frac{\\sqrt[3]{2}}{10^{20}}", "\\frac{\\sqrt[3]{2}}{10^{21}}", False),
    ("decimals", "\\sqrt[3]{\\frac{3}{10}}", "\\sqrt[3]{0.3}", True),
    ("decimals", "\\sqrt[10]{2}", "2^{0.1}", True),
    ("decimals", "\\sqrt[3]{\\frac{1}{10}}", "0.1^{\\frac{1}{3}}", True),
    ("decimals", "1", "\\sqrt[3]{1.00000000000000001}", False),
    ("decimals", "1", "\\sqrt{1.0000000000000001}", False),
    ("decimals", "1.1", "\\sqrt{1.2100000000000001}", False),
    ("identity", "\\sqrt[3]{2}x + x", "x(1+\\sqrt[3]{2})", True),
    ("no sample points", "\\sqrt[3]{x}", "\\sqrt[3]{x} + (x-\\frac{7}{3})(x+\\frac{5}{4})", False),
]


@pytest.mark.parametrize("rule, gold, answer, label", END_TO_END,
                         ids=[f"{r}:{a}" for r, _, a, _ in END_TO_END])
def test_exact_verdicts_end_to_end(rule, gold, answer, label):
    verdict = verify_math(f"The answer is \\boxed{{{answer}}}.", gold, timeout=GENEROUS)
    assert verdict.correct is label, verdict


def test_symbolic_differences_are_relative_and_need_accurate_values():
    from sympy import E, Rational, Symbol, exp, pi, sin

    x = Symbol("x")
    tiny = Rational(1, 10**40)
    assert quick_compare(tiny * x, 2 * tiny * x) is False  # no absolute floor of 1e-9
    assert quick_compare(exp(-60), exp(-61)) is False
    assert quick_compare(sin(10**100 * pi), sin(10**100 * pi) + 0 * E) is None
    assert quick_compare(sin(x) ** 2 + 1, 2 - sin(x) ** 0 + sin(x) ** 2) is None  # equal: no proof


def test_cheap_identity_proofs_are_exact_rewrites_only():
    from sympy import Rational, Symbol, binomial, cos, log, sin, sqrt, tan

    from rlvr_envs.verify.math.symbolic import identical

    x, n = Symbol("x"), Symbol("n")
    assert identical(2 * sin(x) * cos(x), sin(2 * x))
    assert identical(tan(2 * x), sin(2 * x) / cos(2 * x))
    assert identical(log(8), 3 * log(2))
    assert identical(binomial(n, 2), n * (n - 1) / 2)
    assert not identical(log(x ** 2), 2 * log(x))  # false for x < 0: no forced log rules
    assert not identical(sqrt(x ** 2), x)
    assert not identical(sin(x) ** 2, 1 - cos(x) ** 2 + Rational(1, 10**30))
