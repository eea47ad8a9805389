"""The sandbox interface: run an untrusted command with files, stdin and hard limits.

Every backend (plain process, bubblewrap, Docker) implements `Sandbox.run` with the same
meaning: a fresh private working directory (or a given host directory, mounted at the same
path), no network, a wall-clock deadline after which every process the run started is
killed, resource limits, and capped output. `Sandbox.spawn` is the lower-level form that
hands back a live process with stdin/stdout pipes (the code grader talks to candidate code
over them); `run` is `spawn` plus a bounded read of both streams.
"""

from __future__ import annotations

import codecs
import math
import os
import selectors
import shutil
import subprocess
import tempfile
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable, Hashable
from typing import IO, Any, Mapping, Protocol, Sequence

from rlvr_envs.sandbox.cpu_wait import SAMPLE_EVERY, RunClock

#: what a run's environment holds besides the caller's `env` (nothing from the host leaks in)
BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",
    "TMPDIR": "/tmp",
}

#: a run that keeps printing past its cap is killed once it has produced this many times the cap
DRAIN_FACTOR = 16


class SandboxUnavailable(RuntimeError):
    """The requested backend cannot run here; the message names what is missing and the fix."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one run."""

    wall_time: float = 10.0        # seconds, whole process group killed at the deadline
    cpu_time: float | None = None  # RLIMIT_CPU seconds (None: derived from wall_time)
    memory_mb: int = 1024          # address space
    max_processes: int = 64
    max_output_bytes: int = 1_000_000   # stdout and stderr each, then truncated
    max_file_bytes: int = 64 * 2**20
    max_open_files: int = 256

    def __post_init__(self) -> None:
        if not self.wall_time > 0:
            raise ValueError(f"Limits.wall_time must be > 0 seconds, got {self.wall_time!r}")
        if self.cpu_time is not None and not self.cpu_time > 0:
            raise ValueError(f"Limits.cpu_time must be > 0 seconds or None, got {self.cpu_time!r}")
        for name in ("memory_mb", "max_processes", "max_output_bytes", "max_file_bytes",
                     "max_open_files"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"Limits.{name} must be a positive int, got {value!r}")

    @property
    def cpu_seconds(self) -> int:
        """RLIMIT_CPU in whole seconds."""
        return int(math.ceil(self.cpu_time if self.cpu_time is not None else self.wall_time + 1))

    def within(self, other: Limits) -> Limits:
        """These limits, none looser than `other`'s (each field the smaller of the two)."""
        cpu = (other.cpu_time if self.cpu_time is None else self.cpu_time if other.cpu_time is None
               else min(self.cpu_time, other.cpu_time))
        return Limits(**{name: min(getattr(self, name), getattr(other, name))
                         for name in self.__dataclass_fields__ if name != "cpu_time"},
                      cpu_time=cpu)

    @classmethod
    def coerce(cls, value: Limits | Mapping | None) -> Limits:
        if value is None:
            return cls()
        if isinstance(value, Limits):
            return value
        if isinstance(value, Mapping):
            unknown = set(value) - set(cls.__dataclass_fields__)
            if unknown:
                raise ValueError(f"unknown limits {sorted(unknown)}; valid: "
                                 f"{sorted(cls.__dataclass_fields__)}")
            return cls(**value)
        raise TypeError(f"limits must be a Limits or a dict, got {type(value).__name__}")


@dataclass
class RunResult:
    """What a run produced. `exit_code` is None when the run was killed (deadline, output
    flood); a negative code is the signal that ended the process."""

    stdout: str
    stderr: str
    exit_code: int | None
    timed_out: bool
    killed: bool
    truncated: bool
    isolation: str  # "local" | "bwrap" | "docker"
    duration: float
    files: dict[str, bytes] = field(default_factory=dict)
    #: the run hit its memory budget (its cgroup's OOM count; False where none is kept)
    out_of_memory: bool = False
    #: seconds of `duration` the run's processes spent waiting for a CPU (a busy machine),
    #: read every `cpu_wait.SAMPLE_EVERY` while it ran; 0.0 where it cannot be read
    cpu_wait: float = 0.0
    #: the bytes of stdout were valid UTF-8 (a sequence cut by the output cap aside); when
    #: False, `stdout` holds U+FFFD for each invalid sequence, so a caller that compares
    #: text must check this, not look for U+FFFD
    stdout_utf8: bool = True

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out and not self.killed


class SandboxedProcess:
    """A live run: `stdin`/`stdout` are binary pipes, stderr is collected (capped) by `finish`.

    Backends subclass it to add what killing the whole run means for them.
    """

    def __init__(self, popen, *, workdir: Path, owns_workdir: bool, limits: Limits,
                 isolation: str):
        self.popen = popen
        self.workdir, self.owns_workdir = workdir, owns_workdir
        self.limits, self.isolation = limits, isolation
        #: the run's deadline: `wall_time` seconds in which its processes could run (the
        #: time they waited for a CPU on a busy machine is added, `cpu_wait.RunClock`)
        self.clock = RunClock(limits.wall_time, self.members, cpu_used=self.cpu_used)
        self.killed = False
        self._closed = False
        #: the first bytes of stdout, read by the sandbox while it waited for the run to
        #: start; whoever reads `stdout` takes these first
        self.early_stdout = b""

    @property
    def started(self) -> float:
        return self.clock.started

    @property
    def deadline(self) -> float:
        return self.clock.deadline

    def members(self) -> list[int]:
        """The run's top processes (host pids; the clock adds their descendants)."""
        return [self.popen.pid]

    def cpu_used(self) -> float | None:
        """CPU seconds every process of the run used, ended ones included; None where nothing
        counts them all (then the clock is the wall clock)."""
        return None

    @property
    def stdin(self) -> IO[bytes]:
        return self.popen.stdin

    @property
    def stdout(self) -> IO[bytes]:
        """The run's stdout pipe; what it brought before the run started is `early_stdout`."""
        return self.popen.stdout

    def remaining(self) -> float:
        return max(0.0, self.clock.remaining())

    def kill(self) -> None:
        """Kill every process of this run (not just the direct child)."""
        self.killed = True
        try:
            self.popen.kill()
        except ProcessLookupError:
            pass

    def cleanup(self) -> None:
        """Release what the run held (after it is dead)."""
        if self.owns_workdir:
            remove_workdir(self.workdir)

    def communicate(self, stdin: bytes | None = None) -> tuple[bytes, bytes, bool, bool]:
        """Feed `stdin`, read stdout and stderr until exit or the deadline.
        Returns (stdout, stderr, truncated, timed_out); kills the run on timeout or flood."""
        cap = self.limits.max_output_bytes
        chunks: dict[int, list[bytes]] = {}
        sizes: dict[int, int] = {}
        truncated = timed_out = False
        sel = selectors.DefaultSelector()
        for stream in (self.popen.stdout, self.popen.stderr):
            if stream is not None:
                os.set_blocking(stream.fileno(), False)
                sel.register(stream, selectors.EVENT_READ)
                chunks[stream.fileno()], sizes[stream.fileno()] = [], 0
        if self.early_stdout:
            fd = self.popen.stdout.fileno()
            chunks[fd], sizes[fd] = [self.early_stdout[:cap]], len(self.early_stdout)
            truncated = sizes[fd] > cap
            if sizes[fd] > cap * DRAIN_FACTOR:
                self.kill()
                sel.close()
                return self._joined(chunks, truncated, timed_out)
        pending = memoryview(stdin or b"")
        if self.popen.stdin is not None:
            if pending:
                os.set_blocking(self.popen.stdin.fileno(), False)
                sel.register(self.popen.stdin, selectors.EVENT_WRITE)
            else:
                self.popen.stdin.close()
        try:
            while sel.get_map():
                left = self.remaining()
                if left <= 0:
                    timed_out = True
                    self.kill()
                    break
                if time.monotonic() - self.clock.sampled >= SAMPLE_EVERY:
                    self.clock.sample()
                for key, _ in sel.select(timeout=min(left, SAMPLE_EVERY)):
                    if key.fileobj is self.popen.stdin:
                        try:
                            written = os.write(key.fd, pending[:65536])
                        except (BrokenPipeError, OSError):
                            written = len(pending)
                        pending = pending[written:]
                        if not pending:
                            sel.unregister(key.fileobj)
                            key.fileobj.close()
                        continue
                    data = os.read(key.fd, 65536)
                    if not data:
                        sel.unregister(key.fileobj)
                        continue
                    seen = sizes[key.fd]
                    sizes[key.fd] = seen + len(data)
                    if seen < cap:
                        chunks[key.fd].append(data[:cap - seen])
                    if sizes[key.fd] > cap:
                        truncated = True
                        if sizes[key.fd] > cap * DRAIN_FACTOR:
                            self.kill()
                            sel.close()
                            return self._joined(chunks, truncated, timed_out)
        finally:
            sel.close()
        return self._joined(chunks, truncated, timed_out)

    def _joined(self, chunks, truncated, timed_out):
        out = b"".join(chunks.get(self.popen.stdout.fileno(), [])) if self.popen.stdout else b""
        err = b"".join(chunks.get(self.popen.stderr.fileno(), [])) if self.popen.stderr else b""
        return out, err, truncated, timed_out

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait for exit (at most until the deadline); kill at the deadline."""
        limit = self.remaining() if timeout is None else min(timeout, self.remaining())
        try:
            return self.popen.wait(timeout=limit)
        except Exception:  # noqa: BLE001 - subprocess.TimeoutExpired
            self.kill()
            return None

    def close(self) -> None:
        """Kill whatever is still running and release the run's resources. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self.popen.poll() is None:
            self.kill()
        else:
            self.kill_leftovers()
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        try:
            self.popen.wait(timeout=5)
        except Exception:  # noqa: BLE001
            pass
        self.cleanup()

    def kill_leftovers(self) -> None:
        """After the main process exited: kill anything it left behind (daemons)."""
        self.kill()

    def out_of_memory(self) -> bool:
        """Whether the run hit its memory budget (a backend that cannot tell says False)."""
        return False

    def collect(self, paths: Sequence[str]) -> dict[str, bytes]:
        files: dict[str, bytes] = {}
        root = self.workdir.resolve()
        for rel in paths:
            target = (root / rel).resolve()
            if root not in target.parents and target != root:
                continue  # a symlink planted by the run must not read host files
            if target.is_file():
                with open(target, "rb") as fh:
                    files[rel] = fh.read(self.limits.max_file_bytes)
        return files


class ForkedRun(Protocol):
    """One run on a warm fork server: the children it forks, killed together on `close`."""

    def spawn(self, program: str, channels: Sequence[Any], *, isolate: bool,
              cpu_limit: bool = True) -> None:
        """Fork `program` with `channels` (sockets or fds) as its channel fds; `isolate=True`
        for untrusted code (own namespaces, private /tmp, own cgroup)."""

    def pids(self) -> list[int]:
        """The live processes (host pids) of the run's isolated children, where known."""

    def out_of_memory(self) -> bool:
        """Whether a child of this run was killed for memory."""

    def close(self, wait: bool = False) -> None:
        """Kill every child of the run (and wait for them with `wait=True`)."""


class WarmForkServer(Protocol):
    """What the code grader drives on a backend with a warm fork server (local, bwrap):
    `rlvr_envs.sandbox.forkserver.ForkServer` implements it."""

    def job(self, limits: Limits, *, deadline: bool = True) -> ForkedRun:
        """A new run; `deadline=False` when the caller enforces the deadline itself."""

    def reusable(self, key: Hashable, prepare: Callable[[], Any]) -> Any:
        """An idle item put back under `key`, else a new one from `prepare()`."""

    def put_back(self, key: Hashable, item: Any) -> None:
        """Keep `item` for a later `reusable(key, ...)` (or close it when enough are kept)."""

    def prepared(self, key: Hashable, prepare: Callable[[], Any]) -> Any:
        """An item made ahead of time, handed out once; one more is made for the next call."""

    def warm(self, limits: Limits, runs: int, groups: int | None = None) -> None:
        """Make now what `runs` isolated runs with `limits` take from pools (`groups`: how
        many of the pools shared by all servers, default `runs`)."""


class Sandbox(ABC):
    """Runs untrusted commands. Subclasses: LocalSandbox, BwrapSandbox, DockerSandbox."""

    name: str = "abstract"
    #: the Python interpreter to name in commands that run inside this sandbox
    python: str = "python3"
    #: the run is kept from the host's files and network, and nothing it started outlives it
    #: (`auto` picks only such backends; the others are used by name only)
    isolating: bool = False

    @classmethod
    def problem(cls) -> str | None:
        """None when this backend can run here, else what is missing."""
        return None

    @classmethod
    def describe(cls) -> str:
        """One line on what a run of this backend sees (for `rlvr sandbox info`)."""
        return (cls.__doc__ or cls.__name__).strip().splitlines()[0]

    def run(self, command: list[str], *, files: Mapping[str, str | bytes] | None = None,
            stdin: str | bytes | None = None, limits: Limits = Limits(),
            workdir: str | os.PathLike | None = None, collect: Sequence[str] = (),
            env: Mapping[str, str] | None = None) -> RunResult:
        """Run `command` to completion (or the deadline) and return what it produced."""
        proc = self.spawn(command, files=files, limits=limits, workdir=workdir, env=env,
                          collect=collect)
        try:
            data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
            out, err, truncated, timed_out = proc.communicate(data)
            if proc.killed:  # at the deadline or for a flood: reap it, past the deadline too
                code = None  # (a flood killed near the deadline is no timeout)
                try:
                    proc.popen.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
            else:
                code = proc.wait()
                if code is None:
                    timed_out = True
            files_out = proc.collect(collect) if collect else {}
            return RunResult(stdout=out.decode("utf-8", "replace"),
                             stderr=err.decode("utf-8", "replace"), exit_code=code,
                             timed_out=timed_out, killed=proc.killed, truncated=truncated,
                             isolation=self.name, duration=time.monotonic() - proc.started,
                             files=files_out, out_of_memory=code != 0 and proc.out_of_memory(),
                             cpu_wait=proc.clock.waited,
                             stdout_utf8=is_utf8(out, cut=truncated))
        finally:
            proc.close()

    @abstractmethod
    def spawn(self, command: list[str], *, files: Mapping[str, str | bytes] | None = None,
              limits: Limits = Limits(), workdir: str | os.PathLike | None = None,
              env: Mapping[str, str] | None = None,
              collect: Sequence[str] = ()) -> SandboxedProcess:
        """Start `command` with stdin/stdout/stderr pipes; the caller must `close()` it.
        `collect`: the files the caller will read back with `collect` (a backend whose
        private working directory is not on the host copies these out)."""

    def fork_server(self, programs: Mapping[str, str]) -> WarmForkServer | None:
        """A warm fork server (`rlvr_envs.sandbox.forkserver.ForkServer`) whose children run
        `programs` (name → Python source defining `main(*channel_fds)`) with this backend's
        isolation, started on first use; None when this backend has none (the caller then
        uses `spawn`)."""
        return None

    def start_fork_servers(self, programs: Mapping[str, str]) -> list[WarmForkServer]:
        """Every fork server `fork_server(programs)` may hand out, started now (a backend
        starts more than one so that forks run in parallel); [] when it has none."""
        return []

    def close(self) -> None:
        """Release backend resources (pooled containers, fork servers, ...)."""

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def is_utf8(data: bytes, *, cut: bool = False) -> bool:
    """Whether `data` is valid UTF-8; with `cut`, a sequence cut short at the end (the output
    cap fell inside a character) is not held against it."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(data, final=not cut)
    except UnicodeDecodeError:
        return False
    return True


def check_command(command: Sequence[str]) -> list[str]:
    if isinstance(command, (str, bytes)) or not command or not all(
            isinstance(part, str) for part in command):
        raise TypeError(f"command must be a non-empty list of str (argv), got {command!r:.120}")
    return list(command)


def prepare_workdir(files: Mapping[str, str | bytes] | None,
                    workdir: str | os.PathLike | None,
                    size_mb: int | None = None) -> tuple[Path, bool]:
    """The run's working directory with `files` written in it: a fresh private temp dir when
    `workdir` is None (owned → removed afterwards), else the given host directory. With
    `size_mb`, a private directory is a tmpfs of that size where this process may mount one
    (root): what the run writes there is capped and counts against its memory budget instead
    of filling the host's disk."""
    if workdir is None:
        path, owned = Path(tempfile.mkdtemp(prefix="rlvr-sbx-")), True
        if size_mb is not None and os.geteuid() == 0:
            _mount_tmpfs(path, size_mb)
    else:
        path, owned = Path(workdir).resolve(), False
        if not path.is_dir():
            raise FileNotFoundError(f"sandbox workdir {str(path)!r} is not a directory")
    for rel, content in (files or {}).items():
        target = (path / rel).resolve()
        if path not in target.parents:
            raise ValueError(f"sandbox file path {rel!r} leaves the working directory")
        target.parent.mkdir(parents=True, exist_ok=True)
        data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
        target.write_bytes(data)
    return path, owned


def _mount_tmpfs(path: Path, size_mb: int) -> None:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    options = f"size={size_mb}m,nr_inodes=16384,mode=0700".encode()
    # MS_NOSUID | MS_NODEV; a failure leaves the plain directory (RLIMIT_FSIZE still caps files)
    libc.mount(b"tmpfs", str(path).encode(), b"tmpfs", 2 | 4, options)


def remove_workdir(path: Path) -> None:
    """Unmount (when a tmpfs) and remove a private working directory."""
    if os.path.ismount(path):
        import ctypes
        ctypes.CDLL(None, use_errno=True).umount2(str(path).encode(), 2)  # MNT_DETACH
    shutil.rmtree(path, ignore_errors=True)


def run_env(env: Mapping[str, str] | None, workdir: Path) -> dict[str, str]:
    merged = {**BASE_ENV, "HOME": str(workdir)}
    merged.update(env or {})
    return merged
