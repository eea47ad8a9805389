"""Reading code out of completions shaped the way chat models write them."""

from __future__ import annotations

import pytest

from rlvr_envs.sandbox import Limits
from rlvr_envs.tasks.code.humaneval import load_humaneval
from rlvr_envs.tasks.code.scoring import CodeScorer, entry_names
from rlvr_envs.verify.code.extract import extract_code, future_imports_first

SOLUTION = '''from typing import List


def has_close_elements(numbers: List[float], threshold: float) -> bool:
    return any(abs(a - b) < threshold
               for i, a in enumerate(numbers) for j, b in enumerate(numbers) if i != j)
'''
WRONG = "def has_close_elements(numbers, threshold):\n    return None\n"
ENTRY = ("has_close_elements",)


def fenced(code: str, label: str = "python") -> str:
    return f"```{label}\n{code}```"


def test_the_block_defining_the_function_wins_over_a_later_usage_block():
    text = (f"{fenced(SOLUTION)}\n\nExample usage:\n"
            f"{fenced('print(has_close_elements([1.0, 2.0], 0.5))' + chr(10))}")
    assert extract_code(text, ENTRY) == SOLUTION
    # without the entry point's name: the last block, as before
    assert extract_code(text) == "print(has_close_elements([1.0, 2.0], 0.5))\n"


def test_a_later_block_that_redefines_the_function_is_the_answer():
    text = f"{fenced(SOLUTION)}\nSimpler:\n{fenced(WRONG)}"
    assert extract_code(text, ENTRY) == WRONG


def test_code_in_the_reasoning_is_not_the_answer():
    assert extract_code(f"<think>\n{fenced(SOLUTION)}\n</think>\n{fenced(WRONG)}",
                        ENTRY) == WRONG
    assert extract_code(f"<think>\n{fenced(SOLUTION)}\n</think>\nSee above.", ENTRY) is None
    assert extract_code(f"<think>\n{fenced(SOLUTION)}", ENTRY) is None  # never closed
    # a chat template that opened the think block in the prompt: only </think> shows
    assert extract_code(f"{fenced(WRONG)}\n</think>\n{fenced(SOLUTION)}", ENTRY) == SOLUTION


def test_answer_tags_hold_the_code():
    assert extract_code(f"<think>easy</think>\n<answer>\n{SOLUTION}</answer>",
                        ENTRY).strip() == SOLUTION.strip()
    tagged = f"<think>x</think><answer>{fenced(SOLUTION)}</answer>\n{fenced(WRONG)}"
    assert extract_code(tagged, ENTRY) == SOLUTION
    # tags holding no code (a name, a sentence): the code is read from the whole answer
    named = f"<think>x</think>{fenced(SOLUTION)}\n<answer>has_close_elements</answer>"
    assert extract_code(named, ENTRY) == SOLUTION


def test_helpers_and_imports_from_other_blocks_are_lent_to_the_chosen_one():
    helper = "import math\n\n\n@staticmethod\ndef unused():\n    pass\n\n\ndef _close(a, b, t):\n    return math.fabs(a - b) < t\n"
    main = ("def has_close_elements(numbers, threshold):\n"
            "    return any(_close(a, b, threshold) for i, a in enumerate(numbers)\n"
            "               for j, b in enumerate(numbers) if i != j)\n")
    code = extract_code(f"{fenced(helper)}\nThen:\n{fenced(main)}\n"
                        f"{fenced('print(has_close_elements([1.0], 1.0))' + chr(10))}", ENTRY)
    assert code == "import math\ndef _close(a, b, t):\n    return math.fabs(a - b) < t\n\n" + main
    assert "unused" not in code and "print" not in code


def test_a_name_the_chosen_block_defines_itself_is_not_borrowed():
    other = "def helper():\n    return 1\n"
    main = "def helper():\n    return 2\n\ndef has_close_elements(numbers, threshold):\n    return helper() == 3\n"
    assert extract_code(f"{fenced(other)}{fenced(main)}", ENTRY) == main


def test_a_program_followed_by_sample_input_and_output_blocks():
    program = "n = int(input())\nprint(n * 2)\n"
    text = f"{fenced(program, '')}\nInput:\n{fenced('3' + chr(10), '')}\nOutput:\n{fenced('6' + chr(10), '')}"
    assert extract_code(text) == program
    assert extract_code(f"{fenced('3' + chr(10), '')}") == "3\n"  # nothing reads as code: as is


def test_blocks_that_do_not_parse_are_skipped_when_choosing():
    broken = "def has_close_elements(numbers, threshold)\n    return True\n"
    assert extract_code(f"{fenced(SOLUTION)}{fenced(broken)}", ENTRY) == SOLUTION
    # none parses: the last block, whose syntax error the scorer then reports
    assert extract_code(f"{fenced(broken)}", ENTRY) == broken


def test_future_imports_are_moved_to_the_top():
    program = '"""doc"""\nimport os\nfrom __future__ import (\n    annotations)\nx: int = 1\n'
    assert future_imports_first(program) == (
        'from __future__ import (\n    annotations)\n"""doc"""\nimport os\nx: int = 1\n')
    assert future_imports_first("x = '__future__'\n") == "x = '__future__'\n"
    assert future_imports_first("def broken(:\n from __future__") == "def broken(:\n from __future__"


def test_entry_names_per_task_mode():
    task = load_humaneval().get("HumanEval/0")
    assert entry_names(task) == ("has_close_elements",)
    calls = task.__class__(prompt="p", answer="a", family="code",
                           metadata={"mode": "calls", "function": "f", "tests": []})
    assert entry_names(calls) == ("f",)
    mbpp = task.__class__(prompt="p", answer="a", family="code",
                          metadata={"mode": "check", "entry": None, "names": ["g", "h"]})
    assert entry_names(mbpp) == ("g", "h")
    stdio = task.__class__(prompt="p", answer="a", family="code", metadata={"mode": "stdio"})
    assert entry_names(stdio) == ()


#: verbatim output of SmolLM2-135M-Instruct (sampled, temperature 0.7) for HumanEval/7: a right
#: solution, then a block of example calls; graded on the last block it scored 0
SMOLLM2_HUMANEVAL_7 = '```python\ndef filter_by_substring(strings: List[str], substring: str) -> List[str]:\n    """\n    Returns a list of only those strings that contain the given substring.\n    """\n    return [s for s in strings if substring in s]\n```\n\nYou can use this function like this:\n```python\nstrings = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]\nprint(filter_by_substring(strings, \'b\'))  # [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]\n```'


@pytest.fixture(scope="module")
def scorer():
    scorer = CodeScorer("local", limits=Limits(wall_time=5.0, memory_mb=512))
    yield scorer
    scorer.close()


@pytest.mark.parametrize("completion,reward", [
    (f"{fenced(SOLUTION)}\nExample:\n{fenced('print(has_close_elements([1.0, 2.0], 0.5))' + chr(10))}", 1.0),
    (f"{fenced(SOLUTION)}\nTests:\n{fenced('assert has_close_elements([1.0, 2.8, 3.0], 0.3)' + chr(10))}", 1.0),
    (f"<think>\n{fenced(SOLUTION)}\n</think>\n{fenced(WRONG)}", 0.0),
    (f"<think>\n{fenced(SOLUTION)}\n</think>\nThe code is above.", 0.0),
    (f"<think>ok</think><answer>\n{SOLUTION}</answer>", 1.0),
    # after the task's prompt (prefixed) and after a lent helper, the future import goes first
    (fenced("from __future__ import annotations\n" + SOLUTION), 1.0),
    (fenced("def _gap(a, b):\n    return abs(a - b)\n") + fenced(
        "from __future__ import annotations\n" + SOLUTION.replace("abs(a - b)", "_gap(a, b)")), 1.0),
])
def test_scores_of_model_shaped_completions(scorer, completion, reward):
    task = load_humaneval().get("HumanEval/0")
    assert scorer.score(task, completion).reward == reward


def test_a_real_small_model_answer_with_an_example_block_scores_1(scorer):
    task = load_humaneval().get("HumanEval/7")
    score = scorer.score(task, SMOLLM2_HUMANEVAL_7)
    assert score.reward == 1.0, score.details


def test_a_stdin_program_with_sample_blocks_after_it_is_graded(scorer):
    task = load_humaneval().get("HumanEval/0").__class__(
        prompt="Read n, print 2n.", answer="", family="code",
        metadata={"mode": "stdio", "tests": [{"input": "3\n", "output": "6\n"},
                                            {"input": "10\n", "output": "20\n"}]})
    completion = ("```\nn = int(input())\nprint(n * 2)\n```\nExample input:\n```\n3\n```\n"
                  "Example output:\n```\n6\n```")
    assert scorer.score(task, completion).reward == 1.0


@pytest.mark.timeout(60)  # a hang guard: the quadratic scan took minutes on this input
@pytest.mark.parametrize("blank", ["\n", " \n", "\t\r\n"])
def test_a_completion_of_blank_lines_is_no_code_without_a_quadratic_scan(blank):
    """Looking for a line that starts like code once re-scanned every blank line after each
    line start (`\\s` matches newlines): 30k newlines held the grader's process for 8 s."""
    assert extract_code(blank * 300_000 + "x") is None
    assert extract_code(blank * 300_000 + "def f():\n    return 1\n").endswith("return 1\n")


@pytest.mark.parametrize("text", [
    f"```python main.py\n{SOLUTION}```",                      # a file name after the language
    f"```python3.11\n{SOLUTION}```",
    f"```{{.python}}\n{SOLUTION}```",
    f"~~~python\n{SOLUTION}~~~",
    f"Steps:\n\n1. The code:\n\n   ```python\n" + "".join(
        "   " + line if line else line for line in SOLUTION.splitlines(True)) + "   ```\n",
    f"Here it is:\r\n```python\r\n{SOLUTION.replace(chr(10), chr(13) + chr(10))}```\r\n",
], ids=["file_name", "version", "braces", "tildes", "indented_in_a_list", "crlf"])
def test_fences_as_markdown_allows_them(text):
    assert extract_code(text, ENTRY) == SOLUTION


def test_a_fence_inside_a_string_literal_does_not_end_the_block():
    """Only a fence at the start of a line closes a block."""
    code = SOLUTION + 'FENCE = "```"\nNOTE = "ends with ```"\n'
    assert extract_code(fenced(code) + "\n\nDone.", ENTRY) == code


def test_a_block_defining_the_function_wins_over_a_later_one_that_imports_it():
    tests = ("from solution import has_close_elements\n\n"
             "assert has_close_elements([1.0, 2.0], 1.5)\n")
    assert extract_code(fenced(SOLUTION) + "\nTests:\n" + fenced(tests), ENTRY) == SOLUTION
