"""The cheaper symbolic path: answers read directly into sympy (the same expressions
math-verify's parser builds), equations told apart without solving, and the notation the
fast path now decides exactly (rational bounds, the reals minus points, sets against
relations, other alphabets' letters, approximations)."""

from __future__ import annotations

import pytest
from sympy import Eq, simplify

from rlvr_envs.verify.math import symbolic, verify_math
from rlvr_envs.verify.math.compare import NeedsSymbolic, fast_equal
from rlvr_envs.verify.math.direct import to_sympy
from rlvr_envs.verify.math.notation import canonical

GENEROUS = 20.0  # CPU seconds: verdicts are under test, not the budget

READ_DIRECTLY = [
    "\\log_2 5", "\\log_2 8", "\\log 5", "\\frac{\\ln 5}{\\ln 2}", "\\sin x", "\\sin(x)",
    "\\sin^2 x + \\cos^2 x", "\\cos 2x", "2\\sin x \\cos x", "\\sin x^2", "\\tan \\frac{\\pi}{8}",
    "|3+4i|", "\\frac{2}{1+i}", "1 - i", "\\sqrt[3]{-2}", "3\\sqrt[3]{2}", "\\binom{n+1}{2}",
    "\\frac{10!}{3!}", "e^{-1}", "\\frac{1}{e}", "(e-1)(e+1)", "2^{n+1} - 2", "\\frac54\\sqrt2",
    "\\sqrt{5 + 2\\sqrt{6}}", "x^2 - 3x + 2 = 0", "(x+1)^2 + (y-2)^2 = 9", "\\pi r^2", "1.5x",
]


@pytest.mark.parametrize("text", READ_DIRECTLY)
def test_direct_reading_builds_what_math_verify_builds(text):
    direct = to_sympy(text)
    assert direct is not None
    symbolic.parse_symbolic.cache_clear()
    found = symbolic.parse(f"${text}$", extraction_config=symbolic._LATEX,
                           fallback_mode="no_fallback", parsing_timeout=None)
    theirs = symbolic._exact(found[0])
    if isinstance(direct, Eq):
        assert isinstance(theirs, Eq)
        direct, theirs = direct.lhs - direct.rhs, theirs.lhs - theirs.rhs
    assert direct.free_symbols == theirs.free_symbols  # same names, same assumptions
    assert simplify(direct - theirs) == 0


@pytest.mark.parametrize("text", [
    "A + B",           # capitals: math-verify reads them in lower case (and I as i)
    "5 percent",       # words
    "3.2E-5",          # scientific notation
    "1\\frac{1}{2}",   # a mixed number, not 1 * 1/2
    "\\sin x / 2",     # unclear extent of the argument
    "\\sin^{-1} x",    # arcsine
    "2^{10^{9}}",      # too large to build eagerly
    "1000000!",
    "x \\ge 2",        # relations and sets stay with math-verify
])
def test_direct_reading_leaves_the_rest_to_math_verify(text):
    assert to_sympy(text) is None


def test_symbolic_path_does_not_call_the_latex_parser_for_small_expressions(monkeypatch):
    def no_parse(*args, **kwargs):
        raise AssertionError("math-verify's parser was called")

    symbolic.clear_caches()
    monkeypatch.setattr(symbolic, "parse", no_parse)
    assert symbolic.judge_symbolic("\\log_2 5", ["\\frac{\\ln 5}{\\ln 2}"]) == "correct"
    assert symbolic.judge_symbolic("\\cos 2x", ["1 - 2\\sin^2 x"]) == "correct"
    assert symbolic.judge_symbolic("e^{-1}", ["\\frac{1}{e}"]) == "correct"
    assert symbolic.judge_symbolic("(x-1)^2 + (y+2)^2 = 9",
                                   ["(x+1)^2 + (y-2)^2 = 9"]) == "mismatch"
    symbolic.clear_caches()


@pytest.mark.parametrize("gold, answer, expected", [
    ("(x-1)^2 + (y+2)^2 = 9", "(x+1)^2 + (y-2)^2 = 9", False),  # square-free, not proportional
    ("(x-1)^2 + (y+2)^2 = 9", "x^2 - 2x + y^2 + 4y = 4", True),  # proportional
    ("y^2 = x^2", "y = x", False),
    ("2x + 4y = 6", "x + 2y = 3", True),
    ("(x-1)^2 = 0", "x - 1 = 0", None),  # same zeros, not square-free: math-verify decides
    ("\\sin x = y", "2y = 2\\sin x", True),
])
def test_equations_compared_without_solving(gold, answer, expected):
    g, a = symbolic.parse_symbolic(gold)[0], symbolic.parse_symbolic(answer)[0]
    assert symbolic.quick_compare(g, a) is expected


@pytest.mark.parametrize("gold, answer, expected", [
    ("[2, 6]", "6 \\ge x \\ge 2 - 1", False),        # bounds evaluated exactly
    ("[1, 6]", "1 \\le x \\le 7 - 1", True),
    ("x > 2", "x > 2 \\text{ or } x < -2", False),   # a set against a relation
    ("x > 2", "\\mathbb{R}", False),
    ("x \\neq 2", "\\mathbb{R} \\setminus \\{2\\}", True),
    ("(-\\infty, 2) \\cup (2, \\infty)", "\\mathbb{R}\\setminus\\{2\\}", True),
    ("(-\\infty, \\infty)", "\\mathbb{R}", True),
    ("A", "А", False),                                 # Cyrillic А
    ("1.5", "1\\frac12", True),
    ("1,000,000", "10^6", True),
    ("\\frac{1}{2} + \\frac{\\sqrt{3}}{2}i", "\\frac{\\sqrt3}{2} + \\frac12 i", False),
    ("\\log_2 5", "\\log_5 2", False),
    ("5", "|3+4i|", True),
    ("\\cos 2x", "2\\cos x", False),
])
def test_fast_path_decides_these_exactly(gold, answer, expected):
    assert fast_equal(canonical(gold), canonical(answer)) is expected
    assert fast_equal(canonical(answer), canonical(gold)) is expected


def test_fast_path_still_defers_what_it_cannot_prove():
    with pytest.raises(NeedsSymbolic):
        fast_equal("\\log_2 5", "\\frac{\\ln 5}{\\ln 2}")
    with pytest.raises(NeedsSymbolic):
        fast_equal("x > \\sqrt{2}", "\\sqrt{2} < x")


@pytest.mark.parametrize("completion, gold, correct", [
    ("\\boxed{\\approx 42}", "42", False),
    ("\\boxed{≈ 3.14}", "3.14", False),
    ("\\boxed{\\sin^2 x + \\cos^2 x}", "1", True),
    ("\\boxed{1}", "\\sin^2 x + \\cos^2 x", True),
    ("\\boxed{\\sin^2 x - \\cos^2 x}", "1", False),
])
def test_verdicts(completion, gold, correct):
    assert verify_math(completion, gold, timeout=GENEROUS).correct is correct
