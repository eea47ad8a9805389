"""Notation rules: spellings real models write, rewritten to one form before comparison.

`canonical(text)` rewrites one answer (or gold) on its own: decorations (`\\color`,
`\\textcolor`, `\\underline`, `\\hspace`, `\\mathbf`), the unicode minus, `√`, `π`, `∞`,
`×`, `·`; an upright `\\mathrm{i}` or `\\mathrm{e}`; the empty set (`\\varnothing`, `\\{\\}`, `∅` -> `\\emptyset`); set-builder notation
on a condition (`\\{x \\mid x > 2\\}` -> `x > 2`); `x \\in S` -> `S`; `\\langle a, b\\rangle`
and column vectors -> `(a, b)`; named tuples (`(a,b)=(2,5)` -> `a=2, b=5`); repeating
decimals (`0.1\\overline{6}` -> `\\frac{1}{6}`); "1.5 million" (or "millions") -> `1500000`;
base subscripts (`\\text{1011}_2`, `(1011)_2`, `1011_{2}` -> `1011_{2}`); `\\text{(B)}` -> `(B)`;
a note that leaves the value as it is is dropped (`x = 2 \\text{ (double root)}` -> `x = 2`);
a congruence to its least residue (`n \\equiv 3 \\pmod{4}` -> `3`) and `7 \\bmod 4` of
integers to its value (`3`); a whole answer in words (`\\text{seven}` -> `7`, `\\text{infinity}`,
`\\text{all real numbers}`, `\\text{no solution}`); choice words (`\\text{Option A}` -> `(A)`);
a tick after the answer and a label before it (`7 \\quad \\checkmark`, `\\text{Answer: } 7`);
`\\text{\\$}`; a vulgar fraction on its own (`½`); `0b1011`, `0o17`, `0x1F` as base subscripts;
a capital `U` between intervals as `\\cup`.

`paired(gold, answer)` applies the rules that need both sides: scientific notation with `e`
(`3.2e-5`, only when neither side uses the constant e), numbers in a base, and a multiple
choice answer given with its value (`(B) 12`). The rules and their labelled cases are listed
in docs/math.md.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from rlvr_envs.verify.math.normalize import clean, matching_brace, split_top_level

EMPTY_SET = "\\emptyset"

_UNICODE = {"\u2212": "-", "\u2013": "-", "π": "\\pi ", "∞": "\\infty ", "×": "\\times ",
            "·": "\\cdot ", "÷": "\\div ", "∅": EMPTY_SET, "⟨": "\\langle ", "⟩": "\\rangle ",
            "∈": "\\in ", "∪": "\\cup ", "≤": "\\le ", "≥": "\\ge ", "≠": "\\ne "}
#: vulgar fractions, where no digit precedes them (`1½` is a mixed number, left as written)
VULGAR_FRACTIONS = {"½": (1, 2), "⅓": (1, 3), "⅔": (2, 3), "¼": (1, 4), "¾": (3, 4), "⅕": (1, 5),
           "⅖": (2, 5), "⅗": (3, 5), "⅘": (4, 5), "⅙": (1, 6), "⅚": (5, 6), "⅛": (1, 8),
           "⅜": (3, 8), "⅝": (5, 8), "⅞": (7, 8)}
_VULGAR_ALONE = re.compile("(?<![0-9])([" + "".join(VULGAR_FRACTIONS) + "])")
_ROOT = re.compile(r"√\s*(\{[^{}]*\}|\([^()]*\)|\d+(?:\.\d+)?|\\?[A-Za-z]+)")
# Commands dropped with their first argument (a colour name, a length).
_DROP_WITH_ARG = re.compile(
    r"\\(?:color|textcolor|hspace\*?|vspace\*?|mspace|kern|phantom|hphantom|vphantom)\s*\{[^{}]*\}")
# Commands dropped, their argument kept.
_DROP_KEEP_ARG = re.compile(r"\\(?:underline|mathbf|boldsymbol|bm)(?![a-zA-Z])")
_EMPTY = re.compile(r"\\varnothing(?![a-zA-Z])|\\\{\s*\\\}|\\O(?![a-zA-Z])|\\empty(?![a-zA-Z])")
_BARS = re.compile(r"\\[lr]?vert(?![a-zA-Z])|\\[lr]Vert(?![a-zA-Z])")
_MEMBER = re.compile(r"^[A-Za-z](?:_\{?\w+\}?)?\s*\\in\s+(?=\S)|^[A-Za-z](?:_\{?\w+\}?)?\s*\\in(?=[\\({\[])")
_BUILDER = re.compile(
    r"^\\\{\s*([A-Za-z])\s*(?:\\in\s*\\mathbb\{?R\}?\s*)?(?:\\mid|\||:|\\colon)\s*(.+?)\s*\\\}$")
_LANGLE = re.compile(r"^\\langle\s*(.*?)\s*\\rangle$")
_COLUMN = re.compile(r"^\\begin\{([pb]matrix)\}(.*)\\end\{\1\}$", re.DOTALL)
_REPEATING = re.compile(r"(\d*)\.(\d*)\\overline\s*(?:\{\s*(\d+)\s*\}|(\d))")
#: `\\sin 30^\\circ`, `\\tan(15^{\\circ})`: an angle in degrees inside a trigonometric function
_TRIG_DEGREES = re.compile(
    r"\\(sin|cos|tan|cot|sec|csc)\s*(\()?\s*(\d+(?:\.\d+)?)\s*\^\s*(?:\{\s*\\circ\s*\}|\\circ)\s*(?(2)\))")
_DOT = r"\\dot\s*(?:\{\s*(\d)\s*\}|(\d))"
_DOTTED = re.compile(rf"(\d*)\.(\d*){_DOT}(?:(\d*){_DOT})?(?!\d)")
_SCALE_WORDS = {"thousand": 3, "million": 6, "billion": 9, "trillion": 12}
_SCALED = re.compile(  # the plural too: `3 \text{ thousands}` is 3000, never 3
    r"(\d+(?:\.\d+)?)\s*(?:\\(?:text|mathrm|mbox)\s*\{\s*(thousand|million|billion|trillion)s?\s*\}"
    r"|(thousand|million|billion|trillion)s?(?![a-zA-Z]))")
# Notes that leave the value as it is: `x = 2 \text{ (double root)}`, `\text{(multiplicity 2)}`,
# `7 \text{ (verified)}`. Other notes stay, and one after a number that may change or hedge the
# value makes the answer a mismatch (fast.text_hides_numbers).
_NEUTRAL_NOTE = re.compile(
    r"\\(?:text|textrm|textit|mbox)\s*\{\s*\(\s*(?:(?:double|triple|repeated|multiple|simple)\s+"
    r"(?:root|zero)|(?:with\s+)?multiplicity\s+\d{1,2}|verified|checked)\s*\)\s*\}")
_MOD_WORD = (r"(?:\\[pb]?mod(?![a-zA-Z])|\\(?:text|mathrm|operatorname)\s*\{\s*mod\s*\}"
             r"|mod(?![a-zA-Z]))")
# `n \equiv 3 \pmod{4}`, `3 \pmod 4`, `x \equiv 7 \ (\text{mod } 1000)`, `2^{100} \equiv 376
# \pmod{1000}`, `100! \equiv 0 \pmod{7}`: the residue, when it is the least one (0 <= r < m);
# `1007 \pmod{1000}` stays as it is (and matches no 7).
_CONGRUENCE = re.compile(
    r"(?:(?:[A-Za-z](?:_\{?\w+\}?)?|(?P<base>\d{1,6})\s*(?:\^\s*(?:\{\s*(?P<exp>\d{1,6})\s*\}"
    r"|(?P<exp1>\d))|(?P<fact>!)))\s*\\equiv\s*)?(\d+)\s*(?:\\pmod\s*(?:\{\s*(\d+)\s*\}|(\d+))"
    r"|\(\s*" + _MOD_WORD + r"\s*(\d+)\s*\)|(?<=\d)\s*\\(?:b?mod)(?![a-zA-Z])\s*\{?\s*(\d+)\s*\}?)")
_EQUIV = re.compile(r"\\equiv(?![a-zA-Z])")
_TEXT_BASE = re.compile(r"\\(?:text|mathrm|mbox)\s*\{\s*([0-9A-Z]+)\s*\}\s*_|\(([0-9A-Z]+)\)\s*_")
_BASE = re.compile(r"([0-9A-Z]+)\s*_\s*(?:\{\s*(\d{1,2})\s*\}|(\d))")
_UPRIGHT_CONSTANT = re.compile(r"\\(?:mathrm|text|mathit|operatorname)\s*\{\s*([ie])\s*\}")
_CHOICE_TEXT = re.compile(
    r"\\(?:text|textbf|textrm|mathrm|mathbf)\s*\{\s*(?:(?:option|choice)\s*\(?\s*([A-E])\s*\)?"
    r"|\(\s*([A-Ea-e])\s*\))\s*\}", re.IGNORECASE)
#: a choice letter on its own: `A`, `(A)`, `A)`
_CHOICE_LETTER = re.compile(r"\(?\s*([A-E])\s*\)?")
_OPEN_CHOICE = re.compile(r"\s*[A-E]\)(?:\s|$)")
#: `7 \quad \checkmark`: a tick after the answer says nothing about its value
_TICK = re.compile(r"(?:\s*\\q?quad)*\s*(?:\\checkmark(?![a-zA-Z])|[✓✔])\s*$")
#: `\text{Answer: } 7`, `\textbf{Final answer:} 7`: a label in front of the answer
_ANSWER_LABEL = re.compile(
    r"^\\(?:text|textbf|textrm|mathrm|mbox)\s*\{\s*(?:the\s+)?(?:final\s+)?answer\s*(?:is\s*)?:?\s*\}\s*",
    re.IGNORECASE)
_TEXT_DOLLAR = re.compile(r"\\(?:text|textrm|mathrm|mbox)\s*\{\s*\\\$\s*\}|\\textdollar(?![a-zA-Z])\s*")
#: `\text{-}5`: a minus sign written as text
_TEXT_MINUS = re.compile(r"\\(?:text|textrm|mathrm|mbox)\s*\{\s*[-\u2212\u2013]\s*\}")
#: `{10 \choose 3}`, `10 \choose 3` (the whole answer), `{}_{10}C_3`, `{}^{10}C_{3}`: a binomial
_CHOOSE = re.compile(r"\{\s*([^{}]+?)\s*\\choose(?![a-zA-Z])\s*([^{}]+?)\s*\}"
                     r"|^\s*([^{}\s]+)\s*\\choose(?![a-zA-Z])\s*([^{}\s]+)\s*$")
_NCK = re.compile(r"(?:\{\s*\}|^)\s*[_^]\s*(?:\{\s*(\d+)\s*\}|(\d))\s*C\s*_\s*(?:\{\s*(\d+)\s*\}|(\d))")
#: `0.666\ldots`, `0.1666\dots`, `0.142857142857\ldots` (one digit three times or more, a longer
#: cycle twice or more, then dots) and `0.(6)`, `0.1(6)`: repeating decimals
_REPEATED_DOTS = re.compile(
    r"(?<![\d.])(\d*)\.(\d*?)(?:(\d)\3{2,}|(\d{2,}?)\4+)\s*(?:\\[lc]?dots(?![a-zA-Z])|\.\.\.|…)")
_PAREN_CYCLE = re.compile(r"(?<![\d.])(\d*)\.(\d*)\((\d+)\)(?![\d(])")
#: `]2,3[`, `[1,4[`, `]2,5]`: ISO interval brackets (the whole answer)
_ISO_INTERVAL = re.compile(r"^([\[\]])\s*([^\[\]]+?,[^\[\]]+?)\s*([\[\]])$")
#: `x > 2 \text{ and } x < 3`, `x \ge 1 \land x < 4` (either order): both bounds of one
#: variable, read as `2 < x < 3`
_AND = re.compile(r"\s*(?:\\text\s*\{\s*and\s*\}|\\land(?![a-zA-Z])|\\wedge(?![a-zA-Z])|\band\b)\s*")
_RELATION_OP = r"(<=|>=|<|>|\\[lg]eq?(?![a-zA-Z])|\\[lg]t(?![a-zA-Z]))"
_VAR_FIRST = re.compile(rf"^\s*([A-Za-z])\s*{_RELATION_OP}\s*([^<>=]+?)\s*$")
_BOUND_FIRST = re.compile(rf"^\s*([^<>=]+?)\s*{_RELATION_OP}\s*([A-Za-z])\s*$")
#: a whole answer that is one word, plain or in \text: a number word, infinity, all real
#: numbers, no solution
_WORD_ANSWER = re.compile(
    r"^(?:\\(?:text|textrm|textbf|textit|mathrm|mbox)\s*\{\s*([A-Za-z][A-Za-z -]*?)\s*\}|([A-Za-z][A-Za-z-]*))$")
_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
          "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
          "eighteen", "nineteen"]
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
         "eighty": 80, "ninety": 90}
_NAMED_VALUES = {"infinity": "\\infty", "all real numbers": "\\mathbb{R}",
                 "all reals": "\\mathbb{R}", "no solution": EMPTY_SET, "no solutions": EMPTY_SET,
                 "no real solution": EMPTY_SET, "no real solutions": EMPTY_SET,
                 "empty set": EMPTY_SET, "the empty set": EMPTY_SET}
#: `0b1011`, `0o17`, `0x1F`: a number in a base, as `1011_{2}`
_PREFIXED_BASE = re.compile(r"^0([box])([0-9A-Fa-f]+)$")
#: set algebra on finite sets of numbers: `\{1,2\} \cup \{3\}`, `\{1,2,3\} \setminus \{3\}`
_NUMBER = r"[-+]?\d+(?:\.\d+)?"
_NUMBER_SET = rf"\\\{{\s*(?:{_NUMBER}(?:\s*,\s*{_NUMBER})*)?\s*\\\}}"
_SET_OPERATOR = r"\\(?:cup|cap|setminus)(?![a-zA-Z])"
_SET_ALGEBRA = re.compile(rf"{_NUMBER_SET}(?:\s*{_SET_OPERATOR}\s*{_NUMBER_SET})+")
_SET_PART = re.compile(rf"({_NUMBER_SET})|({_SET_OPERATOR})")
#: `(-\infty, 1) U (2, \infty)`: a capital U between intervals is a union
_UNION_U = re.compile(r"(?<=[)\]])\s*U\s*(?=[(\[])")
_NAMED_TUPLE = re.compile(r"^\(([^()=]*)\)\s*=\s*(\(.*\))$")
_VAR = re.compile(r"[A-Za-z](?:_\{?[A-Za-z0-9]+\}?)?")
_SCIENTIFIC_E = re.compile(r"([+-]?\d+(?:\.\d+)?)[eE]([+-]?\d{1,3})")
_E_CONSTANT = re.compile(r"(?<![\\a-zA-Z])e(?![a-zA-Z])")
_ANOTHER_CHOICE = re.compile(r"\(\s*[A-Ea-e]\s*\)|^[A-Ea-e]$")
#: what follows a choice letter and is no value of it: a relation or an operator first
_NOT_A_VALUE = re.compile(
    r"\s*(?:[=<>+*/&|~^!?,;:-]|\\(?:ne|neq|le|leq|ge|geq|lt|gt|cup|cap|vee|wedge|land|lor|to"
    r"|rightarrow|Rightarrow|sim|cdot|times|div|approx|equiv|pm|mp|text|textbf|mathrm|mbox)(?![a-zA-Z]))")
_LEADING_CHOICE = re.compile(r"\(\s*[A-Ea-e]\s*\)")
#: another option's letter standing alone in what follows a choice letter
_LONE_LETTER = re.compile(r"(?<![A-Za-z\\])[A-E](?![A-Za-z])")
_CHOICE_VALUE = re.compile(r"^(?:\(?([A-Ea-e])\)|([A-E])\.(?=\s))\s*[:.]?\s*(\S.*)$")


def _root(m: re.Match) -> str:
    arg = m.group(1)
    if arg[0] in "{(":
        arg = arg[1:-1]
    return "\\sqrt{" + arg + "}"


def _binom(n: str, k: str) -> str:
    return f"\\binom{{{n}}}{{{k}}}"


def _repeated_dots(m: re.Match) -> str:
    whole, fixed, digit, cycle = m.groups()
    return _repeating_value(whole or "0", fixed, digit or cycle)


def _bound(relation: str) -> tuple[str, bool, bool, str] | None:
    """(variable, lower?, strict?, bound) of `x > 2` or `2 < x`; None for anything else."""
    m = _VAR_FIRST.match(relation)
    if m:
        var, op, bound = m.groups()
        lower = op.startswith(">") or op.startswith("\\g")
    else:
        m = _BOUND_FIRST.match(relation)
        if not m:
            return None
        bound, op, var = m.groups()
        lower = op.startswith("<") or op.startswith("\\l")
    strict = op in ("<", ">") or op in ("\\lt", "\\gt")
    return var, lower, strict, bound.strip()


def both_bounds(text: str) -> str:
    """`x > 2 \\text{ and } x < 3`, `2 < x \\land x \\le 3` (either order, either side): both
    bounds of one variable as a chain (`2 < x < 3`); any other text as it is."""
    parts = _AND.split(text.strip())
    if len(parts) != 2:
        return text
    first, second = _bound(parts[0]), _bound(parts[1])
    if first is None or second is None or first[0] != second[0] or first[1] == second[1]:
        return text
    low, high = (first, second) if first[1] else (second, first)
    low_op, high_op = ("<" if low[2] else "\\le"), ("<" if high[2] else "\\le")
    return f"{low[3]} {low_op} {low[0]} {high_op} {high[3]}"


def iso_interval(text: str) -> str:
    """`]2,3[` -> `(2,3)`, `[1,4[` -> `[1,4)`: an interval in ISO brackets (the whole answer),
    rewritten before brackets are checked for balance; any other text as it is."""
    m = _ISO_INTERVAL.match(text.strip())
    if not m or (m.group(1) == "[" and m.group(3) == "]"):
        return text
    return ("(" if m.group(1) == "]" else "[") + m.group(2) + (")" if m.group(3) == "[" else "]")


def _repeating(m: re.Match) -> str:
    whole, fixed, cycle = m.group(1) or "0", m.group(2), m.group(3) or m.group(4)
    return _repeating_value(whole, fixed, cycle)


def _dotted(m: re.Match) -> str:
    """`0.\\dot{3}` (one digit repeats), `0.\\dot{1}4285\\dot{7}` (the digits from the first dot
    to the second repeat)."""
    whole, fixed, first, first_bare, middle, last, last_bare = m.groups()
    first, last = first or first_bare, last or last_bare
    cycle = first + (middle or "") + last if last else first
    return _repeating_value(whole or "0", fixed, cycle)


def _repeating_value(whole: str, fixed: str, cycle: str) -> str:
    value = (Fraction(int(whole)) + Fraction(int(fixed + cycle) - int(fixed or "0"),
                                             10 ** len(fixed) * (10 ** len(cycle) - 1)))
    return f"\\frac{{{value.numerator}}}{{{value.denominator}}}" if value.denominator != 1 \
        else str(value.numerator)


def _scaled(m: re.Match) -> str:
    word = m.group(2) or m.group(3)
    value = Decimal(m.group(1)).scaleb(_SCALE_WORDS[word])
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _holds(m: re.Match, residue: int, modulus: int) -> bool:
    """Whether a congruence's number on the left (`2^{100}`, `10!`) has that residue; one
    with a variable on the left is taken as stated."""
    if m.group("base") is None:
        return True
    base = int(m.group("base"))
    if m.group("fact"):
        if min(base, modulus) > 10_000:  # not worked out: left as written
            return False
        value = 1
        for k in range(2, min(base, modulus) + 1):  # n! for n >= m is 0 mod m
            value = value * k % modulus
        return value == residue % modulus
    return pow(base, int(m.group("exp") or m.group("exp1")), modulus) == residue % modulus


def _congruence(s: str) -> str:
    """`n \\equiv 3 \\pmod 4` -> `3`; `7 \\bmod 4` (an operation, no `\\equiv`) -> `3`."""
    m = _CONGRUENCE.fullmatch(s)
    if not m:
        return s
    residue, modulus = int(m.group(5)), int(next(g for g in m.groups()[5:] if g is not None))
    if modulus == 0 or not _holds(m, residue, modulus):
        return s
    if m.group(9) is not None and not _EQUIV.search(s):  # `1007 \\bmod 1000` is 7
        return str(residue % modulus)
    return str(residue) if residue < modulus else s


def _strip_outer_braces(s: str) -> str:
    while len(s) > 1 and s[0] == "{" and matching_brace(s, 0) == len(s) - 1:
        s = s[1:-1].strip()
    return s


def _column(s: str) -> str | None:
    m = _COLUMN.match(s)
    if not m or "&" in m.group(2):
        return None
    rows = [r.strip() for r in re.split(r"\\\\", m.group(2)) if r.strip()]
    return "(" + ", ".join(rows) + ")" if len(rows) >= 2 else None


def _named_tuple(s: str) -> str | None:
    m = _NAMED_TUPLE.match(s)
    if not m or matching_brace(m.group(2), 0) != len(m.group(2)) - 1:
        return None
    names = split_top_level(m.group(1), ",")
    values = split_top_level(m.group(2)[1:-1], ",")
    if len(names) < 2 or len(names) != len(values) or not all(values) \
            or not all(_VAR.fullmatch(n) for n in names):
        return None
    return ", ".join(f"{n}={v}" for n, v in zip(names, values))


def _number_word(word: str) -> int | None:
    """The value of `seven`, `twenty-one`, `ninety nine`; None for any other word."""
    word = word.lower().replace("-", " ").split()
    if len(word) == 1 and word[0] in _UNITS:
        return _UNITS.index(word[0])
    if 1 <= len(word) <= 2 and word[0] in _TENS:
        unit = _UNITS.index(word[1]) if len(word) == 2 and word[1] in _UNITS[1:10] else None
        return None if len(word) == 2 and unit is None else _TENS[word[0]] + (unit or 0)
    return None


def _word_answer(s: str) -> str:
    """A whole answer written as words: `\\text{seven}` -> `7`, `\\text{infinity}` -> `\\infty`,
    `\\text{all real numbers}` -> `\\mathbb{R}`, `\\text{no solution}` -> `\\emptyset`."""
    m = _WORD_ANSWER.match(s)
    if not m:
        return s
    words = " ".join((m.group(1) or m.group(2)).lower().split())
    value = _number_word(words)
    if value is not None:
        return str(value)
    return _NAMED_VALUES.get(words, s)


def _prefixed_base(s: str) -> str:
    m = _PREFIXED_BASE.match(s)
    if not m:
        return s
    base, digits = {"b": 2, "o": 8, "x": 16}[m.group(1)], m.group(2).upper()
    try:
        int(digits, base)
    except ValueError:
        return s
    return f"{digits}_{{{base}}}"


def closed_choice(text: str) -> str:
    """`A)` and `B) 12` (a choice letter closed by a parenthesis it never opened) as `(A)`,
    `(B) 12`: otherwise the answer reads as unbalanced."""
    m = _OPEN_CHOICE.match(text)
    return "(" + text.lstrip() if m and not choice_then_relation("(" + text.lstrip()) else text


def _set_algebra(s: str) -> str:
    """Unions, intersections and differences of finite sets of numbers, left to right, as the
    set they make (`\\{1,2\\} \\cup \\{3\\}` -> `\\{1, 2, 3\\}`); anything else as it is."""
    if not _SET_ALGEBRA.fullmatch(s):
        return s
    result: set[Decimal] | None = None
    operator = None
    for m in _SET_PART.finditer(s):
        if m.group(2):
            operator = m.group(2)
            continue
        items = {Decimal(x) for x in re.findall(_NUMBER, m.group(1))}
        if result is None:
            result = items
        elif operator == "\\cup":
            result |= items
        elif operator == "\\cap":
            result &= items
        else:
            result -= items
    if not result:
        return EMPTY_SET
    return "\\{" + ", ".join(format(x.normalize(), "f") for x in sorted(result)) + "\\}"


def choice_then_relation(text: str) -> bool:
    """Whether a choice letter opens the answer and a relation, an operator or text follows
    it (`(B) = C`, `(B) \\textbf{C}`, `(A)\\text{?}`): no value of that option."""
    m = _LEADING_CHOICE.match(text.strip())
    return bool(m) and bool(_NOT_A_VALUE.match(text.strip(), m.end()) or
                            _LONE_LETTER.search(text.strip(), m.end()))


def choice_letter(text: str) -> str | None:
    """The letter of an answer that is only a choice letter (`A`, `(A)`, `A)`), else None."""
    m = _CHOICE_LETTER.fullmatch(text.strip())
    return m.group(1) if m else None


def canonical(text: str) -> str:
    """`text` with the single-sided notation rules applied (see the module docstring)."""
    s = text
    for char, latex in _UNICODE.items():
        if char in s:
            s = s.replace(char, latex)
    if _VULGAR_ALONE.search(s):
        s = _VULGAR_ALONE.sub(lambda m: "\\frac{{{}}}{{{}}}".format(*VULGAR_FRACTIONS[m.group(1)]), s)
    s = _ANSWER_LABEL.sub("", s.strip())
    s = _TICK.sub("", s)
    s = _TEXT_DOLLAR.sub(r"\\$", s)
    if "-" in s and ("\\text" in s or "\\m" in s):
        s = _TEXT_MINUS.sub("-", s)
    if "\\choose" in s:
        s = _CHOOSE.sub(lambda m: _binom(m.group(1) or m.group(3), m.group(2) or m.group(4)), s)
    if "C" in s:
        s = _NCK.sub(lambda m: _binom(m.group(1) or m.group(2), m.group(3) or m.group(4)), s)
    if "dots" in s or "..." in s or "…" in s:
        s = _REPEATED_DOTS.sub(_repeated_dots, s)
    if "." in s and "(" in s:
        s = _PAREN_CYCLE.sub(lambda m: _repeating_value(m.group(1) or "0", m.group(2), m.group(3)), s)
    if s.rstrip().endswith((",", ";")):  # `12,`
        s = s.rstrip()[:-1].rstrip()
    if "and" in s or "\\land" in s or "\\wedge" in s:
        s = both_bounds(s)
    if "√" in s:
        s = _ROOT.sub(_root, s)
    s = _DROP_WITH_ARG.sub("", s)
    s = _DROP_KEEP_ARG.sub("", s)
    s = _EMPTY.sub(lambda _: EMPTY_SET, s)
    s = _BARS.sub("|", s)
    s = _NEUTRAL_NOTE.sub(" ", s)
    s = _CHOICE_TEXT.sub(lambda m: f"({m.group(1) or m.group(2)})", s)
    s = _UPRIGHT_CONSTANT.sub(r"\1", s)  # \mathrm{i}, \mathrm{e}
    if "\\overline" in s:
        s = _REPEATING.sub(_repeating, s)
    if "\\dot" in s:
        s = _DOTTED.sub(_dotted, s)
    if "\\circ" in s:
        s = _TRIG_DEGREES.sub(lambda m: f"\\{m.group(1)}(\\frac{{{m.group(3)}\\pi}}{{180}})", s)
    s = _SCALED.sub(_scaled, s)
    s = _TEXT_BASE.sub(lambda m: (m.group(1) or m.group(2)) + "_", s)
    s = _BASE.sub(lambda m: f"{m.group(1)}_{{{m.group(2) or m.group(3)}}}", s)
    s = clean(_strip_outer_braces(clean(s)))
    s = _word_answer(_prefixed_base(s))
    if "U" in s:
        s = _UNION_U.sub(r" \\cup ", s)
    if "\\c" in s or "\\setminus" in s:
        s = _set_algebra(s)
    s = _MEMBER.sub("", s)
    m = _LANGLE.match(s)
    if m:
        s = "(" + m.group(1) + ")"
    m = _BUILDER.match(s)
    if m and m.group(1) in m.group(2):
        s = m.group(2)
    s = _column(s) or _named_tuple(s) or s
    if "mod" in s:
        s = _congruence(s)
    return s


def base_number(s: str) -> tuple[str, int] | None:
    """(digits, base) for a number written with a base subscript (`1011_{2}`), else None."""
    m = _BASE.fullmatch(s.strip())
    if not m:
        return None
    digits, base = m.group(1), int(m.group(2) or m.group(3))
    if not 2 <= base <= 36 or not any(ch.isdigit() for ch in digits):
        return None
    try:
        int(digits, base)
    except ValueError:
        return None
    return digits, base


def _base_verdict(gold: str, answer: str) -> bool | None:
    g, a = base_number(gold), base_number(answer)
    if g is None and a is None:
        return None
    if g is not None and a is not None:  # the base asked for, and the same number
        return g[1] == a[1] and int(g[0], g[1]) == int(a[0], a[1])
    if g is not None:  # the gold's base: the answer's digits, subscript dropped, in that base
        if not re.fullmatch(r"[0-9A-Z]+", answer.strip()):
            return False
        try:
            return int(answer.strip(), g[1]) == int(g[0], g[1])
        except ValueError:
            return False
    # a decimal gold: only a base-10 subscript keeps the value; another base restates the question
    if a[1] != 10 or not re.fullmatch(r"-?\d+", gold.strip()):
        return False
    return int(a[0]) == int(gold.strip())


def _scientific(text: str) -> str:
    m = _SCIENTIFIC_E.fullmatch(text.strip())
    if not m:
        return text
    try:
        return format(Decimal(m.group(1)).scaleb(int(m.group(2))), "f")
    except InvalidOperation:
        return text


def paired(gold: str, answer: str) -> tuple[str, str, bool | None]:
    """(gold, answer) rewritten by the two-sided rules, and a verdict when a rule decides."""
    verdict = _base_verdict(gold, answer)
    if verdict is not None:
        return gold, answer, verdict
    gold_e, answer_e = _E_CONSTANT.search(gold), _E_CONSTANT.search(answer)
    if not gold_e:
        answer = _scientific(answer)
    if not answer_e:
        gold = _scientific(gold)
    return gold, answer, None


def choice_with_value(answer: str) -> tuple[str, str] | None:
    """(letter, value) for a multiple-choice answer given with its value: `(B) 12`, `B. 12`."""
    m = _CHOICE_VALUE.match(answer.strip())
    # "(A) (B) (C)" lists options, `(B) = D` or `B) \\ne C` relates two letters: no value
    if not m or _ANOTHER_CHOICE.search(m.group(3)) or _NOT_A_VALUE.match(m.group(3)) \
            or _LONE_LETTER.search(m.group(3)):
        return None
    return (m.group(1) or m.group(2)).upper(), m.group(3).strip()
