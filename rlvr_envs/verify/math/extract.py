"""Where the final answer of a completion is: the answer section, then the answer inside it.

The answer section is what follows the last `</think>` (a completion that opens `<think>`
and never closes it has none). Inside it, in order: every `\\boxed{}` / `\\fbox{}`, else the
`<answer>…</answer>` tags, else a GSM8K `#### x` line, else "the answer is x". With the
"r1" format the answer must sit in `<answer>` tags (boxes inside them are read first).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rlvr_envs.verify.math.normalize import NestingError, clean, closing_brace
from rlvr_envs.verify.math.verdict import HEDGED, MAX_ANSWER_CHARS, MAX_ANSWERS, NO_ANSWER, TOO_LONG

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
_BOX = re.compile(r"\\(?:boxed|fbox)(?![a-zA-Z])")
_BARE_BOX_ARG = re.compile(r"\s*([^\s${}]+)")
_OPEN_TAG, _CLOSE_TAG = "<answer>", "</answer>"
_GSM8K = re.compile(r"####[ \t]*([^\n]*)")
_ANSWER_IS = re.compile(
    r"(?:final answer|the answer)(?:\s|\*)*(?:is|:)[\s*:]*([^\n]*)", re.IGNORECASE)
_SENTENCE_END = re.compile(r"\.(?=\s|$)")


@dataclass(frozen=True)
class Extraction:
    """Distinct final answers found (cleaned, in order), or why none is usable."""

    answers: tuple[str, ...] = ()
    reason: str | None = None


class _Refused(Exception):
    def __init__(self, reason: str):
        self.reason = reason


def answer_section(completion: str) -> str | None:
    close = completion.rfind(THINK_CLOSE)
    if close >= 0:
        return completion[close + len(THINK_CLOSE):]
    if THINK_OPEN in completion:
        return None
    return completion


def _boxes(text: str) -> list[str]:
    found, resume = [], 0
    matches = _BOX.finditer(text)
    for count, m in enumerate(matches):
        if count >= 4 * MAX_ANSWERS:
            raise _Refused(HEDGED)
        if m.start() < resume:
            continue
        j = m.end()
        while j < len(text) and text[j] in " \t":
            j += 1
        if j < len(text) and text[j] == "{":
            try:
                end = closing_brace(text, j, MAX_ANSWER_CHARS + 2)
            except NestingError:
                raise _Refused(TOO_LONG) from None
            if end < 0:
                if len(text) - j > MAX_ANSWER_CHARS + 1:
                    raise _Refused(TOO_LONG)
                continue  # a box left open at the end of the text: no answer there
            found.append(text[j + 1:end])
            resume = end + 1
        else:
            bare = _BARE_BOX_ARG.match(text, j)
            if bare:
                found.append(bare.group(1))
                resume = bare.end()
    return found


def _sentence(line: str) -> str:
    line = line.strip().strip("*").strip()
    end = _SENTENCE_END.search(line)
    return line[:end.start()] if end else line


def _inline(text: str) -> list[str]:
    """Answers stated without tags: boxes, else `#### x`, else "the answer is x"."""
    boxes = _boxes(text)
    if boxes:
        return boxes
    gsm = _GSM8K.findall(text)
    if gsm:
        return [gsm[-1]]
    stated = _ANSWER_IS.findall(text)
    if stated:
        return [_sentence(stated[-1])]
    return []


def _answer_tags(section: str) -> list[str]:
    """Contents of <answer>…</answer> pairs, scanned with str.find (linear on hostile input)."""
    found, pos = [], 0
    while True:
        start = section.find(_OPEN_TAG, pos)
        if start < 0:
            return found
        end = section.find(_CLOSE_TAG, start + len(_OPEN_TAG))
        if end < 0:
            return found
        found.append(section[start + len(_OPEN_TAG):end])
        if len(found) > MAX_ANSWERS:
            raise _Refused(HEDGED)
        pos = end + len(_CLOSE_TAG)


def _tagged(section: str) -> list[str] | None:
    tags = _answer_tags(section)
    if not tags:
        return None
    found = []
    for content in tags:
        found.extend(_inline(content) or [content])
    return found


def extract(completion: str, answer_format: str = "boxed") -> Extraction:
    """The final answer(s) of a completion, read from its answer section only."""
    section = answer_section(completion)
    if section is None:
        return Extraction(reason=NO_ANSWER)
    try:
        if answer_format == "r1":
            raw = _tagged(section) or []
        else:
            raw = _boxes(section) or _tagged(section) or _inline(section)
        answers, seen = [], set()
        for item in raw:
            if len(item) > MAX_ANSWER_CHARS:
                return Extraction(reason=TOO_LONG)
            try:
                text = clean(item)
            except NestingError:
                return Extraction(reason=TOO_LONG)
            key = text.replace(" ", "")
            if key and key not in seen:
                seen.add(key)
                answers.append(text)
    except _Refused as refused:
        return Extraction(reason=refused.reason)
    if not answers:
        return Extraction(reason=NO_ANSWER)
    if len(answers) > MAX_ANSWERS:
        return Extraction(reason=HEDGED)
    return Extraction(answers=tuple(answers))
