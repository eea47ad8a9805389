"""A hard deadline for the symbolic path: a small pool of pre-started worker processes.

math-verify's own timeout uses SIGALRM, which only works on the main thread. Here sympy runs
in separate processes; the caller waits on a pipe with `select` until its deadline, and a
worker that overruns is killed and replaced in the background. Safe to call from any thread
and from asyncio code (the call blocks for at most the deadline). Workers start on first use
(`warm_up()` starts them early); that one-time start is not counted against a deadline.
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

STARTUP_TIMEOUT = 120.0
_WORKER_COMMAND = [sys.executable, "-m", "rlvr_envs.verify.math.worker"]


class WorkerError(RuntimeError):
    """A worker died or answered with something that is not a reply."""


class _Worker:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            _WORKER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, close_fds=True, env=_worker_env())
        self._buffer = b""

    def read_reply(self, deadline: float) -> dict | None:
        """The next reply line, or None once the deadline passes."""
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise WorkerError("verifier worker exited")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError as exc:
            raise WorkerError(f"bad reply from verifier worker: {line[:200]!r}") from exc

    def request(self, payload: dict, deadline: float) -> dict | None:
        try:
            self.proc.stdin.write(json.dumps(payload).encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise WorkerError("verifier worker exited") from exc
        return self.read_reply(deadline)

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


class WorkerPool:
    """`size` workers; `call(payload, deadline)` returns the reply or None at the deadline."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"worker pool size must be >= 1, got {size}")
        self.size = size
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._all: set[_Worker] = set()
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._started = False
        self._closed = False
        self._failure: str | None = None
        self.restarts = 0

    def _spawn(self) -> None:
        """Start one worker and hand it to the idle queue once it says it is ready."""
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
                hello = None
            if hello and hello.get("ready"):
                self._idle.put(worker)
                self._ready.set()
                return
            self._discard(worker)
            self._failure = "verifier worker did not start (python -m rlvr_envs.verify.math.worker)"
        self._ready.set()

    def _discard(self, worker: _Worker) -> None:
        with self._lock:
            self._all.discard(worker)
        worker.kill()

    def _replace(self, worker: _Worker) -> None:
        self.restarts += 1
        self._discard(worker)
        self._spawn()

    def start(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
        for _ in range(self.size):
            threading.Thread(target=self._spawn, name="math-verifier-start", daemon=True).start()

    def wait_ready(self, timeout: float = STARTUP_TIMEOUT) -> None:
        self.start()
        self._ready.wait(timeout)
        if self._idle.empty() and not self._all and self._failure:
            raise WorkerError(self._failure)

    def call(self, payload: dict, deadline: float) -> dict | None:
        """Send `payload` to an idle worker; None when the deadline (monotonic) passes first.

        Raises WorkerError if the worker dies while answering.
        """
        if not self._ready.is_set():
            started = time.monotonic()
            self.wait_ready()
            deadline += time.monotonic() - started  # the one-time start is not the input's fault
        try:
            worker = self._idle.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None
        try:
            reply = worker.request(payload, deadline)
        except WorkerError:
            threading.Thread(target=self._replace, args=(worker,), daemon=True).start()
            raise
        if reply is None:
            threading.Thread(target=self._replace, args=(worker,), daemon=True).start()
            return None
        self._idle.put(worker)
        return reply

    def broadcast(self, payload: dict, timeout: float = 30.0) -> None:
        """Send `payload` to every worker (e.g. to clear caches), waiting for each in turn."""
        self.wait_ready()
        taken = []
        deadline = time.monotonic() + timeout
        while len(taken) < len(self._all):
            try:
                taken.append(self._idle.get(timeout=max(0.0, deadline - time.monotonic())))
            except queue.Empty:
                break
        for worker in taken:
            try:
                worker.request(payload, deadline)
            except WorkerError:
                self._discard(worker)
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
    configured = os.environ.get("RLVR_MATH_WORKERS")
    if configured:
        return max(1, int(configured))
    return max(1, min(2, os.cpu_count() or 1))


def pool() -> WorkerPool:
    """The process-wide pool (created on first use; a forked child gets its own)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = WorkerPool(default_size())
            _pool.start()
        return _pool


def warm_up() -> None:
    """Start the workers now and wait until one is ready (so a first call is not slowed)."""
    pool().wait_ready()


def _forget_in_child() -> None:
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


def _close_at_exit() -> None:
    if _pool is not None:
        _pool.close()


os.register_at_fork(after_in_child=_forget_in_child)
atexit.register(_close_at_exit)
