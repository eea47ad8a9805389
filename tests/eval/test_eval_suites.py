"""Suites as data: structure checks, strict resolution before any sampling, shipped suites."""

from __future__ import annotations

import json

import pytest

import rlvr_envs
from eval_helpers import CountingNull, math_suite
from rlvr_envs.eval.runner import evaluate
from rlvr_envs.eval.suites import (SuiteError, list_suites, load_suite, parse_suite,
                                   resolve_suite)


def test_parse_normalises_entries(write_suite):
    suite = load_suite(write_suite(math_suite()))
    assert suite.name == "mathtest" and suite.k == (1, 2, 3) and suite.batch_size == 3
    math, arith = suite.entries
    assert math.seeds == tuple(range(7)) and math.n == 3 and math.kwargs == {"difficulty": [1, 2]}
    assert arith.seeds == (100, 101, 102) and arith.name == "arith"


def test_yaml_suites_load(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("name: y\nn: 2\nk: [1, 2]\nentries:\n  - env: rlvr/Math-v0\n"
                    "    tasks: ['arithmetic/L1/5', 'arithmetic/L2/9']\n")
    suite = load_suite(path)
    assert suite.entries[0].tasks == ("arithmetic/L1/5", "arithmetic/L2/9")
    resolved = resolve_suite(suite)
    assert [t.source_id for t in resolved.entries[0].tasks] == ["arithmetic/L1/5",
                                                                "arithmetic/L2/9"]
    resolved.close()


@pytest.mark.parametrize("change,message", [
    ({"colour": "red"}, "unknown keys ['colour']"),
    ({"entries": []}, "non-empty list"),
    ({"k": [1, 5]}, "k=5 exceeds"),
    ({"n": 0}, "n must be an int >= 1"),
    ({"entries": [{"env": "rlvr/Math-v0"}]}, "exactly one of 'tasks'"),
    ({"entries": [{"env": "rlvr/Math-v0", "seeds": [1], "tasks": ["x"]}]}, "exactly one of"),
    ({"entries": [{"env": "rlvr/Math-v0", "seeds": "abc"}]}, "seeds must be"),
    ({"entries": [{"env": "rlvr/Math-v0", "seeds": [1], "temperature": 1}]}, "unknown keys"),
    ({"entries": [{"env": "rlvr/Math-v0", "seeds": [1], "sampling": {"temp": 1}}]},
     "unknown keys ['temp']"),
    ({"entries": [{"env": "rlvr/Math-v0", "seeds": [1]}, {"env": "rlvr/Math-v0", "seeds": [2]}]},
     "entry names must be unique"),
])
def test_malformed_suites_are_refused(change, message):
    with pytest.raises(SuiteError) as err:
        parse_suite({**math_suite(), **change})
    assert message in str(err.value)


def test_unknown_suite_name_lists_shipped_ones():
    with pytest.raises(SuiteError, match="shipped suites: .*quick"):
        load_suite("no-such-suite")


@pytest.mark.parametrize("entry,message", [
    ({"env": "rlvr/Math-v9", "seeds": [0]}, "no rlvr env 'rlvr/Math-v9'"),
    ({"env": "rlvr/Math-v0", "kwargs": {"dificulty": 1}, "seeds": [0]}, "unknown keyword"),
    ({"env": "rlvr/Math-v0", "tasks": ["arithmetic/L1/3", "nonsense-task"]},
     "task 'nonsense-task' cannot be resolved"),
])
def test_missing_env_kwarg_or_task_fails_before_any_sampling(tmp_path, write_suite, entry,
                                                             message):
    suite = math_suite(entries=[math_suite()["entries"][0], {**entry, "name": "bad"}])
    CountingNull.calls = 0
    with pytest.raises(SuiteError) as err:
        evaluate(CountingNull(), write_suite(suite), runs_dir=tmp_path / "runs")
    assert message in str(err.value) and "entry 'bad'" in str(err.value)
    assert CountingNull.calls == 0
    assert not (tmp_path / "runs").exists()  # not even a run record


def test_every_problem_is_reported_at_once(write_suite):
    suite = math_suite(entries=[{"env": "rlvr/Nope-v0", "name": "a", "seeds": [0]},
                                {"env": "rlvr/Math-v0", "name": "b", "tasks": ["zz/L1/1"]}])
    with pytest.raises(SuiteError, match="2 problems") as err:
        resolve_suite(load_suite(write_suite(suite)))
    assert "entry 'a'" in str(err.value) and "entry 'b'" in str(err.value)


def test_duplicate_tasks_from_seeds_are_evaluated_once(write_suite):
    suite = math_suite(entries=[{"env": "rlvr/Math-v0", "name": "m",
                                 "tasks": ["arithmetic/L1/1", "arithmetic/L1/1",
                                           "arithmetic/L1/2"]}])
    resolved = resolve_suite(load_suite(write_suite(suite)))
    assert len(resolved.entries[0].tasks) == 2 and resolved.entries[0].duplicates_dropped == 1
    resolved.close()


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.slow)  # a second each
                                  if name in ("reasoning", "repo-heldout") else name
                                  for name in sorted(list_suites())])
def test_shipped_suites_parse_and_resolve_or_name_missing_envs(name):
    suite = load_suite(name)
    missing = sorted({e.env for e in suite.entries} - set(rlvr_envs.list_envs()))
    if missing:
        with pytest.raises(SuiteError) as err:
            resolve_suite(suite)
        for env_id in missing:
            assert env_id in str(err.value)
    else:
        resolved = resolve_suite(suite)
        assert resolved.num_episodes > 0
        resolved.close()


def test_quick_suite_mixes_math_code_and_repo():
    suite = load_suite("quick")
    envs = [e.env for e in suite.entries]
    assert "rlvr/Math-v0" in envs and "rlvr/HumanEval-v0" in envs and "rlvr/RepoEdit-v0" in envs
    assert json.loads(json.dumps(suite.definition))["name"] == "quick"


def test_the_old_name_of_the_token_cap_is_read_with_a_warning():
    with pytest.warns(DeprecationWarning, match="'max_new_tokens' is now 'max_completion_length'"):
        suite = parse_suite(math_suite(sampling={"max_new_tokens": 64}))
    assert suite.entries[0].sampling == {"max_completion_length": 64}
    with pytest.raises(SuiteError, match="give max_completion_length only"):
        parse_suite(math_suite(sampling={"max_new_tokens": 64, "max_completion_length": 64}))
