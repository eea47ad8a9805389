"""Ray fan-out: batch scoring and env stepping spread over a Ray cluster.

- `RayBatchScorer`: score (ground truth, completion) pairs as Ray tasks, in chunks.
- `RayVectorEnv`: a gymnasium `VectorEnv` whose sub-envs live in Ray actors (one per env, so a
  multi-turn env's sandbox stays on its node), stepped in parallel; next-step autoreset.
- `RayScoringBackend` and `RayEpisodeRunner`: what `rlvr serve --ray ADDRESS` uses in place of
  the local process pool and threads.

Workers run the same `scoring.score_items` as every other path. On a real cluster every node
needs rlvr-envs installed (same image, or `runtime_env={"pip": ["rlvr-envs"]}` in `connect`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import ray
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from rlvr_envs.integrations.scoring import (
    ScoreItem,
    error_record,
    kwargs_key,
    score_item,
    score_items,
    to_jsonable,
)
from rlvr_envs.sandbox.cpu_wait import StallClock


def connect(address: str | None = None, **init_kwargs: Any) -> None:
    """Join the cluster at `address` ("auto", "ray://head:10001", "local" for a fresh local
    one) unless this process is connected already."""
    if ray.is_initialized():
        return
    if address in (None, "", "local"):
        ray.init(include_dashboard=False, **init_kwargs)
    else:
        ray.init(address=address, **init_kwargs)


_remote_score_items = ray.remote(score_items)


class RayBatchScorer:
    """`scorer.score(ground_truths, completions)` → result records, computed on the cluster."""

    def __init__(self, env_id: str, env_kwargs: Mapping[str, Any] | str | None = None, *,
                 chunk_size: int = 16, num_cpus: float = 1.0):
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
        self.env_id, self.env_kwargs = env_id, kwargs_key(env_kwargs)
        self.chunk_size = chunk_size
        self._task = _remote_score_items.options(num_cpus=num_cpus)

    def submit(self, ground_truths: Sequence[Any], completions: Sequence[str]) -> list:
        if len(ground_truths) != len(completions):
            raise ValueError(f"{len(completions)} completions but {len(ground_truths)} ground truths")
        items = [(self.env_id, self.env_kwargs, g, c) for g, c in zip(ground_truths, completions)]
        return [self._task.remote(items[i:i + self.chunk_size])
                for i in range(0, len(items), self.chunk_size)]

    def score(self, ground_truths: Sequence[Any], completions: Sequence[str]) -> list[dict]:
        return [record for chunk in ray.get(self.submit(ground_truths, completions))
                for record in chunk]

    def rewards(self, ground_truths: Sequence[Any], completions: Sequence[str]) -> list[float]:
        return [r["reward"] for r in self.score(ground_truths, completions)]


class RayScoringBackend:
    """The server's scoring backend on Ray: one task per item, each with a deadline.

    At most `max_in_flight` items (default: the cluster's CPUs when first used) are on the
    cluster at once, and an item's deadline starts when it is sent: time an item would spend
    queued inside Ray behind a large batch is spent here instead, where it counts against
    nothing (the local pool's rule). The deadline moves on by the time this machine's tasks
    waited for a CPU meanwhile (`StallClock`); the cluster's other nodes are not watched."""

    recycled = 0

    def __init__(self, item_timeout: float = 30.0, *, max_in_flight: int | None = None,
                 work: Callable[[ScoreItem], dict[str, Any]] = score_item):
        if item_timeout <= 0:
            raise ValueError(f"item_timeout must be > 0 seconds, got {item_timeout}")
        if max_in_flight is not None and max_in_flight < 1:
            raise ValueError(f"max_in_flight must be >= 1, got {max_in_flight}")
        self.item_timeout, self.max_in_flight = item_timeout, max_in_flight
        # no retry: an item that crashed its worker would crash the next three as well
        self._task = ray.remote(max_retries=0)(work)
        self._slots: asyncio.Semaphore | None = None  # made on the running loop

    def _in_flight_slots(self) -> asyncio.Semaphore:
        if self._slots is None:
            if self.max_in_flight is None:
                self.max_in_flight = max(1, int(ray.cluster_resources().get("CPU", 1)))
            self._slots = asyncio.Semaphore(self.max_in_flight)
        return self._slots

    async def _one(self, item: ScoreItem) -> dict[str, Any]:
        async with self._in_flight_slots():
            ref = self._task.remote(item)
            clock = StallClock(self.item_timeout)
            result = asyncio.wrap_future(ref.future())
            try:
                while not (await asyncio.wait({result}, timeout=max(0.0, clock.remaining())))[0]:
                    if clock.remaining() <= 0:
                        ray.cancel(ref, force=True)
                        return error_record("server_timeout",
                                            f"scoring took longer than {self.item_timeout:g} s")
                return result.result()
            except ray.exceptions.RayError as err:
                return error_record("worker_crashed", f"{type(err).__name__}: {err}")

    async def score(self, items: Sequence[ScoreItem]) -> list[dict[str, Any]]:
        return list(await asyncio.gather(*(self._one(item) for item in items)))

    def pids(self) -> list[int]:
        return []

    def shutdown(self) -> None:
        pass


@ray.remote
class EnvActor:
    """One env in its own worker process on the cluster."""

    def __init__(self, env_id: str, env_kwargs: str):
        from rlvr_envs.registry import make

        self.env = make(env_id, **json.loads(env_kwargs))

    def spaces(self):
        return self.env.observation_space, self.env.action_space, self.env.metadata

    def reset(self, seed=None, options=None):
        observation, info = self.env.reset(seed=seed, options=options)
        return observation, to_jsonable(info)

    def step(self, action):
        observation, reward, terminated, truncated, info = self.env.step(action)
        return observation, float(reward), bool(terminated), bool(truncated), to_jsonable(info)

    def close(self):
        self.env.close()


class RayEpisodeRunner:
    """A server session whose env lives in an `EnvActor`."""

    def __init__(self, actor):
        self.actor = actor

    async def reset(self, seed, options):
        return await self.actor.reset.remote(seed, dict(options or {}) or None)

    async def step(self, action):
        return await self.actor.step.remote(action)

    async def close(self):
        try:
            await self.actor.close.remote()
        finally:
            ray.kill(self.actor)


async def ray_runner_factory(env_id: str, env_kwargs: str) -> RayEpisodeRunner:
    return RayEpisodeRunner(EnvActor.remote(env_id, env_kwargs))


class RayVectorEnv(VectorEnv):
    """`num_envs` copies of an env id, each in a Ray actor, stepped in parallel.

    Same contract as gymnasium's sync/async vector envs with next-step autoreset: after a
    sub-env ends, the following `step` resets it (its action is ignored, reward 0).
    Observations come back as a tuple of strings; infos in gymnasium's vector-info layout.
    """

    def __init__(self, env_id: str, num_envs: int, env_kwargs: Mapping[str, Any] | str | None = None,
                 *, num_cpus: float | None = None):
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        self.env_id, self.num_envs = env_id, num_envs
        key = kwargs_key(env_kwargs)
        # Ray's default actor reserves no CPU while it runs, so more envs than cores can live
        # on a node; pass num_cpus to reserve cores for heavy envs (sandboxes).
        actor = EnvActor.options(num_cpus=num_cpus) if num_cpus is not None else EnvActor
        self.actors = [actor.remote(env_id, key) for _ in range(num_envs)]
        observation_space, action_space, metadata = ray.get(self.actors[0].spaces.remote())
        self.single_observation_space, self.single_action_space = observation_space, action_space
        self.observation_space = batch_space(observation_space, num_envs)
        self.action_space = batch_space(action_space, num_envs)
        self.metadata = {**metadata, "autoreset_mode": AutoresetMode.NEXT_STEP}
        self._needs_reset = np.zeros(num_envs, dtype=bool)

    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict[str, Any] | None = None):
        seeds = ([seed + i for i in range(self.num_envs)] if isinstance(seed, int)
                 else list(seed) if seed is not None else [None] * self.num_envs)
        if len(seeds) != self.num_envs:
            raise ValueError(f"{len(seeds)} seeds for {self.num_envs} envs")
        results = ray.get([a.reset.remote(s, options) for a, s in zip(self.actors, seeds)])
        self._needs_reset[:] = False
        infos: dict[str, Any] = {}
        for i, (_, info) in enumerate(results):
            infos = self._add_info(infos, info, i)
        return tuple(obs for obs, _ in results), infos

    def step(self, actions: Sequence[str]):
        actions = list(actions)
        if len(actions) != self.num_envs:
            raise ValueError(f"{len(actions)} actions for {self.num_envs} envs")
        refs = [actor.reset.remote() if self._needs_reset[i] else actor.step.remote(actions[i])
                for i, actor in enumerate(self.actors)]
        observations, infos = [], {}
        rewards = np.zeros(self.num_envs)
        terminated = np.zeros(self.num_envs, dtype=bool)
        truncated = np.zeros(self.num_envs, dtype=bool)
        for i, result in enumerate(ray.get(refs)):
            if self._needs_reset[i]:
                observation, info = result
            else:
                observation, rewards[i], terminated[i], truncated[i], info = result
            observations.append(observation)
            infos = self._add_info(infos, info, i)
        self._needs_reset = terminated | truncated
        return tuple(observations), rewards, terminated, truncated, infos

    def close_extras(self, **kwargs: Any) -> None:
        try:
            ray.get([actor.close.remote() for actor in self.actors])
        finally:
            for actor in self.actors:
                ray.kill(actor)
