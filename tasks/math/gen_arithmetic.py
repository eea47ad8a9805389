"""Procedural generators for numbers: multi-step integer arithmetic, fractions, modular arithmetic.

Each is a pure function of (seeded `random.Random`, level) → `Generated`; golds come from sympy.
Every task's metadata carries `steps` (operations to carry out) and `max_digits` (widest number
in the problem), the two knobs that grow with the level.
"""

from __future__ import annotations

import random

import sympy as sp
from sympy.ntheory.modular import crt

from rlvr_envs.core.sources import Generated
from rlvr_envs.tasks.math.formatting import digits, latex_number
from rlvr_envs.tasks.math.levels import check_level

_LATEX_OP = {"+": "+", "-": "-", "*": "\\times", "/": "\\div"}


def _chain(rng: random.Random, atoms: list[tuple[str, str]], ops_pool: str,
           n_groups: int) -> tuple[str, str]:
    """Join (latex, plain) atoms with operators into one expression (latex, plain).

    `n_groups` disjoint adjacent pairs are wrapped in parentheses with + or - inside. Two
    multiplicative operators never follow each other at the top level, so the expression has
    no left-to-right-precedence ambiguity (`a ÷ b × c`) and products stay two factors wide.
    """
    starts = list(range(len(atoms) - 1))
    rng.shuffle(starts)
    grouped: set[int] = set()
    for i in starts:
        if len(grouped) >= n_groups:
            break
        if i not in grouped and i - 1 not in grouped and i + 1 not in grouped:
            grouped.add(i)
    items: list[tuple[str, str]] = []
    i = 0
    while i < len(atoms):
        if i in grouped:
            op = rng.choice("+-")
            (la, pa), (lb, pb) = atoms[i], atoms[i + 1]
            items.append((f"\\left({la} {op} {lb}\\right)", f"({pa} {op} {pb})"))
            i += 2
        else:
            items.append(atoms[i])
            i += 1
    latex, plain = items[0]
    previous_multiplicative = False
    for item_latex, item_plain in items[1:]:
        pool = "+-" if previous_multiplicative else ops_pool
        op = rng.choice(pool)
        previous_multiplicative = op in "*/"
        latex += f" {_LATEX_OP[op]} {item_latex}"
        plain += f" {op} {item_plain}"
    return latex, plain


def _int_with_digits(rng: random.Random, n_digits: int) -> int:
    return rng.randint(10 ** (n_digits - 1) if n_digits > 1 else 1, 10**n_digits - 1)


def arithmetic(rng: random.Random, level: int) -> Generated:
    """Integer arithmetic: level+1 operands of up to 1+level//2 digits; +, - from level 1,
    × from level 2, parentheses from level 3 (two groups from level 6)."""
    check_level(level, "arithmetic")
    n_operands = level + 1
    max_digits = 1 + level // 2
    numbers = [_int_with_digits(rng, max_digits)]
    numbers += [_int_with_digits(rng, rng.randint(max(1, max_digits - 1), max_digits))
                for _ in range(n_operands - 1)]
    rng.shuffle(numbers)
    n_groups = 0 if level < 3 else 1 if level < 6 else 2
    latex, plain = _chain(rng, [(str(n), str(n)) for n in numbers],
                          "+-" if level == 1 else "+-*", n_groups)
    value = sp.sympify(plain)
    return Generated(prompt=f"Compute ${latex}$.", answer=latex_number(value),
                     metadata={"expression": plain, "steps": n_operands - 1,
                               "max_digits": max(digits(n) for n in numbers)})


def fractions(rng: random.Random, level: int) -> Generated:
    """Fraction arithmetic: 2 + (level-1)//2 fractions with denominators up to 4+2*level;
    - from level 2, × from 3, improper fractions from 4, ÷ from 5, parentheses from 6."""
    check_level(level, "fractions")
    n_terms = 2 + (level - 1) // 2
    max_den = 4 + 2 * level
    atoms, denominators = [], []
    for _ in range(n_terms):
        den = rng.randint(2, max_den)
        num = rng.randint(1, den - 1) if level < 4 else rng.randint(1, 2 * den)
        while num % den == 0:  # a fraction equal to an integer is no fraction exercise
            num = rng.randint(1, 2 * den)
        atoms.append((f"\\frac{{{num}}}{{{den}}}", f"({num}/{den})"))
        denominators.append(den)
    ops = "+" if level == 1 else "+-" if level == 2 else "+-*" if level < 5 else "+-*/"
    latex, plain = _chain(rng, atoms, ops, 0 if level < 6 else 1)
    value = sp.sympify(plain)
    prompt = (f"Compute ${latex}$. Give the result as a fraction in lowest terms "
              f"(or an integer).")
    return Generated(prompt=prompt, answer=latex_number(value),
                     metadata={"expression": plain, "steps": n_terms - 1,
                               "max_digits": max(digits(d) for d in denominators),
                               "max_denominator": max(denominators)})


def _modular_kind(rng: random.Random, level: int) -> str:
    kinds = {1: ["sum"], 2: ["sum", "product"], 3: ["product", "power"],
             4: ["power", "inverse"], 5: ["power", "inverse", "congruence"]}
    return rng.choice(kinds.get(level, ["power", "inverse", "congruence", "crt"]))


def _multiplications(exponent: int) -> int:
    """Modular multiplications of square-and-multiply for this exponent."""
    return exponent.bit_length() - 1 + bin(exponent).count("1") - 1


def _coprime_to(rng: random.Random, modulus: int, n_digits: int) -> int:
    while True:
        a = _int_with_digits(rng, n_digits) % modulus
        if a > 1 and sp.gcd(a, modulus) == 1:
            return a


def modular(rng: random.Random, level: int) -> Generated:
    """Modular arithmetic: sums and products (levels 1-3), powers (3+), inverses (4+), linear
    congruences (5+), Chinese remaindering with 2-4 congruences (6+). Moduli have 1+level//3
    digits, operands 1+(level+1)//2, exponents 1+level//2."""
    check_level(level, "modular")
    mod_digits = 1 + level // 3
    arg_digits = 1 + (level + 1) // 2
    modulus = rng.randint(max(3, 10 ** (mod_digits - 1)), 10**mod_digits - 1)
    kind = _modular_kind(rng, level)
    if kind == "sum":
        a, b = _int_with_digits(rng, arg_digits), _int_with_digits(rng, arg_digits)
        expr, value, steps, numbers = f"({a} + {b}) \\bmod {modulus}", (a + b) % modulus, 2, [a, b]
        prompt = f"Compute ${expr}$."
    elif kind == "product":
        a, b, c = (_int_with_digits(rng, arg_digits) for _ in range(3))
        expr = f"({a} \\times {b} + {c}) \\bmod {modulus}"
        value, steps, numbers = (a * b + c) % modulus, 3, [a, b, c]
        prompt = f"Compute ${expr}$."
    elif kind == "power":
        a = _int_with_digits(rng, arg_digits)
        e = _int_with_digits(rng, 1 + level // 2)
        value = int(sp.Integer(a).__pow__(e, modulus))  # pow with modulus, exact
        steps, numbers = _multiplications(e), [a, e]
        prompt = f"Compute ${a}^{{{e}}} \\bmod {modulus}$."
    elif kind == "inverse":
        modulus = int(sp.nextprime(modulus)) if level < 6 else modulus
        a = _coprime_to(rng, modulus, arg_digits)
        value, steps, numbers = int(sp.mod_inverse(a, modulus)), len(sp.continued_fraction(
            sp.Rational(a, modulus))), [a]
        prompt = (f"Find the inverse of ${a}$ modulo ${modulus}$: the integer $x$ with "
                  f"$0 \\le x < {modulus}$ and ${a}x \\equiv 1 \\pmod{{{modulus}}}$.")
    elif kind == "congruence":
        a = _coprime_to(rng, modulus, arg_digits)
        b = rng.randint(1, modulus - 1)
        value = int(sp.mod_inverse(a, modulus) * b % modulus)
        steps, numbers = len(sp.continued_fraction(sp.Rational(a, modulus))) + 1, [a, b]
        prompt = (f"Find the smallest non-negative integer $x$ with "
                  f"${a}x \\equiv {b} \\pmod{{{modulus}}}$.")
    else:  # crt
        n_congruences = 2 + (level - 6) // 2
        moduli: list[int] = []
        while len(moduli) < n_congruences:
            m = rng.randint(max(3, 10 ** (mod_digits - 2)), 10 ** (mod_digits - 1) * 3)
            if all(sp.gcd(m, other) == 1 for other in moduli):
                moduli.append(m)
        residues = [rng.randint(0, m - 1) for m in moduli]
        value = int(crt(moduli, residues)[0])
        modulus, steps, numbers = moduli[0], 2 * n_congruences, residues + moduli
        system = ", ".join(f"$x \\equiv {r} \\pmod{{{m}}}$" for r, m in zip(residues, moduli))
        prompt = f"Find the smallest non-negative integer $x$ such that {system}."
    return Generated(prompt=prompt, answer=str(value),
                     metadata={"kind": kind, "steps": steps,
                               "max_digits": max(digits(n) for n in [modulus, *numbers])})
