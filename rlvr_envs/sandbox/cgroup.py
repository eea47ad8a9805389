"""A throw-away cgroup per run: a process cap (`pids`), one memory budget (`memory`) and the
count of the CPU its processes used (`cpu.stat` on v2, `cpuacct` on v1).

The memory budget counts everything the run's processes make resident — anonymous memory,
`memfd_create` files, tmpfs and `/dev/shm` pages they write — which RLIMIT_AS does not: a
run that exceeds it is killed by the kernel's OOM killer inside the group, and
`out_of_memory()` says so. The pids cap also covers children that escape the process group
(setsid), and the group's member list is a complete kill list.

Both cgroup versions work: v2 (`memory.max`, `memory.swap.max`, `pids.max` in one directory
under this process's own cgroup, when its `cgroup.subtree_control` delegates them) and v1
(`memory.limit_in_bytes` + `memory.memsw.limit_in_bytes` and `pids.max`, in each
controller's hierarchy under this process's own group, so the run also stays inside whatever
limit the caller itself runs under). Creating groups needs write access to the cgroup
filesystem (root, or a delegated subtree); elsewhere the backends fall back to rlimits
(`available()` is False) and carve the tmpfs sizes out of the address-space budget.
"""

from __future__ import annotations

import functools
import os
import signal
import time
import uuid
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")


def _own_paths() -> dict[str, str]:
    """controller ("0" for the v2 unified hierarchy) → this process's group path."""
    paths: dict[str, str] = {}
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            ident, controllers, path = line.split(":", 2)
            for name in (controllers.split(",") if controllers else ["0"]):
                paths[name] = path
    except (OSError, ValueError):
        pass
    return paths


@functools.lru_cache(maxsize=None)
def layout() -> tuple[str, dict[str, Path]]:
    """("v2" | "v1" | "none", controller → the writable parent directory of run groups)."""
    own = _own_paths()
    unified = CGROUP_ROOT / "cgroup.controllers"
    if unified.exists() and "0" in own:  # pure v2
        parent = CGROUP_ROOT / own["0"].lstrip("/")
        try:
            delegated = (parent / "cgroup.subtree_control").read_text().split()
        except OSError:
            delegated = []
        if {"memory", "pids"} <= set(delegated) and os.access(parent, os.W_OK):
            return "v2", {"memory": parent, "pids": parent}
        return "none", {}
    found = {}
    for name in ("memory", "pids", "cpuacct"):
        parent = CGROUP_ROOT / name / own.get(name, "/").lstrip("/")
        if (parent / "cgroup.procs").exists() and os.access(parent, os.W_OK):
            found[name] = parent
    return ("v1", found) if found else ("none", {})


def available(controller: str) -> bool:
    """Whether runs get their own group of this controller ("memory" or "pids") here."""
    return controller in layout()[1]


def pids_cgroup_available() -> bool:
    return available("pids")


def memory_cgroup_available() -> bool:
    return available("memory")


def _read_file(path: str) -> str:
    with open(path) as fh:
        return fh.read()


def _oom_kills(directory: str | Path, version: str, read=_read_file) -> int:
    """How many times the group hit its limit: OOM kills plus charges that failed at the
    limit (a tmpfs or memfd write there fails without a kill). Read only for runs that failed,
    so a run that merely had page cache reclaimed at the limit is not misnamed. `read(path)`
    returns a file's text."""
    directory = str(directory)
    try:
        if version == "v2":
            hits = 0
            for line in read(directory + "/memory.events").splitlines():
                key, _, value = line.partition(" ")
                if key in ("max", "oom_kill"):
                    hits += int(value)
            return hits
        kills = 0
        for line in read(directory + "/memory.oom_control").splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                kills = int(value)
        return kills + int(read(directory + "/memory.failcnt"))
    except (OSError, ValueError):
        return 0


def remove_stale(parents: dict[str, Path] | None = None) -> int:
    """Remove the empty run groups (`rlvr-<pid>-…`) whose owner process no longer exists;
    returns how many went. A group still holding a process is left alone (rmdir refuses)."""
    removed = 0
    for parent in set((parents if parents is not None else layout()[1]).values()):
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            parts = name.split("-")
            if len(parts) != 3 or parts[0] != "rlvr" or not parts[1].isdigit():
                continue
            if int(parts[1]) == os.getpid() or os.path.exists(f"/proc/{parts[1]}"):
                continue
            try:
                os.rmdir(parent / name)
                removed += 1
            except OSError:
                pass
    return removed


@functools.lru_cache(maxsize=None)
def _remove_stale_once() -> None:
    remove_stale()


class RunCgroup:
    """One run's groups. The run's launcher writes its own pid into each of `procs_files`
    before exec (or the zygote's child writes "0" into fds opened on them)."""

    def __init__(self, max_pids: int, memory_bytes: int | None):
        self.version, parents = layout()
        #: write-only fds of the group's cgroup.procs files, kept open while it lives (a
        #: pooled group serves many runs)
        self._fds: dict[str, int] = {}
        self.max_pids, self.memory_bytes = max_pids, memory_bytes
        _remove_stale_once()
        # the owner's pid in the name: a group left by a process that is gone (killed before
        # its exit handlers ran) is removed by the next process that makes groups
        name = f"rlvr-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.dirs: dict[str, Path] = {}
        for controller in ("pids", "memory", "cpuacct"):
            parent = parents.get(controller)
            if parent is None or (controller == "memory" and memory_bytes is None):
                continue
            directory = parent / name
            if directory not in self.dirs.values():
                directory.mkdir()
            self.dirs[controller] = directory
        try:
            if "pids" in self.dirs:
                (self.dirs["pids"] / "pids.max").write_text(str(max_pids))
            if "memory" in self.dirs:
                self._limit_memory(self.dirs["memory"], memory_bytes)
        except OSError:
            self.remove()
            raise
        self.procs_files = sorted({str(d / "cgroup.procs") for d in self.dirs.values()})
        self.oom_baseline = self._oom_count()
        self.cpu_baseline = self._cpu_seconds()

    def _limit_memory(self, directory: Path, memory_bytes: int) -> None:
        if self.version == "v2":
            (directory / "memory.max").write_text(str(memory_bytes))
            swap = directory / "memory.swap.max"
            if swap.exists():
                swap.write_text("0")
            return
        (directory / "memory.limit_in_bytes").write_text(str(memory_bytes))
        memsw = directory / "memory.memsw.limit_in_bytes"
        if memsw.exists():  # swap accounting on: swapping out must not escape the budget
            memsw.write_text(str(memory_bytes))

    @property
    def has_memory(self) -> bool:
        return "memory" in self.dirs

    @classmethod
    def create(cls, max_pids: int, memory_bytes: int | None = None) -> RunCgroup | None:
        """A new group, or None where none can be made (no writable cgroup filesystem)."""
        if not layout()[1]:
            return None
        try:
            return cls(max_pids, memory_bytes)
        except OSError:
            return None

    def _oom_count(self) -> int:
        directory = self.dirs.get("memory")
        return _oom_kills(directory, self.version, self._read_counters) \
            if directory is not None else 0

    def _cpu_seconds(self) -> float | None:
        """CPU seconds every process that was ever in the group used, ended ones too (v2:
        `cpu.stat`'s usage_usec; v1: `cpuacct.usage`); None where no group counts it."""
        try:
            if self.version == "v2" and self.dirs:
                text = self._read_counters(str(next(iter(self.dirs.values())) / "cpu.stat"))
                for line in text.splitlines():
                    if line.startswith("usage_usec "):
                        return int(line.split()[1]) / 1e6
                return None
            directory = self.dirs.get("cpuacct")
            if directory is not None:
                return int(self._read_counters(str(directory / "cpuacct.usage"))) / 1e9
        except (OSError, ValueError):
            pass
        return None

    def cpu_used(self) -> float | None:
        """CPU seconds the group's processes used since it was made (or last reset), ended
        processes included — also those the kernel reaped for a parent that ignores SIGCHLD,
        which no process's own counters show; None where the group does not count CPU."""
        now = self._cpu_seconds()
        if now is None or self.cpu_baseline is None:
            return None
        return max(0.0, now - self.cpu_baseline)

    def _read_counters(self, path: str) -> str:
        """A counter file's text through an fd kept open (read from offset 0, the kernel
        writes it anew): read twice per run, so no open and close each time."""
        return os.pread(self._fd(path), 1 << 16, 0).decode()

    def _fd(self, path: str | Path, flags: int = os.O_RDONLY) -> int:
        key = f"{path}:{flags}"
        fd = self._fds.get(key)
        if fd is None:
            fd = self._fds[key] = os.open(path, flags | os.O_CLOEXEC)
        return fd

    @staticmethod
    def _read(path: str | Path) -> str:
        """A cgroup file's text, opened anew (a kept fd may show a stale cgroup.procs)."""
        fd, chunks = os.open(path, os.O_RDONLY | os.O_CLOEXEC), []
        try:
            while True:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    return b"".join(chunks).decode()
                chunks.append(chunk)
        finally:
            os.close(fd)

    def procs_fds(self) -> list[int]:
        """Write-only fds of `procs_files` (open while the group lives): a process that
        writes "0" into each joins the group."""
        return [self._fd(path, os.O_WRONLY) for path in self.procs_files]

    def _close_fds(self) -> None:
        fds, self._fds = list(self._fds.values()), {}
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass

    def out_of_memory(self) -> bool:
        """Whether the group hit its memory budget since it was made (or last reset)."""
        return self._oom_count() > self.oom_baseline

    def reset(self) -> None:
        """Start counting anew (a pooled group handed to the next run)."""
        self.oom_baseline = self._oom_count()
        self.cpu_baseline = self._cpu_seconds()

    def surely_empty(self) -> bool:
        """Whether a counter read through a kept fd shows no process left in the group (v2:
        `cgroup.events` says "populated 0"; v1: `pids.current` is 0) — no listing to open and
        parse; False where it cannot tell."""
        try:
            if self.version == "v2":
                directory = next(iter(self.dirs.values()))
                return b"populated 0" in os.pread(self._fd(directory / "cgroup.events"), 4096, 0)
            directory = self.dirs.get("pids")
            return directory is not None and \
                os.pread(self._fd(directory / "pids.current"), 64, 0).strip() == b"0"
        except (OSError, StopIteration):
            return False

    def pids(self) -> list[int]:
        members: set[int] = set()
        for procs in self.procs_files:
            try:
                members.update(int(p) for p in self._read(procs).split())
            except (OSError, ValueError):
                pass
        return sorted(members)

    def kill_all(self) -> None:
        """SIGKILL every member until none is left (a forking member can add new ones)."""
        list(kill_members([self]))

    def remove(self) -> None:
        self.kill_all()
        self._close_fds()
        for directory in set(self.dirs.values()):
            for _ in range(100):
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)


def kill_members(groups: list[RunCgroup], rounds: int = 200):
    """SIGKILL every member of each group until none is left (a forking member can add new
    ones), all groups in one pass per round with one 5 ms pause between rounds. Yields
    (group, emptied) as each group is settled."""
    left = list(groups)
    for _ in range(rounds):
        still = []
        for cgroup in left:
            members = [] if cgroup.surely_empty() else cgroup.pids()
            if not members:
                yield cgroup, True
                continue
            for pid in members:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            still.append(cgroup)
        left = still
        if not left:
            return
        time.sleep(0.005)
    for cgroup in left:
        yield cgroup, False


def memory_plan(memory_mb: int, counted: bool) -> tuple[int, int, int]:
    """(RLIMIT_AS bytes, /tmp MiB, /dev/shm MiB) of a run with a `memory_mb` budget.
    `counted`: the run has a memory cgroup, which holds anonymous memory, memfd and tmpfs
    together — each tmpfs may then take the whole budget, and the address-space limit only
    stops absurd reservations. Without one, the budget is carved up: half for the address
    space, a quarter each for /tmp and /dev/shm."""
    if counted:
        return 2 * memory_mb * 2**20 + 2**30, memory_mb, memory_mb
    quarter = max(1, memory_mb // 4)
    return max(1, memory_mb // 2) * 2**20, quarter, quarter
