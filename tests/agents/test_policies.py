"""Policies: resolve_policy, the HF policy on the tiny model, the OpenAI-compatible client
against a local fake server, and the tool-calling loop."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import threading
import time

import pytest
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from rlvr_envs.agents import SamplingParams, resolve_policy
from rlvr_envs.agents.multiturn import format_tool_call, parse_tool_calls, run_tool_loop
from rlvr_envs.agents.scripted import GoldPolicy, NullPolicy
from .magic import MagicToolsEnv


def test_importing_agents_and_resolving_scripted_policies_does_not_import_torch():
    code = ("import sys, rlvr_envs.agents as a; a.resolve_policy('null'); "
            "a.resolve_policy('openai:http://127.0.0.1:1/v1#m'); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_resolve_policy_names():
    assert isinstance(resolve_policy("gold"), GoldPolicy)
    assert isinstance(resolve_policy("null"), NullPolicy)
    endpoint = resolve_policy("openai:http://127.0.0.1:8000/v1#my-model")
    assert endpoint.base_url == "http://127.0.0.1:8000/v1" and endpoint.model == "my-model"
    with pytest.raises(ValueError, match="openai:<base_url>#<model>"):
        resolve_policy("openai:http://127.0.0.1:8000/v1")
    with pytest.raises(ValueError, match="does not exist"):
        resolve_policy("/no/such/model/dir")


@pytest.mark.slow
def test_hf_policy_returns_token_ids_and_logprobs(tiny_model):
    policy = resolve_policy(str(tiny_model))
    chats = [[{"role": "user", "content": "Say the magic word."}]] * 2
    params = SamplingParams(n=3, max_completion_length=6, seed=1)
    out = policy.generate(chats, params)
    assert [len(g) for g in out] == [3, 3]
    for completion in (c for g in out for c in g):
        assert completion.num_tokens == len(completion.token_ids) == len(completion.logprobs)
        assert 1 <= completion.num_tokens <= 6
        assert all(lp <= 0.0 for lp in completion.logprobs)
    again = policy.generate(chats, params)
    assert [[c.text for c in g] for g in again] == [[c.text for c in g] for g in out]
    greedy = policy.generate(chats[:1],
                             SamplingParams(n=2, temperature=0, max_completion_length=6))
    assert greedy[0][0].token_ids == greedy[0][1].token_ids


# -- OpenAI-compatible client against a fake server on 127.0.0.1 -----------------------------

@pytest.fixture(scope="module")
def fake_server():
    app = FastAPI()
    state = {"in_flight": 0, "max_in_flight": 0, "calls": 0, "fail_first": set()}

    @app.post("/v1/chat/completions")
    async def chat(request: Request):
        body = await request.json()
        state["calls"] += 1
        content = body["messages"][-1]["content"]
        if content.startswith("flaky") and content not in state["fail_first"]:
            state["fail_first"].add(content)
            return JSONResponse({"error": "busy"}, status_code=503)
        if content == "always-down":
            return JSONResponse({"error": "down"}, status_code=503)
        if content == "bad-request":
            return JSONResponse({"error": "no"}, status_code=400)
        state["in_flight"] += 1
        state["max_in_flight"] = max(state["max_in_flight"], state["in_flight"])
        await asyncio.sleep(0.05)
        state["in_flight"] -= 1
        choices = [{"index": i, "message": {"role": "assistant", "content": f"echo {content} {i}"},
                    "finish_reason": "stop"} for i in range(body.get("n", 1))]
        return {"choices": choices, "usage": {"completion_tokens": 3}}

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/v1", state
    server.should_exit = True
    thread.join(timeout=5)


@pytest.mark.slow
def test_openai_client_concurrency_and_choices(fake_server):
    url, state = fake_server
    policy = resolve_policy(f"openai:{url}#fake", concurrency=3)
    chats = [[{"role": "user", "content": f"q{i}"}] for i in range(9)]
    out = policy.generate(chats, SamplingParams(n=2))
    assert [[c.text for c in g] for g in out] == [[f"echo q{i} 0", f"echo q{i} 1"]
                                                  for i in range(9)]
    assert 1 < state["max_in_flight"] <= 3


@pytest.mark.slow
def test_openai_client_retries_then_fails_clearly(fake_server):
    from rlvr_envs.agents.openai_policy import EndpointError

    url, _ = fake_server
    policy = resolve_policy(f"openai:{url}#fake", max_retries=2)
    out = policy.generate([[{"role": "user", "content": "flaky-1"}]], SamplingParams())
    assert out[0][0].text == "echo flaky-1 0"
    with pytest.raises(EndpointError, match="after 3 attempts.*503"):
        policy.generate([[{"role": "user", "content": "always-down"}]], SamplingParams())
    with pytest.raises(EndpointError, match="HTTP 400"):
        policy.generate([[{"role": "user", "content": "bad-request"}]], SamplingParams())


# -- tool-calling loop ---------------------------------------------------------------------------

def test_parse_tool_calls():
    text = ("think <tool_call>{\"name\": \"look\", \"arguments\": {}}</tool_call> then "
            "<tool_call>{bad json}</tool_call>" + format_tool_call("submit", {"answer": "yes"}))
    assert parse_tool_calls(text) == [{"name": "look", "arguments": {}},
                                      {"name": "submit", "arguments": {"answer": "yes"}}]


class ScriptedToolUser:
    """Looks first, then submits what the observation said."""

    name = "scripted-tools"

    def generate(self, batch, params, **_):
        from rlvr_envs.core.policy import Completion

        messages = batch[0]
        if messages[-1]["role"] == "tool":
            word = messages[-1]["content"].rsplit(" ", 1)[-1].rstrip(".")
            return [[Completion(format_tool_call("submit", {"answer": word}))]]
        return [[Completion(format_tool_call("look"))]]


def test_tool_loop_runs_a_policy_to_submit():
    env = MagicToolsEnv()
    episode = run_tool_loop(ScriptedToolUser(), env, env.source[0])
    assert episode.terminated and episode.reward == pytest.approx(1.1) and episode.turns == 2
    assert [m["role"] for m in episode.messages][-3:] == ["assistant", "tool", "assistant"]
    assert env.calls == [["look"], ["submit"]]
    silent = run_tool_loop(NullPolicy(), MagicToolsEnv(max_turns=3), None, seed=0)
    assert silent.reward == 0.0 and silent.turns == 3


@pytest.mark.slow
def test_token_rollout_masks_env_tokens(tiny_model):
    from rlvr_envs.agents.models import load_model_and_tokenizer
    from rlvr_envs.agents.multiturn import token_rollout

    model, tokenizer = load_model_and_tokenizer(tiny_model)
    env = MagicToolsEnv(max_turns=3)
    episode = token_rollout(model, tokenizer, env, env.source[0], max_turns=3,
                            max_turn_tokens=5, max_total_tokens=200)
    assert len(episode.completion_ids) == len(episode.env_mask) == len(episode.logprobs)
    assert episode.turns == 3 and 0 in episode.env_mask and 1 in episode.env_mask
    model_tokens = [t for t, m in zip(episode.completion_ids, episode.env_mask) if m]
    env_text = tokenizer.decode([t for t, m in zip(episode.completion_ids, episode.env_mask)
                                 if not m])
    assert "no tool call" in env_text  # the env's observation sits in the masked part
    assert all(lp == 0.0 for lp, m in zip(episode.logprobs, episode.env_mask) if not m)
    assert len(model_tokens) <= 15


@pytest.mark.slow
def test_token_rollout_passes_the_tool_schemas_to_the_chat_template(tiny_model):
    from rlvr_envs.agents.models import load_model_and_tokenizer
    from rlvr_envs.agents.multiturn import token_rollout
    from rlvr_envs.agents.tiny import CHATML_TEMPLATE

    model, tokenizer = load_model_and_tokenizer(tiny_model)
    tokenizer.chat_template = ("{% if tools %}{{ '<|im_start|>system\ntool: ' + tools|map("
                               "attribute='function.name')|join(', ') + '<|im_end|>\n' }}"
                               "{% endif %}" + CHATML_TEMPLATE)
    env = MagicToolsEnv(max_turns=2)
    episode = token_rollout(model, tokenizer, env, env.source[0], max_turns=2,
                            max_turn_tokens=4, max_total_tokens=120)
    assert "tool: look, submit" in tokenizer.decode(episode.prompt_ids)


def test_fit_chat_keeps_the_task_and_the_newest_turns():
    """A long episode is cut to the prompt budget: system message and task kept, the oldest
    turns dropped first (with a note), and an overlong last turn keeps its tail."""
    from rlvr_envs.agents.generation import encode, fit_chat, render_prompt
    from rlvr_envs.agents.tiny import train_tiny_tokenizer

    tok = train_tiny_tokenizer()

    def length(chat):
        return len(encode(tok, render_prompt(tok, chat)))

    chat = [{"role": "system", "content": "tools: submit"}, {"role": "user", "content": "task"}]
    for i in range(6):
        chat += [{"role": "assistant", "content": f"call {i} " + "yes " * 20},
                 {"role": "tool", "content": f"output {i} " + "no " * 20}]
    assert fit_chat(tok, chat, length(chat)) == chat  # fits: unchanged
    budget = length(chat[:2] + chat[-3:]) + 20
    cut = fit_chat(tok, chat, budget)
    assert length(cut) <= budget and cut[:2] == chat[:2] and cut[-1] == chat[-1]
    assert "earlier message(s) left out" in cut[2]["content"] and len(cut) < len(chat)
    tail = fit_chat(tok, chat[:2] + [{"role": "tool", "content": "no " * 400 + "END"}],
                    length(chat[:2]) + 40)
    assert length(tail) <= length(chat[:2]) + 40 and tail[-1]["content"].endswith("END")


def test_hf_policy_cuts_long_prompts_and_sets_threads(tiny_model):
    import torch

    from rlvr_envs.agents.hf_policy import HFPolicy

    before = torch.get_num_threads()
    try:
        policy = HFPolicy(str(tiny_model), max_prompt_tokens=60, threads=1)
        chat = [{"role": "user", "content": "task"}] + [
            {"role": "assistant" if i % 2 else "tool", "content": "yes no " * 30}
            for i in range(8)]
        out = policy.generate([chat], SamplingParams(max_completion_length=4, seed=0))[0][0]
        assert len(out.extra["prompt_ids"]) <= 60 and torch.get_num_threads() == 1
        # without a budget, the model's own context (1024) less the new tokens
        assert HFPolicy(str(tiny_model)).prompt_budget(24) is None  # not loaded yet
        assert policy.prompt_budget(24) == 60
        policy.max_prompt_tokens = None
        assert policy.prompt_budget(24) == 1000
    finally:
        torch.set_num_threads(before)
