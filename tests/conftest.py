"""Shared fixtures. `busy_machine`: CPU hogs beside a test. `docker_image`: the Docker sandbox image, built once per session when
missing; tests that use it skip with the reason when no engine is reachable, or fail instead
when RLVR_REQUIRE_DOCKER=1 (CI sets it, so Docker tests really run there)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest


def require_docker() -> None:
    """Skip (or fail under RLVR_REQUIRE_DOCKER=1) when no Docker engine answers."""
    from rlvr_envs.sandbox.docker import docker_problem

    problem = docker_problem()
    if problem is not None:
        message = f"Docker engine unavailable: {problem}"
        if os.environ.get("RLVR_REQUIRE_DOCKER") == "1":
            pytest.fail(f"{message} (RLVR_REQUIRE_DOCKER=1)")
        pytest.skip(message)


@pytest.fixture(scope="session")
def docker_image() -> str:
    """Tag of the project's sandbox image (built with debootstrap on first use, then cached)."""
    require_docker()
    from rlvr_envs.sandbox.image import ensure_image

    return ensure_image()


@pytest.fixture(scope="session")
def docker_sandbox(docker_image):
    from rlvr_envs.sandbox import get_sandbox

    sandbox = get_sandbox("docker", image=docker_image)
    yield sandbox
    sandbox.close()


class CliResult:
    """What one `rlvr ...` invocation through `rlvr_envs.cli.main` left: exit code and output."""

    def __init__(self, exit_code: int, stdout: str, stderr: str):
        self.exit_code, self.stdout, self.stderr = exit_code, stdout, stderr
        self.output = stdout + stderr


@pytest.fixture
def rlvr_cli(capsys):
    """Run `rlvr ARGS...` in-process through the real entry point (its one error path)."""
    from rlvr_envs.cli import main

    def invoke(*args: str) -> CliResult:
        capsys.readouterr()
        try:
            main(list(args))
            code = 0
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)
    return invoke


@pytest.fixture
def busy_machine():
    """Two busy processes pinned to each CPU this process may use, each in a session of its
    own (as other workers of a training job would be): a run gets at most a third of a CPU."""
    hogs = []
    for cpu in sorted(os.sched_getaffinity(0)):
        for _ in range(2):
            hog = subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                   start_new_session=True)
            os.sched_setaffinity(hog.pid, {cpu})
            hogs.append(hog)
    time.sleep(0.2)
    yield
    for hog in hogs:
        hog.kill()
        hog.wait()
