"""reasoning-gym's generators under our contract: strict scoring, curated ids, the audit."""

from __future__ import annotations

import ast
import importlib
import pickle

import gymnasium as gym
import pytest

import rlvr_envs  # noqa: F401  (registers the ids)
from rlvr_envs.tasks.reasoning.audit import audit_generator
from rlvr_envs.tasks.reasoning.envs import CURATED
from rlvr_envs.tasks.reasoning.guard import CODE_REFUSED, call_own_scorer
from rlvr_envs.tasks.reasoning.scoring import STRICT_OWN_SCORERS, ReasoningGymScorer, load_audit
from rlvr_envs.tasks.reasoning.source import entry_for


def answer(text: str, think: str = "working") -> str:
    return f"<think>{think}</think><answer>{text}</answer>"


def chain_sum_task():
    env = gym.make("rlvr/RG-ChainSum-v0", difficulty=2)
    _, info = env.reset(seed=5)
    return env, info["task"]


def test_gold_scores_one_and_padding_hedging_and_reasoning_score_zero():
    env, task = chain_sum_task()
    gold = task["answer"]
    dataset, entry = entry_for("chain_sum", task["metadata"]["rg_seed"],
                               task["metadata"]["rg_level"])
    # reasoning-gym's own scorer pays for padding; ours must not
    assert 0 < dataset.score_answer(f"{gold} 7", entry) < 1
    cases = {answer(gold): 1.0, answer(f"{gold} 7"): 0.0, answer(f"x {gold}"): 0.0,
             answer(gold) + answer(str(int(gold) + 1)): 0.0,  # two different answers: a hedge
             answer(gold) + answer(gold): 1.0,  # the same answer twice is one answer
             f"<think><answer>{gold}</answer></think>": 0.0,  # only inside the reasoning
             f"<think>{gold}": 0.0, "": 0.0}
    for completion, expected in cases.items():
        env.reset(seed=5)
        _, reward, *_, info = env.step(completion)
        assert reward == expected, (completion, info["verifier"])


def test_several_valid_answers_through_a_strict_own_scorer():
    assert "puzzle24" in STRICT_OWN_SCORERS
    env = gym.make("rlvr/RG-Puzzle24-v0", difficulty=1)
    _, info = env.reset(seed=3)
    dataset, entry = entry_for("puzzle24", info["task"]["metadata"]["rg_seed"], 1)
    numbers = entry["metadata"]["numbers"]
    assert sorted(numbers) == [1, 2, 3, 4]  # this seed's numbers
    assert info["task"]["answer"].replace(" ", "") != "(1+2+3)*4"
    _, reward, *_ = env.step(answer("(1+2+3)*4"))  # another valid expression than the gold
    assert reward == 1.0
    env.reset(seed=3)
    _, reward, *_ = env.step(answer("4*3*2"))  # 24, but does not use every number
    assert reward == 0.0


def test_a_lax_own_scorer_is_never_used():
    audit = load_audit()
    assert audit["sokoban"]["own_scorer_strict"] is False or not audit["sokoban"]["passes"]
    assert "sokoban" not in STRICT_OWN_SCORERS and "gsm_symbolic" not in STRICT_OWN_SCORERS


def test_multiline_answers_keep_their_lines():
    scorer = ReasoningGymScorer()
    from rlvr_envs.core.task import Task

    task = Task(prompt="grid", answer="1 2\n3 4", family="reasoning")
    assert scorer.score(task, answer("\n 1  2\n3 4 \n")).reward == 1.0
    assert scorer.score(task, answer("1 2 3 4")).reward == 0.0


def test_same_seed_same_task_and_source_id_regenerates():
    env = gym.make("rlvr/ReasoningGym-v0", dataset="word_sorting")
    a = env.reset(seed=11)[1]["task"]
    b = env.reset(seed=11)[1]["task"]
    assert a == b
    assert a["source_id"].startswith("word_sorting/L")
    pinned = env.reset(options={"task": a["source_id"]})[1]["task"]
    assert (pinned["prompt"], pinned["answer"]) == (a["prompt"], a["answer"])
    assert pinned["difficulty"]["level"] == a["metadata"]["rg_level"]


def test_levels_come_from_the_generators_curriculum():
    env = gym.make("rlvr/ReasoningGym-v0", dataset="chain_sum", difficulty=[1, 4])
    levels = {env.reset(seed=s)[1]["task"]["difficulty"]["level"] for s in range(12)}
    assert levels == {1, 4}
    with pytest.raises(ValueError, match="levels 1..11"):
        gym.make("rlvr/ReasoningGym-v0", dataset="chain_sum", difficulty=40)


def test_config_overrides_and_bad_input():
    env = gym.make("rlvr/ReasoningGym-v0", dataset="chain_sum",
                   config={"min_terms": 5, "max_terms": 5})
    task = env.reset(seed=1)[1]["task"]
    assert task["prompt"].count("+") + task["prompt"].count("-") >= 4
    with pytest.raises(ValueError, match="close matches"):
        gym.make("rlvr/ReasoningGym-v0", dataset="chain_sums")
    with pytest.raises(ValueError, match="refused its config"):
        gym.make("rlvr/ReasoningGym-v0", dataset="chain_sum", config={"no_such_field": 1})
    with pytest.raises(TypeError, match="config must be a dict"):
        gym.make("rlvr/ReasoningGym-v0", dataset="chain_sum", config=[1])


def test_every_curated_generator_passed_the_shipped_audit():
    audit = load_audit()
    assert len(CURATED) >= 20
    failed = {name: audit.get(name) for name in CURATED if not audit.get(name, {}).get("passes")}
    assert not failed
    assert sum(r["passes"] for r in audit.values()) >= 80


def test_the_audit_catches_a_scorer_that_pays_for_padding(monkeypatch):
    result = audit_generator("gcd", seeds_per_level=1)
    assert result["passes"] and result["wrong_zero"] == result["wrong_total"] > 0
    import rlvr_envs.tasks.reasoning.scoring as scoring

    monkeypatch.setattr(scoring, "normalise", lambda text: text.split()[0] if text.split() else "")
    assert not audit_generator("gcd", seeds_per_level=1)["passes"]


def test_scorer_pickles():
    env, task = chain_sum_task()
    scorer = pickle.loads(pickle.dumps(env.unwrapped.scorer))
    from rlvr_envs.core.task import Task

    assert scorer.score(Task.from_dict(task), answer(task["answer"])).reward == 1.0


@pytest.mark.parametrize("env_id", ["rlvr/ReasoningGym-v0",
                                    pytest.param("rlvr/CHAMP-v0", marks=pytest.mark.slow),
                                    *(f"rlvr/RG-{suffix}-v0" for suffix in CURATED.values())])
def test_rlvr_check_passes(env_id):
    from rlvr_envs.checks import check_env_id

    results = list(check_env_id(env_id, samples=3))
    assert all(ok for _, ok, _ in results), results


@pytest.mark.parametrize("dataset, attack", [
    ("n_queens", "__import__('pathlib').Path({path!r}).touch()"),       # eval(answer)
    ("spiral_matrix", "[__import__('pathlib').Path({path!r}).touch()]"),  # eval(answer)
    ("puzzle24", "__import__('pathlib').Path({path!r}).touch()"),       # sympy parse_expr
    ("countdown", "(lambda: __import__('pathlib').Path({path!r}).touch())()"),
    ("countdown", "9**9**9**9"),  # no code, but its evaluation would never end
])
def test_an_answer_a_generators_scorer_would_eval_never_runs(tmp_path, dataset, attack):
    assert dataset in STRICT_OWN_SCORERS
    path = tmp_path / "ran"
    env = gym.make("rlvr/ReasoningGym-v0", dataset=dataset)
    env.reset(seed=0)
    _, reward, *_, info = env.step(answer(attack.format(path=str(path))))
    assert (reward, info["verifier"]) == (0.0, CODE_REFUSED)
    assert not path.exists()


def test_the_guard_lets_arithmetic_the_entry_and_files_run(tmp_path, monkeypatch):
    def evaluates(text, entry):
        return float(eval(text) == entry["value"])

    assert call_own_scorer(evaluates, "(1 + 2) * 4 / 2", {"value": 6}) == (1.0, False)
    assert call_own_scorer(evaluates, "len('abcdef')", {"value": 6}) == (0.0, True)
    assert call_own_scorer(evaluates, "2**3", {"value": 8}) == (0.0, True)

    def evaluates_the_problem(text, entry):  # bitwise_arithmetic evals its own problem text
        return float(eval(entry["metadata"]["problem"]) == int(text, 0))

    entry = {"metadata": {"problem": "abs(-0x10)"}}
    assert call_own_scorer(evaluates_the_problem, "16", entry) == (1.0, False)
    assert call_own_scorer(lambda text, _: float(ast.literal_eval(text) == [1, 2]), "[1, 2]",
                           {}) == (1.0, False)
    (tmp_path / "lazy_module_for_guard.py").write_text("VALUE = 3\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def imports(text, entry):  # a module the scorer imports on first use still loads
        return float(importlib.import_module("lazy_module_for_guard").VALUE == int(text))

    assert call_own_scorer(imports, "3", {}) == (1.0, False)
    assert eval("1 + 1") == 2


def test_other_scorer_routes_still_take_alternative_answers():
    env = gym.make("rlvr/ReasoningGym-v0", dataset="bitwise_arithmetic")
    _, info = env.reset(seed=1)
    gold = info["task"]["answer"]
    _, reward, *_ = env.step(answer(str(int(gold, 16))))  # decimal instead of hex
    assert reward == 1.0


@pytest.mark.parametrize("dataset, hack", [
    ("coin_flip", "0"),  # its scorer pays a matching prefix in full when the answer is shorter
    ("complex_arithmetic", "(nan)"),  # min(1.0, exp(-nan)) is 1.0
])
def test_an_own_scorer_that_pays_a_degenerate_answer_is_not_used(dataset, hack):
    assert dataset not in STRICT_OWN_SCORERS
    env = gym.make("rlvr/ReasoningGym-v0", dataset=dataset)
    _, info = env.reset(seed=2)
    task = info["task"]
    own, entry = entry_for(dataset, task["metadata"]["rg_seed"], task["metadata"]["rg_level"])
    assert task["answer"].strip() != hack and own.score_answer(hack, entry) == 1.0
    _, reward, *_ = env.step(answer(hack))
    assert reward == 0.0
    env.reset(seed=2)
    _, reward, *_ = env.step(answer(task["answer"]))
    assert reward == 1.0
