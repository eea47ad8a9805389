"""Math answer verification (interim: boxed / <answer> extraction + math-verify comparison).

Interface kept by the full verifier: `verify_math(completion, gold, answer_format=, timeout=)`
returns a `MathVerdict`; `check_gold(gold)` raises ValueError for a gold that cannot be scored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from math_verify import parse, verify


@dataclass(frozen=True)
class MathVerdict:
    correct: bool
    reason: str
    extracted: str | None = None


def _last_boxed(text: str) -> str | None:
    start = text.rfind("\\boxed{")
    if start < 0:
        return None
    depth, i = 0, start + len("\\boxed")
    for j in range(i, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return text[i + 1 : j]
    return None


def extract_answer(completion: str, answer_format: str = "boxed") -> str | None:
    if "</think>" in completion:
        completion = completion.rsplit("</think>", 1)[1]
    if answer_format == "r1":
        found = re.findall(r"<answer>(.*?)</answer>", completion, re.S)
        return found[-1].strip() if found else None
    return _last_boxed(completion)


def check_gold(gold: str) -> None:
    if not parse(f"${gold}$", parsing_timeout=None):
        raise ValueError(f"gold answer {gold!r} does not parse")


def verify_math(completion: str, gold: str, *, answer_format: str = "boxed",
                timeout: float = 1.0) -> MathVerdict:
    extracted = extract_answer(completion, answer_format)
    if extracted is None:
        return MathVerdict(False, "no_answer")
    ok = verify(parse(f"${gold}$", parsing_timeout=None), parse(f"${extracted}$", parsing_timeout=None),
                timeout_seconds=None)
    return MathVerdict(ok, "correct" if ok else "mismatch", extracted)
