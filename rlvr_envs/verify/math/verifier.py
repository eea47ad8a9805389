"""verify_math, verify_batch and check_gold: extraction, caps, hedge rules, the verdict
cache, the fast path, then the symbolic workers under a CPU budget."""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from itertools import combinations, pairwise

from rlvr_envs.core.prompts import check_answer_format
from rlvr_envs.verify.math import cache, deadline
from rlvr_envs.verify.math.algebra import algebra_equal, is_constant, parse_algebra, rational_value
from rlvr_envs.verify.math.compare import (
    NeedsSymbolic,
    Shape,
    fast_equal,
    gold_shape,
    judge,
)
from rlvr_envs.verify.math.deadline import WorkerError
from rlvr_envs.verify.math.extract import extract
from rlvr_envs.verify.math.fast import (
    Inf,
    Num,
    parse_leaf,
    qualifier_words,
    text_hides_numbers,
)
from rlvr_envs.verify.math.normalize import (
    NestingError,
    balanced,
    clean,
    nesting_depth,
    split_top_level,
)
from rlvr_envs.verify.math.notation import (
    VULGAR_FRACTIONS,
    canonical,
    choice_then_relation,
    closed_choice,
    iso_interval,
)
from rlvr_envs.verify.math.question import answered_side, ignores_question, in_question_order
from rlvr_envs.verify.math.verdict import (
    CORRECT,
    ERROR,
    HEDGED,
    MATH_REASONS,
    MAX_ANSWER_CHARS,
    MAX_COMPLETION_CHARS,
    MAX_NESTING,
    MISMATCH,
    TIMEOUT,
    TOO_LONG,
    MathVerdict,
)

log = logging.getLogger(__name__)

# Invisible or combining characters in an answer (zero-width joiners, bidi overrides,
# combining overlays) are a trick, not notation: such an answer is a mismatch.
# Digits outside ASCII (Arabic-Indic, mathematical bold, superscripts) are refused as well.
_TRICK_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Mn", "Me", "Nd", "No"})
GOLD_CHECK_TIMEOUT = 10.0


def extract_answer(completion: str, answer_format: str = "boxed") -> str | None:
    """The final answer read from the answer section (several distinct ones joined by ', ')."""
    found = extract(completion, check_answer_format(answer_format))
    return ", ".join(found.answers) if found.answers else None


def _gold_problem(gold: object) -> str | None:
    if not isinstance(gold, str):
        return f"gold answer must be a str, got {type(gold).__name__}"
    return _text_gold_problem(gold)


@lru_cache(maxsize=4096)
def _text_gold_problem(gold: str) -> str | None:
    if len(gold) > MAX_ANSWER_CHARS:
        return f"gold answer is {len(gold)} chars, more than the {MAX_ANSWER_CHARS} the verifier reads"
    try:
        text = clean(gold)
    except NestingError:
        text = None
    if text is None or nesting_depth(text) > MAX_NESTING:
        return f"gold answer {gold!r} nests brackets deeper than {MAX_NESTING}"
    if not text:
        return f"gold answer {gold!r} is empty"
    if not balanced(text):
        return f"gold answer {gold!r} has unbalanced brackets"
    return None


@lru_cache(maxsize=4096)
def _checked_gold(gold: str) -> Shape:
    problem = _gold_problem(gold)
    if problem:
        raise ValueError(problem)
    shape = gold_shape(gold)
    for part in shape.items if shape.kind != "single" else (shape.text,):
        if parse_leaf(part) is not None:
            continue
        reply = deadline.pool().call({"op": "parse", "text": part}, GOLD_CHECK_TIMEOUT)
        if reply.get("timeout"):
            raise ValueError(f"gold answer {gold!r}: parsing {part!r} took over {GOLD_CHECK_TIMEOUT} s")
        if not reply.get("parses"):
            raise ValueError(f"gold answer {gold!r}: {part!r} does not parse as a math answer "
                             "(expected a number, expression, interval, set, tuple, matrix, "
                             "relation, letter or short text)")
    return shape


def check_gold(gold: str) -> None:
    """Raise ValueError when `gold` cannot be parsed and scored by verify_math."""
    _checked_gold(gold)


#: a box inside the answer, or content that renders invisibly: what is read is not what shows
_HIDDEN = re.compile(r"\\(?:boxed|fbox|[hv]?phantom)(?![a-zA-Z])|\\(?:text)?color\s*\{\s*white")
_NUMBER_RELATION = re.compile(
    r"\s*([+-]?\d+(?:\.\d+)?)\s*(?:=|\\equiv|\\approx|\\cong|≈|≡)\s*([+-]?\d+(?:\.\d+)?)\s*")


#: up to this many distinct constant sides in a chain, every pair is compared; beyond it (no
#: real answer), each side with its neighbour and with the last side
_MAX_CHAIN_PAIRS_OF = 8

#: `=` as part of another relation (`x <= 3`, `x != 3`, `x := 3`): no side ends there
_NOT_EQUALITY = re.compile(r"(?<=[<>!:])=")


def _constant_side(side: str) -> Num | Inf | str | None:
    """A side of `=` that the fast path reads as one value: a number (with its percent sign or
    unit: `8\\%`, `\\$8`, `8^\\circ`, `0.\\overline{9}`), an infinity, or an expression
    without variables (`8!`, `|8|`, `\\frac{16}{2}`, `\\sqrt{2}`), returned as its text; else
    None."""
    side = side.strip()
    if not any(ch.isdigit() or ch == "\\" for ch in side):
        return None
    text = canonical(side)
    leaf = parse_leaf(text)
    if isinstance(leaf, Num | Inf):
        return leaf
    return text if is_constant(text) else None


def _readings(value: Num) -> tuple[Fraction, ...]:
    """The values a number may stand for: `50\\%` is 50 or 1/2."""
    return (value.value, value.value / 100) if value.percent else (value.value,)


def _as_text(value: Fraction) -> str:
    return f"({value.numerator})/({value.denominator})"


def _constants_differ(left: Num | Inf | str, right: Num | Inf | str) -> bool:
    """Whether two constant sides are proved to be different values under every reading (a
    percent as itself or as a fraction; different units, or degrees against an irrational
    value, `90^\\circ = \\frac{\\pi}{2}`, prove nothing)."""
    if isinstance(left, Inf) or isinstance(right, Inf):
        return left != right
    if isinstance(left, Num) and isinstance(right, Num):
        if left.unit and right.unit and left.unit != right.unit:
            return False
        return not set(_readings(left)) & set(_readings(right))
    if isinstance(left, str) and isinstance(right, str):
        return algebra_equal(left, right) is False
    number, text = (left, right) if isinstance(left, Num) else (right, left)
    if number.unit == "deg" and rational_value(text) is None:
        return False
    return all(algebra_equal(text, _as_text(v)) is False for v in _readings(number))


def _false_relation(answer: str) -> bool:
    """Two different values said to be equal (`6 = 5`, or anywhere in a chain: `x = 8 = 7`,
    `8 = x = 7`, `8! = 7`, `\\$8 = 7`): read as either, it would be a guess. Every side
    that the fast path reads as a constant must agree with every other one."""
    m = _NUMBER_RELATION.fullmatch(answer)
    if m is not None:
        return Fraction(m.group(1)) != Fraction(m.group(2))
    sides = split_top_level(_NOT_EQUALITY.sub("\x01", answer), "=", words=False)
    try:
        unequal = answer.split("!=")
        if len(unequal) == 2 and all(_constant_side(side) is not None for side in unequal):
            return True  # `8 != 7` states a fact about two numbers; it answers neither
        if len(sides) < 2:
            return False
        constants = list(dict.fromkeys(  # each distinct value once: `1 = 1 = ... = 1` is cheap
            c for c in (_constant_side(side.replace("\x01", "=")) for side in sides)
            if c is not None))
        if len(constants) > _MAX_CHAIN_PAIRS_OF:  # bounded work: each against its neighbour
            pairs = list(pairwise(constants)) + [(c, constants[-1]) for c in constants]
        else:
            pairs = list(combinations(constants, 2))
        return any(_constants_differ(a, b) for a, b in pairs)
    except Exception as exc:  # noqa: BLE001 - a fast-path bug: no proof
        log.warning("math verifier fast path failed on the chain %r: %r", answer[:100], exc)
        return False


def _has_tricks(text: str) -> bool:
    return any(unicodedata.category(ch) in _TRICK_CATEGORIES and ch not in VULGAR_FRACTIONS
               for ch in unicodedata.normalize("NFC", text) if not ch.isascii())


ON_TIMEOUT = ("zero", "none")


@dataclass(frozen=True)
class _Pending:
    """A completion whose answer was read and checked; only the comparison is left."""

    gold: str
    answers: tuple[str, ...]
    extracted: str


def _check_options(answer_format: str, timeout: float, on_timeout: str,
                   wall_timeout: float | None) -> None:
    check_answer_format(answer_format)
    if not isinstance(timeout, int | float) or not timeout > 0:
        raise ValueError(f"timeout must be > 0 seconds (of CPU time), got {timeout!r}")
    if on_timeout not in ON_TIMEOUT:
        raise ValueError(f"on_timeout must be one of {ON_TIMEOUT}, got {on_timeout!r}")
    if wall_timeout is not None and not wall_timeout > 0:
        raise ValueError(f"wall_timeout must be > 0 seconds or None, got {wall_timeout!r}")


def _read(completion: str, gold: str, answer_format: str, max_completion_chars: int,
          question: str | None = None) -> MathVerdict | _Pending:
    """The verdict when reading the answer already decides it, else what is left to compare
    (the answers rewritten by the notation rules, `notation.canonical`)."""
    if not isinstance(completion, str):
        raise TypeError(f"completion must be a str, got {type(completion).__name__}")
    if question is not None and not isinstance(question, str):
        raise TypeError(f"question must be a str or None, got {type(question).__name__}")
    problem = _gold_problem(gold)
    if problem:
        raise ValueError(problem)
    if len(completion) > max_completion_chars:
        return MathVerdict(False, TOO_LONG)
    found = extract(completion, answer_format)
    if found.reason:
        return MathVerdict(False, found.reason)
    found_answers = [iso_interval(closed_choice(a)) for a in found.answers]
    extracted = ", ".join(found.answers)
    if found.guessed and gold_shape(gold).multipart:  # `\\boxed{1}. Maybe -3.` for `1, -3`
        return MathVerdict(False, HEDGED, extracted)
    if any(nesting_depth(a) > MAX_NESTING for a in found_answers):
        return MathVerdict(False, TOO_LONG, extracted[:MAX_ANSWER_CHARS])
    if _has_tricks(extracted) or not all(balanced(a) for a in found_answers):
        return MathVerdict(False, MISMATCH, extracted)
    if any(_HIDDEN.search(a) for a in found_answers):  # \phantom{\boxed{5}} 6 shows 6
        return MathVerdict(False, MISMATCH, extracted)
    answers = [answered_side(a, question, gold) for a in found_answers]
    if any(_false_relation(a) for a in answers):  # 6 = 5, 6 \equiv 5
        return MathVerdict(False, MISMATCH, extracted)
    rewritten = tuple(canonical(a) for a in answers)
    if any(map(choice_then_relation, rewritten)):  # `(B) = C`: two options, no value
        return MathVerdict(False, MISMATCH, extracted)
    if question is not None and gold_shape(gold).kind == "bracket":  # `Enter $(m,b)$.`
        rewritten = tuple(in_question_order(a, question) for a in rewritten)
    # "42 is correct", "about 42"; read after the notation rules (`\\text{no solution}` is the
    # empty set, `\\text{Answer: } 7` is 7)
    if qualifier_words(", ".join(rewritten)) - qualifier_words(gold):
        return MathVerdict(False, MISMATCH, extracted)
    if any(map(text_hides_numbers, rewritten)) and not text_hides_numbers(canonical(gold)):
        return MathVerdict(False, MISMATCH, extracted)
    if question is not None and any(ignores_question(a, question, gold) for a in answers):
        return MathVerdict(False, MISMATCH, extracted)
    return _Pending(gold, rewritten, extracted)


def _fast_reason(pending: _Pending) -> str | None:
    """The fast path's reason, or None when only the symbolic workers can tell."""
    try:
        return judge(gold_shape(pending.gold), pending.answers, fast_equal)
    except NeedsSymbolic:
        return None
    except Exception as exc:  # noqa: BLE001 - a fast-path bug: ask the workers
        log.warning("math verifier fast path failed on %r: %r", pending.extracted[:200], exc)
        return None


#: a comparison that runs out of its CPU budget is tried once more with this many times the
#: budget: CPU time itself varies (a worker's first comparisons build sympy's caches; cores
#: shared with other processes run slower), and a pair near the budget must not get a verdict
#: that depends on which worker took it or how busy the machine was
RETRY_FACTOR = 2.0


def _over_budget(reply: dict) -> bool:
    return bool(reply.get("timeout")) and reply.get("stuck") != "wall"


def _reason_from_reply(pending: _Pending, reply: dict, budget: float) -> str:
    """The reason a worker's reply gives (cached when it is a property of the pair)."""
    if reply.get("timeout"):
        if reply.get("stuck") != "wall":  # over its CPU budget: the pair's own cost
            cache.verdicts.put(pending.gold, pending.answers, TIMEOUT, budget)
        return TIMEOUT
    reason = reply.get("reason")
    if reason not in MATH_REASONS:
        log.warning("math verifier could not compare with gold %r: %s", pending.gold,
                    reply.get("error"))
        return ERROR
    cache.verdicts.put(pending.gold, pending.answers, reason)
    return reason


def _verdict(pending: _Pending, reason: str, on_timeout: str) -> MathVerdict:
    if reason == TIMEOUT and on_timeout == "none":
        return MathVerdict(None, TIMEOUT, pending.extracted)
    return MathVerdict(reason == CORRECT, reason, pending.extracted)


def _known_reason(pending: _Pending, budget: float) -> str | None:
    reason = cache.verdicts.get(pending.gold, pending.answers, budget)
    if reason is None:
        reason = _fast_reason(pending)
        if reason is not None:
            cache.verdicts.put(pending.gold, pending.answers, reason)
    return reason


def verify_math(completion: str, gold: str, *, answer_format: str = "boxed",
                timeout: float = 1.0, on_timeout: str = "zero",
                wall_timeout: float | None = None,
                max_completion_chars: int = MAX_COMPLETION_CHARS,
                question: str | None = None) -> MathVerdict:
    """Whether the final answer of `completion` equals `gold`.

    `timeout` is the CPU time (seconds) the symbolic comparison may use, so the verdict does
    not depend on how busy the machine is; `wall_timeout` (default: 30 x timeout, at least
    60 s) only ends a comparison that gets no CPU at all. On a timeout, `on_timeout="zero"`
    gives `correct=False` and `"none"` gives `correct=None` (no reward: leave the sample out).
    Hostile completions get correct=False with the reason; a bad gold raises ValueError.
    With `question` (the problem text), an answer that copies one of its expressions instead
    of evaluating it (`12 + 7 \\times 3` for "Compute $12 + 7 \\times 3$") is a mismatch.
    """
    _check_options(answer_format, timeout, on_timeout, wall_timeout)
    pending = _read(completion, gold, answer_format, max_completion_chars, question)
    if isinstance(pending, MathVerdict):
        return pending
    reason = _known_reason(pending, timeout)
    if reason is None:
        request = {"op": "judge", "gold": gold, "answers": list(pending.answers)}
        budget = timeout
        try:
            reply = deadline.pool().call(request, budget, wall_timeout)
            if _over_budget(reply):  # once more at twice the budget (see `RETRY_FACTOR`)
                budget = timeout * RETRY_FACTOR
                reply = deadline.pool().call(request, budget, wall_timeout)
        except WorkerError as failure:
            log.warning("math verifier worker failed: %s", failure)
            return MathVerdict(False, ERROR, pending.extracted)
        reason = _reason_from_reply(pending, reply, budget)
    return _verdict(pending, reason, on_timeout)


def verify_batch(completions: Sequence[str], golds: Sequence[str], *,
                 answer_format: str = "boxed", timeout: float = 1.0, on_timeout: str = "zero",
                 wall_timeout: float | None = None,
                 max_completion_chars: int = MAX_COMPLETION_CHARS,
                 questions: Sequence[str | None] | None = None) -> list[MathVerdict]:
    """`verify_math` for many (completion, gold[, question]) triples, with the same verdicts.

    Answers are read and the fast path runs here; the pairs left for the symbolic path (each
    distinct pair once) go to the workers in one request per worker, so a batch pays the
    inter-process cost once instead of once per completion.
    """
    if isinstance(completions, str) or isinstance(golds, str):
        raise TypeError("verify_batch takes a sequence of completions and a sequence of golds "
                        "(use verify_math for one pair)")
    if len(completions) != len(golds):
        raise ValueError(f"verify_batch needs one gold per completion: got {len(completions)} "
                         f"completions and {len(golds)} golds")
    if questions is None:
        questions = [None] * len(golds)
    elif isinstance(questions, str) or len(questions) != len(golds):
        raise ValueError("verify_batch needs one question (or None) per completion, or "
                         "questions=None")
    _check_options(answer_format, timeout, on_timeout, wall_timeout)
    read = [_read(c, g, answer_format, max_completion_chars, q)
            for c, g, q in zip(completions, golds, questions)]
    reasons: dict[tuple[str, tuple[str, ...]], str | None] = {}
    for item in read:
        if isinstance(item, _Pending) and (item.gold, item.answers) not in reasons:
            reasons[(item.gold, item.answers)] = _known_reason(item, timeout)
    todo = [key for key, reason in reasons.items() if reason is None]
    if todo:
        budgets = [timeout] * len(todo)
        try:
            replies = deadline.pool().call_many(
                [{"gold": g, "answers": list(a)} for g, a in todo], timeout, wall_timeout)
            again = [i for i, reply in enumerate(replies) if _over_budget(reply)]
            if again:  # once more at twice the budget (see `RETRY_FACTOR`)
                retried = deadline.pool().call_many(
                    [{"gold": todo[i][0], "answers": list(todo[i][1])} for i in again],
                    timeout * RETRY_FACTOR, wall_timeout)
                for i, reply in zip(again, retried):
                    replies[i], budgets[i] = reply, timeout * RETRY_FACTOR
        except WorkerError as failure:
            log.warning("math verifier worker failed: %s", failure)
            replies = [{"error": str(failure)}] * len(todo)
        for (gold, answers), reply, budget in zip(todo, replies, budgets):
            reasons[(gold, answers)] = _reason_from_reply(_Pending(gold, answers, ""), reply,
                                                          budget)
    return [item if isinstance(item, MathVerdict)
            else _verdict(item, reasons[(item.gold, item.answers)], on_timeout) for item in read]


def clear_caches() -> None:
    """Forget cached verdicts, parsed golds and answers here and in the workers (for fair
    benchmarks)."""
    parse_leaf.cache_clear()
    parse_algebra.cache_clear()
    gold_shape.cache_clear()
    _checked_gold.cache_clear()
    _text_gold_problem.cache_clear()
    cache.verdicts.clear()
    if deadline._pool is not None:
        deadline._pool.broadcast({"op": "clear"})
