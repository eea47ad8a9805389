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


# -- thinking modes (Qwen3 style): the system prompt states the mode; `/think` and `/no_think`
#    are Qwen3's soft switches, placed at the end of a system or user message ---------------------

THINKING_MODES = ("on", "off", "hybrid")

_FINAL_ANSWER = {
    "boxed": "give only the final answer inside \\boxed{}, e.g. \\boxed{42}",
    "r1": "give only the final answer inside <answer> </answer> tags, e.g. <answer>42</answer>",
}

_THINKING_INSTRUCTIONS = {
    "on": ("Solve the problem. First reason step by step inside <think> </think> tags, then "
           "after </think> {answer}. /think"),
    "off": ("Solve the problem without reasoning: write an empty <think></think> block, then "
            "{answer}. /no_think"),
    "hybrid": ("Solve the problem. The user's message ends with /think or /no_think. With "
               "/think, reason step by step inside <think> </think> tags; with /no_think, write "
               "an empty <think></think> block. Then, after </think>, {answer}."),
}


def thinking_system_prompt(answer_format: str, thinking: str) -> str:
    """The system prompt of a single-answer env run in a thinking mode."""
    if thinking not in THINKING_MODES:
        raise ValueError(f"thinking must be one of {list(THINKING_MODES)}, got {thinking!r}")
    answer = _FINAL_ANSWER[check_answer_format(answer_format)]
    return _THINKING_INSTRUCTIONS[thinking].format(answer=answer)
