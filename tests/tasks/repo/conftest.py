"""Fixtures of the repo-editing tests: sandboxes per backend, envs on shipped tasks.

Docker tests use the shared `docker_sandbox` fixture of tests/conftest.py: they skip with a
visible reason when no engine is reachable, and fail instead when RLVR_REQUIRE_DOCKER=1 (CI).
"""

from __future__ import annotations

import warnings

import pytest



@pytest.fixture(scope="session")
def repo_sandbox():
    """The backend most repo tests run on: bubblewrap when it works here (CI installs it),
    else plain local processes (what `sandbox="local-unsafe"` gives)."""
    from rlvr_envs.sandbox.bwrap import bwrap_problem
    from rlvr_envs.tasks.repo.scoring import make_sandbox
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        box = make_sandbox("bwrap" if bwrap_problem() is None else "local-unsafe")
    yield box
    box.close()


@pytest.fixture(scope="session")
def unsafe_local_sandbox():
    """Plain local processes: what repo tasks get only with sandbox="local-unsafe"."""
    from rlvr_envs.sandbox.local import LocalSandbox
    box = LocalSandbox()
    yield box
    box.close()


@pytest.fixture(scope="session")
def namespace_sandbox():
    """The `local` backend (its own namespaces), showing the installation's packages."""
    from rlvr_envs.sandbox.local import namespace_problem
    if namespace_problem() is not None:
        pytest.skip(f"user namespaces unavailable: {namespace_problem()}")
    from rlvr_envs.tasks.repo.scoring import make_sandbox
    box = make_sandbox("local")
    yield box
    box.close()


#: fixture of each isolating backend, for tests parametrized over them
ISOLATING = {"local": "namespace_sandbox", "bwrap": "isolated_sandbox",
             "docker": "repo_docker_sandbox"}


@pytest.fixture(params=[name if name == "bwrap" else pytest.param(name, marks=pytest.mark.slow)
                        for name in sorted(ISOLATING)])
def isolating_sandbox(request):
    """Each backend that isolates the host: local (namespaces), bwrap, docker. The fast suite
    (`-m "not slow"`) plays bubblewrap only, the backend `auto` picks where it works."""
    return request.getfixturevalue(ISOLATING[request.param])


@pytest.fixture(scope="session")
def isolated_sandbox():
    """bubblewrap when it works here, else the local backend (named in the test id)."""
    from rlvr_envs.sandbox.bwrap import bwrap_problem
    if bwrap_problem() is not None:
        pytest.skip(f"bubblewrap unavailable: {bwrap_problem()}")
    from rlvr_envs.tasks.repo.scoring import make_sandbox
    box = make_sandbox("bwrap")
    yield box
    box.close()


@pytest.fixture(scope="session")
def local_backend():
    """What `sandbox="auto"` gives repo tasks: bubblewrap when present, else local."""
    from rlvr_envs.tasks.repo.scoring import make_sandbox
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        box = make_sandbox("auto")
    yield box
    box.close()


@pytest.fixture(scope="session")
def repo_docker_sandbox(docker_sandbox):
    """The shared Docker sandbox of tests/conftest.py (skips, or fails under
    RLVR_REQUIRE_DOCKER=1, when no engine is reachable)."""
    return docker_sandbox


@pytest.fixture
def repo_env(repo_sandbox):
    from rlvr_envs.tasks.repo.env import RepoEditEnv
    env = RepoEditEnv("shipped", sandbox=repo_sandbox, max_turns=8)
    yield env
    env.close()


@pytest.fixture(scope="session")
def shipped_tasks():
    from rlvr_envs.tasks.repo.records import load_repo_tasks
    return list(load_repo_tasks("shipped"))


@pytest.fixture(scope="session")
def calc_task(shipped_tasks):
    """minicalc with a left-associativity bug (fix: `precedence + 1`)."""
    return next(t for t in shipped_tasks if t.source_id == "minicalc-associativity")
