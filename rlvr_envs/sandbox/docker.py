"""The `docker` backend: each run is a fresh container of the project's own image
(`rlvr_envs.sandbox.image`) with `--network none`, a read-only root filesystem, a tmpfs
/tmp, cgroup memory / CPU / pids limits, rlimits, no capabilities, no-new-privileges, and the
working directory bind-mounted at the same path (the only writable host path).

Runs go through the `docker` CLI (stdin/stdout attach works the same for `run` and the code
grader's interactive protocol). At the deadline the container itself is killed.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Mapping

from rlvr_envs.sandbox.base import (Limits, Sandbox, SandboxedProcess, SandboxUnavailable,
                                    check_command, prepare_workdir, run_env)
from rlvr_envs.sandbox.image import IMAGE, ensure_image, image_exists

INSTALL_HINT = ("install Docker (Debian/Ubuntu: `apt-get install docker.io`) and start the "
                "engine (`dockerd &` or `systemctl start docker`)")
SANDBOX_UID = 65534


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
    """Killing means `docker kill` on the container (every process in it dies)."""

    def __init__(self, popen, *, container: str, **kw):
        super().__init__(popen, **kw)
        self.container = container

    def kill(self) -> None:
        self.killed = True
        self._kill_container()

    def kill_leftovers(self) -> None:
        # the container stops with its main process; `--rm` removes it
        pass

    def _kill_container(self) -> None:
        subprocess.run(["docker", "kill", self.container], capture_output=True)
        try:
            self.popen.kill()
        except ProcessLookupError:
            pass

    def cleanup(self) -> None:
        if self.killed:
            subprocess.run(["docker", "rm", "-f", self.container], capture_output=True)
        super().cleanup()


class DockerSandbox(Sandbox):
    """Fresh container per run. `build=True` builds the image when missing (about a minute)."""

    name = "docker"
    python = "/usr/bin/python3"

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
                    user: str) -> list[str]:
        mem = f"{limits.memory_mb}m"
        args = ["docker", "run", "--rm", "-i", "--name", name, "--network", "none",
                "--read-only", "--tmpfs", "/tmp:rw,nosuid,nodev,size=256m,mode=1777",
                "--memory", mem, "--memory-swap", mem, "--cpus", str(self.cpus),
                "--pids-limit", str(limits.max_processes),
                "--ulimit", f"nofile={limits.max_open_files}:{limits.max_open_files}",
                "--ulimit", f"fsize={limits.max_file_bytes}:{limits.max_file_bytes}",
                "--ulimit", f"cpu={limits.cpu_seconds}:{limits.cpu_seconds}",
                "--ulimit", "core=0:0", "--cap-drop", "ALL",
                "--security-opt", "no-new-privileges", "--user", user, "--log-driver", "none",
                "--hostname", "sandbox", "-v", f"{workdir}:{workdir}:rw", "-w", str(workdir)]
        for key, value in env.items():
            args += ["-e", f"{key}={value}"]
        return args + [self.image]

    def spawn(self, command, *, files=None, limits: Limits = Limits(), workdir=None,
              env: Mapping[str, str] | None = None) -> SandboxedProcess:
        argv = check_command(command)
        limits = Limits.coerce(limits)
        path, owned = prepare_workdir(files, workdir)
        if owned:
            for root, dirs, names in os.walk(path):
                for item in [root, *(os.path.join(root, n) for n in dirs + names)]:
                    os.chown(item, SANDBOX_UID, SANDBOX_UID)
            user = f"{SANDBOX_UID}:{SANDBOX_UID}"
        else:
            st = path.stat()
            user = f"{st.st_uid}:{st.st_gid}"
        name = f"rlvr-{uuid.uuid4().hex[:16]}"
        popen = subprocess.Popen(self.docker_args(name, path, limits, run_env(env, path), user)
                                 + argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, start_new_session=True)
        return ContainerProcess(popen, container=name, workdir=path, owns_workdir=owned,
                                limits=limits, isolation=self.name)

    def session(self, workdir, limits: Limits = Limits()):
        """A long-lived container serving many commands in `workdir`
        (`rlvr_envs.sandbox.docker_session.DockerSession`); the caller closes it."""
        from rlvr_envs.sandbox.docker_session import DockerSession
        return DockerSession(self, workdir, limits)
