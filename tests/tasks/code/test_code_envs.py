"""Code task sources and envs: HumanEval, MBPP and stdio from small local files, procedural
levels, pinning by source id, info fields, partial credit, body-only continuations."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

import rlvr_envs
from rlvr_envs.tasks.code.envs import code_source
from rlvr_envs.tasks.code.humaneval import load_humaneval
from rlvr_envs.tasks.code.procedural import GENERATORS
from rlvr_envs.tasks.code.scoring import CodeScorer

MBPP_ROWS = [
    {"task_id": 2, "text": "Write a function to find the shared elements from the given two lists.",
     "code": "def similar_elements(a, b):\n    return tuple(set(a) & set(b))",
     "test_list": ["assert set(similar_elements((3, 4, 5, 6), (5, 7, 4, 10))) == set((4, 5))",
                   "assert set(similar_elements((1, 2, 3, 4), (5, 4, 3, 7))) == set((3, 4))"],
     "test_setup_code": ""},
    {"task_id": 17, "text": "Write a function to find the perimeter of a square.",
     "code": "def square_perimeter(a):\n  perimeter=4*a\n  return perimeter",
     "test_list": ["assert square_perimeter(10)==40", "assert square_perimeter(5)==20",
                   "assert square_perimeter(4)==16"], "test_setup_code": ""},
    {"task_id": 83, "text": "Volume of a sphere.", "test_imports": ["import math"],
     "code": "import math\ndef volume_sphere(r):\n  return (4/3)*math.pi*r*r*r",
     "test_list": ["assert math.isclose(volume_sphere(10), 4188.790204786391, rel_tol=0.001)"],
     "test_setup_code": ""},
    {"task_id": 601, "text": "Longest chain of pairs.", "code":
     "class Pair(object):\n  def __init__(self, a, b):\n    self.a = a\n    self.b = b\n"
     "def max_chain_length(arr, n):\n  return n",
     "test_list": ["assert max_chain_length([Pair(5, 24), Pair(15, 25)], 2) == 2"],
     "test_setup_code": ""},
]

STDIO_ROWS = [
    {"problem_id": 1, "question": "Read two integers and print their sum.", "difficulty": "introductory",
     "input_output": json.dumps({"inputs": ["1 2\n", "10 -3\n"], "outputs": ["3\n", "7\n"]}),
     "solutions": json.dumps(["a, b = map(int, input().split())\nprint(a + b)"])},
    {"name": "reverse", "description": "Print the input line reversed.", "difficulty": 7,
     "public_tests": {"input": ["abc\n"], "output": ["cba\n"]},
     "private_tests": {"input": ["x y\n"], "output": ["y x\n"]},
     "generated_tests": {"input": [], "output": []},
     "solutions": {"language": [1, 3], "solution": ["print raw_input()[::-1]",
                                                     "print(input()[::-1])"]}},
]

LIMITS = {"wall_time": 5.0}


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


@pytest.fixture(scope="module")
def scorer():
    return CodeScorer("auto", limits=LIMITS)


def test_mbpp_local_file(tmp_path, scorer):
    source = code_source("mbpp", data=write_jsonl(tmp_path / "mbpp.jsonl", MBPP_ROWS))
    assert [t.source_id for t in source] == ["mbpp/2", "mbpp/17", "mbpp/83"]  # Pair task skipped
    task = source.get("mbpp/17")
    assert "square_perimeter(a)" in task.prompt and "==40" not in task.prompt
    assert task.difficulty.level >= 1
    for each in source:
        assert scorer.score(each, scorer.gold_completion(each)).reward == 1.0
    wrong = scorer.score(task, "```python\ndef square_perimeter(a):\n    return 4 * a + (a == 5)\n```")
    assert wrong.reward == 0.0 and wrong.details["tests_passed"] == 2
    assert wrong.details["tests_total"] == 3 and "square_perimeter(5)" in wrong.details["first_failure"]


def test_stdio_apps_and_codecontests_schemas(tmp_path, scorer):
    source = code_source("stdio", data=write_jsonl(tmp_path / "apps.jsonl", STDIO_ROWS))
    sum_task, rev_task = source.get("1"), source.get("reverse")
    assert sum_task.difficulty.level == 1 and len(rev_task.metadata["tests"]) == 2
    assert "print(input()[::-1])" == rev_task.answer
    for task in source:
        assert scorer.score(task, scorer.gold_completion(task)).reward == 1.0
    forged = scorer.score(sum_task, "```python\nprint('3')\nprint('passed')\n```")
    assert forged.reward == 0.0 and forged.details["tests_passed"] == 0


def test_hub_name_fails_fast_offline(monkeypatch):
    import rlvr_envs.tasks.code.loading as loading

    monkeypatch.setattr(loading, "hub_reachable", lambda *a, **k: False)
    with pytest.raises(ConnectionError, match="local file"):
        code_source("mbpp", data="some-org/mbpp-like")


@pytest.mark.parametrize("generator", sorted(GENERATORS))
def test_procedural_gold_scores_one_at_every_level(generator, scorer):
    source = code_source("procedural")
    for level in (1, 2, 3):
        task = source.make(generator, level, seed=level * 11)
        assert task.difficulty.level == level and task.metadata["n_tests"] > 0
        assert all("expected" not in task.prompt for _ in [0])
        score = scorer.score(task, scorer.gold_completion(task))
        assert score.reward == 1.0, (task.source_id, score)
        assert score.details["tests_passed"] == score.details["tests_total"]


def test_procedural_exact_types(scorer):
    task = code_source("procedural").make("clamped_sum", 1, seed=3)
    fn = "def clamped_sum(values):\n    return float(sum(v for v in values if {lo} <= v <= {hi}))"
    lo_hi = task.answer.split("if ")[1].split(")")[0]
    code = "def clamped_sum(values):\n    return float(sum(v for v in values if " + lo_hi + "))"
    score = scorer.score(task, f"```python\n{code}\n```")
    assert score.reward == 0.0 and "wrong result" in score.details["first_failure"]
    assert fn  # the float version differs only in type


def test_humaneval_env_pin_info_partial_credit_and_body_only():
    env = rlvr_envs.make("rlvr/HumanEval-v0", limits=LIMITS)
    prompt, info = env.reset(options={"task": "HumanEval/0"})
    task = info["task"]
    assert task["source_id"] == "HumanEval/0" and "has_close_elements" in prompt
    assert "def check" not in prompt and task["difficulty"]["level"] >= 1
    problem = load_humaneval().get("HumanEval/0")
    body = problem.answer[len(problem.metadata["prefix"]):]
    _, reward, terminated, _, info = env.step(body)  # body-only continuation, bare code
    assert reward == 1.0 and terminated and info["reward_breakdown"] == {"all_tests_pass": 1.0}
    assert info["tests_passed"] == info["tests_total"] == 7 and info["first_failure"] is None
    env.reset(options={"task": "HumanEval/0"})
    half = "```python\ndef has_close_elements(numbers, threshold):\n    return False\n```"
    _, reward, _, _, info = env.step(half)
    assert reward == 0.0 and 0 < info["tests_passed"] < info["tests_total"]
    assert info["first_failure"].startswith("line ")
    env.close()
    partial = rlvr_envs.make("rlvr/Code-v0", source="humaneval", partial_credit=True, limits=LIMITS)
    partial.reset(options={"task": "HumanEval/0"})
    _, reward, _, _, info = partial.step(half)
    assert reward == pytest.approx(info["tests_passed"] / info["tests_total"])
    assert set(info["reward_breakdown"]) == {"tests_passed_fraction"}


def test_code_env_kwargs_are_checked():
    with pytest.raises(ValueError, match="procedural"):
        rlvr_envs.make("rlvr/Code-v0", source="leetcode")
    with pytest.raises(ValueError, match="sandbox"):
        rlvr_envs.make("rlvr/Code-v0", sandbox="chroot")


@pytest.mark.slow
def test_all_164_humaneval_canonical_solutions_score_one(scorer):
    tasks = list(load_humaneval())
    assert len(tasks) == 164
    with ThreadPoolExecutor(4) as pool:
        scores = list(pool.map(lambda t: scorer.score(t, scorer.gold_completion(t)), tasks))
    failed = [(t.source_id, s.verifier, s.details.get("first_failure"))
              for t, s in zip(tasks, scores) if s.reward != 1.0]
    assert failed == []
