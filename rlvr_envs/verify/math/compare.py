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
from rlvr_envs.verify.math.fast import (
    Assign,
    Letter,
    Num,
    leaf_equal,
    parse_leaf,
    relation_union,
)
from rlvr_envs.verify.math.normalize import closing_brace, matching_brace, split_top_level
from rlvr_envs.verify.math.notation import (
    EMPTY_SET,
    canonical,
    choice_letter,
    choice_with_value,
    paired,
)
from rlvr_envs.verify.math.verdict import CORRECT, HEDGED, MISMATCH

LeafEqual = Callable[[str, str], bool]

#: one number with thousands separators, perhaps named or in dollars (`x = 1,000`, `\\$1,000`)
_THOUSANDS_WHOLE = re.compile(
    r"(?:[A-Za-z]\s*=\s*)?(\\?\$)?\s*[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?=[^,\d]*$)", re.ASCII)
_SPACE_GROUPED = re.compile(r"[+-]?\d{1,3}(?: \d{3})+(?:\.\d+)?", re.ASCII)  # 1 000 000 (SI style)
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
    if relation_union(s) is not None:  # "x < 2 or x > 3" is one set, not two answers
        return Shape("single", (s,), s)
    parts = [p for p in split_top_level(s) if p]
    if len(parts) > 1:  # `0, \pm 1` lists three values
        return Shape("list", tuple(item for p in parts for item in _signed(p)), s)
    if _SPACE_GROUPED.fullmatch(s):
        return Shape("single", (s.replace(" ", ""),), s)
    if _SPACED_NUMBERS.fullmatch(s):
        return Shape("list", tuple(s.split()), s)
    signed = _signed(s)
    if len(signed) == 2:
        return Shape("set", signed, s)
    if s.startswith("\\{") and s.endswith("\\}") and closing_brace(s, 1) == len(s) - 1:
        items = tuple(p for p in split_top_level(s[2:-2]) if p)
        return Shape("set", items, s)
    if len(s) > 2 and s[0] in "([" and s[-1] in ")]" and matching_brace(s, 0) == len(s) - 1:
        items = tuple(split_top_level(s[1:-1], ","))
        if len(items) > 1 and all(items):
            return Shape("bracket", items, s, s[0] + s[-1])
    return Shape("single", (s,), s)


def _signed(s: str) -> tuple[str, ...]:
    """The two values of one `\\pm` (`x = \\pm 2` -> `x = 2`, `x = -2`); else `s` alone."""
    if len(_PLUS_MINUS.findall(s)) != 1:
        return (s,)
    plus = _PLUS_MINUS.sub("+", s).replace("=+", "=").replace("= +", "=")
    return plus, _PLUS_MINUS.sub("-", s)


@lru_cache(maxsize=4096)
def gold_shape(gold: str) -> Shape:
    return shape_of(canonical(gold))


_SINGLE_GROUP = re.compile(r"(\^|_|\\sqrt|\\frac\{[^{}]*\}|\\frac)\{([A-Za-z0-9]|\\[a-zA-Z]+)\}")


def _unbraced(m: re.Match) -> str:
    """`^{2}` -> `^2`, `^{\\circ}` -> `^\\circ` (not before a letter: `^{\\circ}C`)."""
    if m.group(2).startswith("\\") and m.string[m.end():m.end() + 1].isalpha():
        return m.group()
    return m.group(1) + m.group(2)


def spelling(s: str) -> str:
    """The same LaTeX without spaces and without braces around one-character or one-command
    groups (`^{\\circ}` is `^\\circ`)."""
    s = s.replace(" ", "")
    while True:
        shorter = _SINGLE_GROUP.sub(_unbraced, s)
        if shorter == s:
            return s
        s = shorter


def aligned(gold: str, answer: str) -> tuple[str, str, bool | None]:
    """The notation rules that need both sides (docs/math.md): a verdict when one decides,
    else the pair rewritten for comparison."""
    gold, answer, decided = paired(gold, answer)
    if decided is not None:
        return gold, answer, decided
    if (gold == EMPTY_SET) != (answer == EMPTY_SET):
        return gold, answer, False
    choice = choice_with_value(answer)
    if choice is not None and choice_with_value(gold) is None:
        letter = parse_leaf(gold)
        if isinstance(letter, Letter):
            return gold, answer, letter.letter == choice[0]
        if choice_letter(gold) is not None:  # `B` against `B) 12`
            return gold, answer, choice_letter(gold) == choice[0]
        answer = choice[1]
    if choice_letter(gold) is not None and choice_letter(answer) is not None:
        return gold, answer, choice_letter(gold) == choice_letter(answer)
    return gold, answer, None


def _plain_number(value, text: str) -> str:
    """A number the fast reader read (`1{,}000{,}000`, `1\\frac12`) as an expression the
    algebra reader takes (`1000000`, `3/2`), so it compares with `10^6`; else `text`."""
    if isinstance(value, Num) and not value.percent and value.unit is None:
        number = value.value
        return f"{number.numerator}" if number.denominator == 1 else \
            f"({number.numerator})/({number.denominator})"
    return text


def fast_equal(gold: str, answer: str) -> bool:
    if spelling(gold) == spelling(answer):
        return True
    gold, answer, decided = aligned(gold, answer)
    if decided is not None:
        return decided
    if spelling(gold) == spelling(answer):
        return True
    g, a = parse_leaf(gold), parse_leaf(answer)
    same = leaf_equal(g, a) if g is not None and a is not None else None
    if same is None:
        same = algebra_equal(_plain_number(g, gold), _plain_number(a, answer))
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


def _same_set(gold: tuple[str, ...], answer: tuple[str, ...], equal: LeafEqual) -> bool:
    """Set equality, duplicates allowed on either side: {1, 1, 2} = {1, 2}."""
    return all(any(equal(g, a) for a in answer) for g in gold) and \
        all(any(equal(g, a) for g in gold) for a in answer)


def _ordered(gold: tuple[str, ...], answer: tuple[str, ...], equal: LeafEqual) -> bool:
    return len(gold) == len(answer) and all(equal(g, a) for g, a in zip(gold, answer))


def _is_named(item: str) -> bool:
    return bool(_NAMED.match(item)) or isinstance(parse_leaf(item), Assign)


def _shapes_equal(gold: Shape, answer: Shape, equal: LeafEqual) -> bool:
    if EMPTY_SET in (gold.text, answer.text) and gold.kind != answer.kind:
        return False  # {\emptyset} is a set with one element
    if gold.kind == "single":
        if answer.kind == "single" or (answer.kind in ("list", "set") and len(answer.items) == 1):
            return equal(gold.items[0], answer.items[0])
        return answer.kind == "bracket" and equal(gold.text, answer.text)
    if gold.kind in ("list", "set"):
        items = answer.items
        named = all(_is_named(g) for g in gold.items)
        if answer.kind == "bracket":  # a=2, b=5 answered (2, 5)
            return named and answer.brackets == "()" and _ordered(gold.items, items, equal)
        if named and not any(_is_named(a) for a in items):
            return _ordered(gold.items, items, equal)
        if "set" in (gold.kind, answer.kind):
            return _same_set(gold.items, items, equal)
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
