"""Procedural math generators: deterministic from the seed, golds that verify, difficulty that
grows with the level in measurable ways (digits, steps, terms)."""

from __future__ import annotations

import functools
import hashlib
import json
import random
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
import sympy as sp

from latex2sympy2_extended import latex2sympy

from rlvr_envs.core.task import Task
from rlvr_envs.tasks.math.generators import GENERATORS, MAX_LEVEL
from rlvr_envs.tasks.math.scoring import MathScorer
from rlvr_envs.verify.math import check_gold

LEVELS = range(1, MAX_LEVEL + 1)
FAMILIES = sorted(GENERATORS)


@functools.lru_cache(maxsize=None)
def generate(name: str, level: int, seed: int):
    """Cached: several tests look at the same tasks (the derivative generator is the slow one)."""
    return GENERATORS[name](random.Random(seed), level)


def digest_all(seeds=range(1)) -> str:
    made = [[generate(n, lvl, s).__dict__ for s in seeds] for n in FAMILIES for lvl in LEVELS]
    return hashlib.sha256(json.dumps(made, sort_keys=True, default=str).encode()).hexdigest()


@pytest.mark.parametrize("name", FAMILIES)
def test_same_seed_same_task_and_seeds_differ(name):
    for level in LEVELS:
        a = GENERATORS[name](random.Random(11), level)
        b = GENERATORS[name](random.Random(11), level)
        assert (a.prompt, a.answer, a.metadata) == (b.prompt, b.answer, b.metadata)
        prompts = {generate(name, level, seed).prompt for seed in range(5)}
        assert len(prompts) >= 3, f"{name} L{level} repeats itself: {prompts}"


@pytest.mark.slow
def test_generation_is_identical_in_another_process_with_another_hash_seed():
    here = str(Path(__file__).parent)
    code = f"import sys; sys.path.insert(0, {here!r}); import test_math_generators as t; " \
           "print(t.digest_all())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "12345", "PATH": ""})
    assert out.stdout.strip().splitlines()[-1] == digest_all()


@pytest.mark.parametrize("name", FAMILIES)
def test_gold_parses_and_gold_completion_scores_one(name):
    boxed, r1 = MathScorer("boxed"), MathScorer("r1")
    for level in LEVELS:
        made = generate(name, level, 1000 + level)
        check_gold(made.answer)
        task = Task(prompt=made.prompt, answer=made.answer, family="math")
        score = boxed.score(task, boxed.gold_completion(task))
        assert score.reward == 1.0, (name, level, made.answer, score)
        if level in (1, MAX_LEVEL):
            assert r1.score(task, r1.gold_completion(task)).reward == 1.0
        assert boxed.score(task, "").reward == 0.0


def _wrong_answer(answer: str) -> str:
    if answer.startswith("("):  # a tuple: change its first entry
        first, rest = answer[1:].split(",", 1)
        return f"({first} + 1,{rest}"
    return f"{answer} + 1"


@pytest.mark.parametrize("name", FAMILIES)
def test_a_wrong_answer_scores_zero(name):
    scorer = MathScorer("boxed")
    for level in (1, 5):
        made = generate(name, level, 7)
        task = Task(prompt=made.prompt, answer=made.answer, family="math")
        wrong = _wrong_answer(made.answer)
        assert scorer.score(task, f"\\boxed{{{wrong}}}").reward == 0.0, (made.answer, wrong)


def _mean(name: str, level: int, key: str, seeds=range(10)) -> float:
    return statistics.mean(generate(name, level, s).metadata[key] for s in seeds)


@pytest.mark.parametrize("name", FAMILIES)
def test_size_grows_with_level(name):
    """steps + max_digits (mean over seeds) strictly grows from level 1 to 5 to 10."""
    size = {lvl: _mean(name, lvl, "steps") + _mean(name, lvl, "max_digits") for lvl in (1, 5, 10)}
    assert size[1] < size[5] < size[10], size
    for level in LEVELS:
        made = generate(name, level, 3)
        assert made.metadata["steps"] >= 1 and made.metadata["max_digits"] >= 1


def test_arithmetic_operands_and_digits_follow_the_level():
    for level in LEVELS:
        for seed in range(5):
            meta = generate("arithmetic", level, seed).metadata
            assert meta["steps"] == level  # level + 1 operands
            assert meta["max_digits"] == 1 + level // 2
            assert sp.sympify(meta["expression"]) == sp.sympify(generate("arithmetic", level,
                                                                          seed).answer)
    assert "(" not in generate("arithmetic", 2, 0).metadata["expression"]
    assert "(" in generate("arithmetic", 6, 0).metadata["expression"]


def test_fraction_terms_and_denominators_follow_the_level():
    for level in LEVELS:
        meta = generate("fractions", level, level).metadata
        assert meta["steps"] == 1 + (level - 1) // 2
        assert meta["max_denominator"] <= 4 + 2 * level
    assert _mean("fractions", 10, "max_denominator") > 2 * _mean("fractions", 1, "max_denominator")


def test_equation_terms_polynomial_degrees_and_derivative_order_follow_the_level():
    for level in LEVELS:
        assert generate("linear_equation", level, 0).metadata["steps"] == level + 2
        assert generate("factoring", level, 0).metadata["degree"] == 2 + (level - 1) // 3
        assert generate("derivative", level, 0).metadata["order"] == (2 if level >= 8 else 1)
    degrees = [_mean("polynomial_expansion", lvl, "degree", range(4)) for lvl in LEVELS]
    assert degrees == sorted(degrees) and degrees[-1] > degrees[0]
    assert _mean("modular", 10, "max_digits") > _mean("modular", 1, "max_digits")
    assert min(generate("word_problem", 9, s).metadata["steps"] for s in range(5)) >= 9


def _math_spans(prompt: str) -> list[str]:
    return prompt.split("$")[1::2]


def _tex(text: str):
    return latex2sympy(text)


def _tex_tuple(text: str) -> tuple:
    """A gold tuple `(a, \\frac{b}{c})` element by element (latex2sympy reads a pair as an
    interval)."""
    assert text.startswith("(") and text.endswith(")"), text
    return tuple(_tex(part) for part in text[1:-1].split(", "))


@pytest.mark.parametrize("level", [1, 4, 7, 10])
def test_golds_are_the_true_answers_by_an_independent_parse_of_the_prompt(level):
    """Parse each prompt's LaTeX with latex2sympy and re-derive the gold."""
    x, y = sp.symbols("x y")
    lin = generate("linear_equation", level, 5)
    lhs, rhs = _math_spans(lin.prompt)[1].split(" = ")
    assert sp.solve(sp.Eq(_tex(lhs), _tex(rhs)), x) == [_tex(lin.answer)]

    system = generate("linear_system", level, 5)
    equations = [sp.Eq(*map(_tex, eq.split(" = "))) for eq in _math_spans(system.prompt)[:2]]
    solved = sp.solve(equations, [x, y])
    assert (solved[x], solved[y]) == _tex_tuple(system.answer)

    expansion = generate("polynomial_expansion", level, 5)
    product = _tex(_math_spans(expansion.prompt)[0])
    assert tuple(sp.Poly(sp.expand(product), x).all_coeffs()) == _tex_tuple(expansion.answer)

    factoring = generate("factoring", level, 5)
    poly = sp.Poly(_tex(_math_spans(factoring.prompt)[0].split(" = ")[1]), x)
    roots = _tex_tuple(factoring.answer)
    assert list(roots) == sorted(roots) and len(roots) == poly.degree()
    assert sp.Poly(poly.LC() * sp.Mul(*[x - r for r in roots]), x) == poly

    deriv = generate("derivative", level, 5)
    f_text, point = _math_spans(deriv.prompt)[0].split(" = ", 1)[1], deriv.metadata["point"]
    order = deriv.metadata["order"]
    value = sp.diff(_tex(f_text), x, order).subs(x, point)
    assert sp.nsimplify(sp.N(value, 30), rational=True, tolerance=1e-20) == _tex(deriv.answer)

    for family in ("arithmetic", "fractions"):
        made = generate(family, level, 5)
        assert sp.simplify(_tex(_math_spans(made.prompt)[0]) - _tex(made.answer)) == 0


@pytest.mark.parametrize("level", [0, MAX_LEVEL + 1, "3", 2.0, True])
def test_bad_level_is_refused_with_the_generator_name(level):
    for name in FAMILIES:
        with pytest.raises(ValueError, match=name):
            GENERATORS[name](random.Random(0), level)
