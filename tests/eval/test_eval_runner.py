"""The runner: sanity anchors per family, metrics, monitors, multi-turn episodes, failing
policies (retries, a clear stop, resume) and the rules for existing runs."""

from __future__ import annotations

import pytest

import rlvr_envs
from eval_helpers import (FailingPolicy, SeededPolicy, ToolReader, ToyToolEnv,
                          make_monitored_math, math_suite)
from rlvr_envs.core.policy import Completion
from rlvr_envs.agents.scripted import GoldPolicy, NullPolicy
from rlvr_envs.eval.passk import pass_at_k
from rlvr_envs.eval.runner import EvalError, EvalStopped, evaluate
from rlvr_envs.eval.store import ResultStore
from rlvr_envs.eval.suites import parse_suite, resolve_suite
from rlvr_envs.registry import env_entry


def _families() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for env_id in rlvr_envs.list_envs():
        if not env_id.startswith("rlvr/"):  # test-only envs other tests register
            continue
        out.setdefault(env_entry(env_id).family, []).append(env_id)
    return out


def _family_suite(family: str):
    entries = [{"env": env_id, "name": env_id, "kwargs": env_entry(env_id).check_kwargs,
                "seeds": [0, 1, 2]} for env_id in _families()[family]]
    return parse_suite({"name": f"anchor-{family}", "n": 1, "batch_size": 4, "entries": entries})


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(_families()))
def test_null_scores_zero_on_every_family(tmp_path, family):
    null = evaluate("null", _family_suite(family), runs_dir=tmp_path)
    assert null.summary["by_family"][family]["pass_at_k"]["1"] == 0.0
    assert null.summary["mean_reward"] == 0.0 and null.summary["tasks"] >= 1


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(_families()))
def test_gold_scores_one_on_every_family(tmp_path, family):
    suite = _family_suite(family)
    resolved = resolve_suite(suite)
    try:
        no_gold = [e.entry.env for e in resolved.entries
                   if e.multi_turn and not hasattr(e.scorer, "gold_actions")]
    finally:
        resolved.close()
    assert not no_gold, (f"multi-turn env(s) {no_gold} offer no scripted gold turns "
                         f"(scorer.gold_actions(task)) for the gold policy to play")
    gold = evaluate("gold", suite, runs_dir=tmp_path)
    assert gold.summary["by_family"][family]["pass_at_k"]["1"] == 1.0
    assert gold.summary["pass_at_k"]["1"] == 1.0 and gold.summary["mean_reward"] == 1.0


def test_humaneval_canonical_solutions_pass(tmp_path):
    suite = parse_suite({"name": "he", "n": 1, "batch_size": 8, "entries": [
        {"env": "rlvr/HumanEval-v0", "tasks": [f"HumanEval/{i}" for i in range(0, 164, 8)]}]})
    result = evaluate("gold", suite, runs_dir=tmp_path)
    assert result.summary["pass_at_k"]["1"] == 1.0 and result.summary["tasks"] == 21


def test_metrics_match_the_stored_episodes(tmp_path, write_suite):
    result = evaluate(SeededPolicy(sleep=0), write_suite(math_suite()), runs_dir=tmp_path)
    with ResultStore(tmp_path) as store:
        episodes = store.episodes(result.run_id)
        run = store.get_run(result.run_id)
    assert len(episodes) == 10 * 3 == result.summary["episodes"]
    groups: dict = {}
    for ep in episodes:
        groups.setdefault((ep.env, ep.task_id), []).append(ep.correct)
        assert ep.correct == (ep.reward == 1.0)  # the seeded policy answers gold or junk
    for k in (1, 2, 3):
        expected = sum(pass_at_k(3, sum(c), k) for c in groups.values()) / len(groups)
        assert result.summary["pass_at_k"][str(k)] == pytest.approx(expected)
    assert 0 < result.summary["pass_at_k"]["1"] < 1
    assert result.summary["total_tokens"] == sum(ep.num_tokens for ep in episodes)
    assert set(result.summary["by_difficulty"]["math"]) == {"1", "2", "3"}
    assert result.summary["by_env"]["arith"]["tasks"] == 3
    assert run.status == "complete" and run.config["policy"] == "seeded"
    assert run.config["suite_definition"]["name"] == "mathtest"
    assert run.config["entries"]["math"]["sampling"]["n"] == 3
    assert run.package_version == rlvr_envs.__version__


def test_monitor_flags_are_counted(tmp_path, temp_env):
    temp_env("rlvr-test/MonitoredMath-v0", make_monitored_math, "math")
    suite = parse_suite({"name": "mon", "n": 2, "entries": [
        {"env": "rlvr-test/MonitoredMath-v0", "seeds": [0, 1, 2]}]})
    null = evaluate(NullPolicy(), suite, runs_dir=tmp_path)
    gold = evaluate(GoldPolicy(), suite, runs_dir=tmp_path)
    assert null.summary["monitors"] == {"at_length_cap": 0, "empty_answer": 6}
    assert null.summary["monitor_flags"] == 6
    assert gold.summary["monitors"] == {"at_length_cap": 0, "empty_answer": 0}


def test_no_flag_raised_counts_zero(tmp_path, write_suite):
    result = evaluate(NullPolicy(), write_suite(math_suite(n=1, k=[1])), runs_dir=tmp_path)
    assert set(result.summary["monitors"].values()) <= {0} and result.summary["monitor_flags"] == 0


def test_shaping_monitors_flag_completions_the_env_did_not(tmp_path, write_suite):
    class Hedger(NullPolicy):
        def generate(self, batch, params, **_):
            return [[Completion("It is \\boxed{1} or \\boxed{2}", num_tokens=9),
                     Completion("x " * 40, num_tokens=params.max_completion_length,
                                finish_reason="length")] for _ in batch]

    suite = math_suite(n=2, k=[1], sampling={"max_completion_length": 40})
    result = evaluate(Hedger(), write_suite(suite), runs_dir=tmp_path)
    assert result.summary["monitors"]["several_answers"] == 10
    assert result.summary["monitors"]["length_at_cap"] == 10


def test_multi_turn_env_runs_through_the_tool_loop(tmp_path, temp_env):
    temp_env("rlvr-test/ToyTools-v0", lambda: ToyToolEnv(), "toy")
    suite = parse_suite({"name": "toy", "n": 2, "k": [1, 2], "entries": [
        {"env": "rlvr-test/ToyTools-v0", "tasks": ["box/0", "box/1", "box/2"], "max_turns": 6}]})
    reader = evaluate(ToolReader(), suite, runs_dir=tmp_path)
    assert reader.summary["pass_at_k"]["1"] == 1.0
    assert reader.summary["turns"]["mean"] == 2  # look, then submit
    gold = evaluate(GoldPolicy(), suite, runs_dir=tmp_path)
    assert gold.summary["pass_at_k"]["1"] == 1.0 and gold.summary["turns"]["mean"] == 1
    null = evaluate(NullPolicy(), suite, runs_dir=tmp_path)
    assert null.summary["pass_at_k"]["1"] == 0.0
    assert null.summary["turns"]["max"] == ToyToolEnv.max_turns  # the env truncated
    with ResultStore(tmp_path) as store:
        episode = store.episodes(reader.run_id)[0]
    assert episode.turns == 2 and "[tool] the answer is" in episode.completion
    assert episode.finish_reason == "terminated" and episode.num_tokens == 20
    look = '<tool_call>{"name": "look", "arguments": {}}</tool_call>'
    assert episode.num_chars == len(look) + len(episode.completion.split("[assistant] ")[2]
                                                .split("\n\n")[0])  # the policy's text only


def _rows(store: ResultStore, run_id: str):
    return [(e.key, e.completion, e.reward, e.correct) for e in store.episodes(run_id)]


def test_failing_policy_retries_then_stops_with_everything_saved_and_resumable(tmp_path,
                                                                               write_suite):
    path = write_suite(math_suite())  # 4 units of 3 tasks (batch 3: 3+3+1, then arith 3)
    failing = FailingPolicy(ok_calls=2)
    with pytest.raises(EvalStopped) as err:
        evaluate(failing, path, runs_dir=tmp_path, run_id="r", retries=2, retry_backoff=0)
    assert failing.calls == 2 + 3  # two good calls, then the first try and two retries
    message = str(err.value)
    assert "failed 3 time(s)" in message and "ConnectionError" in message
    assert "18 of 30 episodes saved" in message and "--resume" in message
    with ResultStore(tmp_path) as store:
        run = store.get_run("r")
        assert run.status == "failed" and "refused the connection" in run.error
        assert store.count_episodes("r") == 18
    with pytest.raises(EvalError, match="already exists"):
        evaluate(SeededPolicy(sleep=0), path, runs_dir=tmp_path, run_id="r")
    resumed = evaluate(SeededPolicy(sleep=0), path, runs_dir=tmp_path, run_id="r", resume=True)
    assert resumed.new_episodes == 12
    clean = evaluate(SeededPolicy(sleep=0), path, runs_dir=tmp_path, run_id="clean")
    with ResultStore(tmp_path) as store:
        assert _rows(store, "r") == _rows(store, "clean")
        assert store.get_run("r").sessions == 2 and store.get_run("r").status == "complete"
    assert resumed.summary["pass_at_k"] == clean.summary["pass_at_k"]


def test_transient_failures_are_retried(tmp_path, write_suite):
    flaky = FailingPolicy(ok_calls=1, recover_after=2)
    result = evaluate(flaky, write_suite(math_suite()), runs_dir=tmp_path, retries=2,
                      retry_backoff=0)
    assert flaky.failures == 2 and result.summary["episodes"] == 30


def test_resume_refuses_a_changed_configuration(tmp_path, write_suite):
    path = write_suite(math_suite())
    evaluate(NullPolicy(), path, runs_dir=tmp_path, run_id="r")
    with pytest.raises(EvalError, match="seed"):
        evaluate(NullPolicy(), path, runs_dir=tmp_path, run_id="r", resume=True, seed=1)
    with pytest.raises(EvalError, match="entries"):
        evaluate(NullPolicy(), path, runs_dir=tmp_path, run_id="r", resume=True,
                 sampling={"temperature": 0.1})
    again = evaluate(NullPolicy(), path, runs_dir=tmp_path, run_id="r", resume=True)
    assert again.new_episodes == 0 and again.summary["episodes"] == 30
    replaced = evaluate(NullPolicy(), path, runs_dir=tmp_path, run_id="r", overwrite=True)
    assert replaced.new_episodes == 30


def test_sampling_settings_reach_the_policy(tmp_path, write_suite):
    seen = []

    class Recorder(NullPolicy):
        def generate(self, batch, params, **kw):
            seen.append(params)
            return super().generate(batch, params, **kw)

    suite = math_suite(sampling={"temperature": 0.3, "max_completion_length": 77})
    evaluate(Recorder(), write_suite(suite), runs_dir=tmp_path, sampling={"top_p": 0.5})
    assert {(p.temperature, p.max_completion_length, p.top_p, p.n)
            for p in seen} == {(0.3, 77, 0.5, 3)}
    assert len({p.seed for p in seen}) == len(seen)  # one seed per unit
