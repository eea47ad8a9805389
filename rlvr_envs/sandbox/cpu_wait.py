"""A run's clock that does not count the time its processes waited for a CPU.

On a loaded machine a correct program takes longer in wall-clock time without doing more
work; a plain wall-clock deadline then turns it into a timeout, so the verdict would depend on
what else the machine runs. Linux counts, for every thread, the time it was runnable but not
running (`run_delay`, the second field of `/proc/<pid>/task/<tid>/schedstat`). A `RunClock`
starts with the usual deadline (`started + limit`); when that passes, it reads the waiting of
the run's live threads and moves the deadline on by the most any one of them waited, so a
program gets `limit` seconds in which it could run. A program that sleeps or blocks waits for
no CPU and times out at `limit` as before. The move is never more than the time the run's
processes did not spend on a CPU between them, counted by the run's cgroup (every process it
ever had, ended ones too — also children the kernel reaped for a parent that ignores SIGCHLD,
which no process's own counters show): a run whose own busy threads or children keep each
other waiting gains nothing by it, and no run ever gets more than `limit` seconds of CPU in
all before its deadline. The deadline never moves past `BACKSTOP × limit` (a machine ten times
oversubscribed). A multi-threaded program on a busy machine is given less than all of its
waiting back. Where no cgroup counts the run's CPU (no writable cgroup filesystem, cgroup v1
without `cpuacct`) or its processes cannot be listed, the clock is the wall clock.

The files are only read once the plain deadline has passed: a run that ends in time costs
nothing extra. The waiting counted is each thread's since it started, so for a process made
ahead of the run (a fork server's prepared candidate) a few milliseconds of its start-up
waiting may count too.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable

#: how far past its limit a starved run's deadline may move, as a multiple of the limit
BACKSTOP = 10.0
#: the least a moved deadline lies ahead (no re-reading /proc in a tight loop)
MIN_STEP = 0.01
#: how often a caller that follows a run to its end reads the waiting (`sample`)
SAMPLE_EVERY = 0.1


def _per_thread(pid: int, name: str) -> list[list[bytes]]:
    """The whitespace-separated fields of `/proc/<pid>/task/<tid>/<name>` for each thread of
    `pid` that could be read ([] for a process that is gone)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found = []
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/{name}", "rb") as fh:
                found.append(fh.read().split())
        except OSError:
            continue
    return found


def thread_times(pids: Iterable[int]) -> list[tuple[float, float]]:
    """(seconds on a CPU, seconds runnable but not running) of each live thread of `pids`,
    since it started."""
    times = []
    for pid in pids:
        for fields in _per_thread(pid, "schedstat"):
            try:
                times.append((int(fields[0]) / 1e9, int(fields[1]) / 1e9))
            except (ValueError, IndexError):
                continue
    return times


def longest_wait(pids: Iterable[int]) -> float:
    """The most seconds one live thread of the processes `pids` and their descendants waited
    for a CPU."""
    processes = {found for pid in pids for found in process_tree(pid)}
    return max((wait for _, wait in thread_times(processes)), default=0.0)


def process_tree(pid: int) -> list[int]:
    """`pid` and its live descendants (`/proc/<pid>/task/<tid>/children`)."""
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        for children in _per_thread(current, "children"):
            pending.extend(int(child) for child in children)
    return found


class RunClock:
    """A deadline of `limit` seconds from `started` that moves on by the time the run's
    processes (`members()`: the pids of its top processes, read when needed; their
    descendants are found here) waited for a CPU."""

    def __init__(self, limit: float, members: Callable[[], Iterable[int]] | None,
                 started: float | None = None,
                 cpu_used: Callable[[], float | None] | None = None):
        self.limit, self.members, self.cpu_used = limit, members, cpu_used
        self.started = time.monotonic() if started is None else started
        self.waited = 0.0  # the most one thread of the run had waited, when last read
        self.sampled = self.started  # when that was

    @property
    def deadline(self) -> float:
        return self.started + self.limit + self.waited

    def restart(self, started: float) -> None:
        """The run's time starts at `started` (a sandbox's start-up is not the run's)."""
        self.started = started

    def sample(self) -> None:
        """Read now how long the run's live threads have waited for a CPU (the deadline moves
        on by the most one of them waited)."""
        if self.members is None or self.cpu_used is None:
            return
        now = time.monotonic()
        # every process the run ever had, ended ones included (a child the kernel reaped for a
        # parent that ignores SIGCHLD leaves no trace in any process's counters): without
        # that count, the wall clock
        cpu = self.cpu_used()
        if cpu is None:
            return
        try:
            most = longest_wait(self.members())
        except OSError:
            most = 0.0
        # the most one thread waited, but never more than the time the run's processes did not
        # use between them: a run whose own busy threads or children keep each other waiting
        # gains nothing by it, and a run never gets more than its limit of CPU in all
        waited = max(0.0, min(most, now - self.started - cpu))
        self.waited = max(self.waited, min(waited, (BACKSTOP - 1.0) * self.limit))
        self.sampled = now

    def remaining(self) -> float:
        """Seconds left; at the deadline the waiting is read again, which may give more."""
        left = self.deadline - time.monotonic()
        if left > 0 or self.members is None:
            return left
        self.sample()
        left = self.deadline - time.monotonic()
        return left if left <= 0 else max(left, MIN_STEP)


def cpu_stall_seconds(path: str = "/proc/pressure/cpu") -> float | None:
    """Seconds since boot in which at least one runnable task of the machine (of the cgroup,
    for a cgroup's `cpu.pressure`) waited for a CPU: the kernel's pressure stall information,
    "some" line; None where the kernel does not keep it."""
    try:
        with open(path, "rb") as fh:
            return int(fh.readline().rsplit(b"total=", 1)[1]) / 1e6
    except (OSError, ValueError, IndexError):
        return None


class StallClock:
    """A deadline of `limit` seconds that moves on by the time the machine's tasks waited for a
    CPU meanwhile (`cpu_stall_seconds`), never past `BACKSTOP × limit`: the deadline of work
    whose processes are not known one by one (a scoring worker and whatever it starts), so
    that a busy machine does not turn slow work into a timeout. Where the kernel keeps no
    stall count, the wall clock."""

    def __init__(self, limit: float, stalled: Callable[[], float | None] = cpu_stall_seconds):
        self.limit, self.stalled = limit, stalled
        self.started = time.monotonic()
        self.stall_at_start = stalled()
        self.waited = 0.0

    @property
    def deadline(self) -> float:
        return self.started + self.limit + self.waited

    def remaining(self) -> float:
        """Seconds left; at the deadline the stall count is read again, which may give more."""
        left = self.deadline - time.monotonic()
        if left > 0 or self.stall_at_start is None:
            return left
        now_stalled = self.stalled()
        if now_stalled is not None:
            self.waited = min(max(self.waited, now_stalled - self.stall_at_start),
                              (BACKSTOP - 1.0) * self.limit)
        left = self.deadline - time.monotonic()
        return left if left <= 0 else max(left, MIN_STEP)

