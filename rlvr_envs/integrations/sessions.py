"""Remote episodes for the HTTP server: one env per session, idle timeout, cleanup.

A session owns a live env (a multi-turn env may hold a sandbox). Its reset/step run off the
event loop (a thread, or a Ray actor when the server fans out over Ray), one call at a time
per session. Sessions idle longer than `ttl` seconds are closed by a reaper, and every close
calls `env.close()`, so abandoned sessions release their sandboxes.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rlvr_envs.integrations.scoring import kwargs_key, to_jsonable

if TYPE_CHECKING:
    import gymnasium as gym


class ThreadEpisodeRunner:
    """The env lives in the server process; calls run in worker threads."""

    def __init__(self, env: gym.Env):
        self.env = env

    @classmethod
    async def create(cls, env_id: str, env_kwargs: str) -> ThreadEpisodeRunner:
        from rlvr_envs.registry import make

        return cls(await asyncio.to_thread(make, env_id, **json.loads(env_kwargs)))

    async def reset(self, seed, options):
        return await asyncio.to_thread(self.env.reset, seed=seed, options=dict(options or {}) or None)

    async def step(self, action):
        return await asyncio.to_thread(self.env.step, action)

    async def close(self):
        await asyncio.to_thread(self.env.close)


class SessionNotFound(KeyError):
    pass


class TooManySessions(RuntimeError):
    pass


class SessionEnded(RuntimeError):
    pass


@dataclass
class Session:
    id: str
    env_id: str
    runner: Any
    created: float
    last_used: float
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    steps: int = 0
    done: bool = False


RunnerFactory = Callable[[str, str], Any]


class SessionStore:
    def __init__(self, *, ttl: float = 600.0, max_sessions: int = 256,
                 runner_factory: RunnerFactory = ThreadEpisodeRunner.create,
                 clock: Callable[[], float] = time.monotonic):
        if ttl <= 0 or max_sessions < 1:
            raise ValueError(f"need ttl > 0 and max_sessions >= 1, got {ttl}, {max_sessions}")
        self.ttl, self.max_sessions = ttl, max_sessions
        self._runner_factory, self._clock = runner_factory, clock
        self._sessions: dict[str, Session] = {}
        self.closed_idle = 0

    def __len__(self) -> int:
        return len(self._sessions)

    async def open(self, env_id: str, env_kwargs: Mapping[str, Any] | None, seed: int | None,
                   options: Mapping[str, Any] | None) -> tuple[Session, dict[str, Any]]:
        if len(self._sessions) >= self.max_sessions:
            await self.reap()
            if len(self._sessions) >= self.max_sessions:
                raise TooManySessions(f"{self.max_sessions} sessions are open; close one "
                                      f"(DELETE /session/<id>) or wait for idle ones to expire")
        runner = await self._runner_factory(env_id, kwargs_key(env_kwargs))
        try:
            observation, info = await runner.reset(seed, options)
            info = to_jsonable(info)  # may raise (RecursionError): before the session is kept
        except BaseException:
            await runner.close()
            raise
        now = self._clock()
        session = Session(secrets.token_hex(12), env_id, runner, now, now)
        self._sessions[session.id] = session
        return session, {"session_id": session.id, "observation": observation, "info": info}

    def get(self, session_id: str) -> Session:
        try:
            session = self._sessions[session_id]
        except KeyError:
            raise SessionNotFound(f"no session {session_id!r} (closed, expired after "
                                  f"{self.ttl:g} s idle, or never opened)") from None
        session.last_used = self._clock()
        return session

    async def step(self, session_id: str, action: str) -> dict[str, Any]:
        session = self.get(session_id)
        async with session.lock:
            if session.done:
                raise SessionEnded(f"session {session_id} has ended (terminated or truncated); "
                                 f"open a new one with POST /reset")
            observation, reward, terminated, truncated, info = await session.runner.step(action)
            session.steps += 1
            session.done = bool(terminated or truncated)
            session.last_used = self._clock()
        return {"session_id": session_id, "observation": observation, "reward": float(reward),
                "terminated": bool(terminated), "truncated": bool(truncated),
                "info": to_jsonable(info)}

    async def close(self, session_id: str) -> None:
        session = self._sessions.pop(session_id, None)
        if session is None:
            raise SessionNotFound(f"no session {session_id!r}")
        async with session.lock:
            await session.runner.close()

    async def reap(self) -> int:
        """Close sessions idle for longer than `ttl`; returns how many were closed."""
        now = self._clock()
        stale = [s.id for s in self._sessions.values()
                 if now - s.last_used > self.ttl and not s.lock.locked()]
        for session_id in stale:
            try:
                await self.close(session_id)
            except SessionNotFound:
                continue
            self.closed_idle += 1
        return len(stale)

    async def reap_forever(self, every: float | None = None) -> None:
        while True:
            await asyncio.sleep(every or max(0.05, self.ttl / 4))
            await self.reap()

    async def close_all(self) -> None:
        for session_id in list(self._sessions):
            try:
                await self.close(session_id)
            except SessionNotFound:
                pass
