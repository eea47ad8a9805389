"""CHAMP (Mao et al., 2024): 270 competition math problems with final answers, MIT licence.

The PyPI package `champ-dataset` ships them (`champ_dataset/dataset_files/v0.json`), so the env
works offline. CHAMP's answers are written for people ("C(10, 5), or equivalently 252", "The
limit exists and is equal to 2"); `champ_gold` keeps the mathematical value by a few fixed
rewrites, and a problem whose answer stays a sentence ("No integer solutions") is left out and
counted in `source.skipped`, since no verifier can score free text strictly. CHAMP has no
difficulty labels: the level is measured from its reference solution, 1 for at most three
steps, 2 for four to six, 3 for more.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Mapping

from rlvr_envs.core.sources import TaskList
from rlvr_envs.core.task import Difficulty, Task
from rlvr_envs.verify.math import check_gold

INSTALL_HINT = "pip install champ-dataset (a dependency of rlvr-envs)"
_EQUIVALENT = re.compile(r",?\s*or (?:equivalently|approximately)\s+(?P<value>.*)$")
_PREFIXES = re.compile(r"^(?:the limit exists and is equal to|the only possible value for the "
                       r"limit is)\s+", re.IGNORECASE)
_ONLY_VALUE = re.compile(r"^(?P<value>.*?) is the only possible value$")
_TRAILING_NOTE = re.compile(r"\s+\([^()]*[A-Za-z]{3,}[^()]* [^()]*\)\s*$")  # " (i.e., all values)"
_COUNT_NOUN = re.compile(r"^(?P<value>\d+) (?:values|roots|pairs|inequalities|times)$")
_FUNCTION_WORDS = {"sqrt", "floor", "ceil", "sum", "log", "sin", "cos", "tan", "max", "min",
                   "and", "mod", "gcd", "lcm"}
_YES_NO = {"yes", "no"}


def champ_file() -> Path:
    try:
        import champ_dataset
    except ImportError as err:
        raise ImportError(f"rlvr/CHAMP-v0 needs the champ-dataset package: {INSTALL_HINT}") from err
    return Path(champ_dataset.__file__).with_name("dataset_files") / "v0.json"


def champ_gold(answer: str) -> str | None:
    """The mathematical value of a CHAMP answer, or None when it is a sentence."""
    value = answer.strip()
    if (m := _EQUIVALENT.search(value)) and not value.startswith(("C(", "2*C(")):
        value = value[:m.start()] if "approximately" in m.group(0) else m["value"]
    elif m:
        value = m["value"]
    value = _PREFIXES.sub("", _TRAILING_NOTE.sub("", value).strip())
    if m := _ONLY_VALUE.match(value):
        value = m["value"]
    if m := _COUNT_NOUN.match(value):
        value = m["value"]
    words = [w for w in re.findall(r"[A-Za-z]{3,}", value) if w.lower() not in _FUNCTION_WORDS]
    if words and value.lower() not in _YES_NO:
        return None
    return value.strip() or None


def champ_level(problem: Mapping[str, Any]) -> int:
    steps = len((problem.get("solution") or {}).get("steps") or [])
    return 1 if steps <= 3 else 2 if steps <= 6 else 3


class ChampSource(TaskList):
    """CHAMP's problems whose answers are values; `skipped` lists the others with the reason."""

    skipped: list[tuple[str, str]]


def load_champ(path: str | Path | None = None) -> ChampSource:
    """CHAMP's problems as tasks (source id = CHAMP's identifier, e.g. "P_Inequality_12")."""
    file = Path(path) if path is not None else champ_file()
    try:
        problems = json.loads(file.read_text())["problems"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{file}: not a CHAMP dataset file ({err})") from err
    tasks, skipped = [], []
    for identifier, problem in problems.items():
        gold = champ_gold(str(problem.get("_answer") or ""))
        if gold is None:
            skipped.append((identifier, f"answer is a sentence: {problem.get('_answer')!r:.80}"))
            continue
        try:
            check_gold(gold)
        except ValueError as err:
            skipped.append((identifier, f"gold {gold!r} cannot be scored: {err}"))
            continue
        tasks.append(Task(prompt=problem["_text"], answer=gold, family="math", source="champ",
                          source_id=identifier, difficulty=Difficulty(champ_level(problem)),
                          metadata={"category": problem.get("category"),
                                    "raw_answer": problem.get("_answer")}))
    source = ChampSource(tasks, family="math", name="champ", validate=None)
    source.skipped = skipped
    return source
