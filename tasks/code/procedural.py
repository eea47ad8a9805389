"""Procedural code tasks: small functions specified in words, with generated tests.

Each generator draws parameters from a seeded rng at a difficulty level (1..3: the spec gains
conditions and the inputs grow), writes the reference implementation (the gold answer), and
draws test inputs; expected values come from running the reference here, in the grader's own
process (it is our code, not the candidate's). Tests are checked with exact types.

A task's tests are its *targeted* cases first — the inputs that separate the reference from
the programs one plausibly writes instead (values equal to a bound and one past it, the empty
input, intervals that touch or are merely adjacent, runs of exactly the threshold, letters
between non-letters, the first terms of a sequence and those where the modulus matters, ...),
drawn from the same rng — then `N_RANDOM` random ones. Parameters that would make a task
degenerate (a bound of 0, a constant sequence, a Caesar shift of 13, a key whose shifts
repeat) are redrawn. `tests/tasks/code/test_procedural.py` checks, over many seeds, that every
task fails a catalogue of plausible wrong programs and passes alternative correct ones.
"""

from __future__ import annotations

import json
import random
import string
import textwrap

from rlvr_envs.core.sources import Generated
from rlvr_envs.tasks.code.prompts import function_prompt
from rlvr_envs.verify.code import wire

#: random tests per task, after the targeted ones
N_RANDOM = 8


def _finish(description: str, signature: str, function: str, gold: str,
            inputs: list[list], float_tolerance: float | None = None) -> Generated:
    gold = textwrap.dedent(gold).strip() + "\n"
    namespace: dict = {}
    exec(compile(gold, f"<gold {function}>", "exec"), namespace)  # our own reference code
    tests = [{"args": wire.encode(list(args)), "expected": wire.encode(namespace[function](*args))}
             for args in inputs]
    if len({json.dumps(t["expected"]) for t in tests}) < 3:  # a constant would pass them all
        raise ValueError(f"procedural {function}: degenerate tests {tests}")
    meta = {"mode": "calls", "function": function, "tests": tests, "n_tests": len(tests)}
    if float_tolerance is not None:
        meta["float_tolerance"] = float_tolerance
    return Generated(function_prompt(description, signature), gold, meta)


def _ints(rng: random.Random, n: int, lo: int, hi: int) -> list[int]:
    return [rng.randint(lo, hi) for _ in range(n)]


def clamped_sum(rng: random.Random, level: int) -> Generated:
    # a bound of 0 would make `lo < v` and `lo <= v` sum the same, and a clamp to 0 look
    # like dropping the value
    lo, hi = sorted(rng.sample([b for b in range(-20, 40) if b != 0], 2))
    size = 4 + 4 * level

    def values(n: int) -> list[int]:  # about half of them near or inside [lo, hi]
        return [rng.randint(lo - 5, hi + 5) if rng.random() < 0.5 else rng.randint(-60, 60)
                for _ in range(n)]

    mixed = values(size) + [lo, hi, lo - 1, hi + 1]
    rng.shuffle(mixed)
    targeted = [[], [lo], [hi], [lo - 1], [hi + 1], [lo - 1, lo, hi, hi + 1],
                [hi + rng.randint(1, 9), lo - rng.randint(1, 9)], mixed]
    inputs = [[v] for v in targeted] + [[values(rng.randint(0, size))] for _ in range(N_RANDOM)]
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
    k = rng.randint(2, 3) if level == 3 else 2

    def word() -> str:
        return "".join(rng.choice(alphabet) * rng.randint(1, 3 + level)
                       for _ in range(rng.randint(0, 3 + 2 * level)))

    x, y, z = rng.sample(alphabet, 3)
    targeted = ["", x, x + y + x, x * 2 + y + x * 3 + z * 2 + y, x * k, y * (k - 1),
                x * (k - 1) + y * k + z * (k + 1) + x]
    if level == 3:
        targeted.append(z + x * rng.randint(10, 12) + y * k)  # a count of two digits
    inputs = [[s] for s in targeted] + [[word()] for _ in range(N_RANDOM)]
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


def _sequence(seeds: list[int], coeffs: list[int], mod: int, top: int) -> tuple[list, list]:
    """(raw, terms) for n in 0..top: raw[n] is the sum before `% mod` (None for a seed)."""
    raw, terms = [None] * len(seeds), list(seeds)
    while len(terms) <= top:
        raw.append(sum(c * terms[-1 - i] for i, c in enumerate(coeffs)))
        terms.append(raw[-1] % mod)
    return raw, terms


def recurrence(rng: random.Random, level: int) -> Generated:
    order = level
    top = 10 * level + 5  # tests ask for a(n) with n in 0..top
    while True:  # redraw degenerate sequences (deterministically: same rng)
        coeffs = [rng.choice([-4, -3, -2, -1, 1, 2, 3, 4]) for _ in range(order)]
        seeds = _ints(rng, order, 0, 5)
        mod = rng.choice([97, 1000, 10**9 + 7])
        raw, terms = _sequence(seeds, coeffs, mod, top)
        reversed_terms = _sequence(seeds, coeffs[::-1], mod, top)[1]
        # not all-zero or short-periodic (a constant or a lookup of seeds would pass), the
        # modulus of a negative sum matters (so does `%` against a C-style remainder), and
        # the order of the coefficients matters
        if (any(seeds) and len(set(terms)) >= 4
                and any(r is not None and r < 0 and r % mod for r in raw)
                and (order == 1 or reversed_terms != terms)):
            break
    first = [next(n for n, r in enumerate(raw) if r is not None and not 0 <= r < mod),
             next(n for n, r in enumerate(raw) if r is not None and r < 0 and r % mod)]
    if order > 1:
        first.append(next(n for n, (a, b) in enumerate(zip(terms, reversed_terms)) if a != b))
    targeted = list(dict.fromkeys([*range(order + 1), *first, top]))
    inputs = [[n] for n in targeted] + [[rng.randint(0, top)] for _ in range(N_RANDOM)]
    terms_text = " + ".join(f"{c}*a(n-{i + 1})" for i, c in enumerate(coeffs))
    desc = (f"A sequence starts a(0..{order - 1}) = {seeds} and continues a(n) = ({terms_text}) "
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
    return _finish(desc, "nth_term(n)", "nth_term", gold, inputs)


def merge_intervals(rng: random.Random, level: int) -> Generated:
    def intervals() -> list[list[int]]:
        out = []
        for _ in range(rng.randint(0, 2 + 2 * level)):
            a = rng.randint(0, 30)
            out.append([a, a + rng.randint(0, 8)])
        return out

    a, b, c = sorted(rng.sample(range(30), 3))
    p = rng.randint(0, 30)
    targeted = [
        [],
        [[a, b]],
        [[p, p]],
        [[a, b], [b, c]],                        # touching: share the point b
        [[a, b], [b + 1, c + 1]],                # adjacent: share no point
        [[a, c + 9], [a + 1, a + 2]],            # the second lies inside the first
        [[a + 1, a + 2], [a, c + 9], [b, b]],
        [[c + 5, c + 9], [a, b], [a + 1, b + 2]],  # not sorted
        [[p, p], [p, p], [p + 2, p + 4], [p + 1, p + 1]],
        [[a, a + 1], [c, c + 3]],                # a gap
    ]
    inputs = [[iv] for iv in targeted] + [[intervals()] for _ in range(N_RANDOM)]
    if level == 1:
        desc = ("`intervals` is a list of [start, end] pairs (start <= end, both inclusive). "
                "Return the largest end value, or -1 for an empty list.")
        gold = "def merge_intervals(intervals):\n    return max((e for _, e in intervals), default=-1)"
    elif level == 2:
        desc = ("`intervals` is a list of [start, end] pairs (inclusive, start <= end). Merge "
                "overlapping or touching-by-overlap intervals (sharing at least one point; "
                "[1, 2] and [3, 4] share none) and return the merged list of [start, end] lists "
                "sorted by start.")
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
    shifts = [k for k in range(1, 26) if k != 13]  # 13 forward is 13 backward
    shift = rng.choice(shifts)
    while True:  # each shift differs from the next one (cyclically): none can be skipped
        key = [rng.choice(shifts) for _ in range(rng.randint(2, 4))]
        if all(key[i] != key[i - 1] for i in range(len(key))):
            break
    lower, upper = string.ascii_lowercase, string.ascii_uppercase
    pool = lower + (upper + " .,!-'0123456789é" if level > 1 else "")

    def text() -> str:
        return "".join(rng.choice(pool) for _ in range(rng.randint(0, 6 + 4 * level)))

    def letter() -> str:
        return rng.choice(lower if level == 1 else lower + upper)

    if level == 1:
        targeted = ["", "z", lower, "".join(letter() for _ in range(5))]
    else:
        l1, l2, l3, l4, l5, l6 = (letter() for _ in range(6))
        targeted = ["", "Zz", lower + upper,
                    f"{l1} {l2}{rng.choice(upper)}{l3}, {l4}-{rng.choice(lower)}é{l5}! 42 {l6}.",
                    f"{rng.choice(upper)}{l1}{l2}'{l3} {l4}{l5}{l6}",
                    "é" + "".join(letter() for _ in range(4)) + " " + rng.choice(upper)]
    inputs = [[s] for s in targeted] + [[text()] for _ in range(N_RANDOM)]
    if level == 1:
        desc = f"`s` holds lowercase letters only. Shift every letter {shift} places forward in the alphabet (wrapping z to a) and return the result."
        gold = f"def shift_cipher(s):\n    return ''.join(chr((ord(c) - 97 + {shift}) % 26 + 97) for c in s)"
    elif level == 2:
        desc = (f"Shift every ASCII letter of `s` {shift} places forward in the alphabet, wrapping "
                f"around and keeping its case; leave every other character (including non-ASCII "
                f"letters such as 'é') unchanged.")
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
                f"(non-letters, including non-ASCII letters such as 'é', are kept and do not use "
                f"up a shift). Shift each letter forward by its shift, wrapping around and keeping "
                f"its case. Return the result.")
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


#: the tolerance of moving_average's floats (relative and absolute; the statements say 1e-6):
#: far above any summation order's error (values are at most about 50 in size, lists short),
#: far below the differences a wrong program makes (inputs have 2 decimals)
MOVING_AVERAGE_TOLERANCE = 1e-6


def moving_average(rng: random.Random, level: int) -> Generated:
    window = rng.randint(2, 2 + level)

    def value() -> float:  # two decimals, never a whole number (nor 0)
        v = round(rng.uniform(-50, 50), 2)
        return v if v != int(v) else v + 0.25

    def values(n: int) -> list[float]:
        return [value() for _ in range(n)]

    x = value()
    skewed = [x, x + 1.25, x + 40.5]  # mean, median and midrange all differ
    rng.shuffle(skewed)
    checked = "(floats are checked to within 1e-6)"
    if level == 1:
        targeted = [[x], values(2), skewed, values(7)]
        inputs = [[v] for v in targeted] + [[values(rng.randint(1, 4))] for _ in range(N_RANDOM)]
        desc = ("Return the arithmetic mean of the list of floats `values` (it is never empty) "
                f"as a float {checked}.")
        gold = "def moving_average(values):\n    return sum(values) / len(values)"
    elif level == 2:
        targeted = [values(window), values(window + 1), skewed + values(window), values(window + 5)]
        inputs = [[v] for v in targeted] + [[values(rng.randint(window, window + 3 * level))]
                                            for _ in range(N_RANDOM)]
        desc = (f"Return the list of means (floats) of every window of {window} consecutive values "
                f"of `values` (a list of at least {window} floats), in order {checked}.")
        gold = (f"def moving_average(values):\n    w = {window}\n"
                f"    return [sum(values[i:i + w]) / w for i in range(len(values) - w + 1)]")
    else:
        targeted = [[], [x], values(window - 1), values(window), values(window + 4), skewed]
        inputs = [[v] for v in targeted] + [[values(rng.randint(1, window + 3 * level))]
                                            for _ in range(N_RANDOM)]
        desc = (f"Return a list with one float per element of `values` (a list of floats, possibly "
                f"empty): entry i is the mean of the trailing window of {window} values ending at "
                f"values[i], i.e. of values[max(0, i - {window - 1})] through values[i]; the "
                f"first entries, with fewer than {window} values available, average those "
                f"available {checked}.")
        gold = f"""
            def moving_average(values):
                w = {window}
                out = []
                for i in range(len(values)):
                    chunk = values[max(0, i - w + 1):i + 1]
                    out.append(sum(chunk) / len(chunk))
                return out
            """
    return _finish(desc, "moving_average(values)", "moving_average", gold, inputs,
                   float_tolerance=MOVING_AVERAGE_TOLERANCE)


GENERATORS = {
    "clamped_sum": clamped_sum,
    "run_lengths": run_lengths,
    "recurrence": recurrence,
    "merge_intervals": merge_intervals,
    "shift_cipher": shift_cipher,
    "moving_average": moving_average,
}
