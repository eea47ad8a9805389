"""The HTTP reward and env server (`rlvr serve`): FastAPI app, run by uvicorn.

Endpoints
- `POST /score` (alias `/get_reward`): batch scoring in OpenRLHF's remote-reward contract,
  `{"query", "prompts", "labels"}` → `{"rewards", "scores", "extra_logs", "details"}`; a
  request may send `responses` instead of `query`, and name another `env` / `env_kwargs`.
- `GET /envs`: registered ids with descriptions, and the server's default.
- `POST /reset`, `POST /step`, `DELETE /session/{id}`: remote episodes (see `sessions`).
- `GET /health`: liveness plus pool and session counts (no auth).

Scoring runs in a process pool (`pool.ScoringPool`, items of concurrent requests taking
turns) or on a Ray cluster, never on the event loop. Bodies over `max_body_bytes` get 413,
malformed requests 422 with the reason (a body the JSON parser cannot take too: nested past its
depth, not UTF-8; `JSONBodyRequest`), a missing or wrong bearer token 401 (the token may
also come as `?token=`, for clients such as OpenRLHF that only take a URL). No input gets a
500: replies are encoded as ASCII JSON (a lone surrogate in a completion is escaped, a
non-finite number becomes null; a validation error echoes a large or deep input as a short
repr), and the env and kwargs are built once at start so a bad
default fails there, not on every request. Slow clients and the connection cap are handled
by `http_limits`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt

from rlvr_envs.integrations.http_limits import ConnectionLimits, check_binding, guarded_protocol
from rlvr_envs.integrations.openrlhf import build_items, reply
from rlvr_envs.integrations.scoring import kwargs_key, to_jsonable
from rlvr_envs.integrations.sessions import (
    SessionEnded,
    SessionNotFound,
    SessionStore,
    TooManySessions,
)


@dataclass
class ServerConfig:
    env: str = "rlvr/Math-v0"
    env_kwargs: dict | None = None
    workers: int | None = None
    item_timeout: float = 30.0
    max_body_bytes: int = 32 * 1024 * 1024
    max_batch: int = 4096
    token: str | None = None
    session_ttl: float = 600.0
    max_sessions: int = 256
    ray_address: str | None = None
    limits: ConnectionLimits = ConnectionLimits()

    def __post_init__(self) -> None:
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers must be >= 1 (or None for one per CPU), got {self.workers}")
        for name in ("item_timeout", "session_ttl"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0 seconds, got {getattr(self, name)!r}")
        for name in ("max_body_bytes", "max_batch", "max_sessions"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)!r}")


#: env kwargs a request (or a label in it) may set: which tasks, and how answers are read.
#: Where and under what limits code runs, which files are read, what a verifier may spend and
#: whether the hack checks apply belong to whoever starts the server (`rlvr serve
#: --env-kwargs`): a request naming any other key, with another value than the server's own,
#: is refused (422)
REQUEST_KWARGS = frozenset({"answer_format", "dataset", "difficulty", "families", "levels",
                            "partial_credit", "source", "split", "statement", "weights"})
_UNSET = object()
#: the 422 reason for a body that parses but holds a value too deep to use (a task's metadata
#: hundreds of levels deep, read recursively by the env)
TOO_DEEP = ("a value in the request is nested too deeply to use; expected values nested at "
            "most a few hundred levels deep")


def request_kwargs(env_id: str, kwargs_json: str, config: ServerConfig) -> str:
    """The kwargs (canonical JSON) an item of a request runs with: the server's own for its
    env, with what the request may set (`REQUEST_KWARGS`) on top. ValueError names a key the
    request may not set."""
    given = json.loads(kwargs_json)
    own = dict(config.env_kwargs or {}) if env_id == config.env else {}
    refused = sorted(key for key, value in given.items()
                     if key not in REQUEST_KWARGS and own.get(key, _UNSET) != value)
    if refused:
        raise ValueError(f"env_kwargs {refused} are set by whoever starts the server (rlvr serve "
                         f"--env-kwargs), not by a request; a request may set "
                         f"{sorted(REQUEST_KWARGS)}")
    return kwargs_key({**own, **given})


class SafeJSONResponse(JSONResponse):
    """JSON that always encodes: ASCII escapes (a lone surrogate from a completion cannot break
    the UTF-8 encoding) and non-finite floats as null (JSON has no NaN)."""

    def render(self, content: Any) -> bytes:
        return json.dumps(to_jsonable(content), ensure_ascii=True, allow_nan=False,
                          separators=(",", ":")).encode("ascii")


class JSONBodyRequest(Request):
    """A request whose JSON body fails to parse only as `json.JSONDecodeError`, so FastAPI
    answers 422 naming the reason; a body nested past the parser's depth, with bytes that are
    not UTF-8, or with an integer over Python's 4300 digits otherwise reaches FastAPI as
    another error, which it answers with 400 "There was an error parsing the body"."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            body = await self.body()
            try:
                self._json = json.loads(body)
            except json.JSONDecodeError:
                raise
            except RecursionError:
                raise json.JSONDecodeError(
                    "expected a JSON body nested at most a few hundred levels deep; this one "
                    "is nested too deeply to parse", "", 0) from None
            except UnicodeDecodeError as err:
                raise json.JSONDecodeError(
                    f"expected UTF-8 JSON; byte 0x{err.object[err.start]:02x} at {err.start} "
                    f"is not UTF-8", "", 0) from None
            except ValueError as err:  # an integer literal over the digit limit
                raise json.JSONDecodeError(f"expected JSON this server can read: {err}",
                                           "", 0) from None
        return self._json


class JSONBodyRoute(APIRoute):
    """Every endpoint reads its body through `JSONBodyRequest`."""

    def get_route_handler(self):
        handler = super().get_route_handler()

        async def route(request: Request):
            return await handler(JSONBodyRequest(request.scope, request.receive))
        return route


def _small(value: Any, budget: int = 64) -> bool:
    """Whether `value` (parsed JSON) has at most `budget` parts and no string over 200
    characters; walked without recursion, and without looking past the budget."""
    stack = [value]
    while stack:
        item = stack.pop()
        budget -= 1
        if budget < 0 or isinstance(item, str) and len(item) > 200:
            return False
        if isinstance(item, (dict, list)) and len(item) > budget:
            return False
        if isinstance(item, dict):
            stack.extend(part for pair in item.items() for part in pair)
        elif isinstance(item, list):
            stack.extend(item)
    return True


def bounded_errors(errors: list[dict]) -> list[dict]:
    """Validation errors with each `input` the request sent kept when it is small, else cut
    to a short repr: echoed whole, a value nested hundreds of levels deep made encoding the
    reply raise (a 500), and a large one made the reply several times the body."""
    from rlvr_envs.verify.code.wire import short_repr

    return [error if _small(error.get("input")) else {**error, "input": short_repr(error["input"])}
            for error in errors]


class ScoreRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")

    query: list[str] | None = Field(None, description="prompt + response texts (OpenRLHF)")
    prompts: list[str | None] | None = Field(None, description="prompt texts, cut from query")
    labels: list[StrictInt | StrictFloat | str | dict] = Field(
        ..., description="ground truth per sample: a task record, a task id, or a math gold "
                         "answer (a number is read as its decimal text)")
    responses: list[str] | None = Field(None, description="responses alone, instead of query")
    env: str | None = None
    env_kwargs: dict | None = None


class ResetRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    env: str | None = None
    env_kwargs: dict | None = None
    seed: int | None = Field(None, ge=0, description="reset seed (>= 0)")
    options: dict | None = None


class StepRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session_id: str
    action: str


class BodyLimitMiddleware:
    """413 for bodies over `max_bytes`: by Content-Length up front, or, for a streamed body
    without one, by buffering it up to the limit before the app sees it."""

    def __init__(self, app, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit():
            if int(declared) > self.max_bytes:
                return await self._refuse(send)
            return await self.app(scope, receive, send)  # the server enforces the length
        body, more = bytearray(), True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                return await self._refuse(send)
            more = message.get("more_body", False)
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        return await self.app(scope, replay, send)

    async def _refuse(self, send):
        response = JSONResponse({"detail": f"request body exceeds {self.max_bytes} bytes"},
                                status_code=413)
        await response({"type": "http"}, None, send)


def _local_pool(config: ServerConfig):
    from rlvr_envs.integrations.pool import ScoringPool

    return ScoringPool(config.workers, item_timeout=config.item_timeout,
                       warm_envs=[(config.env, kwargs_key(config.env_kwargs))])


def create_app(config: ServerConfig | None = None) -> FastAPI:
    config = config or ServerConfig()
    from rlvr_envs.registry import env_entry, list_envs

    check_default_env(config)
    state: dict[str, Any] = {}

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI):
        if config.ray_address:
            from rlvr_envs.integrations.ray import RayScoringBackend, connect, ray_runner_factory

            connect(config.ray_address)
            state["scorer"] = RayScoringBackend(item_timeout=config.item_timeout)
            runner_factory = ray_runner_factory
        else:
            from rlvr_envs.integrations.sessions import ThreadEpisodeRunner

            state["scorer"] = _local_pool(config)
            runner_factory = ThreadEpisodeRunner.create
        sessions = SessionStore(ttl=config.session_ttl, max_sessions=config.max_sessions,
                                runner_factory=runner_factory)
        state["sessions"] = sessions
        reaper = asyncio.create_task(sessions.reap_forever())
        try:
            yield
        finally:
            reaper.cancel()
            await sessions.close_all()
            state["scorer"].shutdown()

    app = FastAPI(title="rlvr-envs reward server", lifespan=lifespan,
                  default_response_class=SafeJSONResponse)
    app.router.route_class = JSONBodyRoute
    app.state.rlvr = state
    app.state.config = config

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_: Request, err: RequestValidationError):
        return SafeJSONResponse({"detail": bounded_errors(list(err.errors()))},
                                status_code=422)

    @app.middleware("http")
    async def bearer_auth(request: Request, call_next):
        if config.token and request.url.path != "/health":
            header = request.headers.get("authorization", "")
            given = header[7:] if header.lower().startswith("bearer ") else \
                request.query_params.get("token", "")
            if not hmac.compare_digest(given.encode(), config.token.encode()):
                return JSONResponse({"detail": "missing or wrong bearer token (send "
                                     "'Authorization: Bearer <token>' or ?token=<token>)"},
                                    status_code=401, headers={"WWW-Authenticate": "Bearer"})
        return await call_next(request)

    app.add_middleware(BodyLimitMiddleware, max_bytes=config.max_body_bytes)

    def known_env(env_id: str) -> str:
        try:
            env_entry(env_id)
        except gym.error.Error as err:  # UnregisteredEnv (with close matches), DeprecatedEnv
            raise HTTPException(404, str(err)) from None
        return env_id

    @app.get("/health")
    async def health():
        scorer, sessions = state["scorer"], state["sessions"]
        return {"status": "ok", "default_env": config.env, "backend": type(scorer).__name__,
                "workers": scorer.pids(), "pools_recycled": scorer.recycled,
                "sessions": len(sessions), "sessions_expired": sessions.closed_idle}

    @app.get("/envs")
    async def envs():
        return {"default": config.env, "envs": list_envs()}

    async def score(request: ScoreRequest):
        if (request.query is None) == (request.responses is None):
            raise HTTPException(422, "send exactly one of 'query' (prompt + response, as "
                                     "OpenRLHF does) or 'responses'")
        texts = request.query if request.query is not None else request.responses
        n = len(texts)
        if n > config.max_batch:
            raise HTTPException(413, f"{n} samples in one request; the limit is {config.max_batch}")
        if len(request.labels) != n or (request.prompts is not None and len(request.prompts) != n):
            raise HTTPException(422, f"'labels' ({len(request.labels)}) and 'prompts' "
                                     f"({len(request.prompts) if request.prompts is not None else '-'}) "
                                     f"must match the {n} samples")
        env_id = known_env(request.env or config.env)
        prompts = request.prompts if request.query is not None else None
        try:
            items, records = build_items(texts, prompts, request.labels, env_id,
                                         request.env_kwargs)
            for i, item in enumerate(items):
                if item is not None:
                    try:
                        items[i] = (item[0], request_kwargs(item[0], item[1], config), *item[2:])
                    except ValueError as err:
                        raise ValueError(f"label {i}: {err}") from None
        except (ValueError, TypeError) as err:
            raise HTTPException(422, str(err)) from None
        todo = [i for i, item in enumerate(items) if item is not None]
        for i, record in zip(todo, await state["scorer"].score([items[i] for i in todo])):
            records[i] = record
        bad = [i for i, r in enumerate(records) if r["verifier"] in ("bad_ground_truth", "bad_env")]
        if bad:
            raise HTTPException(422, f"labels at {bad[:20]} cannot be scored; first: "
                                     f"{records[bad[0]]['details']['error']}")
        return reply(records)

    app.post("/score")(score)
    app.post("/get_reward")(score)

    @app.post("/reset")
    async def reset(request: ResetRequest):
        env_id = known_env(request.env or config.env)
        try:
            env_kwargs = request_kwargs(env_id, kwargs_key(request.env_kwargs), config)
            _, body = await state["sessions"].open(env_id, env_kwargs, request.seed, request.options)
        except TooManySessions as err:
            raise HTTPException(429, str(err)) from None
        except (ValueError, TypeError, KeyError, gym.error.Error) as err:
            raise HTTPException(422, f"{type(err).__name__}: {err}") from None
        except RecursionError:
            raise HTTPException(422, TOO_DEEP) from None
        return body

    @app.post("/step")
    async def step(request: StepRequest):
        try:
            return await state["sessions"].step(request.session_id, request.action)
        except SessionNotFound as err:
            raise HTTPException(404, str(err.args[0])) from None
        except SessionEnded as err:
            raise HTTPException(409, str(err)) from None
        except (ValueError, TypeError) as err:
            raise HTTPException(422, f"{type(err).__name__}: {err}") from None
        except RecursionError:
            raise HTTPException(422, TOO_DEEP) from None

    @app.delete("/session/{session_id}")
    async def close_session(session_id: str):
        try:
            await state["sessions"].close(session_id)
        except SessionNotFound as err:
            raise HTTPException(404, str(err.args[0])) from None
        return {"closed": session_id}

    return app


def check_default_env(config: ServerConfig) -> None:
    """Build the default env once, so an unknown id or kwargs it refuses fail at start (naming
    what is valid) instead of failing every /score while /health says ok."""
    from rlvr_envs.registry import env_entry, make

    env_entry(config.env)
    env = make(config.env, **json.loads(kwargs_key(config.env_kwargs)))
    env.close()


def serve(config: ServerConfig, host: str = "127.0.0.1", port: int = 8000,
          log_level: str = "info", insecure: bool = False) -> None:
    """Run the server with uvicorn; ValueError for a bad config or an unsafe binding."""
    import uvicorn

    check_binding(host, config.token, insecure)
    if not 0 <= port <= 65535:
        raise ValueError(f"port must be in 0..65535, got {port}")
    app = create_app(config)
    uvicorn.run(app, host=host, port=port, log_level=log_level,
                http=guarded_protocol(config.limits), timeout_keep_alive=5)

