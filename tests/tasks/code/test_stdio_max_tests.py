"""`max_tests` on stdio tasks keeps tests the model has not seen: the statement's examples
(first in both APPS and CodeContests) go last, so a program that prints the examples'
answers no longer scores 1.0 on a truncated task."""

from __future__ import annotations

import json

import pytest

from rlvr_envs.sandbox import Limits
from rlvr_envs.tasks.code.scoring import CodeScorer
from rlvr_envs.tasks.code.stdio import hidden_first, shown_in_statement, stdio_tasks

CODECONTESTS = {
    "name": "double_it",
    "description": "Read an integer n and print 2*n.\n\nExample\nInput\n3\nOutput\n6\n",
    "public_tests": {"input": ["3\n"], "output": ["6\n"]},
    "private_tests": {"input": ["21\n", "-4\n"], "output": ["42\n", "-8\n"]},
    "generated_tests": {"input": ["1000\n", "0\n"], "output": ["2000\n", "0\n"]},
    "solutions": {"language": [3], "solution": ["print(int(input())*2)"]},
}
APPS = {"problem_id": 7, "question": "Print 2*n.\n\n-----Example-----\nInput\n3\n\nOutput\n6",
        "input_output": json.dumps({"inputs": ["3\n", "5\n", "8\n"],
                                    "outputs": ["6\n", "10\n", "16\n"]}),
        "solutions": json.dumps(["print(int(input())*2)"]), "difficulty": "introductory"}
#: prints the statement's example answer whatever the input: solves nothing
HARDCODED = "```python\nx = input()\nprint('6')\n```"


def test_examples_are_recognised_whitespace_aside():
    statement = "Example\nInput\n1 2\n3\nOutput\n  6\n"
    assert shown_in_statement({"input": "1 2\n3\n", "output": "6\n"}, statement)
    assert not shown_in_statement({"input": "1 2\n4\n", "output": "6\n"}, statement)
    assert not shown_in_statement({"input": "", "output": ""}, statement)
    tests = [{"input": "3", "output": "6"}, {"input": "5", "output": "10"},
             {"input": "8", "output": "16"}]
    assert [t["input"] for t in hidden_first(tests, "Input 3 Output 6")] == ["5", "8", "3"]


@pytest.mark.parametrize("row", [CODECONTESTS, APPS], ids=["codecontests", "apps"])
def test_a_truncated_task_keeps_unseen_tests_and_the_hardcoded_example_scores_zero(row):
    scorer = CodeScorer("auto", limits=Limits(wall_time=10))
    for max_tests in (1, 2):
        task = stdio_tasks([row], max_tests=max_tests)[0]
        kept = task.metadata["tests"]
        assert len(kept) == max_tests and all(t["input"] != "3\n" for t in kept)
        assert scorer.score(task, HARDCODED).reward == 0.0
        assert scorer.score(task, scorer.gold_completion(task)).reward == 1.0
    everything = stdio_tasks([row])[0]  # no cut: every test, in the source's order
    assert everything.metadata["tests"][0]["input"] == "3\n"
