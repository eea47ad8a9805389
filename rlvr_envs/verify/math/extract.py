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
  through the outer one; a `\\boxed{` left open at the end is no answer; "/" right after the
  last box is a hedge, and so is "or", "maybe", "otherwise", "else" right after it with no
  value after the word, and "else 8" or "otherwise 8" later in the box's sentence; a hedge
  word after the final answer ("Alternatively", "Or maybe") is judged by the values offered
  from it on, so the same value restated pays; answer tags and a value stated or offered after
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
#: "or", "maybe", "/" right after a box (`\boxed{5} (or possibly 6)`, `$\boxed{5}$ / $6$`): a
#: hedge when no value follows the word (`\boxed{5} or its negative`) or after "/"
_OR_AFTER_BOX = re.compile(
    r"(?:[\s$,.;(/\[—–-]|\\[)\],;:! ]|\\(?:text|mathrm|mbox|textbf)\s*\{)*"
    r"(?P<word>or|otherwise|else|maybe|perhaps|possibly|alternatively|either)\b(?!-)"
    r"|[\s$]*/[\s$]*[-+\d\\(]", re.IGNORECASE)
_NUMBER_WORDS = (r"(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
                 r"(?:thir|four|fif|six|seven|eigh|nine)teen|(?:twen|thir|for|fif|six|seven|eigh|nine)ty"
                 r"(?:-(?:one|two|three|four|five|six|seven|eight|nine))?|hundred|thousand)")
#: a number as a value is offered in text (`8`, `-1,000`, `2.5`, `3/4`, `50\%`); it starts at
#: the start of a run of digits and its parts are bounded, so that a long run of digits or of
#: `,000` groups is read in linear time (unbounded, a tail of 9,000 digits after the answer
#: cost half a minute)
_NUMBER_TEXT = (r"(?<![\d.])[-+]?\d{1,64}(?:,\d{3}){0,24}(?:\.\d{1,64})?(?:\s*/\s*\d{1,64})?"
                r"(?:\s*\\?%)?")
#: a value offered in words or math: `8`, `$8$`, `\(8\)`, `$$8$$`, `**8**`, `(8)`, `~8`,
#: `x = 8`, `around 8`, `eight`, `50\%`
_OFFERED = (r"(?:\*\*|\$\$|\\\[|\(|~|(?:around|about|approximately|roughly)\s+|[a-z]\s*=\s*)?\s*"
            r"(\$[^$\n]{1,200}\$|\\\([^\n]{1,200}?\\\)|" + _NUMBER_TEXT + "|" + _NUMBER_WORDS
            + r"(?![a-z-]))")
#: in the rest of the last box's line, a value offered in its place: `\boxed{7} (assuming order
#: matters; else 8)`, `otherwise $8$.`, `(if not so, 8)`, `unless n is even, in which case 8`,
#: `(8 if order doesn't matter)`, `(8 inclusive)`, `[8 if inclusive]`, `, and 8 if inclusive`, `though 8 when
#: inclusive`, `unless it is inclusive (then 8)`, `; if order doesn't matter, 8.`, "could be
#: either 7 or 8",
#: `; for identical boxes, the count is 8.` —
#: a value that ends its clause, not one that goes on
#: ("otherwise 2n - 6 would be negative", "else 2 would divide it")
_ELSE_VALUE_AFTER_BOX = re.compile(
    r"(?:\b(?:else|otherwise|if\s+not(?:\s+so)?(?:\s*,?\s*then)?|in\s+which\s+case)\b(?!-)[\s,:]*"
    r"(?:(?:it|this|that|the\s+answer)(?:'s|\s+is|\s+would\s+be)\s+)?" + _OFFERED
    + r"\s*(?:\*\*|\$\$|\\\])?\s*(?=[).;]|$)"
    r"|(?:[(\[]\s*|,\s*(?:and|but|or)\s+|\b(?:though|although|but)\s+)" + _OFFERED
    + r"\s+(?:if|when|inclusive(?:ly)?|exclusive(?:ly)?|otherwise|instead)\b"
    r"|\bunless\b[^.;\n]{1,80}?\(?\s*(?:then|in\s+which\s+case)\b[\s,:]*" + _OFFERED
    + r"|[;(]\s*if\b[^,\n]{1,80},\s*" + _OFFERED + r"\s*(?=[).;]|$)"
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
    r"\b(?:second|other|alternative|backup)\s+(?:choice|answer|guess|option|candidate)s?\s*"
    r"(?:would\s+be|is)?\s*:?\s*(?:\*\*)?\s*:?\s*" + _V,
    r"\b(?:both|torn\s+between)\s+" + _V + r"\s+and\s+" + _V,
    r"\b(?:answers?|it)\s+(?:may|might|could)\s+well\s+be\s+" + _V,
    r"(?:vielleicht|peut-être|peut-etre|quizás|quizas|tal\s+vez|forse|也许|也可能|可能|或许|"
    r"たぶん|多分)[^.\n。]{0,40}?" + _OFFERED)), re.IGNORECASE | re.MULTILINE)
#: after the final answer, the writer takes it back ("Hmm, wait, that's not right either.",
#: "Oops, this is wrong"): no answer is committed to
_RETRACTION = re.compile(
    r"\b(?:wait|hmm+|hold\s+on|oops|no)\b[^\n.!?]{0,40}?\b(?:that's|that\s+is|this\s+is|it's|"
    r"it\s+is|that\s+was|this\s+was)\s+(?:not\s+(?:right|correct)|wrong|incorrect)\b",
    re.IGNORECASE)
#: a word after the final answer that may offer another candidate ("or 8", "maybe 8",
#: "alternatively, 8") or open an explanation ("Alternatively, one can count the complement,
#: which also gives 6"): "or" where a clause starts, the others anywhere ("otherwise" and
#: "else" later in a sentence are `_ELSE_VALUE_AFTER_BOX`'s); what follows is judged by the
#: values it offers (`_hedge_offers`)
_HEDGE_WORD = re.compile(
    r"\b(?:maybe|perhaps|possibly|alternatively|vielleicht|quizás|quizas|tal\s+vez|forse)\b"
    r"|peut-[êe]tre|也许|或许|可能|或者|たぶん|多分|あるいは|возможно|может\s+быть"
    r"|(?:^|(?<=[.!?;:(,]))\s*(?:or|oder|ou|или)\b(?!-)",
    re.IGNORECASE | re.MULTILINE)
#: number words of other languages, read only where a hedge offers a value ("Vielleicht sieben")
_FOREIGN_NUMBER_WORDS = (
    r"(?:zwei|drei|vier|fünf|funf|sechs|sieben|acht|neun|zehn|zwölf|zwolf|eins|zéro|deux|trois|"
    r"quatre|cinq|sept|huit|neuf|dix|onze|douze|cero|uno|una|dos|tres|cuatro|cinco|seis|siete|"
    r"ocho|nueve|diez|doce|tre|quattro|cinque|sei|sette|otto|nove|dieci|dois|duas|três|sete|oito|"
    r"dez|ноль|один|одна|два|две|три|четыре|пять|шесть|семь|восемь|девять|десять)(?![\w'-])"
    r"|[〇零一二两三四五六七八九十百千万]+")
#: where a value stands as an answer: after a hedge word or a verb that gives a result, past
#: fillers ("or, equivalently, six", "it's B", "which gives seven", "可能是七", "maybe 7, 8"), a
#: bounded number of them (each hedge word is read in bounded time)
_ANSWER_POSITION = (
    r"(?:\b(?:or|otherwise|else|either|maybe|perhaps|possibly|alternatively|rather|instead|"
    r"is|are|was|were|be|been|it's|that's|gives?|giving|gave|yields?|yielding|gets?|getting|got|"
    r"obtains?|obtained|equals?|makes?|becomes?|vielleicht|oder|ou|quizás|quizas|forse|ist|es|"
    r"est|c'est|é)\b|也许|或许|可能|或者|是|たぶん|多分|あるいは|возможно|или|это)"
    r"(?:[\s,:;*]{1,16}(?:it's|it\s+is|it\s+was|that's|that\s+is|i\.e\.|(?:the\s+)?answer\s+"
    r"(?:is|could\s+be|might\s+be|would\s+be|may\s+be)|equivalently|written(?:\s+as)?|"
    r"expressed\s+as|as|even|just|simply|also|possibly|maybe|perhaps|rather|instead|actually|"
    r"option|choice)){0,8}[\s,:;*]{0,16}")
_WORD_OFFERED = re.compile(
    _ANSWER_POSITION + "(" + _NUMBER_TEXT + "|"
    r"one(?![\w'-])(?!\s+[a-z])|(?!one\b)" + _NUMBER_WORDS + r"(?:-ish)?(?![\w'-])|"
    + _FOREIGN_NUMBER_WORDS + r"|(?-i:\(?[A-E]\)?|[IVXLC]{2,}|[VX])(?![\w']))",
    re.IGNORECASE | re.MULTILINE)
#: a value right after a hedge word ("or 0.5", "(or possibly 6)", "or, equivalently,
#: $\frac{6}{2}$", "otherwise written 0.5")
_VALUE_AFTER_HEDGE = re.compile(
    r"(?:[\s,:;*]{1,16}(?:it's|it\s+is|that's|that\s+is|i\.e\.|(?:the\s+)?answer\s+(?:is|could\s+be|"
    r"might\s+be|would\s+be|may\s+be)|equivalently|written(?:\s+as)?|expressed\s+as|as|even|"
    r"just|simply|also|possibly|maybe|perhaps|rather|instead|actually)){0,8}[\s,:;*]{0,16}"
    r"(?:\$|\\\(|\\\[|[-+]?\d|" + _NUMBER_WORDS + r"(?![\w'-])|" + _FOREIGN_NUMBER_WORDS
    + r"|(?-i:\(?[A-E]\)?)(?![\w']))", re.IGNORECASE)
#: a hedge word followed only by a change of the answer ("Or its negative.", "Maybe twice that")
_TRANSFORM_AFTER_HEDGE = re.compile(
    r"[\s,:;]*(?:(?:its|the|their|that|this|it's|it\s+is)\s+)?(?:negative|reciprocal|opposite|"
    r"inverse|complement|double|twice|half|triple|square|cube|other|next|previous|one\s+"
    r"(?:more|less|fewer)(?:\s+than)?|off\s+by|plus|minus)\b(?:\s+(?:of\s+)?\w+)?\s*"
    r"(?=[.!?;,)]|$)",
    re.IGNORECASE | re.MULTILINE)
#: math that names a variable (`$n$`, `$x_1$`) and no value
_VARIABLE = re.compile(r"\s*\\?[A-Za-z](?:_\{?\w+\}?)?\s*")
_MATH_SEGMENT = re.compile(r"\$\$(.{1,400}?)\$\$|\$([^$\n]{1,400}?)\$|\\\((.{1,400}?)\\\)"
                           r"|\\\[(.{1,400}?)\\\]", re.DOTALL)
#: in prose, a list of numbers ("1, 2, 3, 5, 6") names no answer; a calculation ("20 - 2 =
#: 18", "10/66") is one, read by its conclusion
_PROSE_LIST = re.compile(r"(?<![\d.])[-+]?\d{1,64}(?:\.\d{1,64})?(?:,\s+[-+]?\d{1,64}(?:\.\d{1,64})?){2,}"
                         r"(?:,?\s+and\s+\d{1,64})?")
_PROSE_CALC = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:\s*(?:[-+*/×·^=]|\\cdot|\\times)\s*"
                         r"[-+]?\d+(?:\.\d+)?)+")
_PROSE_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:,\d{3})*(?:\.\d+)?(?:\s*\\?%)?")
#: a hedge followed by more text than this is refused unread (no answer needs it; it bounds
#: the work on a hostile tail)
_MAX_HEDGE_SCOPE = 10_000
#: how far after the final answer second guesses are looked for (bounds the work on a long
#: tail; a value offered later is no answer either way: only the final answer is compared)
_MAX_GUESS_SCOPE = 20_000


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
    #: some answers were only offered after the final answer as other candidates (a second
    #: guess, a hedge): a gold of several parts takes them as a hedge, not as more parts
    guessed: bool = False


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
    return _stated(text)[0]


def _stated(text: str) -> tuple[list[str], int]:
    """`stated_answers`, and where the text after the last of them starts (0 without one)."""
    patterns = ((_MINERVA, str.strip), (_GSM8K, str.strip), (_ANSWER_IS, _sentence))
    found, end = [], 0
    for pattern, read in patterns[int(_MINERVA_END not in text):]:
        for m in pattern.finditer(text):
            answer = read(m.group(1))
            if answer and not _PROSE.match(answer):
                found.append(answer)
                end = max(end, m.end())
        if len(found) > MAX_ANSWERS:
            raise AnswerRefused(HEDGED)
    return found, end


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
    """The final answers of an answer section as written (uncleaned), in order, with the
    values offered after them (`_answers_and_offers`). Raises AnswerRefused."""
    answers, offers = _answers_and_offers(section, answer_format)
    return answers + offers


def _answers_and_offers(section: str, answer_format: str) -> tuple[list[str], list[str]]:
    """The final answers of an answer section as written, and the values offered after the
    last one as other candidates (second guesses, hedges, values stated for another case).

    "boxed": boxes, else answer tags, else stated answers. "r1": only inside answer tags.
    Answer tags and values stated after the last box ("the answer is 6") are answers.
    Raises AnswerRefused.
    """
    tags = answer_tags(section)
    tagged = [a for content in tags for a in (_inline(content) or [content])]
    boxed = [] if answer_format == "r1" else boxes(section)
    if boxed:  # a value stated after the last box overrides it: both count (a hedge if unequal)
        stated, offers = _offered_after(section[_after_last_box(section):])
        return boxed + [t for t in tags if not _BOX.search(t)] + stated, offers
    if tags:
        rest = section[section.rfind(ANSWER_CLOSE) + len(ANSWER_CLOSE):]
        if ANSWER_OPEN in rest:  # another tag opened after the last one closed
            raise AnswerRefused(HEDGED)
        stated, offers = _offered_after(rest)
        return tagged + stated, offers
    if answer_format == "r1":
        return [], []
    stated, end = _stated(section)
    if not stated:
        return [], []
    # "The answer is (A). Actually, B) might also work.", "The answer is 4. But if the
    # endpoints count, it would be 6."
    return stated, _offers_after(section[end:], guesses_anywhere=True)


def _hedge_offers(rest: str) -> list[str]:
    """The values offered from the first hedge word after the final answer to the end of the
    section (math, numbers outside lists, and number words or option letters where an answer
    stands), so that a hedge is judged by its values: "Alternatively, $20 - 2 = 18$" restates
    18, "Or maybe 8" offers 8. Raises AnswerRefused(HEDGED) for "/" or a hedge word right
    after the answer with no value after it (`\\boxed{5} or its negative`), and for a hedge
    word followed only by a change of the answer ("Or its negative.")."""
    tight = _OR_AFTER_BOX.match(rest, 0, 40)
    if tight is not None:
        if tight.group("word") is None:
            raise AnswerRefused(HEDGED)
        if not re.search(r"[.!?\n]", rest[:tight.start("word")]) \
                and not _VALUE_AFTER_HEDGE.match(rest, tight.end()):
            raise AnswerRefused(HEDGED)
    first = _HEDGE_WORD.search(rest)
    if first is None and tight is None:
        return []
    start = tight.start("word") if tight is not None else first.start()
    scope = rest[start:]
    if len(scope) > _MAX_HEDGE_SCOPE:
        raise AnswerRefused(HEDGED)
    offered: dict[str, None] = {}
    answer_starts = set()  # where a value follows a hedge word: `$x$` there counts, digits or not
    for hedge in _HEDGE_WORD.finditer(scope):
        if _TRANSFORM_AFTER_HEDGE.match(scope, hedge.end()):
            raise AnswerRefused(HEDGED)
        value = _VALUE_AFTER_HEDGE.match(scope, hedge.end())
        if value is not None:
            answer_starts.add(value.end() - 1)
    for math in _MATH_SEGMENT.finditer(scope):
        value = next(g for g in math.groups() if g is not None)
        if math.start() in answer_starts or not _VARIABLE.fullmatch(value):
            offered[value] = None
    prose = _MATH_SEGMENT.sub(" ", scope)
    offered.update(dict.fromkeys(m.group(1) for m in _WORD_OFFERED.finditer(prose)))
    prose = _PROSE_LIST.sub(" ", prose)
    offered.update(dict.fromkeys(m.group() for m in _PROSE_CALC.finditer(prose)))
    offered.update(dict.fromkeys(m.group() for m in _PROSE_NUMBER.finditer(_PROSE_CALC.sub(" ", prose))))
    if len(offered) > MAX_ANSWERS:
        raise AnswerRefused(HEDGED)
    return list(offered)


def _more_guesses(text: str) -> list[str]:
    """Every value `_MORE_GUESSES` finds offered in `text` ("both 8 and 6" offers two)."""
    return [value for m in _MORE_GUESSES.finditer(text) for value in m.groups() if value]


def _offered_after(rest: str) -> tuple[list[str], list[str]]:
    """Values stated (`stated_answers`) and values offered (`_offers_after`) after the final
    answer (the last box or answer tag): each counts beside it (a hedge when one differs)."""
    offered = _offers_after(rest)
    stated = [a for a in stated_answers(rest) if _VALUE_LIKE.search(a) and not _BOX.search(a)]
    return stated, offered


def _offers_after(rest: str, guesses_anywhere: bool = False) -> list[str]:
    """Values offered after the final answer as other candidates (second guesses, hedges,
    values for another reading). Second guesses are read in the answer's paragraph, or with
    `guesses_anywhere` (after an answer stated without a box) in the whole tail. Raises
    AnswerRefused for a retraction."""
    scope = rest[:_MAX_GUESS_SCOPE]
    if _RETRACTION.search(scope):
        raise AnswerRefused(HEDGED)
    line = rest.split("\n\n", 1)[0][:400]  # the answer's paragraph: "(if\nnot, 8)" wraps
    offered = [next(g for g in m.groups() if g) for m in _ELSE_VALUE_AFTER_BOX.finditer(line)] \
        + [next(g for g in m.groups() if g)
           for m in _SECOND_GUESS.finditer(scope if guesses_anywhere else line)] \
        + [m.group(1) for m in _WOULD_BE.finditer(scope)] + _more_guesses(scope)
    offered = [a for a in offered if _VALUE_LIKE.search(a) and not _BOX.search(a)]
    return offered + _hedge_offers(rest)


def read_answers(section: str, answer_format: str = "boxed") -> Extraction:
    """The distinct cleaned final answers of an answer section, or why none is usable."""
    try:
        answers_written, offers = _answers_and_offers(section, answer_format)
    except AnswerRefused as refused:
        return Extraction(reason=refused.reason)
    answers, seen, guessed = [], set(), False
    for i, item in enumerate(answers_written + offers):
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
            guessed = guessed or i >= len(answers_written)
    if not answers or (guessed and not any(clean(a).strip() for a in answers_written)):
        return Extraction(reason=NO_ANSWER)  # `\\boxed{}. Or maybe 7.` answers nothing
    if len(answers) > MAX_ANSWERS:
        return Extraction(reason=HEDGED)
    return Extraction(answers=tuple(answers), guessed=guessed)


def extract(completion: str, answer_format: str = "boxed") -> Extraction:
    """The final answer(s) of a completion, read from its answer section only."""
    section = answer_section(completion)
    if section is None:
        return Extraction(reason=NO_ANSWER)
    return read_answers(section, answer_format)
