"""OpenRLHF's remote reward contract against a live `rlvr serve` (CLI → uvicorn, loopback):
requests built and replies read exactly as OpenRLHF does."""

from __future__ import annotations

import asyncio
import importlib.util
import json

import aiohttp
import pytest
import requests
from server_helpers import TOKEN

import rlvr_envs.integrations.openrlhf as openrlhf_module
from rlvr_envs.integrations.openrlhf import export_openrlhf

PROMPT = ("<|im_start|>system\nGive the answer in \\boxed{}, e.g. \\boxed{42}.<|im_end|>\n"
          "<|im_start|>user\nCompute 12 + 30.<|im_end|>\n<|im_start|>assistant\n")


async def fetch_rewards_via_http(reward_endpoints, queries_list, prompts_list, labels_list):
    """openrlhf/utils/agent.py SingleTurnAgentExecutor._fetch_rewards_via_http (current)."""
    num_servers = len(reward_endpoints)
    batch_size = (len(queries_list) + num_servers - 1) // num_servers
    timeout = aiohttp.ClientTimeout(total=180)
    tasks = []
    for i, rm in enumerate(reward_endpoints):
        start_idx, end_idx = i * batch_size, min((i + 1) * batch_size, len(queries_list))
        payload = {"query": queries_list[start_idx:end_idx],
                   "prompts": prompts_list[start_idx:end_idx],
                   "labels": labels_list[start_idx:end_idx]}

        async def _post_request(url, data):
            async with aiohttp.ClientSession(timeout=timeout) as session:
                async with session.post(url, json=data) as response:
                    response.raise_for_status()
                    return await response.json()

        tasks.append(asyncio.create_task(_post_request(rm, payload)))
    return await asyncio.gather(*tasks)


def request_api_wrapper(url, data):
    """openrlhf/utils/remote_rm_utils.py request_api_wrapper (before the agent refactor)."""
    headers = {"Content-Type": "application/json"}
    response = requests.post(url=url, json=data, headers=headers, timeout=180)
    response.raise_for_status()
    return response.json()


def executor_output(rewards_info):
    """How SingleTurnAgentExecutor.execute folds one reply into the rollout output."""
    score_value = rewards_info.get("scores")
    if score_value is None:
        score_value = rewards_info.get("rewards")
    return {"reward": rewards_info.get("rewards"), "scores": score_value,
            "extra_logs": rewards_info.get("extra_logs") or {}}


@pytest.mark.slow
def test_single_turn_executor_contract(live_server):
    url = f"{live_server}/get_reward?token={TOKEN}"  # OpenRLHF only takes a URL
    responses = ["12 + 30 = \\boxed{42}<|im_end|>", "No idea.<|im_end|>"]
    for response, expected in zip(responses, [1.0, 0.0]):
        query = PROMPT + response  # decode(prompt tokens + action tokens), special tokens kept
        (info,) = asyncio.run(fetch_rewards_via_http([url], [query], [PROMPT], ["42"]))
        out = executor_output(info)
        assert out["reward"] == [expected] and out["scores"] == [expected]
        # samples_generator makes tensors of these: numbers (or lists of numbers) only
        for value in out["extra_logs"].values():
            assert isinstance(value, list) and all(isinstance(v, float) for v in value)


@pytest.mark.slow
def test_sharded_over_two_endpoints_and_legacy_client(live_server):
    urls = [f"{live_server}/score?token={TOKEN}", f"{live_server}/get_reward?token={TOKEN}"]
    queries = [PROMPT + f"\\boxed{{{v}}}" for v in (42, 41, 42, 40, 42)]
    replies = asyncio.run(fetch_rewards_via_http(urls, queries, [PROMPT] * 5, ["42"] * 5))
    assert [r for reply in replies for r in reply["rewards"]] == [1.0, 0.0, 1.0, 0.0, 1.0]
    legacy = request_api_wrapper(urls[0], {"query": queries, "prompts": [PROMPT] * 5,
                                           "labels": ["42"] * 5})
    assert legacy["rewards"] == [1.0, 0.0, 1.0, 0.0, 1.0]


def test_without_token_is_refused(live_server):
    reply = requests.post(f"{live_server}/score", json={"query": ["x"], "labels": ["1"]}, timeout=30)
    assert reply.status_code == 401


@pytest.mark.slow
def test_exported_dataset_labels_round_trip(live_server, tmp_path):
    path = tmp_path / "prompts.jsonl"
    assert export_openrlhf("rlvr/Arithmetic-v0", 4, path, seed=2) == 4
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert all([m["role"] for m in row["prompt"]] == ["system", "user"] for row in rows)
    golds = [json.loads(row["label"])["task"]["answer"] for row in rows]
    # the label routes itself: the server's default env is Math, these are Arithmetic tasks
    reply = request_api_wrapper(f"{live_server}/score?token={TOKEN}", {
        "query": [f"P{i}\\boxed{{{g}}}" for i, g in enumerate(golds)],
        "prompts": [f"P{i}" for i in range(4)], "labels": [row["label"] for row in rows]})
    assert reply["rewards"] == [1.0] * 4


def test_local_reward_func_file_as_openrlhf_loads_it():
    spec = importlib.util.spec_from_file_location("reward_func", openrlhf_module.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    result = module.reward_func([PROMPT + "\\boxed{42}", PROMPT + "\\boxed{7}"], [PROMPT] * 2,
                                ["42", "42"])
    assert result["rewards"] == [1.0, 0.0] and result["scores"] == [1.0, 0.0]
    with pytest.raises(ValueError, match="cannot be scored"):
        module.reward_func(["x"], [""], [""])


def test_numeric_labels_are_accepted(live_server):
    """OpenRLHF datasets often carry numeric answers: `"labels": [42]` scores like "42"."""
    queries = [PROMPT + "\\boxed{42}", PROMPT + "\\boxed{2.5}", PROMPT + "\\boxed{7}"]
    reply = request_api_wrapper(f"{live_server}/score?token={TOKEN}", {
        "query": queries, "prompts": [PROMPT] * 3, "labels": [42, 2.5, 8.0]})
    assert reply["rewards"] == [1.0, 1.0, 0.0]
    refused = requests.post(f"{live_server}/score?token={TOKEN}",
                            json={"query": [PROMPT + "1"], "prompts": [PROMPT], "labels": [True]},
                            timeout=30)
    assert refused.status_code == 422 and "labels" in refused.text


def test_numeric_label_text():
    from rlvr_envs.integrations.openrlhf import numeric_label

    assert [numeric_label(v) for v in (42, -3, 2.0, 0.25, 1e21)] == ["42", "-3", "2", "0.25",
                                                                     "1000000000000000000000"]
    with pytest.raises(ValueError, match="finite"):
        numeric_label(float("nan"))


@pytest.mark.parametrize("template, reply", [
    (PROMPT, "It is \\boxed{41}."),
    ("<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\ne.g. \\boxed{42}<|eot_id|>"
     "<|start_header_id|>assistant<|end_header_id|>\n\n", "It is \\boxed{41}."),
    ("<｜begin▁of▁sentence｜><｜User｜>e.g. \\boxed{42}<｜Assistant｜>", "<think>x</think>\\boxed{41}"),
    ("<s>[INST] e.g. \\boxed{42} [/INST]", " \\boxed{41}"),
])
def test_a_query_without_its_prompt_is_cut_at_the_last_assistant_turn(template, reply):
    """OpenRLHF may send no prompts: the prompt's own example answer (\\boxed{42}, the gold)
    must not be scored, so the response starts after the chat template's assistant marker."""
    for prompt in (None, ""):
        assert openrlhf_module.response_from_query(template + reply, prompt).strip() == reply.strip()
    rewards = openrlhf_module.reward_func([template + reply], [""], ["42"])["rewards"]
    assert list(rewards) == [0.0]
    assert openrlhf_module.response_from_query("plain \\boxed{42}", None) == "plain \\boxed{42}"
