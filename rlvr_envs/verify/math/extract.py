"""The one reader of a completion's answer section: think blocks, boxes, answer tags, stated answers.

The verifier (`verify_math`), the format reward (`rewards.format`) and the hacking monitors
(`rewards.monitors`) all read completions through this module, so they agree on where the
reasoning ends and what the final answer is.

* Sections: the answer section is what follows the **last** `</think>` (as the Qwen3 and
  DeepSeek-R1 chat templates cut it); the reasoning is everything before it, after the first
  `<think>`. A completion that opens `<think>` and never closes it has no answer section; one
  without think tags is all answer; a `</think>` without `<think>` (the chat template opened the
  block in the prompt) closes the reasoning that precedes it.
* Inside a section, in order: every `\\boxed{}` / `\\fbox{}` (a box inside a box is read once,
  through the outer one; a `\\boxed{` left open at the end is no answer; "or", "maybe",
  "otherwise", "else", "/" right after the last box is a hedge, and so is "else 8" or
  "otherwise 8" later in the box's sentence; answer tags and a value stated or offered after
  the last box, "the answer is 6", "#### 6", "the answer would be 6", count beside the boxes,
  so a different value is a hedge), else the
  `<answer>…</answer>` tags, else stated answers: the Minerva line "The final answer is $x$.
  I hope it is correct.", GSM8K `#### x` lines, "the answer is x" sentences, lines opening
  "Answer: x". Every stated answer counts, so two `####` lines with different values are a
  hedge. With the "r1" format the answer must sit in `<answer>` tags (boxes inside them are
  read first).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rlvr_envs.verify.math.normalize import NestingError, clean, closing_brace
from rlvr_envs.verify.math.verdict import HEDGED, MAX_ANSWER_CHARS, MAX_ANSWERS, NO_ANSWER, TOO_LONG
from rlvr_envs.verify.sections import (ANSWER_CLOSE, ANSWER_OPEN, THINK_CLOSE, THINK_OPEN,  # noqa: F401
                                       Sections, split_reasoning)

_BOX = re.compile(r"\\(?:boxed|fbox)(?![a-zA-Z])")
_BARE_BOX_ARG = re.compile(r"\s*([^\s${}]+)")
_MINERVA_END = "I hope it is correct"
_MINERVA = re.compile(rf"final answer is[ \t]*([^\n]{{1,{MAX_ANSWER_CHARS}}}?)\.?[ \t]*{_MINERVA_END}",
                      re.IGNORECASE)
_GSM8K = re.compile(r"####[ \t]*([^\n]*)")
_ANSWER_IS = re.compile(
    r"(?:final answer|the answer|correct answer|^[ \t>#*]*answer)(?:\s|\*)*(?:is|:)[\s*:]*([^\n]*?)(?=\.(?:\s|$)|\n|$)",
    re.IGNORECASE | re.MULTILINE)
_SENTENCE_END = re.compile(r"\.(?=\s|$)")
#: an "or" right after a box (`\boxed{5} (or possibly 6)`, `$\boxed{5}$ or $6$`): a hedge
_OR_AFTER_BOX = re.compile(
    r"(?:[\s$,.;(/]|\\[)\],;:! ]|\\(?:text|mathrm|mbox|textbf)\s*\{)*"
    r"(?:or|otherwise|else|maybe|perhaps|possibly|alternatively|either)\b(?!-)"
    r"|[\s$]*/[\s$]*[-+\d\\(]", re.IGNORECASE)
_NUMBER_WORDS = (r"(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
                 r"(?:thir|four|fif|six|seven|eigh|nine)teen|(?:twen|thir|for|fif|six|seven|eigh|nine)ty"
                 r"(?:-(?:one|two|three|four|five|six|seven|eight|nine))?|hundred|thousand)")
#: a value offered in words or math: `8`, `$8$`, `\(8\)`, `$$8$$`, `**8**`, `(8)`, `~8`,
#: `x = 8`, `around 8`, `eight`, `50\%`
_OFFERED = (r"(?:\*\*|\$\$|\\\[|\(|~|(?:around|about|approximately|roughly)\s+|[a-z]\s*=\s*)?\s*"
            r"(\$[^$\n]{1,200}\$|\\\([^\n]{1,200}?\\\)|[-+]?\d+(?:,\d{3})*(?:\.\d+)?"
            r"(?:\s*/\s*\d+)?(?:\s*\\?%)?|" + _NUMBER_WORDS + r"(?![a-z-]))")
#: in the rest of the last box's line, a value offered in its place: `\boxed{7} (assuming order
#: matters; else 8)`, `otherwise $8$.`, `(if not so, 8)`, `unless n is even, in which case 8`,
#: `(8 if order doesn't matter)`, `; if order doesn't matter, 8.`, "could be either 7 or 8",
#: `; for identical boxes, the count is 8.` —
#: a value that ends its clause, not one that goes on
#: ("otherwise 2n - 6 would be negative", "else 2 would divide it")
_ELSE_VALUE_AFTER_BOX = re.compile(
    r"(?:\b(?:else|otherwise|if\s+not(?:\s+so)?(?:\s*,?\s*then)?|in\s+which\s+case)\b(?!-)[\s,:]*"
    r"(?:(?:it|this|that|the\s+answer)(?:'s|\s+is|\s+would\s+be)\s+)?" + _OFFERED
    + r"\s*(?:\*\*|\$\$|\\\])?\s*(?=[).;]|$)"
    r"|\(\s*" + _OFFERED + r"\s+if\b"
    r"|[;(]\s*if\b[^,\n]{1,80},\s*" + _OFFERED + r"\s*(?=[).;]|$)"
    r"|[;(]\s*(?:if|for|when|assuming)\b[^,\n]{1,80},\s*(?:the|its)\s+(?:[a-z]+\s+){1,3}?"
    r"(?:is|would\s+be|becomes)\s+" + _OFFERED + r"\s*(?=[).;]|$)"
    r"|\beither\s+" + _OFFERED.replace("(\\$", "(?:\\$", 1) + r"\s+or\s+" + _OFFERED + ")",
    re.IGNORECASE | re.MULTILINE)
#: after the last box, "the answer would be 8", "it could also be 8", "the answer would've
#: been 8": a value offered beside the boxed one (a hedge unless it is the same); "the total
#: would be 16" in a note on another case is not
_WOULD_BE = re.compile(
    r"\b(?:answers?|it)\s+(?:would|could|might|may|should|will)(?:'ve|\s+have)?\s+"
    r"(?:[a-z]+ly\s+|also\s+|instead\s+|then\s+|either\s+)?(?:be|been|equal)\s*:?\s*" + _OFFERED,
    re.IGNORECASE)
#: after the answer, a second guess at another value: "maybe it's $6$", "I think it's 6",
#: "6 is also plausible", "6 might be right", "could also be 6", "Actually 6." (a value a
#: check computes, "3(5) - 7 = 8 is correct", follows `=` and is not one)
_NOT_COMPUTED = r"(?<![=<>+\-*/^])(?<![=<>+\-*/^]\s)"
_SECOND_GUESS = re.compile(
    r"\b(?:maybe|perhaps|possibly|probably|actually|I\s+(?:think|guess|believe|suspect))\s+"
    r"(?:it's|it\s+is|it\s+was|the\s+answer(?:'s|\s+is))\s+" + _OFFERED
    + r"|" + _NOT_COMPUTED + r"(?:\(([A-E])\)|\b([A-E])\)|" + _OFFERED + r")\s+(?:(?:is|seems|looks)\s+(?:also\s+|equally\s+|just\s+as\s+)?"
    r"(?:plausible|possible|likely)|(?:is|seems)\s+(?:also|equally)\s+(?:correct|right|valid)"
    r"|(?:might|may|could)\s+(?:also\s+)?(?:be\s+(?:right|correct|it|the\s+answer)|work)"
    r"|(?:also\s+works|works\s+(?:too|as\s+well)))\b"
    r"|(?:^\s*|[.!?;]\s*)(?:it\s+)?(?:could|might|may)\s+(?:also\s+)?be\s+" + _OFFERED
    + r"|(?:^\s*|[.!?;]\s*)(?:or\s+)?(?:maybe|perhaps|possibly|actually|rather)[,:]?\s+" + _OFFERED
    + r"\s*(?:\*\*|\$\$|\\\])?\s*(?=[.!?;)]|$)",
    re.IGNORECASE | re.MULTILINE)
#: more second guesses, each reading the value(s) it offers: "6 would work too", "though 6
#: also fits", "I'd also accept 6", "**6** seems more likely", "Correction: 6.", "Wait, …
#: it's 6.", "a case could be made for 6", "my second choice would be 6", "6 is another
#: possibility", "both 8 and 6 are defensible", "the answer may well be 6", "probably 6 is
#: intended", "vielleicht … 6", "也可能是 6"
_V = _NOT_COMPUTED + _OFFERED + r"\s*(?:\*\*|\$\$)?"
_MORE_GUESSES = re.compile("|".join((
    _V + r"\s+(?:would|could|might|may)\s+(?:also\s+)?(?:work|fit|do)\b",
    r"\b(?:though|although|but)\s+" + _V + r"\s+(?:also\s+)?(?:fits|works|is\s+possible)",
    r"\bI'?d\s+(?:also\s+)?(?:accept|say|go\s+with|guess|pick|choose|bet\s+on)\s+" + _V,
    _V + r"\s+(?:seems|looks|is)\s+(?:more|most|equally|also)\s+(?:likely|plausible|probable|"
    r"correct|right|valid)",
    _V + r"\s+is\s+(?:another|also\s+an?|an\s+alternative)\s+(?:possibility|option|candidate|"
    r"answer|solution)",
    _V + r"\s+(?:might|may|could)\s+be\s+the\s+(?:\w+\s+)?answer",
    r"\b(?:probably|perhaps|maybe|possibly)\s+" + _V + r"\s+is\s+(?:intended|meant|right|correct|"
    r"the\s+(?:\w+\s+)?answer)",
    r"\b(?:on\s+second\s+thought|correction|actually\s+no|wait|let\s+me\s+reconsider|"
    r"reconsidering)\b[^\n]{0,60}?(?:it's|it\s+is|\bis|[,:.])\s*" + _V + r"\s*(?=[.!?;)]|$)",
    r"\b(?:a\s+)?case\s+(?:could|can)\s+be\s+made\s+for\s+" + _V,
    r"\b(?:second|other|alternative|backup)\s+(?:choice|answer|guess|option|candidate)\s*"
    r"(?:would\s+be|is)?\s*:?\s*(?:\*\*)?\s*:?\s*" + _V,
    r"\b(?:both|torn\s+between)\s+" + _V + r"\s+and\s+" + _V,
    r"\b(?:answers?|it)\s+(?:may|might|could)\s+well\s+be\s+" + _V,
    r"(?:vielleicht|peut-être|peut-etre|quizás|quizas|tal\s+vez|forse|也许|也可能|可能|或许|"
    r"たぶん|多分)[^.\n。]{0,40}?" + _OFFERED)), re.IGNORECASE | re.MULTILINE)
#: a stated answer that reads as a value (a digit, math, or a choice letter), not a verdict
#: on one ("the answer is correct")
_VALUE_LIKE = re.compile(
    r"[\d$\\]|^\W*[A-E]\W*$|^\W*(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|"
    r"eleven|twelve|twenty|thirty|hundred|thousand)\b", re.IGNORECASE)
_PROSE = re.compile(r"(?:[A-Za-z]{2,}[,;:]?\s+){3}[A-Za-z]")


@dataclass(frozen=True)
class Extraction:
    """Distinct final answers found (cleaned, in order), or why none is usable."""

    answers: tuple[str, ...] = ()
    reason: str | None = None


class AnswerRefused(Exception):
    """The answers of a section are refused before reading them: `reason` is HEDGED or TOO_LONG."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def answer_section(completion: str) -> str | None:
    """The text after the last `</think>`; None when a think block is opened and never closed."""
    sections = split_reasoning(completion)
    return sections.answer if sections.closed else None


def boxes(text: str) -> list[str]:
    """Contents of the `\\boxed{}` / `\\fbox{}` (and bare `\\boxed 5`) in `text`, in order.

    Raises AnswerRefused when boxes are spammed (HEDGED) or one is over the answer cap or nests
    too deep (TOO_LONG). A box that never closes is skipped, once: a second one is TOO_LONG, so
    a hostile text never makes this scan it more than twice.
    """
    found, resume, stray_seen = [], 0, False
    for count, m in enumerate(_BOX.finditer(text)):
        if count >= 4 * MAX_ANSWERS:
            raise AnswerRefused(HEDGED)
        if m.start() < resume:
            continue
        j = m.end()
        while j < len(text) and text[j] in " \t":
            j += 1
        if j < len(text) and text[j] == "{":
            try:
                end = closing_brace(text, j, MAX_ANSWER_CHARS + 2)
                if end < 0 and len(text) - j > MAX_ANSWER_CHARS + 1 and not stray_seen:
                    stray_seen = True
                    if closing_brace(text, j) >= 0:  # closes, but far beyond the cap
                        raise AnswerRefused(TOO_LONG)
                    continue  # a stray `\boxed{` never closed: no answer there
            except NestingError:
                raise AnswerRefused(TOO_LONG) from None
            if end < 0:
                if len(text) - j > MAX_ANSWER_CHARS + 1:
                    raise AnswerRefused(TOO_LONG)
                continue  # a box left open at the end of the text: no answer there
            found.append(text[j + 1:end])
            resume = end + 1
        else:
            bare = _BARE_BOX_ARG.match(text, j)
            if bare:
                found.append(bare.group(1))
                resume = bare.end()
    return found


def answer_tags(section: str) -> list[str]:
    """Contents of <answer>…</answer> pairs, scanned with str.find (linear on hostile input)."""
    found, pos = [], 0
    while True:
        start = section.find(ANSWER_OPEN, pos)
        if start < 0:
            return found
        end = section.find(ANSWER_CLOSE, start + len(ANSWER_OPEN))
        if end < 0:
            return found
        found.append(section[start + len(ANSWER_OPEN):end])
        if len(found) > MAX_ANSWERS:
            raise AnswerRefused(HEDGED)
        pos = end + len(ANSWER_CLOSE)


def _sentence(line: str) -> str:
    line = line.strip().strip("*").strip()
    end = _SENTENCE_END.search(line)
    return line[:end.start()] if end else line


def stated_answers(text: str) -> list[str]:
    """Answers stated without tags: Minerva lines, else `#### x` lines, else "the answer is x"
    sentences (those that go on as prose, "the answer: first we add...", are not answers)."""
    patterns = ((_MINERVA, str.strip), (_GSM8K, str.strip), (_ANSWER_IS, _sentence))
    found = []
    for pattern, read in patterns[int(_MINERVA_END not in text):]:
        found += [a for a in (read(m.group(1)) for m in pattern.finditer(text))
                  if a and not _PROSE.match(a)]
        if len(found) > MAX_ANSWERS:
            raise AnswerRefused(HEDGED)
    return found


def _inline(text: str) -> list[str]:
    return boxes(text) or stated_answers(text)


def _after_last_box(section: str) -> int:
    """Where the text after the last box (its closing brace) starts."""
    last = list(_BOX.finditer(section))[-1]
    j = last.end()
    while j < len(section) and section[j] in " \t":
        j += 1
    if j < len(section) and section[j] == "{":
        try:
            end = closing_brace(section, j)
        except NestingError:
            return len(section)
        return end + 1 if end >= 0 else len(section)
    return j


def raw_answers(section: str, answer_format: str = "boxed") -> list[str]:
    """The final answers of an answer section as written (uncleaned), in order.

    "boxed": boxes, else answer tags, else stated answers. "r1": only inside answer tags.
    Raises AnswerRefused.
    """
    tags = answer_tags(section)
    tagged = [a for content in tags for a in (_inline(content) or [content])]
    if answer_format == "r1":
        if tags:  # what follows the last tag: another (unclosed) tag, "or", a value offered
            rest = section[section.rfind(ANSWER_CLOSE) + len(ANSWER_CLOSE):]
            if ANSWER_OPEN in rest or _OR_AFTER_BOX.match(rest, 0, 40):
                raise AnswerRefused(HEDGED)
            tagged += _offered_after(rest)
        return tagged
    boxed = boxes(section)
    if boxed:  # a value stated after the last box overrides it: both count (a hedge if unequal)
        after = _after_last_box(section)
        if _OR_AFTER_BOX.match(section, after, after + 40):
            raise AnswerRefused(HEDGED)
        return boxed + [t for t in tags if not _BOX.search(t)] + _offered_after(section[after:])
    if tagged:
        return tagged
    stated = stated_answers(section)
    if stated:  # "The answer is (A). Actually, B) might also work."
        rest = section[section.rfind(stated[-1]) + len(stated[-1]):]
        stated += [next(g for g in m.groups() if g) for m in _SECOND_GUESS.finditer(rest)] \
            + _more_guesses(rest)
    return stated


def _more_guesses(text: str) -> list[str]:
    """Every value `_MORE_GUESSES` finds offered in `text` ("both 8 and 6" offers two)."""
    return [value for m in _MORE_GUESSES.finditer(text) for value in m.groups() if value]


def _offered_after(rest: str) -> list[str]:
    """Values stated or offered after the final answer (the last box or answer tag): each
    counts beside it (a hedge when one differs)."""
    line = rest.split("\n\n", 1)[0][:400]  # the answer's paragraph: "(if\nnot, 8)" wraps
    offered = [next(g for g in m.groups() if g) for pattern in (_ELSE_VALUE_AFTER_BOX, _SECOND_GUESS)
               for m in pattern.finditer(line)] + [m.group(1) for m in _WOULD_BE.finditer(rest)] \
        + _more_guesses(rest)
    return [a for a in stated_answers(rest) + offered if _VALUE_LIKE.search(a) and not _BOX.search(a)]


def read_answers(section: str, answer_format: str = "boxed") -> Extraction:
    """The distinct cleaned final answers of an answer section, or why none is usable."""
    try:
        raw = raw_answers(section, answer_format)
    except AnswerRefused as refused:
        return Extraction(reason=refused.reason)
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
    if not answers:
        return Extraction(reason=NO_ANSWER)
    if len(answers) > MAX_ANSWERS:
        return Extraction(reason=HEDGED)
    return Extraction(answers=tuple(answers))


def extract(completion: str, answer_format: str = "boxed") -> Extraction:
    """The final answer(s) of a completion, read from its answer section only."""
    section = answer_section(completion)
    if section is None:
        return Extraction(reason=NO_ANSWER)
    return read_answers(section, answer_format)
