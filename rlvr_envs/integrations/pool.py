"""Scoring worker processes with a per-item deadline, so no verifier can stall a server.

Each worker is a spawned process (the server's event loop and threads are never forked) fed
one item at a time over a pipe. The deadline runs from the moment a worker takes the item, so
a long queue never turns into false timeouts, and it moves on by the time the machine's tasks
waited for a CPU meanwhile (`StallClock`, at most 10× the limit), so a busy machine does not
turn a slow verdict into a 0. A worker that overruns is killed and only its
item scores 0 ("server_timeout"); a worker that dies mid-item (a verifier crash, the OOM
killer) likewise ("worker_crashed"). A spare that has already booted takes the place of a
killed worker at once, and a new spare starts booting. A worker starts the
math verifier's symbolic processes while it boots, before it takes any item, so no deadline
pays for that start. Each running item is awaited from a dedicated thread, never on the loop.

Idle workers go to waiting requests in turn, one item at a time (`FairDispatch`): a request
of 40 expensive items gets one worker in every round, so a one-item request that arrives
behind it waits for one item to finish, not for the whole batch.

(concurrent.futures' ProcessPoolExecutor cannot stop one running task: a stuck verifier would
hold its worker forever, and a crash fails every task in flight. Hence processes of our own.)
"""

from __future__ import annotations

import asyncio
import ctypes
import multiprocessing as mp
import os
import pickle
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rlvr_envs.integrations.scoring import ScoreItem, cached_env, error_record, score_item
from rlvr_envs.sandbox.cpu_wait import StallClock

Work = Callable[[Any], dict[str, Any]]
#: seconds a fresh worker may take to import and build its default env
BOOT_TIMEOUT = 120.0


def _die_with_parent(parent_pid: int) -> None:
    """A worker must not outlive its server (a SIGKILLed server would leave a worker stuck on a
    hostile item spinning forever): the kernel's parent-death signal on Linux, and a watchdog
    thread everywhere."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except OSError:
            pass

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="rlvr-parent-watch").start()


def _worker_main(conn, work: Work, warm_envs: Sequence[tuple[str, str]], parent_pid: int) -> None:
    _die_with_parent(parent_pid)
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        return
    for env_id, env_kwargs in warm_envs:
        try:
            cached_env(env_id, env_kwargs)
        except Exception:  # noqa: BLE001 - the item that needs it will report the error
            pass
    _warm_math_verifier()
    conn.send("ready")
    while True:
        try:
            item = conn.recv()
        except (EOFError, OSError):
            return
        try:
            result = work(item)
        except Exception as err:  # noqa: BLE001 - a work-function bug must not kill the worker
            result = error_record("scorer_error", f"{type(err).__name__}: {err}")
        conn.send(result)


def _warm_math_verifier() -> None:
    """Start the symbolic math workers now: started lazily, their start would fall inside the
    first symbolic item's deadline and score a correct answer 0 on a busy machine."""
    from rlvr_envs.verify.math import warm_up

    try:
        warm_up()
    except Exception:  # noqa: BLE001 - a math item will report the verifier's failure itself
        pass


class FairDispatch:
    """Idle workers handed to waiting requests in turn, one item per request per round.

    `acquire(owner)` waits for a worker; `release(worker)` gives it to the request at the head
    of the turn order, which then goes to the back if it still has items waiting. Runs on the
    event loop only (no locks). Invariant: idle workers exist only while nobody waits.
    """

    def __init__(self, workers: Sequence[Any]):
        self._idle: deque = deque(workers)
        self._waiting: dict[Hashable, deque[asyncio.Future]] = {}  # insertion order = turns

    def waiting(self) -> int:
        return sum(len(queue) for queue in self._waiting.values())

    async def acquire(self, owner: Hashable) -> Any:
        if self._idle and not self._waiting:
            return self._idle.popleft()
        future = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(owner, deque()).append(future)
        try:
            return await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():  # handed a worker as we were cancelled
                self.release(future.result())
            else:
                queue = self._waiting.get(owner)
                if queue is not None and future in queue:
                    queue.remove(future)
                    if not queue:
                        del self._waiting[owner]
            raise

    def release(self, worker: Any) -> None:
        while self._waiting:
            owner = next(iter(self._waiting))
            queue = self._waiting.pop(owner)
            future = queue.popleft()
            if queue:
                self._waiting[owner] = queue  # to the back of the turn order
            if not future.done():
                future.set_result(worker)
                return
        self._idle.append(worker)


class _Overran(Exception):
    pass


class _Died(Exception):
    pass


class _DeadBeforeSend(Exception):
    pass


class _Unsendable(Exception):
    """The item cannot be pickled (nested deeper than pickling goes): it never reaches a
    worker, and the worker stays."""


class _Worker:
    def __init__(self, context, work: Work, warm_envs: Sequence[tuple[str, str]]):
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child, work, tuple(warm_envs), os.getpid()),
                                       daemon=True, name="rlvr-scorer")
        self.process.start()
        child.close()
        self.ready = False

    def run(self, item: Any, timeout: float) -> dict[str, Any]:
        """Blocking: send the item, wait up to `timeout` s for its result (more on a busy
        machine: `StallClock`). The deadline starts once the worker has booted (imports,
        default env built), not while it boots."""
        try:
            data = pickle.dumps(item, pickle.HIGHEST_PROTOCOL)
        except (RecursionError, pickle.PicklingError, TypeError, ValueError) as err:
            raise _Unsendable(f"{type(err).__name__}: {str(err)[:200]}") from None
        try:
            if not self.ready:
                if not self.conn.poll(BOOT_TIMEOUT) or self.conn.recv() != "ready":
                    raise _DeadBeforeSend
                self.ready = True
            self.conn.send_bytes(data)
        except (EOFError, OSError) as err:
            raise _DeadBeforeSend from err
        clock = StallClock(timeout)
        try:
            while not self.conn.poll(max(0.0, clock.remaining())):
                if clock.remaining() <= 0:
                    raise _Overran
            return self.conn.recv()
        except (EOFError, OSError) as err:
            raise _Died from err

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=5)
        self.conn.close()


class ScoringPool:
    """`await pool.score(items)` → one result record per item, in order."""

    def __init__(self, workers: int | None = None, *, item_timeout: float = 30.0,
                 warm_envs: Sequence[tuple[str, str]] = (), work: Work = score_item,
                 spares: int = 1):
        """`spares` booted processes wait to replace a killed worker at once (a boot takes
        seconds: the items queued behind a timeout would otherwise wait for it)."""
        if item_timeout <= 0:
            raise ValueError(f"item_timeout must be > 0 seconds, got {item_timeout}")
        self.workers = workers or os.cpu_count() or 1
        if self.workers < 1:
            raise ValueError(f"workers must be >= 1, got {self.workers}")
        self.item_timeout = item_timeout
        self.warm_envs, self.work = tuple(warm_envs), work  # work: module-level (pickled by name)
        self.recycled = 0
        self._context = mp.get_context("spawn")
        self._lock = threading.Lock()
        self._threads = ThreadPoolExecutor(self.workers, thread_name_prefix="rlvr-score-wait")
        self._all = [self._spawn() for _ in range(self.workers)]
        self._spares = deque(self._spawn() for _ in range(max(0, spares)))
        self._dispatch: FairDispatch | None = None

    def _spawn(self) -> _Worker:
        return _Worker(self._context, self.work, self.warm_envs)

    def _dispatcher(self) -> FairDispatch:
        if self._dispatch is None:  # created inside the running loop
            self._dispatch = FairDispatch(list(self._all))
        return self._dispatch

    def _replace(self, worker: _Worker) -> _Worker:
        """Kill `worker`; a spare (booting since it was made) takes its place, and a new spare
        starts booting."""
        worker.kill()
        with self._lock:
            if self._spares:
                fresh = self._spares.popleft()
                self._spares.append(self._spawn())
            else:
                fresh = self._spawn()
            self._all[self._all.index(worker)] = fresh
            self.recycled += 1
        return fresh

    def _run(self, worker: _Worker, item: Any) -> tuple[dict[str, Any], _Worker]:
        """In a waiting thread: the item's result, and the worker to hand back (a fresh one
        when this one overran or died)."""
        try:
            try:
                return worker.run(item, self.item_timeout), worker
            except _DeadBeforeSend:  # died while idle: the item never ran, run it on a fresh one
                worker = self._replace(worker)
                return worker.run(item, self.item_timeout), worker
        except _Unsendable as err:
            return (error_record("bad_ground_truth", f"the label cannot be sent to a scoring "
                                 f"process (nested too deeply?): {err}"), worker)
        except _Overran:
            return (error_record("server_timeout", f"scoring took longer than "
                                 f"{self.item_timeout:g} s"), self._replace(worker))
        except (_Died, _DeadBeforeSend):
            return (error_record("worker_crashed", "the scoring process died on this completion"),
                    self._replace(worker))

    async def _score_one(self, item: ScoreItem, owner: Hashable) -> dict[str, Any]:
        dispatch = self._dispatcher()
        worker = await dispatch.acquire(owner)
        future = asyncio.get_running_loop().run_in_executor(self._threads, self._run, worker, item)
        # the worker goes back when its item is done, even if this request was cancelled
        future.add_done_callback(lambda done: dispatch.release(
            done.result()[1] if not done.cancelled() and done.exception() is None
            else self._replace(worker)))
        result, _ = await asyncio.shield(future)
        return result

    async def score(self, items: Sequence[ScoreItem]) -> list[dict[str, Any]]:
        """One record per item, in order; this call's items take turns with other calls'."""
        owner = object()
        return list(await asyncio.gather(*(self._score_one(item, owner) for item in items)))

    def waiting(self) -> int:
        """Items waiting for a worker (all requests together)."""
        return self._dispatch.waiting() if self._dispatch is not None else 0

    def pids(self) -> list[int]:
        with self._lock:
            return [w.process.pid for w in self._all]

    def shutdown(self) -> None:
        with self._lock:
            workers = list(self._all) + list(self._spares)
        for worker in workers:
            worker.kill()
        self._threads.shutdown(wait=False, cancel_futures=True)
