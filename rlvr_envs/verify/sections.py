"""Where a completion's reasoning ends and its answer section starts, for every verifier.

The answer section is what follows the **last** `</think>` (as the Qwen3 and DeepSeek-R1 chat
templates cut it); the reasoning is everything before it, after the first `<think>`. A
completion that opens `<think>` and never closes it has no answer section; one without think
tags is all answer; a `</think>` without `<think>` (the chat template opened the block in the
prompt) closes the reasoning that precedes it. Math answers and code are both read from the
answer section only: an answer or a program left in the reasoning is not an answer.
"""

from __future__ import annotations

from dataclasses import dataclass

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
ANSWER_OPEN, ANSWER_CLOSE = "<answer>", "</answer>"


@dataclass(frozen=True)
class Sections:
    """A completion cut into its reasoning and its answer section (empty when the think block
    never closes)."""

    reasoning: str
    answer: str
    has_think_block: bool
    closed: bool = True


def split_reasoning(completion: str) -> Sections:
    """The reasoning (first `<think>` to last `</think>`) and the answer section after it."""
    close = completion.rfind(THINK_CLOSE)
    start = completion.find(THINK_OPEN)
    if close >= 0:
        begin = start + len(THINK_OPEN) if 0 <= start < close else 0
        return Sections(completion[begin:close], completion[close + len(THINK_CLOSE):], True)
    if start >= 0:
        return Sections(completion[start + len(THINK_OPEN):], "", True, closed=False)
    return Sections("", completion, False)
