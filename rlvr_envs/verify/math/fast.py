"""Fast path: single answers read and compared with fractions.Fraction and string rules only.

Numbers (integers, decimals, fractions, percentages, units, degrees, dollars), infinities,
letters (multiple choice), short words, relations and intervals with numeric bounds, and
numeric matrices never reach sympy. `parse_leaf` returns None for anything else; then
`leaf_equal` cannot decide and the symbolic path (math-verify, in a worker) does.
Comparison is exact: 0.333 is not 1/3.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from functools import lru_cache
from itertools import pairwise

from rlvr_envs.verify.math.algebra import rational_value
from rlvr_envs.verify.math.normalize import matching_brace, split_top_level
from rlvr_envs.verify.math.notation import canonical


@dataclass(frozen=True)
class Num:
    value: Fraction
    percent: bool = False
    unit: str | None = None


@dataclass(frozen=True)
class Inf:
    sign: int


@dataclass(frozen=True)
class Letter:
    """A single letter: a multiple-choice option (or a one-letter variable)."""

    letter: str


@dataclass(frozen=True)
class Text:
    words: str
    wordy: bool  # an explicit \text{} or a long word: a mismatch is final


@dataclass(frozen=True)
class Interval:
    low: Num | Inf
    high: Num | Inf
    low_open: bool
    high_open: bool


@dataclass(frozen=True)
class Union:
    """Disjoint intervals in increasing order (merged, so equal sets have equal parts)."""

    parts: tuple[Interval, ...]


@dataclass(frozen=True)
class Rel:
    """A condition on one variable: `var` lies in `interval`, or `var != value` (interval None)."""

    var: str
    interval: Interval | None
    excluded: Num | None = None


@dataclass(frozen=True)
class Assign:
    var: str
    value: Num


@dataclass(frozen=True)
class Matrix:
    rows: tuple[tuple[Num, ...], ...]
    determinant: bool = False  # written with vmatrix: a number, never equal to a matrix


Value = Num | Inf | Letter | Text | Interval | Union | Rel | Assign | Matrix

_WRAPPER = re.compile(r"\\(?:text|textbf|textrm|textit|mathrm|mathbf|mathit|mbox|operatorname)\s*\{")
_INLINE_TEXT = re.compile(  # `\text`, `\textrm`, `\textnormal`, `\mathsf`, ...
    r"\\(?:text(?!color)[a-z]*|math(?:rm|it|sf|tt|normal)|[mh]box|emph|operatorname)\s*\{([^{}]*)\}")
_NUMBER = re.compile(
    r"""(?P<sign>[+-]?)\s*(?:
        (?P<whole>\d{1,60})\s*\\frac\s*\{\s*(?P<mn>\d{1,60})\s*\}\s*\{\s*(?P<md>\d{1,60})\s*\}
      | (?P<swhole>\d{1,60})\s*\\frac\s*(?P<smn>\d)(?P<smd>\d)
      | \\frac\s*\{\s*(?P<fsign>-?)\s*(?P<fn>\d{1,60}(?:\.\d{1,60})?)\s*\}\s*
                 \{\s*(?P<fd>\d{1,60}(?:\.\d{1,60})?)\s*\}
      | \\frac\s*(?P<sn>\d)(?P<sd>\d)
      | (?P<an>\d{1,60}(?:\.\d{1,60})?)\s*/\s*(?P<ad>\d{1,60}(?:\.\d{1,60})?)
      | (?P<dec>\d{1,60}\.\d{0,60}|\.\d{1,60}|\d{1,60})
    )""", re.VERBOSE | re.ASCII)
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", re.ASCII)
_DOLLAR = re.compile(r"\\?\$\s*")
_PERCENT = re.compile(r"\\?%")
_DEGREE = re.compile(r"(?:\^\s*\{?\s*\\circ\s*\}?|°|\\degree(?![a-zA-Z]))"
                     r"(?:\s*(?:[CF]|\\(?:text|mathrm)\s*\{\s*[CF]\s*\})(?![A-Za-z]))?")
_UNIT = re.compile(r"([A-Za-z]+(?:\s+[A-Za-z]+)?)\s*(?:\^\s*\{?\s*([23])\s*\}?)?"
                   r"(?:\s*(?:/|\s+per\s+)\s*([A-Za-z]+))?", re.ASCII)
_PER_UNIT = re.compile(r"per\s+([A-Za-z]+)", re.ASCII)
_INFINITY = re.compile(r"([+-]?)\s*(?:\\infty|∞|\\inf)", re.ASCII)
_LETTER = re.compile(r"\(?([A-Za-z])\)?|([A-Za-z])\)", re.ASCII)
#: a variable: `x`, `a_1`, `x_{12}`, `y_{\min}`, `f_{\text{max}}`
_VAR = re.compile(r"[A-Za-z](?:_\{?[A-Za-z0-9]+\}?|_\{?\\(?:min|max)\}?"
                  r"|_\{\\(?:text|mathrm)\s*\{\s*[A-Za-z]+\s*\}\})?", re.ASCII)
_RELOP = re.compile(r"\\leqslant|\\geqslant|\\leq|\\geq|\\le|\\ge|\\neq|\\ne|<=|>=|!=|≤|≥|≠|<|>|=")
_MATRIX = re.compile(
    r"\\begin\{([pbBvV]?matrix|array)\}(?:\{[lcr|]*\})?(.*)\\end\{\1\}", re.DOTALL)
_TEXT = re.compile(r"[^\W\d_][^\W_ '\-.]*(?:[ '\-][^\W_][^\W_'\-.]*)*\.?")

# Words that turn a number into something else; never read as its unit.
_NOT_UNITS = frozenset(
    ["or", "and", "not", "nor", "no", "neither", "either", "maybe", "perhaps", "approximately", "approx", "about", "around", "roughly", "nearly", "almost", "correct", "incorrect", "wrong", "true", "false", "answer", "answers", "mark", "marked", "grade", "grader", "is", "are", "was", "plus", "minus", "times", "less", "more", "than", "over", "under", "except", "but", "if", "unless", "possibly", "probably", "likely", "at", "least", "most"])
_QUALIFIERS = _NOT_UNITS - {"or", "and"}  # those two separate list items instead
# Words after a number that change its value or hedge it: never read as its unit (scale words,
# `1.5 \text{ million}`, are rewritten to the number before this).
_NOT_UNITS |= frozenset([
    "hundred", "hundreds", "dozen", "dozens", "score", "squared", "cubed", "factorial",
    "reciprocal", "inverse", "negative", "half", "halves", "double", "twice", "triple",
    "thrice", "quarter", "quarters", "tenth", "tenths", "hundredth", "hundredths", "thousandth",
    "thousandths", "power", "root", "mod", "modulo", "otherwise", "guess", "give", "take", "ish",
    "bound", "upper", "lower", "estimate", "exactly", "sqrt"])
# Number words and the words made from them: plurals (`tens`, `thousands`, `lakhs`),
# ordinals and fractions (`fifths`, `millionths`; `second` is left to time), multipliers
# (`double`, `gross`). After a number each of them changes its value: `3 \text{ fifths}` is
# not 3. (`1.5 \text{ million(s)}` is rewritten to the number before this, notation.py.)
_NUMBER_WORD = re.compile(
    r"(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    r"|(?:thir|four|fif|six|seven|eigh|nine)teen(?:th)?"
    r"|(?:twen|thir|for|fif|six|seven|eigh|nine)t(?:y|ie|ieth)"
    r"|hundred(?:th)?|thousand(?:th)?|(?:m|b|tr|quadr|quint)illion(?:th)?|googol|myriad"
    r"|dozen|score|gross|lakh|lac|crore|half|halve|third|fourth|fifth|sixth|seventh|eighth|ninth"
    r"|tenth|eleventh|twelfth|quarter|single|double|triple|quadruple|twice|thrice)(?:e?s)?",
    re.IGNORECASE)
# Plural words that qualify or scale a number (a singular one is no unit unless listed below).
_VALUE_PLURALS = frozenset(["tops", "odds"])
_UNIT_ALIASES = {
    "centimeter": "cm", "centimetre": "cm", "meter": "m", "metre": "m", "kilometer": "km",
    "kilometre": "km", "millimeter": "mm", "millimetre": "mm", "inch": "in", "inche": "in",
    "foot": "ft", "feet": "ft", "yard": "yd", "mile": "mi", "second": "s", "sec": "s",
    "minute": "min", "hour": "h", "hr": "h", "gram": "g", "kilogram": "kg", "milligram": "mg",
    "pound": "lb", "lbs": "lb", "ounce": "oz", "degree": "deg", "dollar": "usd", "cent": "ct",
    "liter": "l", "litre": "l", "milliliter": "ml", "millilitre": "ml", "day": "d", "week": "wk",
    "year": "yr", "month": "mo",
}
# Unit names of one to three letters, matched as written (`M` is no metre, `K` no kilo):
# any other unit is a longer word, so that 2x or 3pi are never read as a number with a unit.
_SHORT_UNITS = frozenset([
    "m", "s", "g", "h", "l", "L", "d", "cm", "mm", "km", "kg", "mg", "in", "ft", "yd", "mi", "lb",
    "oz", "ml", "mL", "hr", "yr", "mo", "wk", "ct", "min", "sec", "deg", "usd", "USD", "mph", "kph",
    "rpm", "psi", "rad", "hrs", "yrs", "lbs", "sq", "pts", "C", "F", "am", "pm", "AM", "PM",
    "st", "nd", "rd", "th"])
# Singular words (and irregular plurals) that are units or leave the number as it is; a
# regular plural noun (`apples`, `ways`, `people`) is a unit too. Any other word after a
# number is refused, not dropped: an unknown word may scale or qualify the value
# (`3 \text{ lakh}`, `3 \text{ max}`, `3 \text{ ppm}`), and a refusal costs only an
# unusual answer its reward.
_UNIT_WORDS = frozenset(_UNIT_ALIASES) | frozenset([
    "unit", "percent", "radian", "celsius", "fahrenheit", "kelvin", "acre", "hectare", "gallon",
    "quart", "pint", "cup", "ton", "tonne", "calorie", "kilocalorie", "joule", "watt", "volt",
    "newton", "pascal", "hertz", "byte", "bit", "mole", "euro", "yen", "rupee", "peso", "cents",
    "square", "cubic", "total", "each", "people", "person", "children", "child", "men",
    "women", "sheep", "fish", "deer", "mice", "teeth", "geese", "usd",
    # after a unit: `16 \text{ years old}`, `12 \text{ inches long}`, `3 \text{ apples left}`
    "old", "long", "tall", "wide", "high", "deep", "thick", "away", "apart", "later", "left"])
# Before a unit, another word is read as an adjective (`3 \text{ red marbles}`, `4 \text{ real
# roots}`) unless it is a value word or one of these scales and bounds.
_NOT_ADJECTIVES = frozenset(["mil", "mln", "bln", "thou", "grand", "max", "maximum", "min",
                             "minimum", "per", "ppm", "ppb", "ppt", "bps", "basis", "percentage"])
# `ways`, `apples`; not `gross`, `plus`, `basis`
_REGULAR_PLURAL = re.compile(r"[a-z]{2,}[^\Wsiu\d_]s", re.ASCII)
_RELATION_FLIP = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "=": "=", "!=": "!="}
_RELATION_NAMES = {"\\leqslant": "<=", "\\geqslant": ">=", "\\leq": "<=", "\\geq": ">=",
                   "\\le": "<=", "\\ge": ">=", "\\neq": "!=", "\\ne": "!=", "≤": "<=", "≥": ">=",
                   "≠": "!=", "<=": "<=", ">=": ">=", "!=": "!=", "<": "<", ">": ">", "=": "="}


_COMMAND = re.compile(r"\\[a-zA-Z]+")
_APPROX = re.compile(r"\\approx(?![a-zA-Z])|≈")
_WORD = re.compile(r"[A-Za-z]{2,}")


_APPROXIMATION_TAIL = re.compile(
    r"(?:\\approx(?![a-zA-Z])|≈)\s*([+-]?\d*(?:\.(\d+)|\d))(?:\\?%)?\s*"
    r"(?:\\ldots|\\dots|\.\.\.)?\s*$")


#: values no decimal approximates: an infinity, a set, a number in another base, a choice
_NO_DECIMAL = re.compile(r"\\infty|\\emptyset|\\mathbb|_\{|\\\{|^\(\s*[A-Ea-e]\s*\)")


def exact_side(answer: str, rounded: bool = False) -> str:
    """The exact value of `\\frac13 \\approx 0.333` (an exact answer followed by a decimal
    approximation of it), or with `rounded` (a question that asks for a rounded value) the
    decimal; any other answer as it is (a bare `\\approx 42` stays a qualifier)."""
    tail = _APPROXIMATION_TAIL.search(answer)
    if tail is None or not answer[:tail.start()].strip() or _APPROX.search(answer, 0, tail.start()):
        return answer
    # the exact side as the notation rules read it (`\\text{seven} \\approx 8` approximates nothing)
    exact = answer[:tail.start()].strip()
    value = parse_number(canonical(exact))
    if value is None and _NO_DECIMAL.search(canonical(exact)):
        return answer  # `\\text{infinity} \\approx 5`, `0b1011 \\approx 12` approximate nothing
    decimal, decimals = tail.group(1), len(tail.group(2) or "")
    if value is not None and abs(value.value - _fraction(decimal)) >= Fraction(1, 10 ** decimals):
        return answer  # `5 \approx 6` approximates nothing
    return decimal if rounded else exact


_TEXT_GROUP = re.compile(
    r"\\(?:text(?!color)[a-z]*|math(?:rm|it|sf|tt|normal)|[mh]box|emph|operatorname)\s*\{([^{}]*)\}"
    r"(?:\^\{?\d+\}?)?")
_PLAIN_NUMBER = re.compile(r"[+-]?[\d,]*\.?\d+")
_HEDGE_WORD = re.compile(r"\b(?:or|maybe|perhaps|otherwise|possibly|either)\b", re.IGNORECASE)
_NUMBER_BEFORE = re.compile(  # a number, perhaps with its percent sign or degree mark
    r"[\d}](?:\s*(?:\\?%|\^\s*\\circ|°))?\s*(?:\\[,;:! ]\s*)*$")


def text_hides_numbers(answer: str) -> bool:
    """Whether a `\\text{}` group holds what the comparison would drop as a unit although it
    changes or hedges the value: digits (`3\\text{ hours and 20 minutes}`), a hedge
    (`B \\text{ (or C)}`), a value word (`5\\text{ hundred}`), a compound quantity
    (`2\\text{ feet }6\\text{ inches}`), or, after a number, any words that are not a unit
    (`_unit_word`: `3\\text{k}`, `3\\text{ lakh}`, `3\\text{ max}`), which the symbolic
    parser would drop. Separator words (`\\text{ and }`) are list syntax."""
    for m in _TEXT_GROUP.finditer(answer):
        content = m.group(1).strip()
        if content.lower() in ("or", "and", "") or _PLAIN_NUMBER.fullmatch(content):
            continue
        after_number = _NUMBER_BEFORE.search(answer, 0, m.start()) is not None
        if after_number and _canonical_unit(content) and \
                not any(ch.isdigit() for ch in answer[m.end():]):
            continue  # a unit: `5 \text{ cm}`, `3 \text{ units squared}`
        if any(ch.isdigit() for ch in content) or _HEDGE_WORD.search(content) or any(
                w.lower() in _NOT_UNITS for w in _WORD.findall(content)):
            return True  # `3\text{ (or 4)}`, `B \text{ (or C)}`, `5\text{ hundred}`
        if after_number:
            if any(ch.isdigit() for ch in answer[m.end():]):
                return True
            if not m.group().startswith("\\operatorname") and any(map(str.isalpha, content)):
                return True  # no unit: `3\text{k}`, `3\text{ lakh}`, `3\text{ max}`
    return False


def qualifier_words(text: str) -> set[str]:
    """Words like 'or', 'approximately', 'correct' in an answer (outside LaTeX commands)."""
    words = {w.lower() for w in _WORD.findall(_COMMAND.sub(" ", text))}
    if _APPROX.search(text):  # \approx 42 is a rounded value, not the answer
        words.add("approx")
    return words & _QUALIFIERS


def _unwrap(s: str) -> tuple[str, bool]:
    """Strip \\text{...}-style wrappers that cover the whole string; report whether any did."""
    wrapped = False
    while True:
        m = _WRAPPER.match(s)
        if not m or matching_brace(s, m.end() - 1) != len(s) - 1:
            return s, wrapped
        s, wrapped = s[m.end():-1].strip(), True


def _fraction(text: str) -> Fraction:
    return Fraction(Decimal(text))


_ABBREVIATION_DOT = re.compile(r"(?<=[A-Za-z])\.")  # `5 \\text{ ft.}`, `15 \\text{ sq. units}`
_UNIT_SPACING = re.compile(r"\\(?:q?quad|checkmark)(?![a-zA-Z])")


def _value_word(word: str) -> bool:
    """A word that changes, scales or qualifies the number it follows (`_NOT_UNITS`, number
    words and the words made from them)."""
    lower = word.lower()
    return lower in _NOT_UNITS or lower in _VALUE_PLURALS or bool(_NUMBER_WORD.fullmatch(word))


def _unit_word(word: str, denominator: bool = False) -> bool:
    """Whether `word`, as written after a number, names what is counted or measured and leaves
    the number's value as it is: a known unit (one to three letters: exactly as written), a
    regular plural noun (`apples`, `ways`), or after `per` any word but a value word."""
    lower = word.lower()
    if _value_word(word):
        return False
    if len(word) <= 3:
        return word in _SHORT_UNITS or (not word.isupper() and lower in _UNIT_WORDS)
    if lower in _UNIT_WORDS or lower[:-1] in _UNIT_WORDS or denominator:
        return True
    return bool(_REGULAR_PLURAL.fullmatch(lower)) and (word.islower() or word[1:].islower())


def _canonical_unit(text: str) -> str | None:
    """The unit a number carries ('' when none); None when the trailing text is not a unit
    (`_unit_word`: a word that may change or qualify the value is never dropped as a unit)."""
    text = _INLINE_TEXT.sub(r" \1 ", text)
    text = _ABBREVIATION_DOT.sub("", _UNIT_SPACING.sub(" ", text)).strip()
    if not text:
        return ""
    if "\\" in text:  # a command left over: `\cdot \infty` is no unit
        return None
    per = _PER_UNIT.fullmatch(text)  # `\\$5 \\text{ per person}`; not `per cent`, `per mille`
    if per:
        word = per.group(1)
        if word.lower() in ("cent", "centum", "mille") or not _unit_word(word, True):
            return None
        return "/" + _UNIT_ALIASES.get(word.lower(), word.lower())
    m = _UNIT.fullmatch(text)
    if not m:
        return None
    raw = m.group(1).split()
    if len(raw) == 2 and raw[1].lower() in ("squared", "cubed") and not m.group(2):
        raw = raw[:1]  # `units squared`, `cm cubed`
        power = "2" if m.group(1).lower().endswith("squared") else "3"
    else:
        power = m.group(2)
    adjective = len(raw) == 2 and len(raw[0]) >= 3 and raw[0].lower() not in _NOT_ADJECTIVES \
        and (raw[0].islower() or raw[0][1:].islower()) and not _value_word(raw[0])
    if not all(_unit_word(w) or (adjective and i == 0) for i, w in enumerate(raw)) or (
            m.group(3) and not _unit_word(m.group(3), True)):
        return None
    words = [w.lower() for w in raw]
    names = [_UNIT_ALIASES.get(w) or _UNIT_ALIASES.get(w[:-1])
             or (w[:-1] if w.endswith("s") and len(w) > 3 else w) for w in words]
    unit = " ".join(names)
    if power:
        unit += "^" + power
    if m.group(3):
        unit += "/" + _UNIT_ALIASES.get(m.group(3).lower(), m.group(3).lower())
    return unit


def parse_number(s: str) -> Num | None:
    s = s.strip()
    unit = None
    dollar = _DOLLAR.match(s)
    if dollar:
        s, unit = s[dollar.end():], "usd"
    sign = ""
    if s and s[0] in "+-":
        sign, s = s[0], s[1:].lstrip()
    thousands = _THOUSANDS.match(s)
    if thousands:
        s = thousands.group().replace(",", "") + s[thousands.end():]
    m = _NUMBER.match(s)
    if not m:
        return None
    try:
        if m.group("whole") is not None:  # a mixed number: 2\frac{1}{3} is 2 + 1/3
            value = int(m.group("whole")) + Fraction(int(m.group("mn")), int(m.group("md")))
        elif m.group("swhole") is not None:  # 1\frac12
            value = int(m.group("swhole")) + Fraction(int(m.group("smn")), int(m.group("smd")))
        elif m.group("fn") is not None:
            value = _fraction(m.group("fn")) / _fraction(m.group("fd"))
            if m.group("fsign"):
                value = -value
        elif m.group("sn") is not None:
            value = Fraction(int(m.group("sn")), int(m.group("sd")))
        elif m.group("an") is not None:
            value = _fraction(m.group("an")) / _fraction(m.group("ad"))
        else:
            value = _fraction(m.group("dec"))
    except (ZeroDivisionError, InvalidOperation):
        return None
    if (m.group("sign") == "-") != (sign == "-"):
        value = -value
    rest = s[m.end():].strip()
    percent = False
    pm = _PERCENT.match(rest)
    if pm:
        percent, rest = True, rest[pm.end():].strip()
    dm = _DEGREE.match(rest)
    if dm:
        unit, rest = "deg", rest[dm.end():].strip()
    if rest:
        if _NUMBER.match(rest) or rest[0] in "^_({[":
            return None
        trailing = _canonical_unit(rest)
        if trailing is None or (unit and unit != "usd" and trailing):
            return None
        if trailing == "percent":
            percent, trailing = True, ""
        unit = trailing or unit
    return Num(value, percent, unit)


def _lowest_terms(numerator: str | None, denominator: str | None) -> bool:
    if numerator is None or not numerator.isdigit() or not denominator.isdigit():
        return False
    return int(denominator) > 1 and math.gcd(int(numerator), int(denominator)) == 1


def final_number(s: str) -> bool:
    """Whether `s` is one number written as a final answer is: an integer, a decimal, a
    fraction in lowest terms (`3/8`, `\\frac{3}{8}`) or a mixed number, perhaps with a sign,
    a percent sign, a degree mark, a dollar sign or a unit (`70^\\circ`, `5\\text{ cm}`), or a
    variable set to one (`x = 3/8`). `\\frac{16}{2}`, `2^{10}` and `\\sqrt{8}` are not: they
    are left to evaluate."""
    s, _ = _unwrap(s.strip())
    value = parse_leaf(s)
    if isinstance(value, Assign):
        s = s.split("=", 1)[1]
    elif not isinstance(value, Num):
        return False
    s = s.strip()
    dollar = _DOLLAR.match(s)
    if dollar:
        s = s[dollar.end():]
    s = s.lstrip("+-").lstrip()
    thousands = _THOUSANDS.match(s)
    if thousands:
        s = thousands.group().replace(",", "") + s[thousands.end():]
    m = _NUMBER.match(s)
    if m is None:
        return False
    if m.group("dec") is not None:
        return True
    if m.group("whole") is not None or m.group("swhole") is not None:
        numerator, denominator = m.group("mn") or m.group("smn"), m.group("md") or m.group("smd")
        return _lowest_terms(numerator, denominator) and int(numerator) < int(denominator)
    return _lowest_terms(m.group("fn") or m.group("sn") or m.group("an"),
                         m.group("fd") or m.group("sd") or m.group("ad"))


def _bound(s: str) -> Num | Inf | None:
    inf = _INFINITY.fullmatch(s.strip())
    if inf:
        return Inf(-1 if inf.group(1) == "-" else 1)
    num = parse_number(s)
    if num is None:  # an unevaluated rational bound: 2 - 1, \frac{1}{2} - 1
        value = rational_value(s)
        return Num(value) if value is not None else None
    return num if not num.percent and num.unit is None else None


def _interval(s: str) -> Interval | None:
    if len(s) < 5 or s[0] not in "([" or s[-1] not in ")]" or matching_brace(s, 0) != len(s) - 1:
        return None
    parts = split_top_level(s[1:-1], ",")
    if len(parts) != 2:
        return None
    low, high = _bound(parts[0]), _bound(parts[1])
    if low is None or high is None:
        return None
    return Interval(low, high, s[0] == "(", s[-1] == ")")


_CUP = re.compile(r"\\cup(?![a-zA-Z])")
_CONJUNCTION = re.compile(r"(?<![A-Za-z\\])and(?![A-Za-z])|\\quad|\\land(?![a-zA-Z])")
_ALTERNATIVE_OR = re.compile(r"(?<![A-Za-z\\])or(?![A-Za-z])|\\lor(?![a-zA-Z])")


def _key(bound: Num | Inf):
    return bound.value if isinstance(bound, Num) else bound.sign * float("inf")


def merge_intervals(parts: list[Interval]) -> Interval | Union | None:
    """The union in canonical form: sorted, overlapping or touching pieces merged."""
    parts = sorted(parts, key=lambda p: (_key(p.low), p.low_open))
    merged: list[Interval] = []
    for part in parts:
        if _key(part.low) > _key(part.high) or (
                _key(part.low) == _key(part.high) and (part.low_open or part.high_open)):
            return None  # an empty or reversed piece: let the symbolic path judge it
        if merged:
            last = merged[-1]
            gap = _key(part.low) - _key(last.high) if not isinstance(part.low, Inf) else -1
            if gap < 0 or (gap == 0 and not (last.high_open and part.low_open)):
                if _key(part.high) > _key(last.high):
                    high, high_open = part.high, part.high_open
                elif _key(part.high) == _key(last.high):
                    high, high_open = last.high, last.high_open and part.high_open
                else:
                    high, high_open = last.high, last.high_open
                merged[-1] = Interval(last.low, high, last.low_open, high_open)
                continue
        merged.append(part)
    return merged[0] if len(merged) == 1 else Union(tuple(merged))


def _union(s: str) -> Interval | Union | None:
    pieces = [_interval(p.strip()) for p in _CUP.split(s)]
    if any(p is None for p in pieces):
        return None
    return merge_intervals(pieces)


_ABS = re.compile(
    r"\|\s*(?P<k>\d+(?:\.\d+)?)?\s*(?P<var>[A-Za-z])\s*(?:(?P<sign>[+-])\s*(?P<c>\d+(?:\.\d+)?))?\s*\|"
    r"\s*(?P<op>\\leqslant|\\geqslant|\\leq|\\geq|\\le|\\ge|<=|>=|<|>)\s*(?P<r>.+)", re.ASCII)


def _abs_relation(s: str) -> Value | None:
    """|k x + c| < r (or <=, >, >=) as the interval or union of rays it means."""
    m = _ABS.fullmatch(s)
    if not m:
        return None
    radius = parse_number(m.group("r"))
    if radius is None or radius.unit or radius.percent or radius.value <= 0:
        return None
    k = _fraction(m.group("k") or "1")
    if k == 0:
        return None
    c = _fraction(m.group("c") or "0") * (-1 if m.group("sign") == "-" else 1)
    center, half = -c / k, radius.value / k
    low, high = Num(center - half), Num(center + half)
    op = _RELATION_NAMES[m.group("op")]
    if op in ("<", "<="):
        return Rel(m.group("var"), Interval(low, high, op == "<", op == "<"))
    return Union((Interval(Inf(-1), low, True, op == ">"), Interval(high, Inf(1), op == ">", True)))


def relation_union(s: str) -> Interval | Union | None:
    """A union of conditions on one variable joined by "or" (`x < 2 \\text{ or } x > 3`,
    `x \\le -1 \\lor x \\ge 3`) as the set it means; None for anything else."""
    pieces = split_top_level(s, "")
    if len(pieces) < 2 or not _ALTERNATIVE_OR.search(s) or _CONJUNCTION.search(s):
        return None
    parts, names = [], set()
    for piece in pieces:
        value = _abs_relation(piece) or _relation(piece)
        if isinstance(value, Rel) and value.interval is not None:
            names.add(value.var)
            parts.append(value.interval)
        elif isinstance(value, Union):
            names.add(_ABS.fullmatch(piece).group("var"))
            parts.extend(value.parts)
        else:
            return None
    if len(names) != 1:
        return None
    return merge_intervals(parts)


def _relation(s: str) -> Value | None:
    absolute = _abs_relation(s)
    if absolute is not None:
        return absolute
    ops = list(_RELOP.finditer(s))
    if not 1 <= len(ops) <= 2:
        return None
    pieces = [s[:ops[0].start()]] + [s[a.end():b.start()] for a, b in pairwise(ops)] + \
             [s[ops[-1].end():]]
    pieces = [p.strip() for p in pieces]
    names = [_RELATION_NAMES[o.group()] for o in ops]
    if len(ops) == 2:  # a < x <= b, or b >= x > a
        low, var, high = pieces
        if all(n in (">", ">=") for n in names):
            low, high, names = high, low, [_RELATION_FLIP[names[1]], _RELATION_FLIP[names[0]]]
        if not _VAR.fullmatch(var) or names[0] not in ("<", "<=") or names[1] not in ("<", "<="):
            return None
        lo, hi = _bound(low), _bound(high)
        if lo is None or hi is None:
            return None
        return Rel(var, Interval(lo, hi, names[0] == "<", names[1] == "<"))
    lhs, rhs = pieces
    op = names[0]
    if _VAR.fullmatch(rhs) and not _VAR.fullmatch(lhs):
        lhs, rhs, op = rhs, lhs, _RELATION_FLIP[op]
    if not _VAR.fullmatch(lhs):
        return None
    if op == "=":
        value = parse_number(rhs)
        return Assign(lhs, value) if value is not None else None
    bound = _bound(rhs)
    if bound is None or isinstance(bound, Inf):
        return None
    if op == "!=":
        return Rel(lhs, None, bound)
    if op in ("<", "<="):
        return Rel(lhs, Interval(Inf(-1), bound, True, op == "<"))
    return Rel(lhs, Interval(bound, Inf(1), op == ">", True))


def _matrix(s: str) -> Matrix | None:
    m = _MATRIX.fullmatch(s)
    if not m:
        return None
    rows = []
    for row in re.split(r"\\\\", m.group(2)):
        if not row.strip():
            continue
        cells = [parse_number(c) for c in row.split("&")]
        if any(c is None or c.unit or c.percent for c in cells):
            return None
        rows.append(tuple(cells))
    if not rows or len({len(r) for r in rows}) != 1:
        return None
    return Matrix(tuple(rows), m.group(1) in ("vmatrix", "Vmatrix"))


_REALS = re.compile(r"\\mathbb\s*\{?\s*R\s*\}?|\\R(?![a-zA-Z])|ℝ")
_MINUS_POINTS = re.compile(r"\\setminus|\\backslash|\\smallsetminus|-|\\")


def _reals_without(s: str) -> Interval | Union | None:
    """`\\mathbb{R}` (all reals) and `\\mathbb{R} \\setminus \\{2, 3\\}` as intervals."""
    m = _REALS.match(s)
    if not m:
        return None
    rest = s[m.end():].strip()
    if not rest:
        return Interval(Inf(-1), Inf(1), True, True)
    op = _MINUS_POINTS.match(rest)
    if not op:
        return None
    rest = rest[op.end():].strip()
    if not (rest.startswith("\\{") and rest.endswith("\\}")):
        return None
    points = [_bound(p) for p in split_top_level(rest[2:-2], ",")]
    if not points or any(not isinstance(p, Num) for p in points):
        return None
    values = sorted({p.value for p in points})
    ends = [Inf(-1)] + [Num(v) for v in values] + [Inf(1)]
    return merge_intervals([Interval(a, b, True, True) for a, b in pairwise(ends)])


@lru_cache(maxsize=8192)
def parse_leaf(s: str) -> Value | None:
    """The fast value of one answer (no list separators left in it), or None."""
    s, wrapped = _unwrap(s.strip())
    if not s:
        return None
    letter = _LETTER.fullmatch(s)
    if letter:
        return Letter((letter.group(1) or letter.group(2)).upper())
    inf = _INFINITY.fullmatch(s)
    if inf:
        return Inf(-1 if inf.group(1) == "-" else 1)
    if s[0].isdigit() or s[0] in "+-.$\\":
        num = parse_number(s)
        if num is not None:
            return num
    if s[0] in "([":
        return _union(s) if _CUP.search(s) else _interval(s)
    if s[0] in "\\ℝ":
        reals = _reals_without(s)
        if reals is not None:
            return reals
    if s.startswith("\\begin"):
        return _matrix(s)
    if _RELOP.search(s):
        return relation_union(s) or _relation(s)
    if _TEXT.fullmatch(s):
        words = unicodedata.normalize("NFC", s).casefold().rstrip(".")
        words = re.sub(r"^(?:the|a|an) ", "", words)
        return Text(words, wrapped or len(words) > 3)
    return None


def _num_equal(gold: Num, answer: Num) -> bool:
    if gold.unit and answer.unit and gold.unit != answer.unit:
        return False
    if (gold.percent and answer.unit) or (answer.percent and gold.unit):
        return False  # a percent is not degrees, dollars or centimetres
    if gold.percent == answer.percent:
        return gold.value == answer.value
    if gold.percent:  # 25% is answered by 25, not by 0.25
        return answer.value == gold.value
    # a bare gold answered with a percent: the same magnitude (0.5 = 50%), or the percent's
    # number when the gold is no fraction (12.5 = 12.5%); 0.5% is never 0.5
    return gold.value == answer.value / 100 or (abs(gold.value) > 1 and gold.value == answer.value)


def _bound_equal(a: Num | Inf, b: Num | Inf) -> bool:
    if isinstance(a, Inf) or isinstance(b, Inf):
        return a == b
    return a.value == b.value


def _interval_equal(a: Interval, b: Interval) -> bool:
    return (a.low_open == b.low_open and a.high_open == b.high_open
            and _bound_equal(a.low, b.low) and _bound_equal(a.high, b.high))


def _as_union(value: Rel | Union | Interval) -> tuple | None:
    """The set as its canonical pieces: (low_open, low, high_open, high), sorted, disjoint,
    none of them empty and no two touching (what `merge_intervals` makes); None when the
    set is not given that way. Two such sets are equal exactly when their pieces are."""
    if isinstance(value, Union):
        return tuple((p.low_open, _key(p.low), p.high_open, _key(p.high)) for p in value.parts)
    interval = value if isinstance(value, Interval) else value.interval
    if interval is not None:
        piece = merge_intervals([interval])
        return _as_union(Union((piece,))) if isinstance(piece, Interval) else None
    if value.excluded is not None:  # x != v
        v = value.excluded.value
        return ((True, float("-inf"), True, v), (True, v, True, float("inf")))
    return None


def leaf_equal(gold: Value, answer: Value) -> bool | None:
    """Exact equality of two fast values; None when only the symbolic path can tell."""
    if isinstance(gold, Assign) and isinstance(answer, Num):
        return _num_equal(gold.value, answer)
    if isinstance(answer, Assign) and isinstance(gold, Num):
        return _num_equal(gold, answer.value)
    if isinstance(gold, Rel) and isinstance(answer, Interval):
        return gold.interval is not None and _interval_equal(gold.interval, answer)
    if isinstance(answer, Rel) and isinstance(gold, Interval):
        return answer.interval is not None and _interval_equal(gold, answer.interval)
    if isinstance(gold, Rel | Union | Interval) and isinstance(answer, Rel | Union | Interval) \
            and type(gold) is not type(answer):
        gold_set, answer_set = _as_union(gold), _as_union(answer)
        return None if gold_set is None or answer_set is None else gold_set == answer_set
    if type(gold) is not type(answer):
        if {type(gold), type(answer)} == {Letter, Text} and \
                len((answer if isinstance(answer, Text) else gold).words) == 1:
            return False  # another alphabet's letter: Cyrillic А is not A
        if isinstance(gold, Text) or isinstance(answer, Text):
            return False if (gold.wordy if isinstance(gold, Text) else answer.wordy) else None
        return False
    if isinstance(gold, Num):
        return _num_equal(gold, answer)
    if isinstance(gold, Inf):
        return gold == answer
    if isinstance(gold, Letter):
        return gold.letter == answer.letter
    if isinstance(gold, Text):
        if gold.words == answer.words:
            return True
        return False if gold.wordy and answer.wordy else None
    if isinstance(gold, Interval):
        return _interval_equal(gold, answer)
    if isinstance(gold, Union):
        return len(gold.parts) == len(answer.parts) and all(
            map(_interval_equal, gold.parts, answer.parts))
    if isinstance(gold, Rel):
        if gold.var != answer.var:
            return False
        if gold.interval is None or answer.interval is None:
            return (gold.interval is None and answer.interval is None
                    and gold.excluded.value == answer.excluded.value)
        return _interval_equal(gold.interval, answer.interval)
    if isinstance(gold, Assign):
        return gold.var == answer.var and _num_equal(gold.value, answer.value)
    if isinstance(gold, Matrix):
        return (gold.determinant == answer.determinant and len(gold.rows) == len(answer.rows) and len(gold.rows[0]) == len(answer.rows[0])
                and all(g.value == a.value for gr, ar in zip(gold.rows, answer.rows)
                        for g, a in zip(gr, ar)))
    return None
