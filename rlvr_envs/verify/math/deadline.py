"""The symbolic path's budget: a pool of pre-started worker processes, each comparison
limited by the CPU time it uses, with a generous wall-clock backstop.

Why CPU time: a wall-clock deadline turns machine load into verdicts (the same pair is
`correct` on an idle box and `timeout` under load). The budget of a comparison is the CPU
time of the worker doing it, counted by the worker itself (an ITIMER_PROF timer, see
`worker.py`) and watched from here by reading the worker's CPU time from /proc, so work stuck
in C code is killed too. Time spent waiting for a free worker, or for a CPU on a busy
machine, is not counted. The wall-clock backstop (by default 30 times the budget, at least
60 s) only ends a call whose worker gets no CPU at all.

math-verify's own timeout uses SIGALRM, which only works on the main thread; here the caller
waits on a pipe with `select`, so calls work from any thread and from asyncio code. The pool
keeps spare warm workers: a worker killed for overrunning is replaced in the background while
the next caller takes a spare, and that caller's budget starts only when a worker takes its
request. Workers start on first use; `warm_up()` starts them ahead of time.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import select
import subprocess
import sys
import threading
import time
from collections.abc import Sequence

STARTUP_TIMEOUT = 120.0
MIN_WALL_BACKSTOP = 60.0
WALL_BACKSTOP_FACTOR = 30.0
# A worker whose own CPU timer has not answered by 2 x budget + this is stuck in C code.
_CPU_GRACE = 0.5
_POLL = 0.05
ITEMS_PER_REQUEST = 16
_WORKER_COMMAND = [sys.executable, "-m", "rlvr_envs.verify.math.worker"]
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class WorkerError(RuntimeError):
    """A worker died or answered with something that is not a reply."""


def wall_backstop(budget: float) -> float:
    """The default wall-clock limit for a comparison with a CPU budget of `budget` seconds."""
    return max(MIN_WALL_BACKSTOP, WALL_BACKSTOP_FACTOR * budget)


class _Worker:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            _WORKER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, close_fds=True, env=_worker_env())
        self._buffer = b""

    def cpu_seconds(self) -> float | None:
        """The worker's CPU time (user + system) so far, or None where /proc is missing."""
        try:
            with open(f"/proc/{self.proc.pid}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            return None
        return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS  # utime, stime

    def read_reply(self, wall_deadline: float, cpu_limit: float | None = None) -> dict:
        """The next reply line; `{"timeout": true, "stuck": ...}` once the wall deadline passes
        ("wall") or the worker has used `cpu_limit` CPU seconds since this call began ("cpu")."""
        fd = self.proc.stdout.fileno()
        cpu_start = self.cpu_seconds() if cpu_limit is not None else None
        while b"\n" not in self._buffer:
            remaining = wall_deadline - time.monotonic()
            if remaining <= 0:
                return {"timeout": True, "stuck": "wall"}
            ready, _, _ = select.select([fd], [], [], min(remaining, _POLL))
            if not ready:
                if cpu_start is not None:
                    used = self.cpu_seconds()
                    if used is not None and used - cpu_start > cpu_limit:
                        return {"timeout": True, "stuck": "cpu", "cpu": used - cpu_start}
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise WorkerError("verifier worker exited")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError as exc:
            raise WorkerError(f"bad reply from verifier worker: {line[:200]!r}") from exc

    def send(self, payload: dict) -> None:
        try:
            self.proc.stdin.write(json.dumps(payload).encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise WorkerError("verifier worker exited") from exc

    def kill(self) -> None:
        try:
            self.proc.kill()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except OSError:
                pass


def _worker_env() -> dict[str, str]:
    env = dict(os.environ)
    # the worker must import this very package, wherever the caller imported it from
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    return env


_NO_WORKER = {"timeout": True, "stuck": "wall"}


def _cpu_kill_limit(budget: float) -> float:
    return 2 * budget + _CPU_GRACE


class WorkerPool:
    """`size + spares` workers; `call(payload, budget)` and `call_many(items, budget)` answer
    with the workers' replies (`{"timeout": true}` for a comparison over its CPU budget)."""

    def __init__(self, size: int, spares: int = 1) -> None:
        if size < 1:
            raise ValueError(f"worker pool size must be >= 1, got {size}")
        if spares < 0:
            raise ValueError(f"spare workers must be >= 0, got {spares}")
        self.size, self.spares = size, spares
        # last in, first out: sequential calls keep going to the same warm worker, whose
        # parse caches (and the parser's own prediction cache) already hold what came before
        self._idle: queue.LifoQueue[_Worker] = queue.LifoQueue()
        self._all: set[_Worker] = set()
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._all_ready = threading.Event()
        self._pending = 0
        self._started = False
        self._closed = False
        self._failure: str | None = None
        self.restarts = 0

    @property
    def capacity(self) -> int:
        return self.size + self.spares

    def _spawn(self) -> None:
        """Start one worker and hand it to the idle queue once it says it is ready."""
        try:
            for attempt in range(3):
                if self._closed:
                    return
                try:
                    worker = _Worker()
                except OSError as exc:
                    self._failure = f"cannot start verifier worker: {exc}"
                    time.sleep(0.5 * (attempt + 1))
                    continue
                with self._lock:
                    self._all.add(worker)
                try:
                    hello = worker.read_reply(time.monotonic() + STARTUP_TIMEOUT)
                except WorkerError:
                    hello = {}
                if hello.get("ready"):
                    self._idle.put(worker)
                    self._ready.set()
                    return
                self._discard(worker)
                self._failure = ("verifier worker did not start "
                                 "(python -m rlvr_envs.verify.math.worker)")
        finally:
            with self._lock:
                self._pending -= 1
                if not self._pending:
                    self._all_ready.set()
            self._ready.set()

    def _spawn_in_background(self) -> None:
        with self._lock:
            self._pending += 1
            self._all_ready.clear()
        threading.Thread(target=self._spawn, name="math-verifier-start", daemon=True).start()

    def _discard(self, worker: _Worker) -> None:
        with self._lock:
            self._all.discard(worker)
        worker.kill()

    def _replace(self, worker: _Worker) -> None:
        """Kill `worker` and start another in the background; callers take spares meanwhile."""
        self.restarts += 1
        self._discard(worker)
        self._spawn_in_background()

    def start(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
        for _ in range(self.capacity):
            self._spawn_in_background()

    def wait_ready(self, timeout: float = STARTUP_TIMEOUT, *, every: bool = False) -> None:
        """Block until one worker (or, with `every`, every worker) is ready."""
        self.start()
        (self._all_ready if every else self._ready).wait(timeout)
        if self._idle.empty() and not self._all and self._failure:
            raise WorkerError(self._failure)

    def _take(self, wall_deadline: float) -> _Worker | None:
        if not self._ready.is_set():
            self.wait_ready()
        try:
            return self._idle.get(timeout=max(0.0, wall_deadline - time.monotonic()))
        except queue.Empty:
            return None

    def call(self, payload: dict, budget: float, wall_timeout: float | None = None) -> dict:
        """Send `payload` (with its CPU `budget` in seconds) to an idle worker; the reply.

        The reply is `{"timeout": true, ...}` when the comparison used up its budget, with
        `"stuck": "wall"` when the wall-clock backstop passed first. Raises WorkerError if
        the worker dies while answering.
        """
        wall_deadline = time.monotonic() + (wall_timeout or wall_backstop(budget))
        worker = self._take(wall_deadline)
        if worker is None:
            return dict(_NO_WORKER)
        try:
            worker.send({**payload, "budget": budget})
            reply = worker.read_reply(wall_deadline, _cpu_kill_limit(budget))
        except WorkerError:
            self._replace(worker)
            raise
        if reply.get("stuck"):
            self._replace(worker)
        else:
            self._idle.put(worker)
        return reply

    def call_many(self, items: Sequence[dict], budget: float,
                  wall_timeout: float | None = None) -> list[dict]:
        """Judge every item (`{"gold", "answers"}`) with a CPU `budget` each, in one request
        per worker: up to `ITEMS_PER_REQUEST` items go to the warmest worker, more are split
        over up to `size` workers in parallel. Replies are as `call`'s; a worker that overruns
        is replaced and the rest of its items go on in another."""
        replies: list[dict] = [dict(_NO_WORKER) for _ in items]
        if not items:
            return replies
        per_item_wall = wall_timeout or wall_backstop(budget)
        chunks = max(1, min(self.size, -(-len(items) // ITEMS_PER_REQUEST)))
        indices = [list(range(k, len(items), chunks)) for k in range(chunks)]
        errors: list[WorkerError] = []

        def run(chunk: list[int]) -> None:
            try:
                self._judge_chunk(items, chunk, budget, per_item_wall, replies)
            except WorkerError as exc:
                errors.append(exc)

        threads = [threading.Thread(target=run, args=(c,), daemon=True) for c in indices[1:]]
        for t in threads:
            t.start()
        run(indices[0])
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        return replies

    def _judge_chunk(self, items: Sequence[dict], chunk: list[int], budget: float,
                     per_item_wall: float, replies: list[dict]) -> None:
        while chunk:
            worker = self._take(time.monotonic() + per_item_wall)
            if worker is None:
                return  # no worker within the backstop: the rest stay timeouts
            try:
                worker.send({"op": "judge_many", "budget": budget,
                             "items": [items[i] for i in chunk]})
                done = 0
                while done < len(chunk):
                    reply = worker.read_reply(time.monotonic() + per_item_wall,
                                              _cpu_kill_limit(budget))
                    replies[chunk[done]] = reply
                    done += 1
                    if reply.get("stuck"):
                        break
            except WorkerError:
                self._replace(worker)
                raise
            if not replies[chunk[done - 1]].get("stuck"):
                self._idle.put(worker)
                return
            self._replace(worker)  # that item overran: a timeout; the rest go to another worker
            chunk = chunk[done:]

    def broadcast(self, payload: dict, timeout: float = 30.0) -> None:
        """Send `payload` to every worker (e.g. to clear caches), waiting for each in turn."""
        self.wait_ready(every=True)
        taken = []
        deadline = time.monotonic() + timeout
        while len(taken) < len(self._all):
            try:
                taken.append(self._idle.get(timeout=max(0.0, deadline - time.monotonic())))
            except queue.Empty:
                break
        for worker in reversed(taken):  # the warmest worker goes back on top
            try:
                worker.send(payload)
                if worker.read_reply(deadline).get("stuck"):
                    raise WorkerError("no reply to a broadcast")
            except WorkerError:
                self._replace(worker)
                continue
            self._idle.put(worker)

    def close(self) -> None:
        self._closed = True
        with self._lock:
            workers = list(self._all)
            self._all.clear()
        for worker in workers:
            worker.kill()


_pool: WorkerPool | None = None
_pool_lock = threading.Lock()


def default_size() -> int:
    """RLVR_MATH_WORKERS, else one worker per core up to 2 (spares: RLVR_MATH_SPARE_WORKERS, 1)."""
    configured = os.environ.get("RLVR_MATH_WORKERS")
    if configured:
        return max(1, int(configured))
    return max(1, min(2, os.cpu_count() or 1))


def default_spares() -> int:
    return max(0, int(os.environ.get("RLVR_MATH_SPARE_WORKERS", "1")))


def pool() -> WorkerPool:
    """The process-wide pool (created on first use; a forked child gets its own)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = WorkerPool(default_size(), default_spares())
            _pool.start()
        return _pool


def warm_up(timeout: float = STARTUP_TIMEOUT) -> None:
    """Start this process's symbolic workers now and wait until all of them are ready.

    Call it where a scoring process starts (a server's scoring worker, a trainer's reward
    process) so that no reward call waits for sympy to import. Idempotent and thread-safe;
    a forked child has its own pool, so call it in the child. Raises WorkerError when no
    worker can start.
    """
    pool().wait_ready(timeout, every=True)


def _forget_in_child() -> None:
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


def _close_at_exit() -> None:
    if _pool is not None:
        _pool.close()


os.register_at_fork(after_in_child=_forget_in_child)
atexit.register(_close_at_exit)
