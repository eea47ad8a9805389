"""MBPP-schema tasks (`text`, `code`, `test_list`, optional `test_setup_code`, `test_imports`,
`task_id`) from a hub name or a local file. The prompt states the problem and the function
signature (taken from the gold code), never the asserts; the asserts run in the grader's test
driver with the candidate's functions proxied."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import Any

from rlvr_envs.tasks.code.loading import load_rows
from rlvr_envs.tasks.code.prompts import function_prompt

from rlvr_envs.core.datafiles import RowError
from rlvr_envs.core.sources import TaskList
from rlvr_envs.core.task import Difficulty, Task


def _defined(code: str) -> tuple[dict[str, ast.FunctionDef], set[str]]:
    tree = ast.parse(code)
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    return functions, classes


def _used_names(test: str) -> set[str]:
    return {n.id for n in ast.walk(ast.parse(test)) if isinstance(n, ast.Name)}


def mbpp_task(row: dict[str, Any]) -> Task | None:
    """A task from one MBPP row, or None when its tests cannot cross a process boundary
    (they build objects of classes the solution defines)."""
    code, tests = row["code"], list(row["test_list"])
    test = "\n".join(tests)
    functions, classes = _defined(code)
    used = _used_names(test)
    if classes & used:
        return None
    names = sorted(n for n in functions if n in used)
    if not names:
        return None
    main = functions[names[0]]
    signature = f"{main.name}({ast.unparse(main.args)})"
    setup = "\n".join([row.get("test_setup_code") or "", *(row.get("test_imports") or [])])
    lines = len([ln for ln in code.splitlines() if ln.strip()])
    level = 1 if lines <= 4 else 2 if lines <= 10 else 3
    source_id = f"mbpp/{row['task_id']}" if row.get("task_id") is not None else None
    return Task(prompt=function_prompt(row.get("text") or row.get("prompt", ""), signature),
                answer=code, family="code", source="mbpp", source_id=source_id,
                difficulty=Difficulty(level), split=str(row.get("split", "test")),
                metadata={"mode": "check", "setup": setup, "test": test, "entry": None,
                          "names": names, "n_tests": len(tests)})


def mbpp_tasks(rows: Iterable[dict[str, Any]], origin: str = "mbpp rows") -> TaskList:
    """Tasks of every usable row; a row without `code` or `test_list`, or whose code does not
    parse, is a RowError naming `origin`, the row and the field (the load aborts)."""
    tasks = []
    for index, row in enumerate(rows):
        missing = [name for name in ("code", "test_list") if not row.get(name)]
        if missing:
            raise RowError(origin, row.get("task_id", index), f"missing or empty field(s) "
                           f"{missing} (MBPP rows need 'text', 'code' and 'test_list')")
        try:
            task = mbpp_task(row)
        except SyntaxError as err:
            raise RowError(origin, row.get("task_id", index), f"field 'code' or 'test_list' "
                           f"is not Python: {err.msg} (line {err.lineno})") from None
        if task is not None:
            tasks.append(task)
    return TaskList(tasks, family="code", name="mbpp")


def load_mbpp(data: str = "mbpp", split: str = "test", config: str | None = None) -> TaskList:
    return mbpp_tasks(load_rows(data, split=split, config=config), origin=data)
