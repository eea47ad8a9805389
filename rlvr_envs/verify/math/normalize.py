"""String normalisation of LaTeX answers and depth-aware splitting (no sympy involved)."""

from __future__ import annotations

import re

from rlvr_envs.verify.math.verdict import MAX_NESTING

_FULLWIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}
_FULLWIDTH[0x3000] = ord(" ")

_DROP = re.compile(
    r"\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|big|Big|bigg|Bigg|displaystyle|textstyle"
    r"|scriptstyle|tiny|scriptsize|footnotesize|small|normalsize|large|Large|LARGE|huge|Huge"
    r"|smash)(?![a-zA-Z])|(?<!\\)\\[!,;:]|(?<!\\)\\ |~")
_THIN_THOUSANDS = re.compile(r"(?<=\d)\\[,!;: ](?=\d{3}(?!\d))")
_FRAC = re.compile(r"\\[dt]frac(?![a-zA-Z])")
_SPACES = re.compile(r"\s+")
_THOUSANDS = re.compile(r"(?<=\d)(?:\\(?:text|mathrm)\s*)?\{,\}(?=\d{3})")  # 1{,}000, 1\text{,}000
_DELIMS = (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]"))
_BOX_WRAP = re.compile(r"\\(?:boxed|fbox)\{")

_BRACE = re.compile(r"[{}]")

OPENERS = "([{"
CLOSERS = ")]}"


def clean(text: str) -> str:
    """Whitespace, math delimiters, spacing and sizing commands, \\dfrac, a final full stop."""
    s = text.translate(_FULLWIDTH).strip()
    changed = True
    while changed and s:
        changed = False
        for left, right in _DELIMS:
            if len(s) >= len(left) + len(right) and s.startswith(left) and s.endswith(right):
                s = s[len(left):len(s) - len(right)].strip()
                changed = True
                break
        box = _BOX_WRAP.match(s)
        if box and closing_brace(s, box.end() - 1) == len(s) - 1:
            s = s[box.end():-1].strip()
            changed = True
    s = s.replace(",\\!", ",").replace("\\!,", ",")  # 1,\!000 and 1\!,\!000
    s = _THIN_THOUSANDS.sub("", s)
    s = _DROP.sub(" ", s)
    s = _FRAC.sub(r"\\frac", s)
    s = _THOUSANDS.sub(",", s)
    s = _SPACES.sub(" ", s).strip()
    while s.endswith("."):
        s = s[:-1].rstrip()
    return s


def closing_brace(s: str, start: int, limit: int | None = None) -> int:
    """Index of the `}` closing the `{` at `start`, searching at most `limit` chars; -1 if none.

    Raises NestingError when braces nest deeper than MAX_NESTING on the way.
    """
    end = len(s) if limit is None else min(len(s), start + limit)
    depth = 0
    for m in _BRACE.finditer(s, start, end):
        if m.group() == "{":
            depth += 1
            if depth > MAX_NESTING:
                raise NestingError(f"braces nest deeper than {MAX_NESTING}")
        else:
            depth -= 1
            if depth == 0:
                return m.start()
    return -1


class NestingError(ValueError):
    """An answer nests brackets deeper than the verifier reads."""


def matching_brace(s: str, start: int) -> int:
    """Index of the bracket closing the one at `start` (any of ([{ closes with any of )]}); -1."""
    depth = 0
    for i in range(start, len(s)):
        ch = s[i]
        if ch in OPENERS:
            depth += 1
        elif ch in CLOSERS:
            depth -= 1
            if depth == 0:
                return i
    return -1


def nesting_depth(s: str) -> int:
    depth = deepest = 0
    for ch in s:
        if ch in OPENERS:
            depth += 1
            deepest = max(deepest, depth)
        elif ch in CLOSERS:
            depth -= 1
    return deepest


def balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        if ch in OPENERS:
            depth += 1
        elif ch in CLOSERS:
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


# Words and commands that separate alternatives or list items at the top level of an answer.
_ALTERNATIVE = re.compile(
    r"\\(?:text|textbf|textrm|mbox|mathrm|mathbf)\{\s*(?:or|and)\s*\}"
    r"|(?<![A-Za-z\\])(?:or|and)(?![A-Za-z])|\\lor(?![a-zA-Z])|\\quad")
_SEP = "\x00"


def split_top_level(s: str, separators: str = ",;", words: bool = True) -> list[str]:
    """Split at separators outside any bracket, also at 'or'/'and' words (unless `words` is
    False); parts are stripped."""
    if words:
        s = _ALTERNATIVE.sub(_SEP, s)
    parts, depth, last = [], 0, 0
    seps = separators + _SEP
    for i, ch in enumerate(s):
        if ch in OPENERS:
            depth += 1
        elif ch in CLOSERS:
            depth -= 1
        elif depth == 0 and ch in seps:
            parts.append(s[last:i])
            last = i + 1
    parts.append(s[last:])
    return [p.strip() for p in parts]
