"""The `docker` backend: each run is a fresh container of the project's own image
(`rlvr_envs.sandbox.image`) with `--network none`, a read-only root filesystem, cgroup
memory / CPU / pids limits, rlimits, no capabilities and no-new-privileges.

Nothing a run writes lands on the host's disk: its private working directory is a tmpfs of
the run's memory size inside the container (the files are copied in from a read-only mount
at start; the ones the caller collects are copied out, each capped at `max_file_bytes`), and
so is /tmp. tmpfs pages count against the container's `--memory`, so memory and disk share
one budget. A working directory the caller gives (a repository episode) is bind-mounted at
the same path instead: it must persist, and it is the caller's directory.

Runs go through the `docker` CLI (stdin/stdout attach works the same for `run` and the code
grader's interactive protocol). At the deadline the container itself is killed.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import threading
import uuid
from pathlib import Path
from typing import Mapping, Sequence

from rlvr_envs.sandbox.base import (Limits, Sandbox, SandboxedProcess, SandboxUnavailable,
                                    check_command, prepare_workdir, run_env)
from rlvr_envs.sandbox.image import IMAGE, ensure_image, image_exists

INSTALL_HINT = ("install Docker (Debian/Ubuntu: `apt-get install docker.io`) and start the "
                "engine (`dockerd &` or `systemctl start docker`)")
SANDBOX_UID = 65534
#: where an owned working directory's files are mounted read-only, to be copied in
FILES_IN, FILES_OUT = "/rlvr-in", "/rlvr-out"
#: PID 1 of a run with a private working directory, as root with only CAP_SETUID/SETGID:
#: becomes uid 65534 (losing both) to copy the files in and run the command; once it has
#: exited, copies the collected files (plain files, each capped by RLIMIT_FSIZE) to the
#: out directory, which the run itself cannot write, and exits as the command did
ENTRY = ('n=$1; shift; files=""; while [ "$n" -gt 0 ]; do files="$files $1"; shift; '
         'n=$((n-1)); done; setpriv --reuid=65534 --regid=65534 --clear-groups -- sh -c '
         '\'cp -a "$0"/. . || exit 71; exec "$@"\' "$0" "$@"; code=$?; for f in $files; do '
         '[ -f "$f" ] && [ ! -L "$f" ] && mkdir -p "$(dirname "/rlvr-out/$f")" && '
         'cp "$f" "/rlvr-out/$f"; done; exit $code')
_REMOVALS: list[subprocess.Popen] = []
_REMOVALS_LOCK = threading.Lock()


@atexit.register
def _finish_removals() -> None:
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


class ContainerProcess(SandboxedProcess):
    """Killing means `docker kill` on the container (every process in it dies). The
    container is kept until the run is closed, to read whether it was OOM-killed."""

    def __init__(self, popen, *, container: str, out_dir: Path | None, **kw):
        super().__init__(popen, **kw)
        self.container, self.out_dir = container, out_dir
        self._oom: bool | None = None

    def kill(self) -> None:
        self.killed = True
        self._kill_container()

    def kill_leftovers(self) -> None:
        # the container stops with its main process
        pass

    def _kill_container(self) -> None:
        subprocess.run(["docker", "kill", self.container], capture_output=True)
        try:
            self.popen.kill()
        except ProcessLookupError:
            pass

    def out_of_memory(self) -> bool:
        """Whether the kernel OOM-killed a process of the container (asked once, only for a
        run that did not exit cleanly)."""
        if self._oom is None:
            self._oom = False
            if self.popen.poll() not in (0, None):
                state = subprocess.run(["docker", "inspect", "-f", "{{.State.OOMKilled}}",
                                        self.container], capture_output=True, text=True)
                self._oom = state.stdout.strip() == "true"
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


class DockerSandbox(Sandbox):
    """Fresh container per run. `build=True` builds the image when missing (about a minute)."""

    name = "docker"
    python = "/usr/bin/python3"
    isolating = True

    @classmethod
    def problem(cls) -> str | None:
        return docker_problem()

    @classmethod
    def describe(cls) -> str:
        return f"image {IMAGE} " + ("present" if image_exists() else "not built yet")

    def __init__(self, *, image: str = IMAGE, build: bool = True, cpus: float = 1.0):
        problem = docker_problem()
        if problem is not None:
            raise SandboxUnavailable(f"the docker sandbox backend is unavailable: {problem}; "
                                     f"{INSTALL_HINT}")
        if build:
            ensure_image(image)
        elif not image_exists(image):
            raise SandboxUnavailable(f"docker image {image!r} is missing; build it with "
                                     f"`rlvr sandbox build-image`")
        self.image, self.cpus = image, cpus

    def docker_args(self, name: str, workdir: Path, limits: Limits, env: Mapping[str, str],
                    user: str, private: bool, out_dir: Path | None) -> list[str]:
        mem = f"{limits.memory_mb}m"
        tmpfs = f"rw,nosuid,nodev,size={limits.memory_mb}m"
        args = ["docker", "run", "-i", "--name", name, "--network", "none",
                "--read-only", "--tmpfs", f"/tmp:{tmpfs},mode=1777",
                "--memory", mem, "--memory-swap", mem, "--shm-size", mem,
                "--cpus", str(self.cpus),
                "--pids-limit", str(limits.max_processes),
                "--ulimit", f"nofile={limits.max_open_files}:{limits.max_open_files}",
                "--ulimit", f"fsize={limits.max_file_bytes}:{limits.max_file_bytes}",
                "--ulimit", f"cpu={limits.cpu_seconds}:{limits.cpu_seconds}",
                "--ulimit", "core=0:0", "--cap-drop", "ALL",
                "--security-opt", "no-new-privileges", "--log-driver", "none",
                "--hostname", "sandbox", "-w", str(workdir)]
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

    def spawn(self, command, *, files=None, limits: Limits = Limits(), workdir=None,
              env: Mapping[str, str] | None = None,
              collect: Sequence[str] = ()) -> SandboxedProcess:
        argv = check_command(command)
        limits = Limits.coerce(limits)
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
            argv = ["sh", "-c", ENTRY, FILES_IN, str(len(wanted)), *wanted, *argv]
        else:
            st = path.stat()
            user = f"{st.st_uid}:{st.st_gid}"
        name = f"rlvr-{uuid.uuid4().hex[:16]}"
        popen = subprocess.Popen(self.docker_args(name, path, limits, run_env(env, path), user,
                                                  owned, out_dir) + argv,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, start_new_session=True)
        return ContainerProcess(popen, container=name, out_dir=out_dir, workdir=path,
                                owns_workdir=owned, limits=limits, isolation=self.name)

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
