"""Answer structure (one value, a list, a set, a bracketed tuple) and the hedge rules.

`judge` decides correct / mismatch / hedged for the extracted answer(s) against the gold,
given a leaf comparator: the fast one (`fast_equal`, raises NeedsSymbolic when it cannot
tell) in the caller's process, or fast-then-symbolic inside a verifier worker.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from rlvr_envs.verify.math.algebra import algebra_equal
from rlvr_envs.verify.math.fast import Assign, Num, leaf_equal, parse_leaf
from rlvr_envs.verify.math.normalize import clean, closing_brace, matching_brace, split_top_level
from rlvr_envs.verify.math.verdict import CORRECT, HEDGED, MISMATCH

LeafEqual = Callable[[str, str], bool]

_THOUSANDS_WHOLE = re.compile(r"(\\?\$)?\s*[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?=[^,\d]*$)", re.ASCII)
_SPACED_NUMBERS = re.compile(r"[+-]?\d+(?:\.\d+)?(?:\s+[+-]?\d+(?:\.\d+)?)+", re.ASCII)
_PLUS_MINUS = re.compile(r"\\(?:pm|mp)(?![a-zA-Z])")
_NAMED = re.compile(r"\s*[A-Za-z](?:_\{?\w+\}?)?\s*=")


class NeedsSymbolic(Exception):
    """The fast path cannot compare these two answers."""


@dataclass(frozen=True)
class Shape:
    """kind: "single", "list" (bare, order-free), "set" (\\{…\\}), "bracket" ((…) or [...])."""

    kind: str
    items: tuple[str, ...]
    text: str
    brackets: str = ""

    @property
    def multipart(self) -> bool:
        return self.kind in ("list", "set") or (self.kind == "bracket" and self.brackets == "()")


def shape_of(s: str) -> Shape:
    if _THOUSANDS_WHOLE.match(s) and "," not in s[_THOUSANDS_WHOLE.match(s).end():]:
        return Shape("single", (s,), s)
    parts = [p for p in split_top_level(s) if p]
    if len(parts) > 1:
        return Shape("list", tuple(parts), s)
    if _SPACED_NUMBERS.fullmatch(s):
        return Shape("list", tuple(s.split()), s)
    signs = _PLUS_MINUS.findall(s)
    if len(signs) == 1:
        plus = _PLUS_MINUS.sub("+", s).replace("=+", "=").replace("= +", "=")
        minus = _PLUS_MINUS.sub("-", s)
        return Shape("set", (plus, minus), s)
    if s.startswith("\\{") and s.endswith("\\}") and closing_brace(s, 1) == len(s) - 1:
        items = tuple(p for p in split_top_level(s[2:-2]) if p)
        return Shape("set", items, s)
    if len(s) > 2 and s[0] in "([" and s[-1] in ")]" and matching_brace(s, 0) == len(s) - 1:
        items = tuple(split_top_level(s[1:-1], ","))
        if len(items) > 1 and all(items):
            return Shape("bracket", items, s, s[0] + s[-1])
    return Shape("single", (s,), s)


@lru_cache(maxsize=4096)
def gold_shape(gold: str) -> Shape:
    return shape_of(clean(gold))


_SINGLE_GROUP = re.compile(r"(\^|_|\\sqrt|\\frac\{[^{}]*\}|\\frac)\{([A-Za-z0-9])\}")


def _spelling(s: str) -> str:
    """The same LaTeX without spaces and without braces around one-character groups."""
    s = s.replace(" ", "")
    while True:
        shorter = _SINGLE_GROUP.sub(r"\1\2", s)
        if shorter == s:
            return s
        s = shorter


_OPERATOR_COMMANDS = ("\\times", "\\cdot", "\\div", "\\bmod", "\\mod", "\\pmod")
_SCIENTIFIC = re.compile(r"[+-]?\d+(?:\.\d+)?\s*(?:\\times|\\cdot|\*)\s*10\^\{?[+-]?\d+\}?")


def restates_an_operation(answer: str) -> bool:
    """True when `answer` has a binary arithmetic operator outside any brackets, as in
    "12 + 7 \\times 3" or "\\frac{3}{4} + \\frac{5}{6}". Such an answer to a numeric gold only
    restates the question (copying the problem would otherwise earn the reward); single-term
    forms such as 2^{10}, \\sqrt{25}, 5! or scientific notation are still compared by value."""
    text = answer.strip()
    if _SCIENTIFIC.fullmatch(text):
        return False
    depth, previous = 0, ""
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in "{([":
            depth += 1
        elif ch in "})]":
            depth -= 1
        elif depth == 0:
            if ch == "\\" and text.startswith(_OPERATOR_COMMANDS, i):
                return True
            if ch in "*/÷×·" or (ch in "+-" and previous and previous not in "+-*/=^_({[,"):
                return True
        if not ch.isspace():
            previous = ch
        i += 1
    return False


def fast_equal(gold: str, answer: str) -> bool:
    if _spelling(gold) == _spelling(answer):
        return True
    g, a = parse_leaf(gold), parse_leaf(answer)
    if isinstance(g, Num) and a is None and restates_an_operation(answer):
        return False
    same = leaf_equal(g, a) if g is not None and a is not None else None
    if same is None:
        same = algebra_equal(gold, answer)
    if same is None:
        raise NeedsSymbolic
    return same


def _unordered(gold: tuple[str, ...], answer: tuple[str, ...], equal: LeafEqual) -> bool:
    if len(gold) != len(answer):
        return False
    left = list(answer)
    for g in gold:
        for i, a in enumerate(left):
            if equal(g, a):
                del left[i]
                break
        else:
            return False
    return True


def _ordered(gold: tuple[str, ...], answer: tuple[str, ...], equal: LeafEqual) -> bool:
    return len(gold) == len(answer) and all(equal(g, a) for g, a in zip(gold, answer))


def _is_named(item: str) -> bool:
    return bool(_NAMED.match(item)) or isinstance(parse_leaf(item), Assign)


def _shapes_equal(gold: Shape, answer: Shape, equal: LeafEqual) -> bool:
    if gold.kind == "single":
        if answer.kind == "single" or (answer.kind in ("list", "set") and len(answer.items) == 1):
            return equal(gold.items[0], answer.items[0])
        return answer.kind == "bracket" and equal(gold.text, answer.text)
    if gold.kind in ("list", "set"):
        if answer.kind == "bracket":
            return False
        items = answer.items
        if all(_is_named(g) for g in gold.items) and not any(_is_named(a) for a in items):
            return _ordered(gold.items, items, equal)
        return _unordered(gold.items, items, equal)
    # a bracketed gold: an interval, a point, a tuple
    if answer.kind == "bracket":
        return answer.brackets == gold.brackets and _ordered(gold.items, answer.items, equal)
    if answer.kind == "list" and gold.brackets == "()":
        return _ordered(gold.items, answer.items, equal)
    return answer.kind == "single" and equal(gold.text, answer.text)


def judge(gold: Shape, answers: tuple[str, ...], equal: LeafEqual) -> str:
    """CORRECT, MISMATCH or HEDGED for the distinct extracted answers against the gold."""
    if len(answers) > 1:
        if not gold.multipart:  # several boxes for one value: fine only if every one is right
            same = all(_shapes_equal(gold, shape_of(a), equal) for a in answers)
            return CORRECT if same else HEDGED
        items: list[str] = []
        for a in answers:
            shape = shape_of(a)
            items.extend(shape.items if shape.kind in ("list", "set") else (a,))
        answer = Shape("list", tuple(items), ", ".join(answers))
    else:
        answer = shape_of(answers[0])
        if answer.kind in ("list", "set") and len(answer.items) > 1 and not gold.multipart:
            return HEDGED
    return CORRECT if _shapes_equal(gold, answer, equal) else MISMATCH
