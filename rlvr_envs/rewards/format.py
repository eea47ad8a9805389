"""DeepSeek-R1 format reward: one `<think>…</think>` block first, then exactly one answer.

Strict by default: tags balanced and in order, no nesting, nothing after the answer that looks
like a second one. With a thinking mode (Qwen3 style) the think block's content is checked too:
`on` wants reasoning in it, `off` wants it empty, `hybrid` accepts either.
The sections and the boxes are read by `rlvr_envs.verify.math.extract`, the verifier's own reader
(the answer section follows the last `</think>`; `\\fbox` counts as a box; a box inside a box is
one answer), so the format reward and the verifier never disagree on where the answer is.
"""

from __future__ import annotations

from dataclasses import dataclass

from rlvr_envs.core.prompts import THINKING_MODES
from rlvr_envs.verify.math.extract import (
    ANSWER_CLOSE,
    ANSWER_OPEN,
    THINK_CLOSE,
    THINK_OPEN,
    AnswerRefused,
    Sections,
    boxes,
    split_reasoning,
)


@dataclass(frozen=True)
class FormatVerdict:
    """ok: the completion keeps the format; reason: "ok" or what broke it."""

    ok: bool
    reason: str
    sections: Sections

    @property
    def reward(self) -> float:
        return 1.0 if self.ok else 0.0


def check_thinking_mode(mode: str | None) -> str | None:
    if mode is not None and mode not in THINKING_MODES:
        raise ValueError(f"thinking must be one of {list(THINKING_MODES)} or None, got {mode!r}")
    return mode


def boxed_spans(text: str) -> list[str] | None:
    """The boxes of `text` as the verifier reads them; None when it refuses them (box spam,
    an over-long or over-nested box)."""
    try:
        return boxes(text)
    except AnswerRefused:
        return None


def _check_think(completion: str, mode: str) -> tuple[str | None, Sections]:
    sections = split_reasoning(completion)
    opens, closes = completion.count(THINK_OPEN), completion.count(THINK_CLOSE)
    if opens == 0 and closes == 0:
        return "missing_think", sections
    if opens != closes:
        return "think_tags_unbalanced", sections
    if completion.find(THINK_CLOSE) < completion.find(THINK_OPEN):
        return "think_tags_out_of_order", sections
    if opens > 1:
        first_close = completion.find(THINK_CLOSE)
        nested = THINK_OPEN in completion[completion.find(THINK_OPEN) + 1:first_close]
        return ("nested_think" if nested else "several_think_blocks"), sections
    if completion[:completion.find(THINK_OPEN)].strip():
        return "think_not_first", sections
    if mode == "off" and sections.reasoning.strip():
        return "reasoning_in_no_think", sections
    if mode == "on" and not sections.reasoning.strip():
        return "empty_reasoning", sections
    return None, sections


def _check_answer(answer: str, answer_format: str) -> str | None:
    if answer_format == "r1":
        opens, closes = answer.count(ANSWER_OPEN), answer.count(ANSWER_CLOSE)
        if opens == 0 and closes == 0:
            return "missing_answer"
        if opens != 1 or closes != 1:
            return "several_answers" if opens == closes else "answer_tags_unbalanced"
        head, _, rest = answer.partition(ANSWER_OPEN)
        body, _, tail = rest.partition(ANSWER_CLOSE)
        if ANSWER_CLOSE in head:
            return "answer_tags_out_of_order"
        if head.strip():
            return "text_before_answer"
        if not body.strip():
            return "empty_answer"
        if boxed_spans(tail) != []:
            return "several_answers"
        return None
    if ANSWER_OPEN in answer or ANSWER_CLOSE in answer:
        return "unexpected_answer_tags"
    spans = boxed_spans(answer)
    if spans is None:
        return "several_answers"
    if not spans:
        return "missing_answer"
    if len(spans) > 1:
        return "several_answers"
    if not spans[0].strip():
        return "empty_answer"
    return None


def check_format(completion: str, answer_format: str = "r1", thinking: str | None = "on"
                 ) -> FormatVerdict:
    """The R1 format verdict for one completion.

    answer_format: "r1" (`<answer>…</answer>`) or "boxed" (`\\boxed{…}`) after the think block.
    thinking: "on" (reasoning required in the think block), "off" (the think block must be
    empty), "hybrid" (either), None (same as "on": the R1 recipe).
    """
    if answer_format not in ("r1", "boxed"):
        raise ValueError(f"answer_format must be 'r1' or 'boxed', got {answer_format!r}")
    mode = check_thinking_mode(thinking) or "on"
    if not isinstance(completion, str):
        raise TypeError(f"a completion must be a str, got {type(completion).__name__}")
    problem, sections = _check_think(completion, mode)
    if problem is None:
        problem = _check_answer(sections.answer, answer_format)
    return FormatVerdict(problem is None, problem or "ok", sections)


def format_reward(completion: str, answer_format: str = "r1", thinking: str | None = "on") -> float:
    """1.0 when the completion keeps the R1 format (see `check_format`), else 0.0."""
    return check_format(completion, answer_format, thinking).reward


def format_rewards(completions: list[str], answer_format: str = "r1",
                   thinking: str | None = "on") -> list[float]:
    return [format_reward(c, answer_format, thinking) for c in completions]
