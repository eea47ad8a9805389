"""Procedural code tasks: small functions specified in words, with generated tests.

Each generator draws parameters from a seeded rng at a difficulty level (1..3: the spec gains
conditions and the inputs grow), writes the reference implementation (the gold answer), and
draws test inputs; expected values come from running the reference here, in the grader's own
process (it is our code, not the candidate's). Tests are checked with exact types.
"""

from __future__ import annotations

import random
import textwrap

from rlvr_envs.core.sources import Generated
from rlvr_envs.tasks.code.prompts import function_prompt
from rlvr_envs.verify.code import wire

N_TESTS = 8


def _finish(description: str, signature: str, function: str, gold: str,
            inputs: list[list], float_tolerance: float | None = None) -> Generated:
    gold = textwrap.dedent(gold).strip() + "\n"
    namespace: dict = {}
    exec(compile(gold, f"<gold {function}>", "exec"), namespace)  # our own reference code
    tests = [{"args": wire.encode(list(args)), "expected": wire.encode(namespace[function](*args))}
             for args in inputs]
    meta = {"mode": "calls", "function": function, "tests": tests, "n_tests": len(tests)}
    if float_tolerance is not None:
        meta["float_tolerance"] = float_tolerance
    return Generated(function_prompt(description, signature), gold, meta)


def _ints(rng: random.Random, n: int, lo: int, hi: int) -> list[int]:
    return [rng.randint(lo, hi) for _ in range(n)]


def clamped_sum(rng: random.Random, level: int) -> Generated:
    lo, hi = sorted(rng.sample(range(-20, 40), 2))
    size = 4 + 4 * level
    inputs = [[_ints(rng, rng.randint(0, size), -60, 60)] for _ in range(N_TESTS)]
    if level == 1:
        desc = f"Return the sum of the integers in `values` that lie between {lo} and {hi} inclusive."
        gold = f"def clamped_sum(values):\n    return sum(v for v in values if {lo} <= v <= {hi})"
    elif level == 2:
        desc = (f"Clamp every integer in `values` into the range [{lo}, {hi}] (values below {lo} "
                f"become {lo}, values above {hi} become {hi}) and return the sum.")
        gold = f"def clamped_sum(values):\n    return sum(min(max(v, {lo}), {hi}) for v in values)"
    else:
        desc = (f"Clamp every integer in `values` into [{lo}, {hi}], then return the sum of the "
                f"clamped values at even positions (0, 2, 4, ...) minus the sum at odd positions.")
        gold = (f"def clamped_sum(values):\n    c = [min(max(v, {lo}), {hi}) for v in values]\n"
                f"    return sum(c[0::2]) - sum(c[1::2])")
    return _finish(desc, "clamped_sum(values)", "clamped_sum", gold, inputs)


def run_lengths(rng: random.Random, level: int) -> Generated:
    alphabet = "abc" if level < 3 else "abcd"

    def word() -> str:
        return "".join(rng.choice(alphabet) * rng.randint(1, 3 + level)
                       for _ in range(rng.randint(0, 3 + 2 * level)))

    inputs = [[word()] for _ in range(N_TESTS)]
    if level == 1:
        desc = "Return the number of maximal runs of equal consecutive characters in the string `s`."
        gold = ("def run_lengths(s):\n    return sum(1 for i, ch in enumerate(s) "
                "if i == 0 or s[i - 1] != ch)")
    elif level == 2:
        desc = ("Run-length encode the string `s`: return a list of (character, count) tuples, one "
                "per maximal run of equal consecutive characters, in order.")
        gold = """
            def run_lengths(s):
                out = []
                for ch in s:
                    if out and out[-1][0] == ch:
                        out[-1] = (ch, out[-1][1] + 1)
                    else:
                        out.append((ch, 1))
                return out
            """
    else:
        k = rng.randint(2, 3)
        desc = (f"Run-length encode the string `s` as a string: each maximal run of a character c "
                f"of length n becomes c followed by n, except runs shorter than {k}, which are "
                f"written out unchanged. Example for k=2: 'aaab' -> 'a3b'.")
        gold = f"""
            def run_lengths(s):
                out, i = [], 0
                while i < len(s):
                    j = i
                    while j < len(s) and s[j] == s[i]:
                        j += 1
                    n = j - i
                    out.append(s[i] + str(n) if n >= {k} else s[i] * n)
                    i = j
                return "".join(out)
            """
    return _finish(desc, "run_lengths(s)", "run_lengths", gold, inputs)


def recurrence(rng: random.Random, level: int) -> Generated:
    order = level
    coeffs = [rng.randint(-3, 3) or 1 for _ in range(order)]
    seeds = _ints(rng, order, 0, 5)
    mod = rng.choice([97, 1000, 10**9 + 7])
    terms = " + ".join(f"{c}*a(n-{i + 1})" for i, c in enumerate(coeffs))
    desc = (f"A sequence starts a(0..{order - 1}) = {seeds} and continues a(n) = ({terms}) "
            f"mod {mod} (Python's % semantics, so results are in 0..{mod - 1}) for n >= {order}. "
            f"Return a(n) for the non-negative integer `n`.")
    gold = f"""
        def nth_term(n):
            a = {seeds!r}
            coeffs = {coeffs!r}
            while len(a) <= n:
                a.append(sum(c * a[-1 - i] for i, c in enumerate(coeffs)) % {mod})
            return a[n]
        """
    inputs = [[rng.randint(0, 10 * level + 5)] for _ in range(N_TESTS)]
    return _finish(desc, "nth_term(n)", "nth_term", gold, inputs)


def merge_intervals(rng: random.Random, level: int) -> Generated:
    def intervals() -> list[list[int]]:
        out = []
        for _ in range(rng.randint(0, 2 + 2 * level)):
            a = rng.randint(0, 30)
            out.append([a, a + rng.randint(0, 8)])
        return out

    inputs = [[intervals()] for _ in range(N_TESTS)]
    if level == 1:
        desc = ("`intervals` is a list of [start, end] pairs (start <= end, both inclusive). "
                "Return the largest end value, or -1 for an empty list.")
        gold = "def merge_intervals(intervals):\n    return max((e for _, e in intervals), default=-1)"
    elif level == 2:
        desc = ("`intervals` is a list of [start, end] pairs (inclusive, start <= end). Merge "
                "overlapping or touching-by-overlap intervals (sharing at least one point) and "
                "return the merged list of [start, end] lists sorted by start.")
        gold = """
            def merge_intervals(intervals):
                out = []
                for s, e in sorted(intervals):
                    if out and s <= out[-1][1]:
                        out[-1][1] = max(out[-1][1], e)
                    else:
                        out.append([s, e])
                return out
            """
    else:
        desc = ("`intervals` is a list of [start, end] pairs of integers (inclusive, start <= "
                "end). Return the number of distinct integers covered by at least one interval.")
        gold = """
            def merge_intervals(intervals):
                covered = set()
                for s, e in intervals:
                    covered.update(range(s, e + 1))
                return len(covered)
            """
    return _finish(desc, "merge_intervals(intervals)", "merge_intervals", gold, inputs)


def shift_cipher(rng: random.Random, level: int) -> Generated:
    shift = rng.randint(1, 25)
    key = [rng.randint(1, 25) for _ in range(rng.randint(2, 4))]

    def text() -> str:
        pool = "abcdefghijklmnopqrstuvwxyz" + ("ABCDEFGHIJKLMNOPQRSTUVWXYZ .,!" if level > 1 else "")
        return "".join(rng.choice(pool) for _ in range(rng.randint(0, 6 + 4 * level)))

    inputs = [[text()] for _ in range(N_TESTS)]
    if level == 1:
        desc = f"`s` holds lowercase letters only. Shift every letter {shift} places forward in the alphabet (wrapping z to a) and return the result."
        gold = f"def shift_cipher(s):\n    return ''.join(chr((ord(c) - 97 + {shift}) % 26 + 97) for c in s)"
    elif level == 2:
        desc = (f"Shift every ASCII letter of `s` {shift} places forward in the alphabet, wrapping "
                f"around and keeping its case; leave every other character unchanged.")
        gold = f"""
            def shift_cipher(s):
                out = []
                for c in s:
                    if 'a' <= c <= 'z':
                        out.append(chr((ord(c) - 97 + {shift}) % 26 + 97))
                    elif 'A' <= c <= 'Z':
                        out.append(chr((ord(c) - 65 + {shift}) % 26 + 65))
                    else:
                        out.append(c)
                return ''.join(out)
            """
    else:
        desc = (f"Vigenere-style: the shifts {key} are used in turn, one per ASCII letter of `s` "
                f"(non-letters are kept and do not use up a shift). Shift each letter forward "
                f"by its shift, wrapping around and keeping its case. Return the result.")
        gold = f"""
            def shift_cipher(s):
                key, out, i = {key!r}, [], 0
                for c in s:
                    if c.isascii() and c.isalpha():
                        base = 97 if c.islower() else 65
                        out.append(chr((ord(c) - base + key[i % len(key)]) % 26 + base))
                        i += 1
                    else:
                        out.append(c)
                return ''.join(out)
            """
    return _finish(desc, "shift_cipher(s)", "shift_cipher", gold, inputs)


def moving_average(rng: random.Random, level: int) -> Generated:
    window = rng.randint(2, 2 + level)
    inputs = [[[round(rng.uniform(-50, 50), 2) for _ in range(rng.randint(window, window + 3 * level))]]
              for _ in range(N_TESTS)]
    if level == 1:
        desc = "Return the arithmetic mean of the list of floats `values` (it is never empty) as a float."
        gold = "def moving_average(values):\n    return sum(values) / len(values)"
    else:
        desc = (f"Return the list of means (floats) of every window of {window} consecutive values "
                f"of `values`, in order" + (", each rounded with round(x, 3)." if level == 3 else "."))
        body = "sum(values[i:i + w]) / w"
        if level == 3:
            body = f"round({body}, 3)"
        gold = f"def moving_average(values):\n    w = {window}\n    return [{body} for i in range(len(values) - w + 1)]"
    return _finish(desc, "moving_average(values)", "moving_average", gold, inputs,
                   float_tolerance=1e-6)


GENERATORS = {
    "clamped_sum": clamped_sum,
    "run_lengths": run_lengths,
    "recurrence": recurrence,
    "merge_intervals": merge_intervals,
    "shift_cipher": shift_cipher,
    "moving_average": moving_average,
}
