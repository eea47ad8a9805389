"""A process pool for scoring with a per-item deadline, so no verifier can stall a server.

Items run in worker processes (spawned: the server's event loop and threads are never forked).
An item that overruns its deadline scores 0 ("server_timeout"); the pool it is stuck in is
replaced at once, and its processes are killed after one more deadline (by then every item
still running there has overrun too). A worker that dies (a verifier crash, the OOM killer)
breaks its pool: the pool is replaced and each item that was in flight is retried once, alone
in a fresh process, so only the completion that kills its process scores 0
("worker_crashed").
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Sequence

from rlvr_envs.integrations.scoring import ScoreItem, error_record, score_item


def _warm(env_specs: Sequence[tuple[str, str]]) -> bool:
    from rlvr_envs.integrations.scoring import cached_env

    for env_id, env_kwargs in env_specs:
        cached_env(env_id, env_kwargs)
    return True


def _timeout_record(seconds: float) -> dict[str, Any]:
    return error_record("server_timeout", f"scoring took longer than {seconds:g} s")


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    # ProcessPoolExecutor has no public way to stop a running task; its workers are in the
    # private `_processes` map.
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        if process.is_alive():
            process.kill()
    pool.shutdown(wait=False, cancel_futures=True)


class ScoringPool:
    """`await pool.score(items)` → one result record per item, in order."""

    def __init__(self, workers: int | None = None, *, item_timeout: float = 30.0,
                 warm_envs: Sequence[tuple[str, str]] = (),
                 work: Callable[[Any], dict[str, Any]] = score_item):
        if item_timeout <= 0:
            raise ValueError(f"item_timeout must be > 0 seconds, got {item_timeout}")
        self.workers = workers or os.cpu_count() or 1
        self.item_timeout = item_timeout
        self.warm_envs = tuple(warm_envs)
        self.work = work  # a module-level function (workers import it by name)
        self.recycled = 0
        self._context = mp.get_context("spawn")
        self._pool = self._new_pool()
        self._doomed: list[ProcessPoolExecutor] = []

    def _new_pool(self) -> ProcessPoolExecutor:
        pool = ProcessPoolExecutor(self.workers, mp_context=self._context)
        if self.warm_envs:
            for _ in range(self.workers):  # spawn workers now and build the default env there
                pool.submit(_warm, self.warm_envs)
        return pool

    def _replace(self, stale: ProcessPoolExecutor) -> None:
        if stale is not self._pool:
            return  # another item already replaced it
        self._pool = self._new_pool()
        self.recycled += 1
        self._doomed.append(stale)
        asyncio.get_running_loop().call_later(self.item_timeout, self._kill, stale)

    def _kill(self, pool: ProcessPoolExecutor) -> None:
        _kill_workers(pool)
        if pool in self._doomed:
            self._doomed.remove(pool)

    async def _score_one(self, item: ScoreItem) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        pool = self._pool
        try:
            future = loop.run_in_executor(pool, self.work, item)
        except (BrokenProcessPool, RuntimeError):  # submitted to a pool that just broke
            self._replace(pool)
            return await self._quarantined(item)
        try:
            return await asyncio.wait_for(future, self.item_timeout)
        except asyncio.TimeoutError:
            self._replace(pool)
            return _timeout_record(self.item_timeout)
        except BrokenProcessPool:
            self._replace(pool)
            return await self._quarantined(item)

    async def _quarantined(self, item: ScoreItem) -> dict[str, Any]:
        """Retry an item that was in flight when a worker died, alone in a fresh process: the
        culprit dies again by itself, and the bystanders score normally."""
        solo = ProcessPoolExecutor(1, mp_context=self._context)
        try:
            future = asyncio.get_running_loop().run_in_executor(solo, self.work, item)
            return await asyncio.wait_for(future, self.item_timeout)
        except asyncio.TimeoutError:
            return _timeout_record(self.item_timeout)
        except BrokenProcessPool:
            return error_record("worker_crashed", "the scoring process died on this completion")
        finally:
            _kill_workers(solo)

    async def score(self, items: Sequence[ScoreItem]) -> list[dict[str, Any]]:
        return list(await asyncio.gather(*(self._score_one(item) for item in items)))

    def pids(self) -> list[int]:
        return [p.pid for p in (getattr(self._pool, "_processes", None) or {}).values()]

    def shutdown(self) -> None:
        for pool in [self._pool, *self._doomed]:
            _kill_workers(pool)
        self._doomed.clear()

