"""The `docker` backend: each run is a container of its own, of the project's image
(`rlvr_envs.sandbox.image`), with `--network none`, a read-only root filesystem, cgroup
memory / CPU / pids limits, rlimits, no capabilities and no-new-privileges.

A run with a private working directory gets a container started ahead of use by a warm pool
(`ContainerPool`, one per set of limits, `pool` containers each, started on first use): the
same flags, a `sleep` as PID 1 running as uid 65534, and the run enters it with `docker exec`
(its files arrive on stdin as a tar before its own input). Each pooled container serves
exactly one run and is then removed in the background (`docker rm -f`) while a replacement
starts, so nothing passes from one candidate to the next. Pooled containers carry the label
`rlvr.pool=<host>:<pid>`; they are removed when the sandbox closes, at exit, and, if their
owner died, by the next pool's start or `rlvr sandbox cleanup`.

A run's clock starts when its command starts, not when `docker run`/`docker exec` is called:
the wrapper in the container prints `READY` on stderr once the container is up and the files
are in, right before the command, and the host reads it before handing the run out, so
container start-up under load never turns into a timeout. CPU time is held by RLIMIT_CPU in
the container.

Nothing a run writes lands on the host's disk: its private working directory is a tmpfs of
the run's memory size inside the container (the files are copied in from a read-only mount
at start; the ones the caller collects are copied out, each capped at `max_file_bytes`), and
so is /tmp. tmpfs pages count against the container's `--memory`, so memory and disk share
one budget. A working directory the caller gives (a repository episode) is bind-mounted at
the same path instead: it must persist, and it is the caller's directory.

Runs go through the `docker` CLI (stdin/stdout attach works the same for `run`, `exec` and
the code grader's interactive protocol). At the deadline the container itself is killed.
"""

from __future__ import annotations

import atexit
import functools
import io
import os
import select
import shutil
import socket
import subprocess
import tarfile
import threading
import time
import uuid
from pathlib import Path
from typing import Mapping, Sequence

from rlvr_envs.sandbox.base import (DRAIN_FACTOR, Limits, Sandbox, SandboxedProcess,
                                    SandboxUnavailable, check_command, prepare_workdir, run_env)
from rlvr_envs.sandbox.image import IMAGE, ensure_image, image_exists
from rlvr_envs.sandbox.zygote import seccomp_launcher

INSTALL_HINT = ("install Docker (Debian/Ubuntu: `apt-get install docker.io`) and start the "
                "engine (`dockerd &` or `systemctl start docker`)")
SANDBOX_UID = 65534
#: where an owned working directory's files are mounted read-only, to be copied in
FILES_IN, FILES_OUT = "/rlvr-in", "/rlvr-out"
#: the working directory of a pooled run (a tmpfs of the run's memory size)
POOL_WORKDIR = "/sandbox"
#: the label on pooled containers; its value names the owner, `<hostname>:<pid>`
POOL_LABEL = "rlvr.pool"
#: the first bytes on a run's stderr, written by the wrapper right before the command starts
READY = b"\x01rlvr-ready\n"
#: the shell text that writes READY (module-level so a test can fake a slow start-up)
ANNOUNCE = 'printf "\\001rlvr-ready\\n" >&2'
#: how long a container may take to start before the run is given up as not started
START_TIMEOUT = 120.0


def entry_script() -> str:
    """PID 1 of a fresh container with a private working directory, as root with only
    CAP_SETUID/SETGID: becomes uid 65534 (losing both) to copy the files in, announce READY
    and run the command; once it has exited, kills every process the run left (as 65534, so
    nothing can swap a path while it copies) and copies the collected files — plain files
    whose real path lies in the working directory (a symlinked directory on the way would
    lead root's copy elsewhere), each capped by RLIMIT_FSIZE — to the out directory, which the
    run itself cannot write, and exits as the command did."""
    drop = "setpriv --reuid=65534 --regid=65534 --clear-groups --"
    return ('n=$1; shift; files=""; while [ "$n" -gt 0 ]; do files="$files $1"; shift; '
            f'n=$((n-1)); done; {drop} sh -c '
            f'\'cp -a "$0"/. . || exit 71; {ANNOUNCE}; exec "$@"\' "$0" "$@"; code=$?; '
            f'{drop} sh -c "kill -KILL -1" 2>/dev/null; here=$(pwd -P); '
            'for f in $files; do p=$(readlink -f -- "$f") || continue; case "$p" in '
            '"$here"/*) [ -f "$p" ] && [ ! -L "$p" ] && mkdir -p "$(dirname "/rlvr-out/$f")" '
            '&& cp -- "$p" "/rlvr-out/$f";; esac; done; exit $code')


def pool_script() -> str:
    """What `docker exec` runs in a pooled container (uid 65534): read exactly `$1` bytes of
    tar from stdin into the working directory, announce READY, run the command (the rest of
    stdin is its input) and, once it has exited, kill everything else it started."""
    return ('n=$1; shift; if [ "$n" -gt 0 ]; then dd bs="$n" count=1 iflag=fullblock '
            'status=none | tar -x -m -o -f - || exit 71; fi; '
            f'{ANNOUNCE}; "$@"; code=$?; kill -KILL -1 2>/dev/null; exit $code')


def confined(argv: Sequence[str]) -> list[str]:
    """`argv` started through the image's python3 under `zygote.syscall_filter` (no keyrings,
    no io_uring, no other ABI), on top of Docker's own seccomp profile: engines before 25.0,
    and distributions' builds of later ones, still allow io_uring."""
    launcher = seccomp_launcher()
    return list(argv) if launcher is None else ["python3", "-I", "-S", "-c", launcher, *argv]


def plain_script() -> str:
    """The wrapper of a run in the caller's directory: announce READY, then the command."""
    return f'{ANNOUNCE}; exec "$@"'


_REMOVALS: list[subprocess.Popen] = []
_REMOVALS_LOCK = threading.Lock()


@atexit.register
def finish_removals() -> None:
    """Wait (up to 10 s each) for the background removals started so far."""
    with _REMOVALS_LOCK:
        for removal in _REMOVALS:
            try:
                removal.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        _REMOVALS.clear()


def remove_container(name: str) -> None:
    """`docker rm -f` without waiting for it (finished removals are reaped on the next)."""
    with _REMOVALS_LOCK:
        _REMOVALS[:] = [p for p in _REMOVALS if p.poll() is None]
        _REMOVALS.append(subprocess.Popen(["docker", "rm", "-f", name],
                                          stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL))


@functools.lru_cache(maxsize=None)
def _engine_problem_cached() -> str | None:
    if shutil.which("docker") is None:
        return "the `docker` CLI is not on PATH"
    try:
        info = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"],
                              capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"`docker info` failed: {err}"
    if info.returncode != 0 or not info.stdout.strip():
        return f"no Docker engine is reachable ({info.stderr.strip()[:200]})"
    return None


def docker_problem() -> str | None:
    """None when a Docker engine answers, else what is wrong (a success is cached)."""
    problem = _engine_problem_cached()
    if problem is not None:
        _engine_problem_cached.cache_clear()
    return problem


def remove_containers(names: Sequence[str]) -> None:
    """`docker rm -f` several containers at once, without waiting."""
    if names:
        with _REMOVALS_LOCK:
            _REMOVALS.append(subprocess.Popen(["docker", "rm", "-f", *names],
                                              stdout=subprocess.DEVNULL,
                                              stderr=subprocess.DEVNULL))


def await_ready(popen: subprocess.Popen, timeout: float = START_TIMEOUT,
                keep_stdout: int = 1 << 20) -> tuple[bool, bytes, bytes]:
    """Read the run's stderr up to READY (the wrapper writes it right before the command
    starts), and its stdout meanwhile. Returns whether READY came, the other bytes of stderr
    read (Docker's warnings or error message, or the first of the command's own stderr),
    which belong to the run's stderr, and the first `keep_stdout` bytes of stdout read (the
    command's, which belong to the run's stdout; more is read and dropped). The start is
    given up after `timeout`.

    Stdout must be read too: the engine copies the two streams to the client each on its
    own, so on a busy machine the command's first stdout can overtake READY, and a client
    whose stdout pipe is full no longer delivers the READY behind it (a run that floods
    stdout stalled until the timeout)."""
    err_fd, out_fd = popen.stderr.fileno(), popen.stdout.fileno()
    got, out, out_open = b"", b"", True
    deadline = time.monotonic() + timeout
    while True:
        at = got.find(READY)
        if at >= 0:
            return True, got[:at] + got[at + len(READY):], out
        left = deadline - time.monotonic()
        if left <= 0 or len(got) > 1 << 20:
            return False, got, out
        readable, _, _ = select.select([err_fd] + [out_fd] * out_open, [], [], left)
        if out_fd in readable:
            chunk = os.read(out_fd, 65536)
            out_open = bool(chunk)
            out += chunk[:max(0, keep_stdout - len(out))]
        if err_fd in readable:
            chunk = os.read(err_fd, 65536)
            if not chunk:
                return False, got, out
            got += chunk


class ContainerProcess(SandboxedProcess):
    """Killing means ending the `docker` client, then `docker kill` on the container (every
    process in it dies). The container is kept until the run is closed, to read whether it
    was OOM-killed.

    The run's clock (`started`, `deadline`) starts once the command itself has started
    (READY read), so the container's start-up is never counted against the run; what it
    took is kept as `startup_seconds`."""

    def __init__(self, popen, *, container: str, out_dir: Path | None,
                 container_id: str | None = None, **kw):
        super().__init__(popen, **kw)
        self.container, self.out_dir, self.container_id = container, out_dir, container_id
        self._asked_id = False
        self._oom: bool | None = None
        self.ready, self.early_stderr, self.early_stdout = await_ready(
            popen, keep_stdout=self.limits.max_output_bytes * DRAIN_FACTOR + 1)
        now = time.monotonic()
        self.startup_seconds = now - self.started
        #: the container's CPU seconds before the run (a pooled one's; a fresh one's start
        #: counts as the run's)
        self._cpu_before = (container_cpu_seconds(container_id) or 0.0) if container_id else 0.0
        if self.ready:
            self.clock.restart(now)
        else:  # not started: Docker's message is the run's stderr
            try:
                popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.kill()

    def members(self) -> list[int]:
        """The container's processes (the `docker` client on the host waits for none)."""
        container_id = self._known_id()
        return container_processes(container_id) if container_id else []

    def cpu_used(self) -> float | None:
        """The CPU its container's processes used since the run started (its cgroup's count)."""
        container_id = self._known_id()
        used = container_cpu_seconds(container_id) if container_id else None
        return None if used is None else max(0.0, used - self._cpu_before)

    def _known_id(self) -> str | None:
        """The container's id; a fresh container's is asked of Docker once, when first
        needed."""
        if self.container_id is None and not self._asked_id:
            self._asked_id = True
            try:
                found = subprocess.run(["docker", "inspect", "-f", "{{.Id}}", self.container],
                                       capture_output=True, text=True, timeout=10)
                self.container_id = found.stdout.strip() or None if found.returncode == 0 \
                    else None
            except (OSError, subprocess.TimeoutExpired):
                pass
        return self.container_id

    def kill(self) -> None:
        self.killed = True
        self._kill_container()

    def close(self) -> None:
        """A run closed while still running (the grader is done with it) ends with its
        container's `docker rm -f` in `cleanup`, without a separate `docker kill` first: one
        engine call less per container. What it used was asked before (or not at all)."""
        if not self._closed and self.popen.poll() is None:
            self.killed = True
            if self._oom is None:
                self._oom = False
            try:
                self.popen.kill()
                self.popen.wait(timeout=5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        super().close()

    def kill_leftovers(self) -> None:
        # a fresh container stops with its main process; a pooled run's wrapper kills what
        # the command left behind, and the container is removed on cleanup
        pass

    def _kill_container(self) -> None:
        # the `docker` client first: while it lives with a full stdout pipe (a run that
        # floods its output, no longer read), the engine cannot drop the run's attached
        # streams and `docker kill` waits about 10 s for them before it gives up; with the
        # client gone it takes a tenth of a second
        try:
            self.popen.kill()
        except ProcessLookupError:
            pass
        subprocess.run(["docker", "kill", self.container], capture_output=True)

    def _joined(self, chunks, truncated, timed_out):
        out, err, truncated, timed_out = super()._joined(chunks, truncated, timed_out)
        return out, self.early_stderr + err, truncated, timed_out

    def out_of_memory(self) -> bool:
        """Whether the container hit its memory budget: its cgroup's OOM kills and failed
        charges where the host shows them (counted when they happen, so this holds while the
        `docker` client has not yet seen its command end), else Docker's own OOMKilled once
        the command has ended and did not exit cleanly. A False read while the command still
        runs is not kept: the next call asks again."""
        if self._oom is None:
            counted = container_memory_hits(self.container_id) if self.container_id else None
            code = self.popen.poll()
            if counted is not None:
                self._oom = counted > 0
            elif code not in (0, None) or self.killed:
                state = subprocess.run(["docker", "inspect", "-f",
                                        "{{.State.OOMKilled}}", self.container],
                                       capture_output=True, text=True)
                self._oom = state.stdout.strip() == "true"
            elif code == 0:
                self._oom = False
            else:
                return False
        return self._oom

    def collect(self, paths: Sequence[str]) -> dict[str, bytes]:
        if self.out_dir is None:
            return super().collect(paths)
        owned_root, self.workdir = self.workdir, self.out_dir
        try:
            return super().collect(paths)
        finally:
            self.workdir = owned_root

    def cleanup(self) -> None:
        self.out_of_memory()
        remove_container(self.container)
        if self.out_dir is not None:
            shutil.rmtree(self.out_dir, ignore_errors=True)
        super().cleanup()


def container_cgroup(container_id: str) -> tuple[Path, str] | None:
    """A container's memory cgroup directory on the host and its cgroup version (v1 or v2,
    cgroupfs or systemd driver); None where the host does not show it."""
    root = Path("/sys/fs/cgroup")
    for directory, version in ((root / "memory" / "docker" / container_id, "v1"),
                               (root / "memory" / "system.slice" /
                                f"docker-{container_id}.scope", "v1"),
                               (root / "docker" / container_id, "v2"),
                               (root / "system.slice" / f"docker-{container_id}.scope", "v2")):
        if directory.is_dir():
            return directory, version
    return None


def container_cpu_seconds(container_id: str) -> float | None:
    """CPU seconds a container's processes used, ended ones too (`cpu.stat` on cgroup v2,
    `cpuacct.usage` on v1); None where the host does not show it."""
    found = container_cgroup(container_id)
    if found is None:
        return None
    directory, version = found
    try:
        if version == "v2":
            for line in (directory / "cpu.stat").read_text().splitlines():
                if line.startswith("usage_usec "):
                    return int(line.split()[1]) / 1e6
            return None
        # v1: the same place in the cpuacct hierarchy as in the memory one
        relative = directory.relative_to(Path("/sys/fs/cgroup") / "memory")
        return int((Path("/sys/fs/cgroup") / "cpuacct" / relative / "cpuacct.usage")
                   .read_text()) / 1e9
    except (OSError, ValueError):
        return None


def container_memory_hits(container_id: str) -> int | None:
    """OOM kills plus failed charges of a container's memory cgroup, read on the host; None
    where the host does not show it."""
    from rlvr_envs.sandbox.cgroup import _oom_kills

    found = container_cgroup(container_id)
    return _oom_kills(*found) if found is not None else None


def container_processes(container_id: str) -> list[int]:
    """The host pids of a container's processes (its cgroup's members); [] where the host
    does not show them."""
    found = container_cgroup(container_id)
    if found is None:
        return []
    try:
        return [int(pid) for pid in (found[0] / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def pool_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def remove_orphans(everything: bool = False) -> list[str]:
    """Remove pooled containers whose owning process (on this host) is gone, or all pooled
    containers with `everything=True`; returns their names (removal runs in the background)."""
    try:
        listed = subprocess.run(["docker", "ps", "-a", "--filter", f"label={POOL_LABEL}",
                                 "--format", '{{.Names}}\t{{.Label "' + POOL_LABEL + '"}}'],
                                capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    host = socket.gethostname()
    orphans = []
    for line in listed.stdout.splitlines():
        name, _, owner = line.partition("\t")
        owner_host, _, pid = owner.rpartition(":")
        if not everything and (owner_host != host or not pid.isdigit()
                               or _alive(int(pid))):
            continue
        orphans.append(name)
    remove_containers(orphans)
    return orphans


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


_POOLS: list[ContainerPool] = []
_ORPHANS_CHECKED = threading.Event()


@atexit.register
def _close_pools() -> None:
    for pool in _POOLS[:]:
        pool.close()
    finish_removals()


class ContainerPool:
    """Containers started ahead of use with one set of limits, each handed out to exactly one
    run (`take`); every take starts replacements in the background up to `size` waiting.
    When none is waiting, `take` starts one itself (the run waits, as without a pool)."""

    def __init__(self, sandbox: DockerSandbox, limits: Limits, size: int):
        self.sandbox, self.limits, self.size = sandbox, limits, size
        self.idle: list[tuple[str, str]] = []  # (name, id), oldest first
        self.starting = 0
        self.starters: list[threading.Thread] = []
        self.started = 0  # containers started in all
        self.closed = False
        self.lock = threading.Lock()
        _POOLS.append(self)
        if not _ORPHANS_CHECKED.is_set():
            _ORPHANS_CHECKED.set()
            threading.Thread(target=remove_orphans, name="rlvr-pool-orphans",
                             daemon=True).start()

    def _start(self) -> tuple[str, str] | None:
        name = f"rlvr-pool-{uuid.uuid4().hex[:16]}"
        try:
            done = subprocess.run(self.sandbox.pool_args(name, self.limits), capture_output=True,
                                  text=True, timeout=START_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired):
            remove_container(name)
            return None
        if done.returncode != 0 or not done.stdout.strip():
            remove_container(name)
            return None
        with self.lock:
            self.started += 1
        return name, done.stdout.strip().splitlines()[-1]

    def _fill_one(self) -> None:
        try:
            item = self._start()
        finally:
            with self.lock:
                self.starting -= 1
        if item is not None:
            with self.lock:
                if not self.closed:
                    self.idle.append(item)
                    return
            remove_container(item[0])

    def _refill(self) -> None:
        while True:
            with self.lock:
                if self.closed or len(self.idle) + self.starting >= self.size:
                    return
                self.starting += 1
            starter = threading.Thread(target=self._fill_one, name="rlvr-pool-start", daemon=True)
            with self.lock:
                self.starters = [t for t in self.starters if t.is_alive()] + [starter]
            starter.start()

    def take(self) -> tuple[str, str] | None:
        """A started container (name, id) for one run, or None when none could be started."""
        with self.lock:
            item = self.idle.pop(0) if self.idle else None
        if item is None:
            item = self._start()
        self._refill()
        return item

    def close(self) -> None:
        """Remove the waiting containers (runs in progress remove their own); starts still
        under way are waited for (up to START_TIMEOUT in all) and removed as they finish, so
        none outlives the pool. Idempotent."""
        with self.lock:
            self.closed = True
            names = [name for name, _ in self.idle]
            self.idle.clear()
            starters = list(self.starters)
        remove_containers(names)
        deadline = time.monotonic() + START_TIMEOUT
        for starter in starters:
            starter.join(max(0.0, deadline - time.monotonic()))
        if self in _POOLS:
            _POOLS.remove(self)


def _tar(files: Mapping[str, str | bytes] | None) -> bytes:
    """The run's files as an uncompressed tar (paths checked as `prepare_workdir` does)."""
    if not files:
        return b""
    buffer = io.BytesIO()
    now = int(time.time())
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for rel, content in files.items():
            parts = Path(rel).parts
            if not parts or Path(rel).is_absolute() or ".." in parts:
                raise ValueError(f"sandbox file path {rel!r} leaves the working directory")
            data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
            info = tarfile.TarInfo(str(Path(rel)))
            info.size, info.mode, info.mtime = len(data), 0o644, now
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


class DockerSandbox(Sandbox):
    """A container per run: pre-started by a warm pool of `pool` containers per set of limits
    (`warm=False` or `pool=0`: a fresh `docker run` per run). `build=True` builds the image
    when missing (about a minute)."""

    name = "docker"
    python = "/usr/bin/python3"
    isolating = True

    @classmethod
    def problem(cls) -> str | None:
        return docker_problem()

    @classmethod
    def describe(cls) -> str:
        return f"image {IMAGE} " + ("present" if image_exists() else "not built yet")

    def __init__(self, *, image: str = IMAGE, build: bool = True, cpus: float = 1.0,
                 warm: bool = True, pool: int = 2):
        problem = docker_problem()
        if problem is not None:
            raise SandboxUnavailable(f"the docker sandbox backend is unavailable: {problem}; "
                                     f"{INSTALL_HINT}")
        if not isinstance(pool, int) or isinstance(pool, bool) or pool < 0:
            raise ValueError(f"pool must be a number of containers >= 0, got {pool!r}")
        if build:
            ensure_image(image)
        elif not image_exists(image):
            raise SandboxUnavailable(f"docker image {image!r} is missing; build it with "
                                     f"`rlvr sandbox build-image`")
        self.image, self.cpus = image, cpus
        self.pool_size = pool if warm else 0
        self._pools: dict[Limits, ContainerPool] = {}
        self._pools_lock = threading.Lock()

    def isolation_args(self, limits: Limits) -> list[str]:
        """The flags every container of this backend gets: no network, read-only root, a
        sized tmpfs /tmp, memory (swap included) / CPU / pids limits, rlimits, no
        capabilities, no-new-privileges, no logs, a cgroup namespace of its own."""
        mem = f"{limits.memory_mb}m"
        tmpfs = f"rw,nosuid,nodev,size={limits.memory_mb}m"
        return ["--network", "none",
                "--read-only", "--tmpfs", f"/tmp:{tmpfs},mode=1777",
                "--memory", mem, "--memory-swap", mem, "--shm-size", mem,
                "--cpus", str(self.cpus),
                "--pids-limit", str(limits.max_processes),
                "--ulimit", f"nofile={limits.max_open_files}:{limits.max_open_files}",
                "--ulimit", f"fsize={limits.max_file_bytes}:{limits.max_file_bytes}",
                "--ulimit", f"cpu={limits.cpu_seconds}:{limits.cpu_seconds}",
                "--ulimit", "core=0:0", "--cap-drop", "ALL",
                "--security-opt", "no-new-privileges", "--log-driver", "none",
                "--hostname", "sandbox", "--cgroupns", "private"]

    def docker_args(self, name: str, workdir: Path, limits: Limits, env: Mapping[str, str],
                    user: str, private: bool, out_dir: Path | None) -> list[str]:
        """`docker run` of a fresh container for one run (or a session) in `workdir`."""
        tmpfs = f"rw,nosuid,nodev,size={limits.memory_mb}m"
        args = ["docker", "run", "-i", "--name", name, *self.isolation_args(limits),
                "-w", str(workdir)]
        if not private:  # the caller's directory: it persists on the host
            args += ["--user", user, "-v", f"{workdir}:{workdir}:rw"]
        else:  # a tmpfs in the container's memory budget, filled from a read-only mount
            args += ["--user", "0:0", "--cap-add", "SETUID", "--cap-add", "SETGID",
                     "--tmpfs", f"{workdir}:{tmpfs},uid={SANDBOX_UID},gid={SANDBOX_UID},"
                                f"mode=0755", "-v", f"{workdir}:{FILES_IN}:ro"]
            if out_dir is not None:
                args += ["-v", f"{out_dir}:{FILES_OUT}:rw"]
        for key, value in env.items():
            args += ["-e", f"{key}={value}"]
        return args + [self.image]

    def pool_args(self, name: str, limits: Limits) -> list[str]:
        """`docker run -d` of a pooled container: the same flags as a fresh run's, uid 65534
        throughout (no capability to add), the working directory a tmpfs of the run's memory
        size, and a `sleep` as PID 1 until a run enters it with `docker exec`."""
        tmpfs = f"rw,nosuid,nodev,size={limits.memory_mb}m"
        return ["docker", "run", "-d", "--name", name, "--label", f"{POOL_LABEL}={pool_owner()}",
                *self.isolation_args(limits), "--user", f"{SANDBOX_UID}:{SANDBOX_UID}",
                "--tmpfs", f"{POOL_WORKDIR}:{tmpfs},uid={SANDBOX_UID},gid={SANDBOX_UID},"
                           f"mode=0755",
                "-w", POOL_WORKDIR, self.image, "sleep", "infinity"]

    def pool(self, limits: Limits) -> ContainerPool | None:
        """The warm pool for `limits` (made on first use), or None without one."""
        if self.pool_size <= 0:
            return None
        with self._pools_lock:
            pool = self._pools.get(limits)
            if pool is None or pool.closed:
                pool = self._pools[limits] = ContainerPool(self, limits, self.pool_size)
            return pool

    def spawn(self, command, *, files=None, limits: Limits = Limits(), workdir=None,
              env: Mapping[str, str] | None = None,
              collect: Sequence[str] = ()) -> SandboxedProcess:
        argv = confined(check_command(command))
        limits = Limits.coerce(limits)
        pool = self.pool(limits) if workdir is None and not collect else None
        if pool is not None:
            taken = pool.take()
            if taken is not None:
                return self._exec(taken, argv, files, limits, env)
        path, owned = prepare_workdir(files, workdir)
        out_dir, user = None, ""
        if owned:
            os.chmod(path, 0o755)
            for root, dirs, names in os.walk(path):
                for item in [root, *(os.path.join(root, n) for n in dirs + names)]:
                    os.chown(item, SANDBOX_UID, SANDBOX_UID)
            wanted = [rel for rel in collect if _plain_relative(rel)]
            if wanted:
                import tempfile
                out_dir = Path(tempfile.mkdtemp(prefix="rlvr-out-"))
            argv = ["sh", "-c", entry_script(), FILES_IN, str(len(wanted)), *wanted, *argv]
        else:
            st = path.stat()
            user = f"{st.st_uid}:{st.st_gid}"
            argv = ["sh", "-c", plain_script(), "sh", *argv]
        name = f"rlvr-{uuid.uuid4().hex[:16]}"
        popen = subprocess.Popen(self.docker_args(name, path, limits, run_env(env, path), user,
                                                  owned, out_dir) + argv,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, start_new_session=True)
        return ContainerProcess(popen, container=name, out_dir=out_dir, workdir=path,
                                owns_workdir=owned, limits=limits, isolation=self.name)

    def _exec(self, taken: tuple[str, str], argv: list[str], files, limits: Limits,
              env: Mapping[str, str] | None) -> ContainerProcess:
        """The run in a pooled container: `docker exec` of the pool wrapper, the files sent
        first on its stdin."""
        name, container_id = taken
        try:
            archive = _tar(files)
        except ValueError:
            remove_container(name)
            raise
        args = ["docker", "exec", "-i", "-w", POOL_WORKDIR]
        for key, value in run_env(env, Path(POOL_WORKDIR)).items():
            args += ["-e", f"{key}={value}"]
        popen = subprocess.Popen(args + [name, "sh", "-c", pool_script(), "sh",
                                         str(len(archive)), *argv],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, start_new_session=True)
        if archive:
            try:
                popen.stdin.write(archive)
                popen.stdin.flush()
            except OSError:
                pass
        return ContainerProcess(popen, container=name, container_id=container_id, out_dir=None,
                                workdir=Path(POOL_WORKDIR), owns_workdir=False, limits=limits,
                                isolation=self.name)

    def close(self) -> None:
        """Remove the pools' waiting containers."""
        with self._pools_lock:
            pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            pool.close()

    def session(self, workdir, limits: Limits = Limits()):
        """A long-lived container serving many commands in `workdir`
        (`rlvr_envs.sandbox.docker_session.DockerSession`); the caller closes it."""
        from rlvr_envs.sandbox.docker_session import DockerSession
        return DockerSession(self, workdir, limits)


def _plain_relative(path: str) -> bool:
    """A collect path the entry script may name: relative, no `..`, no shell-special text."""
    parts = Path(path).parts
    return (bool(parts) and not Path(path).is_absolute() and ".." not in parts
            and all(ch.isalnum() or ch in "._-/" for ch in path))
