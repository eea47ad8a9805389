"""Procedural code tasks (`rlvr_envs.tasks.code.procedural`): every task's tests must tell the
reference apart from the programs a model plausibly writes instead.

For each generator and level, over a range of seeds, the tests of every task are run here, in
this process, against small Python functions standing for

* plausible WRONG programs (off-by-one bounds, constant returns, a condition of the statement
  ignored, a misread of it): each must fail at least one test of EVERY task;
* alternative CORRECT programs (other idioms, other float summation orders): each must pass
  every test of every task.

The functions read the task's parameters (bounds, shifts, window, ...) from its statement, as
a model would. Results go through `wire.encode`/`wire.decode` and are compared with
`wire.same_value` and the task's own `float_tolerance`, as the grader does; a program that
raises fails that test.
"""

from __future__ import annotations

import ast
import itertools
import math
import random
import re
import statistics
import string
from collections import Counter, deque
from functools import cache

import pytest

from rlvr_envs.tasks.code.procedural import GENERATORS
from rlvr_envs.verify.code import wire

SEEDS = range(250)
LEVELS = (1, 2, 3)


# --- parameters, read from the statement ------------------------------------------------------

def clamp_params(prompt: str) -> dict:
    m = re.search(r"between (-?\d+) and (-?\d+)|\[(-?\d+), (-?\d+)\]", prompt)
    lo, hi = (int(x) for x in m.groups() if x is not None)
    return {"lo": lo, "hi": hi}


def run_params(prompt: str) -> dict:
    m = re.search(r"shorter than (\d+)", prompt)
    return {"k": int(m.group(1))} if m else {}


def recurrence_params(prompt: str) -> dict:
    seeds = ast.literal_eval(re.search(r"\) = (\[[^\]]*\])", prompt).group(1))
    coeffs = [int(c) for c, _ in re.findall(r"(-?\d+)\*a\(n-(\d+)\)", prompt)]
    mod = int(re.search(r"\) mod (\d+)", prompt).group(1))
    return {"seeds": seeds, "coeffs": coeffs, "mod": mod}


def shift_params(prompt: str) -> dict:
    m = re.search(r"the shifts (\[[^\]]*\])", prompt)
    if m:
        return {"key": ast.literal_eval(m.group(1))}
    return {"shift": int(re.search(r"(\d+) places forward", prompt).group(1))}


def window_params(prompt: str) -> dict:
    m = re.search(r"window of (\d+)", prompt)
    return {"w": int(m.group(1))} if m else {}


PARAMS = {"clamped_sum": clamp_params, "run_lengths": run_params,
          "recurrence": recurrence_params, "merge_intervals": lambda p: {},
          "shift_cipher": shift_params, "moving_average": window_params}


# --- the programs ----------------------------------------------------------------------------
# Each entry maps a name to `make(params) -> function`. CORRECT[(generator, level)] must pass
# every task; WRONG[(generator, level)] (plus TRIVIAL, for every family) must fail every task.

TRIVIAL = {
    "return 0": lambda P: lambda *a: 0,
    "return -1": lambda P: lambda *a: -1,
    "return 0.0": lambda P: lambda *a: 0.0,
    "return []": lambda P: lambda *a: [],
    "return ''": lambda P: lambda *a: "",
    "return None": lambda P: lambda *a: None,
    "return the argument": lambda P: lambda *a: a[0],
    "return len(arg)": lambda P: lambda *a: len(a[0]) if hasattr(a[0], "__len__") else 0,
}

CORRECT: dict[tuple[str, int], dict] = {}
WRONG: dict[tuple[str, int], dict] = {}


# clamped_sum

def _clamp(v, P):
    return min(max(v, P["lo"]), P["hi"])


def _loop_filtered_sum(P):
    def f(values):
        total = 0
        for v in values:
            if P["lo"] <= v <= P["hi"]:
                total += v
        return total
    return f


CORRECT["clamped_sum", 1] = {
    "loop": _loop_filtered_sum,
    "sum(filter)": lambda P: lambda values: sum(filter(lambda v: P["lo"] <= v <= P["hi"], values)),
}
WRONG["clamped_sum", 1] = {
    "exclusive bounds": lambda P: lambda values: sum(v for v in values if P["lo"] < v < P["hi"]),
    "excludes hi": lambda P: lambda values: sum(v for v in values if P["lo"] <= v < P["hi"]),
    "excludes lo": lambda P: lambda values: sum(v for v in values if P["lo"] < v <= P["hi"]),
    "sum of all values": lambda P: lambda values: sum(values),
    "clamps instead of filtering": lambda P: lambda values: sum(_clamp(v, P) for v in values),
    "counts instead of summing": lambda P: lambda values: sum(
        1 for v in values if P["lo"] <= v <= P["hi"]),
    "sums the values outside": lambda P: lambda values: sum(
        v for v in values if not P["lo"] <= v <= P["hi"]),
}


def _clamp_loop(P):
    def f(values):
        total = 0
        for v in values:
            if v < P["lo"]:
                total += P["lo"]
            elif v > P["hi"]:
                total += P["hi"]
            else:
                total += v
        return total
    return f


CORRECT["clamped_sum", 2] = {
    "if/elif loop": _clamp_loop,
    "median of three": lambda P: lambda values: sum(sorted((P["lo"], v, P["hi"]))[1]
                                                    for v in values),
}
WRONG["clamped_sum", 2] = {
    "filters instead of clamping": _loop_filtered_sum,
    "clamps only from below": lambda P: lambda values: sum(max(v, P["lo"]) for v in values),
    "clamps only from above": lambda P: lambda values: sum(min(v, P["hi"]) for v in values),
    "no clamping": lambda P: lambda values: sum(values),
    "min/max swapped": lambda P: lambda values: sum(min(max(v, P["hi"]), P["lo"]) for v in values),
    "clamps into the open range": lambda P: lambda values: sum(
        min(max(v, P["lo"] + 1), P["hi"] - 1) for v in values),
}


def _alternating(c):
    return sum(c[0::2]) - sum(c[1::2])


def _alt_loop(P):
    def f(values):
        total, sign = 0, 1
        for v in values:
            total += sign * _clamp(v, P)
            sign = -sign
        return total
    return f


CORRECT["clamped_sum", 3] = {
    "sign toggle": _alt_loop,
    "enumerate parity": lambda P: lambda values: sum(
        (-_clamp(v, P) if i % 2 else _clamp(v, P)) for i, v in enumerate(values)),
}
WRONG["clamped_sum", 3] = {
    "odd minus even": lambda P: lambda values: -_alt_loop(P)(values),
    "no clamping": lambda P: lambda values: sum(values[0::2]) - sum(values[1::2]),
    "no alternation": lambda P: lambda values: sum(_clamp(v, P) for v in values),
    "filters instead of clamping": lambda P: lambda values: _alternating(
        [v for v in values if P["lo"] <= v <= P["hi"]]),
    "clamps the result": lambda P: lambda values: _clamp(sum(values[0::2]) - sum(values[1::2]), P),
}


# run_lengths

CORRECT["run_lengths", 1] = {
    "groupby": lambda P: lambda s: sum(1 for _ in itertools.groupby(s)),
    "changes + 1": lambda P: lambda s: len(s) and 1 + sum(a != b for a, b in zip(s, s[1:])),
}
WRONG["run_lengths", 1] = {
    "distinct characters": lambda P: lambda s: len(set(s)),
    "changes only": lambda P: lambda s: sum(a != b for a, b in zip(s, s[1:])),
    "changes + 1 even when empty": lambda P: lambda s: 1 + sum(a != b for a, b in zip(s, s[1:])),
    "runs of length >= 2": lambda P: lambda s: sum(1 for _, g in itertools.groupby(s)
                                                   if len(list(g)) >= 2),
    "longest run": lambda P: lambda s: max((len(list(g)) for _, g in itertools.groupby(s)),
                                           default=0),
}


def _drops_last_run(P):
    def f(s):
        out = []
        if not s:
            return out
        cur, n = s[0], 0
        for ch in s:
            if ch == cur:
                n += 1
            else:
                out.append((cur, n))
                cur, n = ch, 1
        return out
    return f


CORRECT["run_lengths", 2] = {
    "groupby": lambda P: lambda s: [(c, len(list(g))) for c, g in itertools.groupby(s)],
    "regex": lambda P: lambda s: [(m.group(1), len(m.group(0)))
                                  for m in re.finditer(r"(.)\1*", s, re.DOTALL)],
}
WRONG["run_lengths", 2] = {
    "Counter (merges separate runs)": lambda P: lambda s: list(Counter(s).items()),
    "lists instead of tuples": lambda P: lambda s: [[c, len(list(g))]
                                                    for c, g in itertools.groupby(s)],
    "forgets the last run": _drops_last_run,
    "(count, char)": lambda P: lambda s: [(len(list(g)), c) for c, g in itertools.groupby(s)],
    "as a string": lambda P: lambda s: "".join(f"{c}{len(list(g))}"
                                               for c, g in itertools.groupby(s)),
}


def _encode_runs(write):
    """The level-3 encoding, `write(c, n, k)` writing one run of n characters c."""
    def make(P):
        return lambda s: "".join(write(c, len(list(g)), P["k"]) for c, g in itertools.groupby(s))
    return make


CORRECT["run_lengths", 3] = {
    "groupby": _encode_runs(lambda c, n, k: c + str(n) if n >= k else c * n),
    "re.sub": lambda P: lambda s: re.sub(
        r"(.)\1*", lambda m: (m.group(1) + str(len(m.group(0))) if len(m.group(0)) >= P["k"]
                              else m.group(0)), s, flags=re.DOTALL),
}
WRONG["run_lengths", 3] = {
    "n > k": _encode_runs(lambda c, n, k: c + str(n) if n > k else c * n),
    "n >= k - 1": _encode_runs(lambda c, n, k: c + str(n) if n >= k - 1 else c * n),
    "always encodes": _encode_runs(lambda c, n, k: c + str(n)),
    "never encodes": _encode_runs(lambda c, n, k: c * n),
    "drops short runs": _encode_runs(lambda c, n, k: c + str(n) if n >= k else ""),
    "count before char": _encode_runs(lambda c, n, k: str(n) + c if n >= k else c * n),
}


# recurrence

def _terms(P, n, reduce=lambda x, m: x % m, coeffs=None):
    a = list(P["seeds"])
    coeffs = P["coeffs"] if coeffs is None else coeffs
    while len(a) <= n:
        a.append(reduce(sum(c * a[-1 - i] for i, c in enumerate(coeffs)), P["mod"]))
    return a


def _memoized(P):
    @cache
    def a(n):
        if n < len(P["seeds"]):
            return P["seeds"][n]
        return sum(c * a(n - 1 - i) for i, c in enumerate(P["coeffs"])) % P["mod"]
    return a


def _rolling(P):
    def f(n):
        window = deque(P["seeds"])
        if n < len(window):
            return window[n]
        for _ in range(n - len(window) + 1):
            window.append(sum(c * window[-1 - i] for i, c in enumerate(P["coeffs"])) % P["mod"])
            window.popleft()
        return window[-1]
    return f


CORRECT["recurrence", 1] = CORRECT["recurrence", 2] = CORRECT["recurrence", 3] = {
    "memoized recursion": _memoized,
    "rolling window": _rolling,
    "exact integers, mod at the end": lambda P: lambda n: (
        _terms(P, n, reduce=lambda x, m: x)[n] % P["mod"]),
}
_RECURRENCE_WRONG = {
    "C-style remainder": lambda P: lambda n: _terms(
        P, n, reduce=lambda x, m: int(math.fmod(x, m)))[n],
    "no mod": lambda P: lambda n: _terms(P, n, reduce=lambda x, m: x)[n],
    "one term late": lambda P: lambda n: _terms(P, n + 1)[n + 1],
    "one term early": lambda P: lambda n: _terms(P, n)[max(n - 1, 0)],
    "returns a seed": lambda P: lambda n: P["seeds"][n % len(P["seeds"])],
}
WRONG["recurrence", 1] = dict(_RECURRENCE_WRONG)
WRONG["recurrence", 2] = WRONG["recurrence", 3] = {
    **_RECURRENCE_WRONG,
    "coefficients reversed": lambda P: lambda n: _terms(P, n, coeffs=P["coeffs"][::-1])[n],
}


# merge_intervals

def _max_end_loop(P):
    def f(intervals):
        best = -1
        for _, e in intervals:
            best = max(best, e)
        return best
    return f


CORRECT["merge_intervals", 1] = {
    "loop": _max_end_loop,
    "max of pairs": lambda P: lambda intervals: max((max(p) for p in intervals), default=-1),
}
WRONG["merge_intervals", 1] = {
    "largest start": lambda P: lambda intervals: max((s for s, _ in intervals), default=-1),
    "0 for empty": lambda P: lambda intervals: max((e for _, e in intervals), default=0),
    "end of the last interval": lambda P: lambda intervals: intervals[-1][1] if intervals else -1,
    "end of the first interval": lambda P: lambda intervals: intervals[0][1] if intervals else -1,
    "end of the latest start": lambda P: lambda intervals: (sorted(intervals)[-1][1]
                                                            if intervals else -1),
}


def _merge(touch, sort=True, keep_max=True, as_tuple=False):
    def make(P):
        def f(intervals):
            out = []
            for s, e in (sorted(intervals) if sort else intervals):
                if out and touch(s, out[-1][1]):
                    out[-1][1] = max(out[-1][1], e) if keep_max else e
                else:
                    out.append([s, e])
            return [tuple(x) for x in out] if as_tuple else out
        return f
    return make


def _merge_stack(P):
    def f(intervals):
        stack = []
        for s, e in sorted(intervals, key=lambda x: x[0]):
            if stack and stack[-1][1] >= s:
                stack[-1] = [stack[-1][0], max(stack[-1][1], e)]
            else:
                stack.append([s, e])
        return stack
    return f


CORRECT["merge_intervals", 2] = {
    "sort by start, stack": _merge_stack,
    "sort pairs, extend": _merge(lambda s, end: s <= end),
}
WRONG["merge_intervals", 2] = {
    "also merges adjacent": _merge(lambda s, end: s <= end + 1),
    "strict overlap only": _merge(lambda s, end: s < end),
    "no sorting": _merge(lambda s, end: s <= end, sort=False),
    "takes the later end": _merge(lambda s, end: s <= end, keep_max=False),
    "tuples": _merge(lambda s, end: s <= end, as_tuple=True),
    "no merging": lambda P: lambda intervals: sorted(intervals),
}


def _merged_length(P):
    return lambda intervals: sum(e - s + 1 for s, e in _merge_stack(P)(intervals))


CORRECT["merge_intervals", 3] = {
    "set of points": lambda P: lambda intervals: len({x for s, e in intervals
                                                      for x in range(s, e + 1)}),
    "merged lengths": _merged_length,
}
WRONG["merge_intervals", 3] = {
    "sum of lengths": lambda P: lambda intervals: sum(e - s + 1 for s, e in intervals),
    "end-exclusive": lambda P: lambda intervals: len({x for s, e in intervals
                                                      for x in range(s, e)}),
    "span": lambda P: lambda intervals: (max(e for _, e in intervals)
                                         - min(s for s, _ in intervals) + 1 if intervals else 0),
    "number of merged intervals": lambda P: lambda intervals: len(_merge_stack(P)(intervals)),
    "merged, end-exclusive": lambda P: lambda intervals: sum(
        e - s for s, e in _merge_stack(P)(intervals)),
}


# shift_cipher

def _shift_char(c, k):
    if "a" <= c <= "z":
        return chr((ord(c) - 97 + k) % 26 + 97)
    if "A" <= c <= "Z":
        return chr((ord(c) - 65 + k) % 26 + 65)
    return c


def _translate(P):
    k, low, up = P["shift"], string.ascii_lowercase, string.ascii_uppercase
    table = str.maketrans(low + up, low[k:] + low[:k] + up[k:] + up[:k])
    return lambda s: s.translate(table)


CORRECT["shift_cipher", 1] = {
    "alphabet index": lambda P: lambda s: "".join(
        string.ascii_lowercase[(string.ascii_lowercase.index(c) + P["shift"]) % 26] for c in s),
    "translate": _translate,
}
WRONG["shift_cipher", 1] = {
    "no wrap": lambda P: lambda s: "".join(chr(ord(c) + P["shift"]) for c in s),
    "backward": lambda P: lambda s: "".join(_shift_char(c, -P["shift"]) for c in s),
    "shift + 1": lambda P: lambda s: "".join(_shift_char(c, P["shift"] + 1) for c in s),
    "wraps mod 25": lambda P: lambda s: "".join(chr((ord(c) - 97 + P["shift"]) % 25 + 97)
                                                for c in s),
    "uppercase output": lambda P: lambda s: "".join(_shift_char(c, P["shift"]) for c in s).upper(),
}


def _ascii_letter_loop(P):
    def f(s):
        out = []
        for c in s:
            if c.isascii() and c.isalpha():
                base = ord("a") if c.islower() else ord("A")
                out.append(chr(base + (ord(c) - base + P["shift"]) % 26))
            else:
                out.append(c)
        return "".join(out)
    return f


CORRECT["shift_cipher", 2] = {"translate": _translate, "isascii loop": _ascii_letter_loop}
WRONG["shift_cipher", 2] = {
    "lowercase only": lambda P: lambda s: "".join(
        _shift_char(c, P["shift"]) if c.islower() else c for c in s),
    "lowercases everything": lambda P: lambda s: "".join(_shift_char(c, P["shift"])
                                                         for c in s.lower()),
    "shifts every character": lambda P: lambda s: "".join(
        chr((ord(c) - 97 + P["shift"]) % 26 + 97) for c in s),
    "isalpha (non-ASCII letters too)": lambda P: lambda s: "".join(
        chr(((ord(c) - (97 if c.islower() else 65) + P["shift"]) % 26)
            + (97 if c.islower() else 65)) if c.isalpha() else c for c in s),
    "one 52-letter alphabet": lambda P: lambda s: "".join(
        string.ascii_letters[(string.ascii_letters.index(c) + P["shift"]) % 52]
        if c in string.ascii_letters else c for c in s),
    "drops non-letters": lambda P: lambda s: "".join(
        _shift_char(c, P["shift"]) for c in s if c.isascii() and c.isalpha()),
}


def _vigenere(next_shift, keep=lambda c: c.isascii() and c.isalpha(), drop=False):
    """`next_shift(P)` makes a function (index in s, char) -> shift for one letter."""
    def make(P):
        def f(s):
            shift_of, out = next_shift(P), []
            for i, c in enumerate(s):
                if keep(c):
                    k = shift_of(i, c)
                    base = 97 if c.islower() else 65
                    out.append(chr((ord(c) - base + k) % 26 + base))
                elif not drop:
                    out.append(c)
            return "".join(out)
        return f
    return make


def _cycle(P):
    it = itertools.cycle(P["key"])
    return lambda i, c: next(it)


def _per_word(P):
    state = {"n": 0}

    def shift_of(i, c):
        k = P["key"][state["n"] % len(P["key"])]
        state["n"] += 1
        return k
    return shift_of


def _reset_per_word(P):
    def f(s):
        return " ".join(_vigenere(_per_word)(P)(word) for word in s.split(" "))
    return f


def _counter_loop(P):
    def f(s):
        key, out, n = P["key"], [], 0
        for c in s:
            if c.isascii() and c.isalpha():
                out.append(_shift_char(c, key[n % len(key)]))
                n += 1
            else:
                out.append(c)
        return "".join(out)
    return f


CORRECT["shift_cipher", 3] = {
    "cycle over letters": _vigenere(_cycle),
    "counter loop": _counter_loop,
}
WRONG["shift_cipher", 3] = {
    "non-letters use a shift": _vigenere(lambda P: lambda i, c: P["key"][i % len(P["key"])]),
    "first shift only": _vigenere(lambda P: lambda i, c: P["key"][0]),
    "lowercase only": _vigenere(_cycle, keep=lambda c: "a" <= c <= "z"),
    "restarts the key at each word": _reset_per_word,
    "drops non-letters": _vigenere(_cycle, drop=True),
    "isalpha (non-ASCII letters too)": _vigenere(_cycle, keep=str.isalpha),
    "backward": _vigenere(lambda P: _cycle({"key": [-k for k in P["key"]]})),
}


# moving_average

CORRECT["moving_average", 1] = {
    "statistics.fmean": lambda P: statistics.fmean,
    "statistics.mean": lambda P: statistics.mean,
    "math.fsum": lambda P: lambda values: math.fsum(values) / len(values),
}
WRONG["moving_average", 1] = {
    "median": lambda P: statistics.median,
    "floor division": lambda P: lambda values: sum(values) // len(values),
    "divides by len - 1": lambda P: lambda values: sum(values) / (len(values) - 1),
    "sum": lambda P: lambda values: float(sum(values)),
    "midrange": lambda P: lambda values: (max(values) + min(values)) / 2,
    "first value": lambda P: lambda values: values[0],
}


def _windows(lo, hi, div=None):
    """Means of values[lo(i, w):hi(i, w)] for i in range(len(values)), skipping empty slices."""
    def make(P):
        def f(values):
            w, out = P["w"], []
            for i in range(len(values)):
                chunk = values[max(0, lo(i, w)):hi(i, w)]
                if chunk:
                    out.append(sum(chunk) / (div(w, chunk) if div else len(chunk)))
            return out
        return f
    return make


def _running_full(P):
    def f(values):
        w = P["w"]
        total, out = sum(values[:w]), []
        out.append(total / w)
        for i in range(w, len(values)):
            total += values[i] - values[i - w]
            out.append(total / w)
        return out
    return f


def _full_windows(P, w=None):
    w = P["w"] if w is None else w
    return lambda values: [statistics.fmean(values[i:i + w]) for i in range(len(values) - w + 1)]


CORRECT["moving_average", 2] = {
    "running sum": _running_full,
    "fmean of slices": _full_windows,
    "statistics.mean of slices": lambda P: lambda values: [
        statistics.mean(values[i:i + P["w"]]) for i in range(len(values) - P["w"] + 1)],
}
WRONG["moving_average", 2] = {
    "misses the last window": lambda P: lambda values: _full_windows(P)(values)[:-1],
    "partial windows at the end": _windows(lambda i, w: i, lambda i, w: i + w),
    "window w - 1": lambda P: _full_windows(P, P["w"] - 1),
    "window w + 1": lambda P: _full_windows(P, P["w"] + 1),
    "sums": lambda P: lambda values: [float(sum(values[i:i + P["w"]]))
                                      for i in range(len(values) - P["w"] + 1)],
    "cumulative means": lambda P: lambda values: [statistics.fmean(values[:i + 1])
                                                  for i in range(len(values))],
    "trailing partial windows": _windows(lambda i, w: i - w + 1, lambda i, w: i + 1),
}


def _running_trailing(P):
    def f(values):
        window, total, out = deque(), 0.0, []
        for v in values:
            window.append(v)
            total += v
            if len(window) > P["w"]:
                total -= window.popleft()
            out.append(total / len(window))
        return out
    return f


CORRECT["moving_average", 3] = {
    "fmean of trailing slices": _windows(lambda i, w: i - w + 1, lambda i, w: i + 1),
    "running sum": _running_trailing,
    "statistics.mean": lambda P: lambda values: [
        statistics.mean(values[max(0, i - P["w"] + 1):i + 1]) for i in range(len(values))],
}
WRONG["moving_average", 3] = {
    "full windows only": _full_windows,
    "always divides by w": _windows(lambda i, w: i - w + 1, lambda i, w: i + 1,
                                    div=lambda w, chunk: w),
    "forward windows": _windows(lambda i, w: i, lambda i, w: i + w),
    "centered windows": _windows(lambda i, w: i - w // 2, lambda i, w: i + w // 2 + 1),
    "cumulative means": lambda P: lambda values: [statistics.fmean(values[:i + 1])
                                                  for i in range(len(values))],
    "window w + 1": _windows(lambda i, w: i - w, lambda i, w: i + 1),
    "window w - 1": _windows(lambda i, w: i - w + 2, lambda i, w: i + 1),
}


# --- grading in-process, as the grader does -------------------------------------------------

def passes_all(make, prompt: str, meta: dict) -> bool:
    """Whether the program `make(params)` passes every test of the task."""
    params = PARAMS[meta["function"] if meta["function"] != "nth_term" else "recurrence"]
    fn = make(params(prompt))
    tolerance = meta.get("float_tolerance")
    for test in meta["tests"]:
        try:
            got = wire.decode(wire.encode(fn(*wire.decode(test["args"]))))
        except Exception:
            return False
        if not wire.same_value(got, wire.decode(test["expected"]), tolerance):
            return False
    return True


def audit(generators, generator: str, level: int, seeds) -> dict[str, list[int]]:
    """{program name: seeds where the program's verdict is wrong} (a wrong program passing
    every test, or a correct one failing one)."""
    bad: dict[str, list[int]] = {}
    correct = CORRECT[generator, level]
    wrong = {**TRIVIAL, **WRONG[generator, level]}
    for seed in seeds:
        made = generators[generator](random.Random(seed), level)
        for name, make in correct.items():
            if not passes_all(make, made.prompt, made.metadata):
                bad.setdefault(f"correct: {name}", []).append(seed)
        for name, make in wrong.items():
            if passes_all(make, made.prompt, made.metadata):
                bad.setdefault(f"wrong: {name}", []).append(seed)
    return bad


def test_catalogue_covers_every_generator_and_level():
    assert {g for g, _ in WRONG} == set(GENERATORS) == {g for g, _ in CORRECT}
    assert set(WRONG) == set(CORRECT) == {(g, lvl) for g in GENERATORS for lvl in LEVELS}


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("generator", sorted(GENERATORS))
def test_tests_reject_plausible_wrong_programs_and_accept_correct_ones(generator, level):
    bad = audit(GENERATORS, generator, level, SEEDS)
    assert not bad, {name: [f"{generator}/L{level}/{s}" for s in seeds[:5]] + [f"({len(seeds)})"]
                     for name, seeds in bad.items()}


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("generator", sorted(GENERATORS))
def test_tasks_are_deterministic_and_not_degenerate(generator, level):
    for seed in range(20):
        made = GENERATORS[generator](random.Random(seed), level)
        again = GENERATORS[generator](random.Random(seed), level)
        assert (made.prompt, made.answer, made.metadata) == (again.prompt, again.answer,
                                                             again.metadata)
        expected = [repr(t["expected"]) for t in made.metadata["tests"]]
        assert made.metadata["n_tests"] == len(expected) >= 8
        assert len(set(expected)) >= 3, (generator, level, seed)  # no constant answer


# --- end to end, through the sandboxed grader -------------------------------------------------

@pytest.fixture(scope="module")
def scorer():
    from rlvr_envs.tasks.code.scoring import CodeScorer

    return CodeScorer("auto", limits={"wall_time": 5.0})


def fenced(code: str) -> str:
    return f"```python\n{code}\n```"


MERGES_ADJACENT = """
def merge_intervals(intervals):
    out = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out
"""

KEY_BY_POSITION = """
def shift_cipher(s):
    key = {key!r}
    out = []
    for i, c in enumerate(s):
        if c.isascii() and c.isalpha():
            base = 97 if c.islower() else 65
            c = chr((ord(c) - base + key[i % len(key)]) % 26 + base)
        out.append(c)
    return ''.join(out)
"""

TRAILING_FMEAN = """
import statistics
def moving_average(values):
    w = {w}
    return [statistics.fmean(values[max(0, i - w + 1):i + 1]) for i in range(len(values))]
"""

TRAILING_RUNNING_SUM = """
def moving_average(values):
    w, total, out = {w}, 0.0, []
    for i, v in enumerate(values):
        total += v
        if i >= w:
            total -= values[i - w]
        out.append(total / min(i + 1, w))
    return out
"""


def test_red_team_programs_score_zero_and_other_correct_programs_one(scorer):
    """The red team's reproducers (findings r3, code #1 and #4) through `CodeScorer`."""
    from rlvr_envs.tasks.code.envs import code_source

    source = code_source("procedural")
    clamp = source.get("clamped_sum/L1/4")
    lo, hi = clamp_params(clamp.prompt).values()
    cipher = source.get("shift_cipher/L3/0")
    average = source.get("moving_average/L3/5")
    w = window_params(average.prompt)["w"]
    cases = [
        (clamp, "def clamped_sum(values):\n    return 0", 0.0),
        (clamp, f"def clamped_sum(values):\n    return sum(v for v in values if {lo} < v < {hi})",
         0.0),
        (source.get("merge_intervals/L2/0"), MERGES_ADJACENT, 0.0),
        (cipher, KEY_BY_POSITION.format(key=shift_params(cipher.prompt)["key"]), 0.0),
        (source.get("recurrence/L1/0"), "def nth_term(n):\n    return 0", 0.0),
        (average, TRAILING_FMEAN.format(w=w), 1.0),
        (average, TRAILING_RUNNING_SUM.format(w=w), 1.0),
    ]
    for task, code, reward in cases:
        score = scorer.score(task, fenced(code))
        assert score.reward == reward, (task.source_id, code, score.details)
        assert (score.verifier == "correct") == (reward == 1.0), (task.source_id, score.verifier)
