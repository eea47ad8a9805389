"""verify_math and check_gold: extraction, caps, hedge rules, fast path, then the deadline path."""

from __future__ import annotations

import logging
import time
import unicodedata
from functools import lru_cache

from rlvr_envs.core.prompts import check_answer_format
from rlvr_envs.verify.math import deadline
from rlvr_envs.verify.math.compare import (
    NeedsSymbolic,
    Shape,
    fast_equal,
    gold_shape,
    judge,
    restates_question,
)
from rlvr_envs.verify.math.deadline import WorkerError
from rlvr_envs.verify.math.extract import extract
from rlvr_envs.verify.math.fast import parse_leaf, qualifier_words
from rlvr_envs.verify.math.normalize import NestingError, balanced, clean, nesting_depth
from rlvr_envs.verify.math.notation import canonical
from rlvr_envs.verify.math.verdict import (
    CORRECT,
    ERROR,
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
        reply = deadline.pool().call({"op": "parse", "text": part},
                                     time.monotonic() + GOLD_CHECK_TIMEOUT)
        if reply is None:
            raise ValueError(f"gold answer {gold!r}: parsing {part!r} took over {GOLD_CHECK_TIMEOUT} s")
        if not reply.get("parses"):
            raise ValueError(f"gold answer {gold!r}: {part!r} does not parse as a math answer "
                             "(expected a number, expression, interval, set, tuple, matrix, "
                             "relation, letter or short text)")
    return shape


def check_gold(gold: str) -> None:
    """Raise ValueError when `gold` cannot be parsed and scored by verify_math."""
    _checked_gold(gold)


def _has_tricks(text: str) -> bool:
    return any(unicodedata.category(ch) in _TRICK_CATEGORIES
               for ch in unicodedata.normalize("NFC", text) if not ch.isascii())


def verify_math(completion: str, gold: str, *, answer_format: str = "boxed",
                timeout: float = 1.0,
                max_completion_chars: int = MAX_COMPLETION_CHARS,
                question: str | None = None) -> MathVerdict:
    """Whether the final answer of `completion` equals `gold`; returns within `timeout` s.

    Hostile completions get correct=False with the reason; a bad gold raises ValueError.
    With `question` (the problem text), an answer that copies one of its expressions instead
    of evaluating it (`12 + 7 \\times 3` for "Compute $12 + 7 \\times 3$") is a mismatch.
    """
    started = time.monotonic()
    if not isinstance(completion, str):
        raise TypeError(f"completion must be a str, got {type(completion).__name__}")
    check_answer_format(answer_format)
    if not timeout > 0:
        raise ValueError(f"timeout must be > 0 seconds, got {timeout!r}")
    problem = _gold_problem(gold)
    if problem:
        raise ValueError(problem)
    if len(completion) > max_completion_chars:
        return MathVerdict(False, TOO_LONG)
    found = extract(completion, answer_format)
    if found.reason:
        return MathVerdict(False, found.reason)
    extracted = ", ".join(found.answers)
    if any(nesting_depth(a) > MAX_NESTING for a in found.answers):
        return MathVerdict(False, TOO_LONG, extracted[:MAX_ANSWER_CHARS])
    if _has_tricks(extracted) or not all(balanced(a) for a in found.answers):
        return MathVerdict(False, MISMATCH, extracted)
    if qualifier_words(extracted) - qualifier_words(gold):  # "42 is correct", "about 42"
        return MathVerdict(False, MISMATCH, extracted)
    if question is not None:
        if not isinstance(question, str):
            raise TypeError(f"question must be a str or None, got {type(question).__name__}")
        if any(restates_question(a, question, gold) for a in found.answers):
            return MathVerdict(False, MISMATCH, extracted)
    shape = gold_shape(gold)
    answers = tuple(canonical(a) for a in found.answers)
    try:
        reason = judge(shape, answers, fast_equal)
    except Exception as exc:  # noqa: BLE001 - NeedsSymbolic, or a fast-path bug: ask the workers
        if not isinstance(exc, NeedsSymbolic):
            log.warning("math verifier fast path failed on %r: %r", extracted[:200], exc)
        try:
            reply = deadline.pool().call({"op": "judge", "gold": gold, "answers": answers},
                                         started + timeout)
        except WorkerError as failure:
            log.warning("math verifier worker failed: %s", failure)
            return MathVerdict(False, ERROR, extracted)
        if reply is None:
            return MathVerdict(False, TIMEOUT, extracted)
        reason = reply.get("reason")
        if reason not in MATH_REASONS:
            log.warning("math verifier could not compare with gold %r: %s", gold, reply.get("error"))
            return MathVerdict(False, ERROR, extracted)
    return MathVerdict(reason == CORRECT, reason, extracted)


def clear_caches() -> None:
    """Forget parsed golds and answers here and in the workers (for fair benchmarks)."""
    parse_leaf.cache_clear()
    gold_shape.cache_clear()
    _checked_gold.cache_clear()
    _text_gold_problem.cache_clear()
    if deadline._pool is not None:
        deadline._pool.broadcast({"op": "clear"})
