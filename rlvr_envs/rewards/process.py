"""Process supervision for math: check every computation the model writes down.

The step verifier reads equalities such as `12 + 7 = 19`, `3 \\times 4 = 12 = 6 \\cdot 2` or
`(x+1)^2 = x^2 + 2x + 1` from the reasoning, one step per adjacent pair in a chain, and judges
each with exact rational arithmetic (sympy):

- "correct": both sides are equal (numbers), or the equality is an identity (symbols);
- "wrong": both sides are numbers and differ (decimals are allowed the rounding they show);
- "unchecked": not a closed computation (an equation to solve like `2x + 3 = 7`, a side cut
  short by words such as "50% of 80 = 40", a side restated as it is like `2 = 2`, or too large
  to evaluate safely).

Expressions are parsed with Python's `ast` into a whitelist of nodes (numbers, single-letter
symbols, + - * / ^, parentheses) and never `eval`ed, so a hostile completion cannot run code;
sizes are capped so it cannot hang the grader either.

process reward = min (or mean) of the distinct checked steps' verdicts (1 correct, 0 wrong),
and `no_steps_reward` (default 0) when nothing checkable was written. It rewards correct
computation, not a correct answer: alone, true but idle steps ("1 + 1 = 2") earn it, so an env
gives it only to a completion that commits to one final answer (`ShapedScorer`) and mixes it
with the outcome ("mix").
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction

import sympy as sp

AGGREGATIONS = ("min", "mean")
MAX_EXPR_CHARS = 200
MAX_EXPONENT = 64
MAX_DIGITS = 200
MAX_BITS = 100_000  # largest numerator/denominator a step may build (2**100000 takes ~1 ms)
MAX_DEGREE = 64  # largest polynomial degree an identity check may expand

_LATEX = [
    (re.compile(r"\\d?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}"), r"((\1)/(\2))"),
    (re.compile(r"\\(?:times|cdot|ast)"), "*"),
    (re.compile(r"\\div"), "/"),
    (re.compile(r"\\left|\\right|\\[,;!: ]|\\quad|\\qquad"), " "),
    (re.compile(r"\\boxed\s*\{([^{}]*)\}"), r"\1"),
    (re.compile(r"[$]|\\\(|\\\)|\\\[|\\\]"), " "),
]
_UNICODE_OPS = str.maketrans({"×": "*", "·": "*", "÷": "/", "−": "-", "–": "-", "^": "^"})
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
#: words that mean an operation: a side next to one of them is cut short, so it is unchecked
_OPERATOR_WORDS = {"of", "times", "plus", "minus", "by", "per", "over", "squared",
                   "cubed", "percent", "divided", "multiplied", "x"}


@dataclass(frozen=True)
class StepVerdict:
    """One equality `lhs = rhs` and its verdict ("correct", "wrong", "unchecked")."""

    lhs: str
    rhs: str
    verdict: str
    line: int


class _Unsafe(ValueError):
    """An expression outside what the step verifier evaluates."""


def _normalise(text: str) -> str:
    for pattern, repl in _LATEX:
        for _ in range(3):  # nested fractions unwrap from the inside out
            text = pattern.sub(repl, text)
    text = text.translate(_UNICODE_OPS).replace("{", "(").replace("}", ")")
    return _THOUSANDS.sub("", text)


def _to_sympy(node: ast.AST) -> sp.Expr:
    if isinstance(node, ast.Expression):
        return _to_sympy(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool):
        if isinstance(node.value, int) and len(str(abs(node.value))) > MAX_DIGITS:
            raise _Unsafe("number too large")
        return sp.Rational(Fraction(str(node.value)))
    if isinstance(node, ast.Name) and len(node.id) == 1:
        return sp.Symbol(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _to_sympy(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp):
        left, right = _to_sympy(node.left), _to_sympy(node.right)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if isinstance(node.op, ast.Div):
            if right == 0:
                raise _Unsafe("division by zero")
            return left / right
        if isinstance(node.op, ast.Pow):
            if not (right.is_Integer and abs(int(right)) <= MAX_EXPONENT):
                raise _Unsafe("exponent outside the checked range")
            if left == 0 and right < 0:
                raise _Unsafe("division by zero")
            if left.free_symbols:
                if _degree_bound(left) * abs(int(right)) > MAX_DEGREE:
                    raise _Unsafe("polynomial degree too high")
            elif left.is_Rational:
                bits = max(abs(left.p).bit_length(), abs(left.q).bit_length())
                if bits * abs(int(right)) > MAX_BITS:
                    raise _Unsafe("number too large")
            return left ** right
    raise _Unsafe(f"unsupported syntax {type(node).__name__}")


def _degree_bound(expr: sp.Expr) -> int:
    """An upper bound on the total degree of `expr` without expanding it."""
    if not expr.free_symbols:
        return 0
    if expr.is_Symbol:
        return 1
    if expr.is_Pow:
        exponent = expr.exp
        return _degree_bound(expr.base) * (abs(int(exponent)) if exponent.is_Integer else MAX_DEGREE + 1)
    if expr.is_Mul:
        return sum(_degree_bound(a) for a in expr.args)
    return max((_degree_bound(a) for a in expr.args), default=0)


def parse_side(text: str) -> sp.Expr:
    """A sympy expression from one side of an equality (raises ValueError when unsupported)."""
    text = text.strip()
    if not text or len(text) > MAX_EXPR_CHARS:
        raise _Unsafe("empty or too long")
    text = re.sub(r"(\d|\))\s*(?=[A-Za-z(])", r"\1*", text)  # implicit products: 2x, 3(4), (a)(b)
    text = re.sub(r"([A-Za-z])\s*(?=\()", r"\1*", text)
    text = text.replace("^", "**")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as err:
        raise _Unsafe(f"not an expression: {err.msg}") from None
    return _to_sympy(tree)


def _decimals(text: str) -> int | None:
    places = [len(m) for m in re.findall(r"\d\.(\d+)", text)]
    return min(places) if places else None


def judge(lhs: str, rhs: str) -> str:
    """The verdict on `lhs = rhs`."""
    try:
        left, right = parse_side(lhs), parse_side(rhs)
    except (_Unsafe, ValueError, TypeError, ZeroDivisionError, RecursionError, OverflowError):
        return "unchecked"
    if left.free_symbols or right.free_symbols:
        try:
            identity = sp.expand(left - right) == 0
        except Exception:  # noqa: BLE001 - sympy can fail on odd input; that step is unchecked
            return "unchecked"
        return "correct" if identity else "unchecked"
    difference = abs(left - right)
    if difference == 0:
        return "correct"
    places = _decimals(lhs + " " + rhs)
    if places is not None and difference <= sp.Rational(1, 2) * sp.Rational(10) ** -places:
        return "correct"
    return "wrong"


MAX_STEPS = 500  # a completion with more equalities is judged on its first MAX_STEPS
_SPLIT_EQUALS = re.compile(r"(?<![<>!=])=(?!=)")
_PLAIN_EXPR_CHARS = set("0123456789.()+-*/^ \t")


def _is_expr_char(text: str, i: int) -> bool:
    ch = text[i]
    if ch in _PLAIN_EXPR_CHARS:
        return True
    if ch.isascii() and ch.isalpha():  # a single-letter variable, not part of a word
        return not ((i > 0 and text[i - 1].isalpha()) or
                    (i + 1 < len(text) and text[i + 1].isalpha()))
    return False


def _expr_suffix_start(text: str) -> int:
    i = len(text)
    while i > 0 and _is_expr_char(text, i - 1):
        i -= 1
    return i


def _expr_prefix_end(text: str) -> int:
    i = 0
    while i < len(text) and _is_expr_char(text, i):
        i += 1
    return i


def _glued_before(before: str) -> bool:
    """True when the text before a chain's first side is part of its computation (a word such
    as "of" in "50% of 80 = 40", a function name in "f(2) = 4", a percent sign)."""
    stripped = before.rstrip()
    if not stripped:
        return False
    if len(stripped) == len(before) and re.match(r"[A-Za-z_%\\]", stripped[-1]):
        return True
    words = re.findall(r"[A-Za-z%]+$", stripped)
    return stripped.endswith("%") or (bool(words) and words[0].lower() in _OPERATOR_WORDS)


def _glued_after(after: str) -> bool:
    stripped = after.lstrip()
    if not stripped:
        return False
    if len(stripped) == len(after) and re.match(r"[A-Za-z_%^\\]", stripped[0]):
        return True
    words = re.findall(r"^[A-Za-z%]+", stripped)
    return stripped.startswith(("%", "^")) or (bool(words) and words[0].lower() in _OPERATOR_WORDS)


def _chains(line: str) -> list[tuple[list[str], bool, bool]]:
    """Each chain `a = b = c` of a line: its sides, and whether its first / last side is cut
    short by the words around it. Linear in the line's length (no regex backtracking)."""
    parts = _SPLIT_EQUALS.split(line)
    chains = []
    i = 0
    while i < len(parts) - 1:
        head = parts[i]
        start = _expr_suffix_start(head)
        start += len(head[start:]) - len(head[start:].lstrip())  # spaces belong to the context
        sides = [head[start:]]
        cut_start = _glued_before(head[:start])
        j = i + 1
        while j < len(parts) - 1 and _expr_prefix_end(parts[j]) == len(parts[j]):
            sides.append(parts[j])
            j += 1
        tail = parts[j]
        end = _expr_prefix_end(tail)
        end -= len(tail[:end]) - len(tail[:end].rstrip())
        sides.append(tail[:end])
        cut_end = _glued_after(tail[end:])
        chains.append((sides, cut_start, cut_end))
        i = j  # the tail part may open the next chain with its own suffix
    return chains


def extract_steps(reasoning: str) -> list[StepVerdict]:
    """Every equality step written in `reasoning`, judged (at most MAX_STEPS)."""
    steps: list[StepVerdict] = []
    for number, raw in enumerate(reasoning.splitlines(), start=1):
        if "=" not in raw:
            continue
        for sides, cut_start, cut_end in _chains(_normalise(raw)):
            sides = [side.strip() for side in sides]
            if any(not re.search(r"[0-9A-Za-z]", side) for side in sides):
                continue
            for k, (lhs, rhs) in enumerate(zip(sides, sides[1:])):
                # a side cut short by words, or one restated as it is ("2 = 2"), checks nothing
                cut = (k == 0 and cut_start) or (k == len(sides) - 2 and cut_end) or \
                    lhs.replace(" ", "") == rhs.replace(" ", "")
                steps.append(StepVerdict(lhs, rhs, "unchecked" if cut else judge(lhs, rhs),
                                         number))
                if len(steps) >= MAX_STEPS:
                    return steps
    return steps


def process_reward(steps: Sequence[StepVerdict], aggregation: str = "min",
                   no_steps_reward: float = 0.0) -> float:
    """min or mean of the distinct checked steps (1 correct, 0 wrong); `no_steps_reward` if
    none."""
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {list(AGGREGATIONS)}, got {aggregation!r}")
    # each distinct step once: repeating a true step does not outweigh a wrong one ("mean")
    distinct = {(s.lhs, s.rhs): s.verdict for s in steps if s.verdict != "unchecked"}
    values = [1.0 if verdict == "correct" else 0.0 for verdict in distinct.values()]
    if not values:
        return float(no_steps_reward)
    return min(values) if aggregation == "min" else sum(values) / len(values)


def verify_steps(reasoning: str, aggregation: str = "min", no_steps_reward: float = 0.0) -> dict:
    """Per-step verdicts and the process reward, as plain data for `info["process"]`."""
    steps = extract_steps(reasoning)
    return {"reward": process_reward(steps, aggregation, no_steps_reward),
            "aggregation": aggregation,
            "checked": sum(s.verdict != "unchecked" for s in steps),
            "wrong": sum(s.verdict == "wrong" for s in steps),
            "steps": [asdict(s) for s in steps]}
