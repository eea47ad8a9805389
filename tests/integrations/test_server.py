"""The HTTP server through FastAPI's TestClient: /score, /envs, sessions, limits, auth."""

from __future__ import annotations

import asyncio
import json
from typing import ClassVar

import pytest
from fastapi.testclient import TestClient

from rlvr_envs.integrations.server import ServerConfig, create_app
from rlvr_envs.integrations.sessions import (
    SessionNotFound,
    SessionStore,
    ThreadEpisodeRunner,
    TooManySessions,
)

TOKEN = "s3cret"
PROMPT = ("<|im_start|>system\nPut the answer in \\boxed{}, e.g. \\boxed{42}.<|im_end|>\n"
          "<|im_start|>user\nWhat is 6*7?<|im_end|>\n<|im_start|>assistant\n")


@pytest.fixture(scope="module")
def client():
    app = create_app(ServerConfig(workers=2, item_timeout=20, max_body_bytes=256 * 1024,
                                  max_batch=64, token=TOKEN, session_ttl=600))
    with TestClient(app, headers={"Authorization": f"Bearer {TOKEN}"}) as test_client:
        yield test_client


def score(client, **body):
    return client.post("/score", json=body)


def test_health_and_envs(client):
    health = client.get("/health", headers={"Authorization": ""}).json()  # no token needed
    assert health["status"] == "ok" and len(health["workers"]) == 2
    envs = client.get("/envs").json()
    assert envs["default"] == "rlvr/Math-v0" and "rlvr/Arithmetic-v0" in envs["envs"]


@pytest.mark.slow
def test_openrlhf_batch_cuts_the_prompt_off(client):
    queries = [PROMPT + "6*7 = \\boxed{42}<|im_end|>",
               PROMPT + "I am not sure.<|im_end|>",  # the prompt's own \boxed{42} must not count
               PROMPT + "\\boxed{41}<|im_end|>"]
    reply = score(client, query=queries, prompts=[PROMPT] * 3, labels=["42"] * 3).json()
    assert reply["rewards"] == [1.0, 0.0, 0.0] and reply["scores"] == [1.0, 0.0, 0.0]
    assert reply["extra_logs"]["correct"] == [1.0, 0.0, 0.0]
    assert [d["verifier"] for d in reply["details"]] == ["correct", "no_answer", "mismatch"]


@pytest.mark.slow
def test_label_forms(client):
    record = json.dumps({"prompt": "What is 6*7?", "answer": "42", "family": "math"})
    routed = json.dumps({"env": "rlvr/Arithmetic-v0", "env_kwargs": {"answer_format": "r1"},
                         "task": {"prompt": "What is 6*7?", "answer": "42"}})
    reply = score(client, responses=["\\boxed{42}", "\\boxed{42}", "<answer>42</answer>",
                                     "\\boxed{42}"],
                  labels=["42", record, routed, routed]).json()
    assert reply["rewards"] == [1.0, 1.0, 1.0, 0.0]
    # a procedural task id regenerates the task in the worker
    from rlvr_envs.registry import make

    env = make("rlvr/Math-v0")
    _, info = env.reset(seed=11)
    task = info["task"]
    reply = score(client, responses=[f"\\boxed{{{task['answer']}}}"],
                  labels=[task["source_id"]]).json()
    assert reply["rewards"] == [1.0] and reply["details"][0]["task_id"] == task["id"]


def test_prompt_missing_from_query_scores_zero_with_reason(client):
    reply = score(client, query=["\\boxed{42}"], prompts=["another prompt"], labels=["42"]).json()
    assert reply["rewards"] == [0.0]
    assert reply["details"][0]["verifier"] == "prompt_not_in_query"


@pytest.mark.slow
def test_large_completions_score_and_oversized_bodies_are_refused(client):
    big = "9" * 1_000_001  # this client's body limit is 256 KiB
    reply = score(client, responses=[big[:200_000] + "\\boxed{42}"], labels=["42"])
    assert reply.status_code == 200 and reply.json()["rewards"] == [1.0]
    assert score(client, responses=[big], labels=["42"]).status_code == 413


@pytest.mark.parametrize("body, fragment", [
    ({"query": ["a"], "labels": []}, "must match"),
    ({"query": ["a"], "responses": ["a"], "labels": ["1"]}, "exactly one"),
    ({"labels": ["1"]}, "exactly one"),
    ({"query": ["a"]}, "labels"),
    ({"query": "a", "labels": ["1"]}, "list"),
    ({"responses": ["a"], "labels": [""]}, "empty"),
    ({"responses": ["\\boxed{3}"],  # a label nested past the JSON parser's depth: 422, not 500
      "labels": ['{"env": "rlvr/Math-v0", "task": ' + "[" * 3000 + "]" * 3000 + "}"]},
     "nested too deeply"),
])
def test_malformed_requests_get_422_with_a_reason(client, body, fragment):
    reply = client.post("/score", json=body)
    assert reply.status_code == 422
    assert fragment in json.dumps(reply.json())


def test_not_json_and_unknown_env(client):
    reply = client.post("/score", content=b"{not json", headers={"Content-Type": "application/json"})
    assert reply.status_code == 422
    reply = score(client, responses=["x"], labels=["1"], env="rlvr/Mat-v0")
    assert reply.status_code == 404 and "rlvr/Math-v0" in reply.json()["detail"]


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("path, raw, fragment", [
    # past the JSON parser's depth: FastAPI answered 400 "There was an error parsing the body"
    ("/score", b'{"responses": ["x"], "labels": [' + nested(5000).encode() + b"]}",
     "nested too deeply to parse"),
    ("/step", b'{"session_id": "x", "action": ' + nested(100_000).encode() + b"}",
     "nested too deeply to parse"),
    # within it, but echoed whole in the validation error: encoding the reply raised (500)
    ("/score", b'{"responses": ["x"], "labels": [' + nested(600).encode() + b"]}",
     "valid integer"),
    ("/step", b'{"session_id": "x", "action": ' + nested(800).encode() + b"}", "valid string"),
    # a task whose metadata the env copies recursively (500)
    ("/reset", b'{"options": {"task": {"prompt": "p", "answer": "1", "metadata": {"a": '
     + nested(800).encode() + b"}}}}", "nested too deeply to use"),
    # not UTF-8, an integer over Python's 4300 digits: 400 before
    ("/score", b'{"responses": ["\xff"], "labels": ["1"]}', "byte 0xff at 16 is not UTF-8"),
    ("/score", b'{"responses": ["x"], "labels": [' + b"7" * 5000 + b"]}", "4300 digits"),
])
def test_bodies_the_parser_or_the_reply_cannot_take_get_422_with_a_reason(client, path, raw,
                                                                          fragment):
    reply = client.post(path, content=raw, headers={"Content-Type": "application/json"})
    assert reply.status_code == 422, reply.text
    assert fragment in reply.text and len(reply.content) < 4000, reply.text[:500]
    assert score(client, responses=["\\boxed{42}"], labels=["42"]).json()["rewards"] == [1.0]


def test_batch_limit(client):
    assert score(client, responses=["x"] * 65, labels=["1"] * 65).status_code == 413


def test_body_limit_by_length_and_by_stream(client):
    payload = json.dumps({"responses": ["x" * 300_000], "labels": ["1"]}).encode()
    assert client.post("/score", content=payload,
                       headers={"Content-Type": "application/json"}).status_code == 413

    def chunks():  # no Content-Length: the limit applies while reading
        for i in range(0, len(payload), 65536):
            yield payload[i:i + 65536]

    reply = client.post("/score", content=chunks(), headers={"Content-Type": "application/json"})
    assert reply.status_code == 413 and "exceeds" in reply.json()["detail"]


def test_auth(client):
    body = {"responses": ["\\boxed{1}"], "labels": ["1"]}
    assert client.post("/score", json=body, headers={"Authorization": ""}).status_code == 401
    assert client.post("/score", json=body,
                       headers={"Authorization": "Bearer wrong"}).status_code == 401
    ok = client.post(f"/score?token={TOKEN}", json=body, headers={"Authorization": ""})
    assert ok.status_code == 200 and ok.json()["rewards"] == [1.0]


def test_session_lifecycle(client):
    opened = client.post("/reset", json={"env": "rlvr/Arithmetic-v0", "seed": 5}).json()
    sid, task = opened["session_id"], opened["info"]["task"]
    assert task["prompt"] in opened["observation"]
    assert client.get("/health").json()["sessions"] >= 1
    step = client.post("/step", json={"session_id": sid, "action": f"\\boxed{{{task['answer']}}}"})
    assert step.status_code == 200
    body = step.json()
    assert body["reward"] == 1.0 and body["terminated"] and body["info"]["correct"]
    assert client.post("/step", json={"session_id": sid, "action": "x"}).status_code == 409
    assert client.delete(f"/session/{sid}").status_code == 200
    assert client.delete(f"/session/{sid}").status_code == 404
    assert client.post("/step", json={"session_id": sid, "action": "x"}).status_code == 404
    # same seed, same task (the env contract holds through the server)
    again = client.post("/reset", json={"env": "rlvr/Arithmetic-v0", "seed": 5}).json()
    assert again["info"]["task"]["id"] == task["id"]
    client.delete(f"/session/{again['session_id']}")


def test_session_request_errors(client):
    assert client.post("/reset", json={"options": {"bogus": 1}}).status_code == 422
    assert client.post("/reset", json={"env": "rlvr/Nope-v0"}).status_code == 404
    assert client.post("/reset", json={"sead": 1}).status_code == 422
    assert client.post("/step", json={"session_id": "nope", "action": "x"}).status_code == 404
    assert client.post("/step", json={"session_id": "nope"}).status_code == 422


@pytest.mark.parametrize("raw, fragment", [
    ('{"seed": NaN}', "finite number"),
    ('{"seed": 1e400}', "finite number"),
    ('{"seed": -1}', "greater than or equal to 0"),
    ('{"env_kwargs": {"difficulty": 99}}', "levels must be ints"),
    ('{"env_kwargs": {"nope": 1}}', "set by whoever starts the server"),
])
def test_bad_reset_requests_get_422_never_500(client, raw, fragment):
    reply = client.post("/reset", content=raw, headers={"Content-Type": "application/json"})
    assert reply.status_code == 422, reply.text
    assert fragment in reply.text


@pytest.mark.parametrize("env_kwargs", [5, [1], "abc", "[1]"])
def test_label_env_kwargs_of_the_wrong_type_get_422_naming_the_label(client, env_kwargs):
    label = json.dumps({"env": "rlvr/Arithmetic-v0", "env_kwargs": env_kwargs, "task": "42"})
    reply = score(client, responses=["\\boxed{42}", "\\boxed{42}"], labels=["42", label])
    assert reply.status_code == 422 and "label 1" in reply.json()["detail"]
    assert "JSON object" in reply.json()["detail"]


def test_lone_surrogates_in_completions_and_replies_do_not_break_encoding(client):
    raw = ('{"responses": ["\\\\boxed{\\ud800}", "\\ud800 \\\\boxed{42}"], '
           '"labels": ["42", "42"]}')
    reply = client.post("/score", content=raw, headers={"Content-Type": "application/json"})
    assert reply.status_code == 200, reply.text
    assert reply.json()["rewards"] == [0.0, 1.0]
    assert reply.json()["details"][0]["extracted_answer"] == "\ud800"  # escaped, round-trips
    opened = client.post("/reset", json={"env": "rlvr/Arithmetic-v0", "seed": 1}).json()
    step = client.post("/step", content=('{"session_id": "%s", "action": "\\\\boxed{\\ud800}"}'
                                         % opened["session_id"]),
                       headers={"Content-Type": "application/json"})
    assert step.status_code == 200 and step.json()["reward"] == 0.0


def test_bad_defaults_fail_at_start_not_on_every_request():
    with pytest.raises(ValueError, match="levels must be ints"):
        create_app(ServerConfig(env="rlvr/Math-v0", env_kwargs={"difficulty": 99}, workers=1))
    with pytest.raises(ValueError, match="workers must be >= 1"):
        ServerConfig(workers=0)
    with pytest.raises(ValueError, match="item_timeout"):
        ServerConfig(item_timeout=0)


class RecordingRunner(ThreadEpisodeRunner):
    closed: ClassVar[list] = []

    async def close(self):
        RecordingRunner.closed.append(self)
        await super().close()


def test_idle_sessions_expire_and_release_their_env():
    from rlvr_envs.registry import make

    now = [0.0]

    async def factory(env_id, env_kwargs):
        return RecordingRunner(make(env_id, **json.loads(env_kwargs)))

    async def scenario():
        store = SessionStore(ttl=10, max_sessions=2, runner_factory=factory, clock=lambda: now[0])
        a, _ = await store.open("rlvr/Arithmetic-v0", None, 1, None)
        now[0] = 6
        b, _ = await store.open("rlvr/Arithmetic-v0", None, 2, None)
        now[0] = 12  # a idle 12 s > ttl, b idle 6 s
        assert await store.reap() == 1
        with pytest.raises(SessionNotFound):
            store.get(a.id)
        store.get(b.id)  # still there (and touched)
        c, _ = await store.open("rlvr/Arithmetic-v0", None, 3, None)
        now[0] = 30  # full, both idle: opening another reaps them first
        d, _ = await store.open("rlvr/Arithmetic-v0", None, 4, None)
        assert len(store) == 1 and store.closed_idle == 3
        e, _ = await store.open("rlvr/Arithmetic-v0", None, 5, None)
        with pytest.raises(TooManySessions):  # full of live sessions
            await store.open("rlvr/Arithmetic-v0", None, 6, None)
        await store.close_all()
        return a, b, c, d, e

    sessions = asyncio.run(scenario())
    assert RecordingRunner.closed == [s.runner for s in sessions]


@pytest.mark.parametrize("env_kwargs", [
    {"sandbox": "local-unsafe"},                       # runs a completion as a host process
    {"limits": {"wall_time": 3600, "memory_mb": 65536}},
    {"max_code_chars": 10_000_000},
    {"timeout": 1000},                                 # the math verifier's CPU budget
    {"path": "/etc/shadow"},                           # files the server reads
])
def test_a_request_cannot_set_where_or_how_code_runs(client, env_kwargs):
    """Where code runs, its limits, the verifiers' budgets and the files read are the server's
    (`rlvr serve --env-kwargs`): neither a label nor the request may set them."""
    label = json.dumps({"env": "rlvr/Code-v0", "env_kwargs": env_kwargs, "task": "x"})
    reply = score(client, responses=["print(1)"], labels=[label])
    assert reply.status_code == 422 and "label 0" in reply.json()["detail"], reply.text
    assert "set by whoever starts the server" in reply.json()["detail"]
    reply = score(client, responses=["\\boxed{42}"], labels=["42"], env_kwargs=env_kwargs)
    assert reply.status_code == 422, reply.text
    reply = client.post("/reset", json={"env": "rlvr/Arithmetic-v0", "env_kwargs": env_kwargs})
    assert reply.status_code == 422 and "set by whoever starts the server" in reply.text


def test_a_request_may_choose_tasks_and_answer_format(client):
    label = json.dumps({"env": "rlvr/Arithmetic-v0", "env_kwargs": {"answer_format": "r1"},
                        "task": {"prompt": "What is 6*7?", "answer": "42"}})
    reply = score(client, responses=["<answer>42</answer>"], labels=[label])
    assert reply.status_code == 200 and reply.json()["rewards"] == [1.0], reply.text
    opened = client.post("/reset", json={"env": "rlvr/Arithmetic-v0", "seed": 1,
                                         "env_kwargs": {"difficulty": 2}})
    assert opened.status_code == 200, opened.text


def test_the_server_s_own_kwargs_hold_under_a_request_s():
    from rlvr_envs.integrations.server import request_kwargs
    config = ServerConfig(env="rlvr/Code-v0", env_kwargs={"sandbox": "docker",
                                                          "limits": {"wall_time": 5}})
    merged = json.loads(request_kwargs("rlvr/Code-v0", json.dumps({"partial_credit": True}),
                                       config))
    assert merged == {"sandbox": "docker", "limits": {"wall_time": 5}, "partial_credit": True}
    # the server's own value, repeated, is no change; another env does not inherit it
    assert json.loads(request_kwargs("rlvr/Code-v0", '{"sandbox": "docker"}', config)) == \
        {"sandbox": "docker", "limits": {"wall_time": 5}}
    with pytest.raises(ValueError, match="sandbox"):
        request_kwargs("rlvr/HumanEval-v0", '{"sandbox": "docker"}', config)


@pytest.mark.parametrize("label", [
    json.dumps({"env": "rlvr/Arithmetic-v0",
                "task": {"prompt": "p", "answer": "42", "metadata": {"x": [[[[0]]]]}}})
    .replace("[[[[0]]]]", "[" * 3000 + "0" + "]" * 3000),
    json.dumps({"env": "rlvr/Arithmetic-v0", "env_kwargs": "[" * 5000, "task": "42"}),
])
def test_a_label_nested_too_deeply_gets_422_and_the_workers_stay(client, label):
    before = client.get("/health").json()["workers"]
    reply = score(client, responses=["\\boxed{42}"], labels=[label])
    assert reply.status_code == 422, reply.text
    assert client.get("/health").json()["workers"] == before
    assert score(client, responses=["\\boxed{42}"], labels=["42"]).json()["rewards"] == [1.0]
