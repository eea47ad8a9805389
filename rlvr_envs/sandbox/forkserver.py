"""Host side of the warm fork server (see `zygote.py`, which runs inside the sandbox).

`ForkServer` starts one zygote per backend and program set and asks it for fresh children;
`ForkJob` groups the children of one graded run, so they are all killed together when the run
ends or misses its deadline. Channels are socket pairs the host creates: one end goes to the
child (through the zygote, as SCM_RIGHTS), the other stays with the caller, so code and tests
travel host → child directly and never pass through the zygote's memory.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import itertools
import json
import marshal
import os
import queue
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Callable, Hashable, Mapping, Sequence

from rlvr_envs.sandbox.base import Limits
from rlvr_envs.sandbox.cgroup import RunCgroup, kill_members, memory_plan

ZYGOTE_SOURCE = (Path(__file__).parent / "zygote.py").read_text()
#: the command line program of a fork server: it runs the zygote's code that arrives as the
#: first control message, compiled by this process when the zygote runs the same interpreter
#: (compiling 800 lines in the zygote would leave it megabytes of heap that every fork copies
#: and every child unmaps again), else from the source
ZYGOTE_BOOT = (
    "import _socket, marshal, sys\n"
    "_boot = _socket.socket(fileno=0)\n"
    "_packet = marshal.loads(_boot.recv(1 << 20))\n"
    "_boot.detach()\n"
    "_code = marshal.loads(_packet['code']) if _packet['python'] == sys.version else "
    "compile(_packet['source'], 'zygote.py', 'exec')\n"
    "del _boot, _packet\n"
    "exec(_code)\n")
STARTUP_TIMEOUT = 60.0
#: the zygote's own process budget (it holds every concurrent run's processes)
ZYGOTE_MAX_PROCESSES = 4096
#: runs prepared ahead of use, per zygote and kind of run
MAX_READY = 8


def host_python() -> str:
    """This interpreter's `sys.version`: a zygote that reports the same one loads code that
    this process compiled (marshal), any other compiles the source itself."""
    return sys.version


@functools.lru_cache(maxsize=2)
def _boot_message(python: str) -> bytes:
    return marshal.dumps({"python": python, "source": ZYGOTE_SOURCE,
                          "code": marshal.dumps(compile(ZYGOTE_SOURCE, "zygote.py", "exec"))})


@functools.lru_cache(maxsize=8)
def compiled_programs(programs: tuple[tuple[str, str], ...]) -> dict[str, bytes]:
    """name → marshal of this process's compile of the program's source."""
    return {name: marshal.dumps(compile(source, name + ".py", "exec"))
            for name, source in programs}


class ForkServerError(RuntimeError):
    """The zygote could not be started or has stopped."""


#: queued signals and POSIX message-queue bytes a run may hold: counted per user, and charged
#: to the user that made the run's user namespace too (the host's root), as its own limit
#: allows, so a run's own limit is what keeps it from taking root's
MAX_PENDING_SIGNALS = 1024
MAX_MESSAGE_QUEUE_BYTES = 65536


def run_rlimits(limits: Limits, address_space: int) -> dict[str, int]:
    """The rlimits a child sets on itself before running its program."""
    return {"RLIMIT_AS": address_space, "RLIMIT_CPU": limits.cpu_seconds,
            "RLIMIT_FSIZE": limits.max_file_bytes, "RLIMIT_NOFILE": limits.max_open_files,
            "RLIMIT_CORE": 0, "RLIMIT_NPROC": limits.max_processes + 1,
            "RLIMIT_SIGPENDING": MAX_PENDING_SIGNALS,
            "RLIMIT_MSGQUEUE": MAX_MESSAGE_QUEUE_BYTES}


def programs_key(programs: Mapping[str, str]) -> str:
    return hashlib.sha256(json.dumps(dict(programs), sort_keys=True).encode()).hexdigest()


#: idle run cgroups kept per set of limits
MAX_IDLE_GROUPS = 64
#: how long the janitor lets a finished run's processes end on their own before it looks
SETTLE_SECONDS = 0.005


class _CgroupPool:
    """Per-run cgroups (pids cap, memory budget), reused: a finished run's group is emptied (every member
    killed) by a background thread, off the grading threads' path, and then handed to a later
    run with the same limits. Creating one costs mkdirs and writes to cgroupfs per run."""

    def __init__(self):
        self.pending: queue.Queue[RunCgroup] = queue.Queue()
        self.free: dict[tuple, list[RunCgroup]] = {}
        self.busy: set[RunCgroup] = set()
        self.closed = False
        self.thread: threading.Thread | None = None
        self.lock = threading.Lock()
        atexit.register(self.remove_all)

    def acquire(self, max_pids: int, memory_bytes: int) -> RunCgroup | None:
        with self.lock:
            free = self.free.get((max_pids, memory_bytes))
            if free:
                cgroup = free.pop()
                cgroup.reset()
                return cgroup
        return RunCgroup.create(max_pids, memory_bytes)

    def warm(self, max_pids: int, memory_bytes: int, count: int) -> None:
        """Up to `count` idle groups with these limits, made now."""
        with self.lock:
            have = len(self.free.get((max_pids, memory_bytes), []))
        made = []
        for _ in range(min(count, MAX_IDLE_GROUPS) - have):
            cgroup = RunCgroup.create(max_pids, memory_bytes)
            if cgroup is None:
                break
            made.append(cgroup)
        with self.lock:
            self.free.setdefault((max_pids, memory_bytes), []).extend(made)

    def release(self, cgroup: RunCgroup) -> None:
        with self.lock:
            if self.thread is None:
                self.thread = threading.Thread(target=self._loop, name="rlvr-cgroup-janitor",
                                               daemon=True)
                self.thread.start()
        self.pending.put(cgroup)

    def _loop(self) -> None:
        while True:
            groups = [self.pending.get()]
            # a finished run's processes end on their own once their channels close: looked
            # at a moment later, most groups are empty already (one counter read, no kill)
            time.sleep(SETTLE_SECONDS)
            while True:
                try:
                    groups.append(self.pending.get_nowait())
                except queue.Empty:
                    break
            with self.lock:
                self.busy.update(groups)
            for cgroup, empty in kill_members(groups):
                with self.lock:
                    self.busy.discard(cgroup)
                    free = self.free.setdefault((cgroup.max_pids, cgroup.memory_bytes), [])
                    keep = empty and not self.closed and len(free) < MAX_IDLE_GROUPS
                    if keep:
                        free.append(cgroup)
                if not keep:  # outside the lock: removing may wait for the last members to go
                    cgroup.remove()

    def remove_all(self) -> None:
        """At exit: remove every group (the janitor may be in the middle of one)."""
        with self.lock:
            self.closed = True
            groups = [c for free in self.free.values() for c in free] + list(self.busy)
            self.free.clear()
        while True:
            try:
                groups.append(self.pending.get_nowait())
            except queue.Empty:
                break
        for cgroup in groups:
            cgroup.remove()


CGROUPS = _CgroupPool()
_LIVE_SERVERS: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _close_live_servers() -> None:
    """At exit (before the cgroup pool is emptied): stop every zygote still running."""
    for server in list(_LIVE_SERVERS):
        server.close()


class ForkServer:
    """One zygote: `argv` starts it inside the sandbox with the control socket as stdin."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: str | os.PathLike,
                 programs: Mapping[str, str], isolation: str, view: Mapping,
                 launcher_prefix: Sequence[str] = (), owned_dir: str | None = None,
                 jail: bool = True):
        self.isolation = isolation
        self.programs = dict(programs)
        self.owned_dir = owned_dir
        self._ids = itertools.count(1)
        self._send_lock = threading.Lock()
        self._stop = threading.Event()
        self._closed = self._dead = False
        self._in_flight = 0
        self._ready: dict[Hashable, list] = {}
        self._idle: dict[Hashable, list] = {}
        self._ready_lock = threading.Lock()
        self.cgroup = RunCgroup.create(ZYGOTE_MAX_PROCESSES)
        command = list(launcher_prefix) + list(argv)
        if self.cgroup is not None:
            command = join_cgroup(self.cgroup) + command
        self.control, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._stderr = tempfile.TemporaryFile()
        started = threading.Event()
        failure: list[BaseException] = []

        def launch() -> None:
            # the zygote is started from this long-lived thread: bubblewrap's --die-with-parent
            # fires when the *thread* that started it ends (a grading pool's worker, say)
            try:
                self.popen = subprocess.Popen(command, stdin=child_end, stdout=subprocess.DEVNULL,
                                              stderr=self._stderr, env=dict(env), cwd=cwd,
                                              start_new_session=True, close_fds=True)
            except BaseException as err:  # noqa: BLE001 - re-raised by the constructor
                failure.append(err)
            started.set()
            self._stop.wait()

        self._launcher = threading.Thread(target=launch, name="rlvr-zygote", daemon=True)
        self._launcher.start()
        started.wait()
        child_end.close()
        if failure:
            self._release()
            raise ForkServerError(f"cannot start the {isolation} fork server: {failure[0]}")
        try:
            self.control.settimeout(STARTUP_TIMEOUT)
            self.control.send(_boot_message(host_python()))
            self.control.send(marshal.dumps(
                {"op": "programs", "programs": self.programs,
                 "compiled": compiled_programs(tuple(sorted(self.programs.items()))),
                 "python": host_python(), "view": dict(view), "jail": jail}))
            ready = json.loads(self.control.recv(1 << 16) or b"null")
            self.control.settimeout(None)
        except (OSError, ValueError) as err:
            ready = {"error": f"{type(err).__name__}: {err}"}
        if not isinstance(ready, dict) or ready.get("op") != "ready" or ready.get("error"):
            detail = (ready or {}).get("error") if isinstance(ready, dict) else None
            self.close()
            raise ForkServerError(f"the {isolation} fork server did not start: "
                                  f"{detail or self.stderr_tail() or 'no reply'}")
        #: whether each isolated child gets its own user/mount/PID/IPC/network namespaces
        self.namespaces = bool(ready.get("namespaces"))
        #: whether the zygote runs in its own jail (the view built once; see `zygote.py`)
        self.jail = bool(ready.get("jail"))
        _LIVE_SERVERS.add(self)
        self._exited: dict[int, threading.Event] = {}
        self._events_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read_events, name="rlvr-zygote-events",
                                        daemon=True)
        self._reader.start()

    def _read_events(self) -> None:
        while True:
            try:
                data = self.control.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                break
            try:
                event = json.loads(data)
            except ValueError:
                continue
            if isinstance(event, dict) and event.get("op") == "exited":
                with self._events_lock:
                    waiter = self._exited.pop(event.get("id"), None)
                if waiter is not None:
                    waiter.set()
        self._dead = True
        with self._events_lock:  # nobody will report these any more
            for waiter in self._exited.values():
                waiter.set()
            self._exited.clear()

    def kill(self, ids: Sequence[int], *, wait: float | None = None) -> bool:
        """Kill these children and everything they started. With `wait`, block until the
        zygote reports all of them gone (at most `wait` seconds); True when it did."""
        waiters = self._replies(ids) if wait is not None else []
        try:
            self.send({"op": "kill", "ids": list(ids), "report": wait is not None})
        except ForkServerError:
            return False
        if wait is None:
            return True
        return all(waiter.wait(wait) for waiter in waiters)

    @property
    def alive(self) -> bool:
        # the event reader sees end of file on the control socket once the zygote is gone
        # (no wait4 per run)
        return not self._closed and not self._dead

    def stderr_tail(self) -> str:
        try:
            self._stderr.seek(0)
            return self._stderr.read()[-2000:].decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""

    def send(self, message: dict, fds: Sequence[int] = ()) -> None:
        """A control message to the zygote, in marshal's format (plain data, from this trusted
        process: a C call to read, where the zygote pays for every page its JSON decoder would
        touch after each fork; every Python 3 reads marshal's version 4 alike)."""
        data = marshal.dumps(message, 4)
        with self._send_lock:
            try:
                socket.send_fds(self.control, [data], list(fds)) if fds else \
                    self.control.send(data)
            except OSError as err:
                raise ForkServerError(f"the {self.isolation} fork server stopped: {err}; "
                                      f"{self.stderr_tail()}") from err

    def warm(self, limits: Limits, runs: int, groups: int | None = None) -> None:
        """Make now what `runs` isolated runs with `limits` take from pools (the zygote's
        network namespaces; cgroups, shared by every zygote: `groups` of them, default
        `runs`), instead of during the first runs."""
        CGROUPS.warm(limits.max_processes + 1, limits.memory_mb * 2**20,
                     runs if groups is None else groups)
        ident = self.next_id()
        made = self._replies([ident])[0]
        self.send({"op": "warm", "runs": runs, "id": ident})
        made.wait(STARTUP_TIMEOUT)

    def _replies(self, ids: Sequence[int]) -> list[threading.Event]:
        """Events set when the zygote answers {"op": "exited", "id": ...} for each of `ids`
        (or stops)."""
        with self._events_lock:
            return [self._exited.setdefault(ident, threading.Event()) for ident in ids]

    def job(self, limits: Limits, *, deadline: bool = True) -> ForkJob:
        """A new run. `deadline=False` for a run prepared ahead of use: the zygote then sets
        no deadline of its own when it forks the children (their caller enforces one)."""
        return ForkJob(self, limits, deadline=deadline)

    def reusable(self, key: Hashable, prepare: Callable[[], Any]) -> Any:
        """An idle item put back with `put_back(key, item)`, else a new one from `prepare()`
        (for trusted children that serve one run after another)."""
        with self._ready_lock:
            items = self._idle.setdefault(key, [])
            while items:
                item = items.pop()
                if item.usable():
                    return item
                item.close()
        return prepare()

    def put_back(self, key: Hashable, item: Any) -> None:
        with self._ready_lock:
            items = self._idle.setdefault(key, [])
            if not self._closed and len(items) < MAX_READY:
                items.append(item)
                return
        item.close()

    def prepared(self, key: Hashable, prepare: Callable[[], Any]) -> Any:
        """An item `prepare()` made ahead of time (its children already forked and waiting),
        and one more made now for the next call with this `key`. Each item is handed out once,
        so every run still gets fresh processes; forking is off the run's critical path.
        Items need `usable() -> bool` and `close()`."""
        with self._ready_lock:
            items = self._ready.setdefault(key, [])
            item = None
            while items and item is None:
                item = items.pop()
                if not item.usable():
                    item.close()
                    item = None
            short = len(items) < MAX_READY
        if item is None:
            item = prepare()
        if short and not self._closed:
            extra = prepare()
            with self._ready_lock:
                if self._closed:
                    extra.close()
                else:
                    self._ready[key].append(extra)
        return item

    @property
    def in_flight(self) -> int:
        """Runs started on this zygote and not yet closed."""
        return self._in_flight

    def next_id(self) -> int:
        return next(self._ids)

    def close(self) -> None:
        """Stop the zygote; every child still running dies with it."""
        if self._closed:
            return
        with self._ready_lock:
            self._closed = True
            ready = [item for pool in (self._ready, self._idle) for items in pool.values()
                     for item in items]
            self._ready.clear()
            self._idle.clear()
        for item in ready:
            item.close()
        try:
            # end of file: the zygote kills its children and exits (shutdown, unlike close,
            # also wakes the event reader blocked in recv on this socket)
            self.control.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.control.close()
        popen = getattr(self, "popen", None)
        if popen is not None:
            try:
                popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                popen.kill()
                popen.wait(timeout=5)
        self._release()

    def _release(self) -> None:
        self._stop.set()
        if self.cgroup is not None:
            self.cgroup.remove()
        if self.owned_dir:
            shutil.rmtree(self.owned_dir, ignore_errors=True)
        self._stderr.close()


def join_cgroup(cgroup: RunCgroup) -> list[str]:
    """An argv prefix: the shell moves itself into each of the group's controllers, then
    execs the rest of the command line (which stays in them)."""
    return ["/bin/sh", "-c", 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 71; '
            'shift; n=$((n-1)); done; exec "$@"', "rlvr-cgroup",
            str(len(cgroup.procs_files)), *cgroup.procs_files]


class ForkJob:
    """The children of one graded run: fresh processes forked by the zygote, killed together
    by `close()` (also when the run missed its deadline)."""

    def __init__(self, server: ForkServer, limits: Limits, *, deadline: bool = True):
        self.server, self.limits, self.deadline = server, limits, deadline
        self.ids: list[int] = []
        self.cgroups: list[RunCgroup] = []
        #: whether a child of the run is outside every run cgroup (only the zygote can kill it)
        self.uncounted = False
        self.open = True
        with server._send_lock:
            server._in_flight += 1

    def spawn(self, program: str, channels: Sequence[socket.socket | int], *,
              isolate: bool, cpu_limit: bool = True) -> None:
        """Start `program` in a fresh child whose channel fds are `channels` (in order).
        `isolate=True` for untrusted code: own namespaces, private /tmp, own cgroup.
        `cpu_limit=False` for a long-lived trusted child (RLIMIT_CPU counts its whole life)."""
        fds = [c.fileno() if isinstance(c, socket.socket) else c for c in channels]
        ident = self.server.next_id()
        cgroup = None
        if isolate:
            cgroup = CGROUPS.acquire(self.limits.max_processes + 1, self.limits.memory_mb * 2**20)
        address_space, tmp_mb, shm_mb = memory_plan(
            self.limits.memory_mb, cgroup is not None and cgroup.has_memory)
        if not isolate:  # a trusted child has no tmpfs of its own to carve out
            address_space = self.limits.memory_mb * 2**20
        rlimits = run_rlimits(self.limits, address_space)
        if not cpu_limit:
            del rlimits["RLIMIT_CPU"]
        message = {"op": "spawn", "id": ident, "program": program, "isolate": isolate,
                   "limits": rlimits,
                   "wall": self.limits.wall_time if self.deadline else None,
                   "tmp_mb": tmp_mb, "shm_mb": shm_mb, "cgroups": 0,
                   "pids_cgroup": cgroup is not None and "pids" in cgroup.dirs}
        procs_fds = []
        self.uncounted = self.uncounted or cgroup is None
        if cgroup is not None:
            self.cgroups.append(cgroup)
            procs_fds = cgroup.procs_fds()  # the group's own, kept open while it lives
            message["cgroups"] = len(procs_fds)
        self.server.send(message, fds + procs_fds)
        self.ids.append(ident)

    def pids(self) -> list[int]:
        """The live processes of the run's isolated children (their cgroups' members, host
        pids); [] where runs get no cgroup."""
        return [pid for cgroup in self.cgroups for pid in cgroup.pids()]

    def cpu_used(self) -> float | None:
        """CPU seconds the run's isolated children and every process they started used (ended
        ones too: their cgroups count them); None where a child has no cgroup counting CPU."""
        total = 0.0
        for cgroup in self.cgroups:
            used = cgroup.cpu_used()
            if used is None:
                return None
            total += used
        return None if self.uncounted or not self.cgroups else total

    def out_of_memory(self) -> bool:
        """Whether a child of this run hit the run's memory budget (its cgroup counted it)."""
        return any(cgroup.out_of_memory() for cgroup in self.cgroups)

    def close(self, wait: bool = False) -> None:
        """Kill every child of the run and whatever it started. `wait=True` (a run that did
        not end cleanly) returns only once all of them are gone; otherwise the processes,
        which end on their own when their channels close, are killed in the background."""
        if self.open:
            self.open = False
            with self.server._send_lock:
                self.server._in_flight -= 1
        if self.ids and (wait or self.uncounted):
            done = self.server.kill(self.ids, wait=5.0 if wait else None)
            if wait and not done:
                for cgroup in self.cgroups:
                    cgroup.kill_all()
        # otherwise every child is in a run cgroup, which the pool's janitor empties (kills
        # every member) before the group serves another run: no message to the zygote
        self.ids = []
        for cgroup in self.cgroups:
            CGROUPS.release(cgroup)
        self.cgroups = []

    def __enter__(self) -> ForkJob:
        return self

    def __exit__(self, exc_type, *exc) -> None:
        self.close(wait=exc_type is not None)


class ForkServers:
    """A sandbox's fork servers: per program set, a small pool of zygotes, started on first
    use, grown while every zygote already has a run in flight (up to `max_servers`), and
    restarted when one has stopped. Several zygotes fork in parallel; one would serialise
    every run's fork. `factory(programs)` starts one."""

    def __init__(self, factory, max_servers: int | None = None):
        self.factory = factory
        self.max_servers = max_servers or max(2, os.cpu_count() or 2)
        self.lock = threading.Lock()
        self.pools: dict[str, list[ForkServer]] = {}
        self.keys: dict[int, tuple[Mapping[str, str], str]] = {}

    def _key(self, programs: Mapping[str, str]) -> str:
        """`programs_key(programs)`, computed once per programs mapping."""
        known = self.keys.get(id(programs))
        if known is None or known[0] is not programs:
            known = self.keys[id(programs)] = (programs, programs_key(programs))
        return known[1]

    def start_all(self, programs: Mapping[str, str]) -> list[ForkServer]:
        """Every zygote the pool for `programs` may grow to, started now."""
        key = self._key(programs)
        while True:
            with self.lock:
                live = [s for s in self.pools.get(key, []) if s.alive]
            if len(live) >= self.max_servers:
                return live
            server = self.factory(programs)
            with self.lock:
                self.pools.setdefault(key, []).append(server)

    def get(self, programs: Mapping[str, str]) -> ForkServer:
        """The least busy live zygote for `programs` (a new one when all are busy)."""
        key = self._key(programs)
        with self.lock:
            pool = self.pools.setdefault(key, [])
            for server in [s for s in pool if not s.alive]:
                pool.remove(server)
                server.close()
            idle = min(pool, key=lambda s: s.in_flight, default=None)
            if idle is None or (idle.in_flight > 0 and len(pool) < self.max_servers):
                idle = self.factory(programs)
                pool.append(idle)
            return idle

    def close(self) -> None:
        with self.lock:
            for pool in self.pools.values():
                for server in pool:
                    server.close()
            self.pools.clear()
