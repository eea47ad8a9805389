"""Stdin/stdout programming tasks (competitive programming) from APPS- or CodeContests-style
records, from a hub name or a local file.

Accepted shapes for the tests: top-level `inputs`/`outputs` lists; APPS' `input_output` JSON
string ({"inputs": [...], "outputs": [...]}); CodeContests' `public_tests` / `private_tests` /
`generated_tests` ({"input": [...], "output": [...]}). Statement: `question` (APPS),
`description` (CodeContests) or `prompt`. Gold: `solutions` as a list, a JSON string (APPS) or
CodeContests' {"language": [...], "solution": [...]} (Python 3 is language 3).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

from rlvr_envs.tasks.code.loading import load_rows
from rlvr_envs.tasks.code.prompts import stdio_prompt

from rlvr_envs.core.sources import TaskList
from rlvr_envs.core.task import Difficulty, Task

logger = logging.getLogger(__name__)

APPS_LEVELS = {"introductory": 1, "interview": 2, "competition": 3}
CODECONTESTS_PYTHON3 = 3


def _tests(row: dict[str, Any]) -> list[dict[str, str]]:
    if row.get("inputs") is not None and row.get("outputs") is not None:
        ins, outs = row["inputs"], row["outputs"]
    elif row.get("input_output"):
        spec = row["input_output"]
        spec = json.loads(spec) if isinstance(spec, str) else spec
        if spec.get("fn_name"):
            return []  # call-based APPS problem, not stdin/stdout
        ins, outs = spec["inputs"], spec["outputs"]
    else:
        ins, outs = [], []
        for key in ("public_tests", "private_tests", "generated_tests"):
            block = row.get(key) or {}
            ins += list(block.get("input", []))
            outs += list(block.get("output", []))
    if len(ins) != len(outs):
        raise ValueError(f"record {row.get('problem_id', row.get('name'))}: {len(ins)} inputs "
                         f"but {len(outs)} outputs")
    to_text = lambda v: "\n".join(v) if isinstance(v, list) else str(v)
    return [{"input": to_text(i), "output": to_text(o)} for i, o in zip(ins, outs)]


def _solution(row: dict[str, Any]) -> str | None:
    sols = row.get("solutions")
    if isinstance(sols, str):
        sols = json.loads(sols) if sols.strip() else []
    if isinstance(sols, dict):
        pairs = zip(sols.get("language", []), sols.get("solution", []))
        sols = [code for lang, code in pairs if lang == CODECONTESTS_PYTHON3]
    if not sols:
        return row.get("solution") or None
    return sols[0]


def _level(row: dict[str, Any], n_tests: int) -> int:
    diff = row.get("difficulty")
    if isinstance(diff, str) and diff in APPS_LEVELS:
        return APPS_LEVELS[diff]
    if isinstance(diff, int) and not isinstance(diff, bool) and diff > 0:
        return min(5, 1 + diff // 3)  # CodeContests' 1..28 difficulty classes
    return 1 if n_tests <= 3 else 2 if n_tests <= 10 else 3


def _squeezed(text: str) -> str:
    return " ".join(text.split())


def shown_in_statement(test: dict[str, str], statement: str) -> bool:
    """Whether a test is one of the statement's examples: its input and its output both
    appear in the statement (whitespace aside). A program can print those answers without
    solving anything."""
    given, expected = _squeezed(test["input"]), _squeezed(test["output"])
    text = _squeezed(statement)
    return bool(given and expected) and given in text and expected in text


def hidden_first(tests: list[dict[str, str]], statement: str) -> list[dict[str, str]]:
    """The tests in their order, those that are not the statement's examples first: what
    `max_tests` keeps are then tests the model has not seen (public examples come first in
    both APPS and CodeContests, so a plain cut kept only them, and a program printing the
    examples' answers scored 1.0)."""
    shown = [shown_in_statement(t, statement) for t in tests]
    return [t for t, s in zip(tests, shown) if not s] + [t for t, s in zip(tests, shown) if s]


def stdio_task(row: dict[str, Any], index: int, max_tests: int | None = None) -> Task | None:
    tests = _tests(row)
    gold = _solution(row)
    statement = row.get("question") or row.get("description") or row.get("prompt")
    if not tests or gold is None or not statement:
        return None
    if max_tests is not None:
        tests = hidden_first(tests, str(statement))[:max_tests]
    ids = [row.get(key) for key in ("problem_id", "name", "task_id")]
    source_id = str(next((i for i in ids if i is not None), f"stdio/{index}"))
    return Task(prompt=stdio_prompt(statement), answer=gold, family="code", source="stdio",
                source_id=source_id, difficulty=Difficulty(_level(row, len(tests))),
                split=str(row.get("split", "test")),
                metadata={"mode": "stdio", "tests": tests, "n_tests": len(tests)})


def stdio_tasks(rows: Iterable[dict[str, Any]], max_tests: int | None = None) -> TaskList:
    """Tasks of the rows that have a statement, tests and a solution; the others (common in
    APPS-style dumps) are skipped and counted in a warning; none usable is a ValueError."""
    rows = list(rows)
    tasks = [t for t in (stdio_task(r, i, max_tests) for i, r in enumerate(rows)) if t]
    if rows and not tasks:
        raise ValueError(f"none of the {len(rows)} stdio rows has a statement ('question', "
                         f"'description' or 'prompt'), stdin/stdout tests ('inputs'/'outputs', "
                         f"'input_output' or 'public_tests') and a solution ('solutions')")
    if len(tasks) < len(rows):
        logger.warning("stdio: skipped %d of %d row(s) without a statement, tests or a solution",
                       len(rows) - len(tasks), len(rows))
    return TaskList(tasks, family="code", name="stdio")


def load_stdio(data: str = "codeparrot/apps", split: str = "test", config: str | None = None,
               max_tests: int | None = None) -> TaskList:
    return stdio_tasks(load_rows(data, split=split, config=config), max_tests=max_tests)
