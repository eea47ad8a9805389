"""What the problem text says about an answer: whether it restates the question instead of
evaluating it, names an option with a value that is not that option's, or leaves a radical
unsimplified where the question asks for the simplest form (docs/math.md, "The question").
Used only when the caller passes the question."""

from __future__ import annotations

import re
from math import isqrt

from rlvr_envs.verify.math.compare import NeedsSymbolic, fast_equal, spelling
from rlvr_envs.verify.math.fast import Num, exact_side, final_number, parse_leaf
from rlvr_envs.verify.math.normalize import clean, split_top_level
from rlvr_envs.verify.math.notation import canonical, choice_with_value


def ignores_question(answer: str, question: str, gold: str) -> bool:
    """True when `answer` (as extracted, before the notation rules) does not answer `question`
    as asked, whatever its value: `restates_question`, `reshapes_question`,
    `unsimplified_radical` or `contradicts_option`."""
    return (restates_question(answer, question, gold) or reshapes_question(answer, question, gold)
            or unsimplified_radical(answer, question, gold) or contradicts_option(answer, question))


_OPERATOR_SPELLINGS = re.compile(r"\\times|\\cdot|\\ast|\\div|[*×·÷/]")
_RESTATING = re.compile(r"[+*/^!=]|\\[a-zA-Z]|\S\s*-")
_MATH_NOISE = re.compile(r"\$|\\\(|\\\)|\\\[|\\\]")


def _operator_spelling(s: str) -> str:
    return spelling(_OPERATOR_SPELLINGS.sub(lambda m: "/" if m.group() in ("\\div", "÷", "/")
                                             else "*", clean(_MATH_NOISE.sub(" ", s))))


_NUMBER_TOKEN = re.compile(r"\d+(?:\.\d+)?")


def _built_from_question(answer: str, question: str, gold: str) -> bool:
    """An expression for a one-number gold made only of the question's own numbers (0 and 1
    aside: `+0`, `1\\cdot(...)`), however it is bracketed or reordered: `(5 - 8 \\times
    (27 - 70))` for "Compute $5 - 8 \\times (27 - 70)$"."""
    value = parse_leaf(canonical(gold))
    if not isinstance(value, Num) or value.percent or value.unit:
        return False
    if _OPERATIONS[0].search(answer) and not _OPERATIONS[0].search(_MATH_NOISE.sub(" ", question)):
        return False  # `\\binom{10}{3}` for "a committee of 3 from 10": a count in closed form
    numbers = {n for n in _NUMBER_TOKEN.findall(answer) if n not in ("0", "1")}
    return len(numbers) >= 2 and numbers <= set(_NUMBER_TOKEN.findall(question))


def restates_question(answer: str, question: str, gold: str) -> bool:
    """True when `answer` copies an expression of the question instead of evaluating it
    ("Compute $12 + 7 \\times 3$." answered `12 + 7 \\times 3`; "Simplify $\\sqrt{8}$." answered
    `\\sqrt{8}`): the answer has an operator or a command, is not spelled as the gold, and its
    spelling (spaces, braces of one character, \\left/\\right, \\times/\\cdot/* ignored) occurs in
    the question. Closed forms such as `10^9+7` or `2^{10}-1` are compared by value otherwise.
    Never a restatement: a number already in final form (`fast.final_number`: `3/8`,
    `70^\\circ`, `5\\text{ cm}`, though the question holds 3 and 8, `70^\\circ` or `5\\text{ cm}`),
    and an expression that occurs in the question only as an answer option, after its label
    (`\\textbf{(B)}`, `(B)`, `B.`): choosing the right option is answering."""
    if choice_with_value(canonical(answer)) is not None:
        return False  # `\\textbf{(C)}\\ 10`: an option chosen (`contradicts_option` checks its value)
    if not _RESTATING.search(answer) or final_number(clean(answer)):
        return False  # `3/8`, `70^\\circ`, `5\\text{ cm}`: a final value, nothing to evaluate
    spelled = _operator_spelling(answer)
    if len(spelled) < 3 or spelled == _operator_spelling(gold):
        return False
    asked = _operator_spelling(question)
    return any(not _CHOICE_BEFORE.search(asked, 0, at) for at in _occurrences(spelled, asked)) \
        or _built_from_question(answer, question, gold)


#: an answer option's label just before an expression in the question: `\\textbf{(B)}`, `(B)`, `B.`
_CHOICE_BEFORE = re.compile(r"(?:\([A-Ea-e]\)\}?|(?<![A-Za-z\\])[A-E][.:)])$")


def _occurrences(needle: str, haystack: str) -> list[int]:
    found, at = [], haystack.find(needle)
    while at >= 0:
        found.append(at)
        at = haystack.find(needle, at + 1)
    return found


def _one_number(gold: str) -> bool:
    value = parse_leaf(canonical(gold))
    return isinstance(value, Num) and not value.percent and not value.unit


#: operations a question asks to carry out, by family (a factorial is a binomial's spelling)
_OPERATIONS = (
    re.compile(r"\\[dt]?binom(?![a-zA-Z])|\\choose(?![a-zA-Z])|(?<=[\d})])!|(?<![A-Za-z\\])C_|"
               r"\\mathrm\{C\}|\\Gamma(?![a-zA-Z])"),
    re.compile(r"\\(?:log|ln|lg)(?![a-zA-Z])"),
    re.compile(r"\\(?:arc)?(?:sin|cos|tan|cot|sec|csc)(?![a-zA-Z])"),
    re.compile(r"\\(?:sum|prod|int|lim)(?![a-zA-Z])"),
)


def reshapes_question(answer: str, question: str, gold: str) -> bool:
    """An answer for a one-number gold that still holds an operation of the family the question
    asks to carry out, which the gold does not hold: `\\binom{8}{5}`, `\\binom{7}{2}+\\binom{7}{3}`
    or `\\frac{8!}{3!\\,5!}` for "Compute $\\dbinom{8}{3}$", `\\log_{16} 64` for "Evaluate
    $\\log_4 8$": the same task written again, not its result. (`\\binom{10}{3}` for a question
    that names no binomial is compared by value.) An elided series (`1+2+\\cdots+10`) never is
    a one-number answer; a chain is judged by what it concludes (`\\binom{8}{3} = 56`)."""
    if not _one_number(gold):
        return False
    answer = _conclusion(answer)
    if _ELIDED.search(answer):
        return True
    asked = _MATH_NOISE.sub(" ", question)
    return any(op.search(answer) and op.search(asked) and not op.search(gold)
               for op in _OPERATIONS)


#: a series written with its middle left out (`1+2+\cdots+10`): a sum still to be done
_ELIDED = re.compile(r"[+*]\s*(?:\\[lc]?dots(?![a-zA-Z])|\.\.\.|…)\s*[+*]|"
                     r"\\cdot\s*(?:\\[lc]?dots(?![a-zA-Z])|\.\.\.|…)\s*\\cdot")


def _conclusion(answer: str) -> str:
    """What a chain concludes (`\\binom{8}{3} = 56` gives 56): its last side."""
    depth, last = 0, -1
    for at, char in enumerate(answer):
        depth += (char in "{([") - (char in "})]")
        if char == "=" and depth == 0:
            last = at
    return answer[last + 1:] if last >= 0 else answer  # `\\sum_{j=1}^{10}`'s `=` is no side


#: a question that asks for a simplified form: "simplest (radical) form", or "Simplify" with
#: the expression right after it ("simplify the computation" asks nothing of the answer)
_SIMPLEST = re.compile(r"simplest\s+(?:radical\s+)?form|\bsimplify\s*(?::|\$|\\\(|\\sqrt|the\s+"
                       r"(?:expression|radical|fraction|product|quotient|following))", re.IGNORECASE)
#: spellings simplest radical form has none of: an nth root, a fractional exponent, a root in a
#: denominator, a root of anything but a whole number
_NOT_SIMPLEST = re.compile(r"\\sqrt\s*\[|\^\s*\{?\s*(?:\d+\s*/|\\[dt]?frac)|\^\s*\(\s*\d+\s*/|"
                           r"\\[dt]?frac\s*(?:\{[^{}]*\}|\d)\s*\{[^{}]*\\sqrt|"
                           r"\\sqrt\s*\{[^{}]*[\\^.+*/-]")
_RADICAND = re.compile(r"\\sqrt\s*(?:\{\s*(\d{1,9})\s*\}|(\d))")


def _square_free(n: int) -> bool:
    if n < 2:
        return False  # `\\sqrt{1}`, `\\sqrt{0}`: nothing left to take the root of
    return all(n % (k * k) for k in range(2, isqrt(n) + 1))


def unsimplified_radical(answer: str, question: str, gold: str) -> bool:
    """Where the question asks for a simplified form ("Simplify", "simplest radical form") and
    every integer under a root of the gold is square-free: an answer with a square factor left
    under a root (`2\\sqrt{18}`, `3\\sqrt{8}`, `\\sqrt{36}\\sqrt{2}` for `6\\sqrt{2}`), or a form simplest
    radical form has none of (`50^{1/2}`, `\\sqrt[4]{2500}`, `\\sqrt{5^2\\cdot 2}`, `\\frac{10}{\\sqrt2}`)."""
    if not _SIMPLEST.search(question) or not all(
            _square_free(int(a or b)) for a, b in _RADICAND.findall(gold)) \
            or _NOT_SIMPLEST.search(gold):
        return False
    answer = _conclusion(answer)
    return bool(_NOT_SIMPLEST.search(answer)) or any(
        not _square_free(int(a or b)) for a, b in _RADICAND.findall(answer))


#: an option's label in a multiple-choice question: `\\textbf{(C)}`, `\\mathrm{(C)}`, `(C)`
_OPTION_LABEL = re.compile(r"\\(?:textbf|mathbf|mathrm|text)\s*\{\s*\(([A-E])\)\s*\}|\(([A-E])\)"
                           r"|(?:^|(?<=[\s$]))([A-E])[.)](?=\s)", re.MULTILINE)
_OPTION_END = re.compile(r"\\q?quad(?![a-zA-Z])|\\\\|\n|\$")
_OPTION_LEAD = re.compile(r"^(?:\\[ ,;:!]|~|\s)+")


def question_options(question: str) -> dict[str, str]:
    """The options of a multiple-choice question, letter → its text (`5` for `\\textbf{(A)}\\ 5
    \\qquad`); {} for a question with fewer than two labels, and no entry for a letter
    labelled twice."""
    labels = list(_OPTION_LABEL.finditer(question))
    if len(labels) < 2:
        return {}
    options: dict[str, str | None] = {}
    for label, after in zip(labels, labels[1:] + [None]):
        text = question[label.end():after.start() if after else len(question)]
        end = _OPTION_END.search(text)
        text = _OPTION_LEAD.sub("", text[:end.start()] if end else text).strip().rstrip(",;.")
        letter = label.group(1) or label.group(2) or label.group(3)
        options[letter] = None if letter in options else text
    return {letter: text for letter, text in options.items() if text}


def contradicts_option(answer: str, question: str) -> bool:
    """An option chosen with a value (`\\textbf{(C)}\\ 15`, `(B)\\ \\sqrt3`) where the question gives
    that option another value (`\\textbf{(C)}\\ 10`, `B) 2\\sqrt3`), as far as the fast path reads."""
    chosen = choice_with_value(canonical(answer))
    if chosen is None:
        return False
    option = question_options(question).get(chosen[0])
    if option is None:
        return False
    try:
        return not fast_equal(canonical(option), canonical(chosen[1]))
    except (NeedsSymbolic, ValueError, ArithmeticError, RecursionError):
        return False  # only the symbolic path could tell: the letter decides


#: a question that asks for a rounded value
_ROUNDING = re.compile(
    r"\bto\s+the\s+nearest\b|\bround(?:ed)?\s+(?:(?:your|the|each|this)\s+(?:\w+\s+)?|it\s+|off\s+)?to\b"
    r"|\bdecimal\s+places?\b|\bsignificant\s+(?:figures|digits)\b|\bapproximately\s+(?:how|what)\b"
    r"|\bapproximate\s+(?:value|answer)\b|\bas\s+a\s+decimal\b", re.IGNORECASE)
_DECIMAL = re.compile(r"^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)\s*$")
_BARE_APPROX = re.compile(r"^\s*(?:\\approx(?![a-zA-Z])|≈)\s*(?=[+-]?\.?\d)")


def answered_side(answer: str, question: str | None, gold: str) -> str:
    """What an answer with an approximation gives: the exact side of `\\sqrt{20} \\approx 4.47`
    (`exact_side`), unless the question asks for a rounded value ("to the nearest hundredth",
    "round to", "decimal places") and the gold is a plain number: then its decimal, and a bare
    `\\approx 4.47` is 4.47."""
    if question is None or not _ROUNDING.search(question) or not _DECIMAL.match(gold):
        return exact_side(answer)
    if _BARE_APPROX.match(answer):
        return _BARE_APPROX.sub("", answer, count=1)
    return exact_side(answer, rounded=True)


_NAME = r"(?:[A-Za-z](?:_\{?\w+\}?)?|\\[a-zA-Z]+)"
_NAME_TUPLE = re.compile(rf"\(\s*({_NAME}(?:\s*,\s*{_NAME})+)\s*\)")
_NAMED_VALUE = re.compile(rf"^\s*({_NAME})\s*=\s*(.+?)\s*$", re.DOTALL)


def _name(text: str) -> str:
    return re.sub(r"[{}\s]", "", text)


def in_question_order(answer: str, question: str) -> str:
    """Named values (`b = -2, m = 3`, after the notation rules) as the tuple the question asks
    for by those names (`Enter $(m,b)$`): `(3, -2)`; any other answer as it is (named values
    keep the order they are written in)."""
    items = split_top_level(answer)
    if len(items) < 2:
        return answer
    named = [_NAMED_VALUE.match(item) for item in items]
    if not all(named):
        return answer
    values = {_name(m.group(1)): m.group(2) for m in named}
    if len(values) != len(items):
        return answer
    for asked in _NAME_TUPLE.finditer(question):
        names = [_name(name) for name in asked.group(1).split(",")]
        if len(names) == len(values) and set(names) == set(values):
            return "(" + ", ".join(values[name] for name in names) + ")"
    return answer
