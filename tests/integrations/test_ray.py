"""Ray fan-out on a local cluster: batch scorer, vector env, and the server's Ray backend."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="the `ray` extra is not installed")
pytestmark = pytest.mark.slow  # starts a local Ray cluster

import pool_helpers
from fastapi.testclient import TestClient
from server_helpers import gold_of

from rlvr_envs.integrations.ray import RayBatchScorer, RayScoringBackend, RayVectorEnv
from rlvr_envs.integrations.server import ServerConfig, create_app
from rlvr_envs.integrations.trl import grpo_dataset


@pytest.fixture(scope="module", autouse=True)
def local_cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"RAY_DEDUP_LOGS": "0"}})
    yield
    ray.shutdown()


def test_batch_scorer_matches_local_scoring():
    dataset = grpo_dataset("rlvr/Math-v0", 10, seed=5)
    truths = dataset["ground_truth"]
    completions = [f"\\boxed{{{gold_of(g)}}}" if i % 3 else "\\boxed{-1}"
                   for i, g in enumerate(truths)]
    scorer = RayBatchScorer("rlvr/Math-v0", chunk_size=3)
    records = scorer.score(truths, completions)
    assert [r["reward"] for r in records] == [0.0 if i % 3 == 0 else 1.0 for i in range(10)]
    assert [r["task_id"] for r in records] == dataset["task_id"]
    from rlvr_envs.integrations.trl import EnvReward

    local = EnvReward("rlvr/Math-v0")(dataset["prompt"], completions, ground_truth=truths)
    assert scorer.rewards(truths, completions) == local


def test_vector_env_steps_in_parallel_with_next_step_autoreset():
    envs = RayVectorEnv("rlvr/Arithmetic-v0", 3)
    try:
        observations, infos = envs.reset(seed=10)
        assert len(observations) == 3 and all(isinstance(o, str) for o in observations)
        answers, ids = infos["task"]["answer"], infos["task"]["id"]  # gymnasium's vector layout
        actions = [f"\\boxed{{{answers[0]}}}", "\\boxed{nope}", f"\\boxed{{{answers[2]}}}"]
        _, rewards, terminated, truncated, step_infos = envs.step(actions)
        assert rewards.tolist() == [1.0, 0.0, 1.0]
        assert terminated.all() and not truncated.any()
        assert list(step_infos["correct"]) == [True, False, True]
        observations, rewards, terminated, _, infos = envs.step(["ignored"] * 3)  # autoreset
        assert rewards.tolist() == [0.0] * 3 and not terminated.any()
        assert all(o for o in observations) and infos["_task"].all()
        # same seeds, same tasks as in-process envs (determinism across processes)
        import gymnasium as gym

        local = gym.make("rlvr/Arithmetic-v0")
        assert local.reset(seed=11)[1]["task"]["id"] == ids[1]
    finally:
        envs.close()


def test_server_on_ray_scores_and_runs_sessions():
    app = create_app(ServerConfig(ray_address="local", item_timeout=30))
    with TestClient(app) as client:
        assert client.get("/health").json()["backend"] == "RayScoringBackend"
        reply = client.post("/score", json={"responses": ["\\boxed{42}", "\\boxed{4}"],
                                            "labels": ["42", "42"]}).json()
        assert reply["rewards"] == [1.0, 0.0]
        opened = client.post("/reset", json={"env": "rlvr/Arithmetic-v0", "seed": 3}).json()
        gold = opened["info"]["task"]["answer"]
        step = client.post("/step", json={"session_id": opened["session_id"],
                                          "action": f"\\boxed{{{gold}}}"}).json()
        assert step["reward"] == 1.0 and step["terminated"]
        assert client.delete(f"/session/{opened['session_id']}").status_code == 200
    assert np.isfinite(reply["rewards"]).all()


def test_ray_backend_deadline_does_not_count_the_queue_behind_a_batch():
    """Six 0.6 s items on a 2-CPU cluster, 1.5 s each: the last ones would wait 1.2 s inside
    Ray, so a deadline counted from submission timed them out; items are sent as CPUs free
    up and each deadline starts then. A stuck item still times out, alone."""
    ray.cloudpickle.register_pickle_by_value(pool_helpers)  # the workers cannot import tests/
    backend = RayScoringBackend(item_timeout=1.5, work=pool_helpers.hostile_or_fine)

    async def scenario():
        await backend.score([("ok", 0)] * 2)  # Ray's worker processes have started
        return await backend.score([("sleep", 0.6)] * 6), await backend.score(
            [("sleep", 30), ("ok", 0), ("crash", 0)])

    queued, mixed = asyncio.run(scenario())
    assert backend.max_in_flight == 2
    assert [r["verifier"] for r in queued] == ["fine"] * 6
    assert [r["verifier"] for r in mixed] == ["server_timeout", "fine", "worker_crashed"]
    assert mixed[0]["reward"] == mixed[2]["reward"] == 0.0

