"""System prompts that state the answer format an env expects."""

from __future__ import annotations

ANSWER_FORMATS = ("boxed", "r1")

_FORMAT_INSTRUCTIONS = {
    "boxed": ("Solve the problem. Reason step by step, then give only the final answer "
              "inside \\boxed{}, e.g. \\boxed{42}."),
    "r1": ("Solve the problem. First think inside <think> </think> tags, then give only the "
           "final answer inside <answer> </answer> tags, e.g. "
           "<think>reasoning here</think><answer>42</answer>."),
}


def check_answer_format(answer_format: str) -> str:
    if answer_format not in ANSWER_FORMATS:
        raise ValueError(f"answer_format must be one of {list(ANSWER_FORMATS)}, got {answer_format!r}")
    return answer_format


def answer_system_prompt(answer_format: str) -> str:
    """The system prompt of a single-answer env (math) for the given format."""
    return _FORMAT_INSTRUCTIONS[check_answer_format(answer_format)]


def render_plain(messages: list[dict[str, str]]) -> str:
    """The chat as one plain string (the observation for models without a chat template)."""
    return "\n\n".join(m["content"] for m in messages)
