"""One memory budget per run: anonymous memory, memfd, tmpfs (/tmp, /dev/shm) and the working
directory all count against `memory_mb`; a run that exceeds it is stopped and reported as
`verifier="memory"` / `RunResult.out_of_memory`, and the host keeps its memory and disk."""

from __future__ import annotations

import shutil
import subprocess
import tempfile

import pytest

from rlvr_envs.core.task import Task
from rlvr_envs.sandbox import get_sandbox
from rlvr_envs.sandbox.bwrap import bwrap_problem
from rlvr_envs.sandbox.cgroup import memory_cgroup_available
from rlvr_envs.tasks.code.scoring import CodeScorer
from rlvr_envs.verify.code import wire

from code_attacks import BUDGET_MB, LIMITS, ROUTES, SPAWN_ROUTES

needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None,
                                 reason=f"bubblewrap unavailable: {bwrap_problem()}")
needs_memcg = pytest.mark.skipif(not memory_cgroup_available(),
                                 reason="no writable memory cgroup here (not root / not delegated)")
def indent(code: str) -> str:
    return "\n".join("    " + line for line in code.splitlines())


def calls_task() -> Task:
    tests = [{"args": wire.encode([]), "expected": wire.encode(1)}]
    return Task(prompt="fill()", answer="def fill():\n    return 1\n", family="code",
                source="test", metadata={"mode": "calls", "function": "fill", "tests": tests})


@pytest.fixture(scope="module", params=["local", pytest.param("bwrap", marks=needs_bwrap)])
def scorer(request):
    scorer = CodeScorer(request.param, limits=LIMITS)
    yield scorer
    scorer.close()


@pytest.mark.slow
@needs_memcg
@pytest.mark.parametrize("route", sorted(ROUTES))
def test_fork_server_run_is_stopped_at_its_budget(scorer, route):
    code = f"```python\nimport os\ndef fill():\n{indent(ROUTES[route])}\n    return 1\n```"
    score = scorer.score(calls_task(), code)
    assert score.reward == 0.0 and score.verifier == "memory", score
    gold = scorer.score(calls_task(), "```python\ndef fill():\n    return 1\n```")
    assert gold.reward == 1.0  # the pooled cgroup's count starts afresh for the next run


@pytest.mark.slow
@needs_memcg
@pytest.mark.parametrize("backend", ["local", pytest.param("bwrap", marks=needs_bwrap)])
@pytest.mark.parametrize("route", sorted(SPAWN_ROUTES))
def test_spawned_run_is_stopped_at_its_budget_and_the_host_keeps_its_disk(backend, route):
    sandbox = get_sandbox(backend, warm=False)
    disk_before = shutil.disk_usage(tempfile.gettempdir()).free
    result = sandbox.run([sandbox.python, "-I", "-S", "-c", "import os\n" + SPAWN_ROUTES[route]],
                         limits=LIMITS)
    disk_after = shutil.disk_usage(tempfile.gettempdir()).free
    assert result.exit_code != 0 and result.out_of_memory, result
    # nothing of the attempted gigabytes-scale write stayed on (or reached) the host's disk
    assert disk_before - disk_after < BUDGET_MB * 2**20


@pytest.mark.parametrize("backend", ["local", pytest.param("bwrap", marks=needs_bwrap)])
def test_every_tmpfs_has_a_size(backend):
    sandbox = get_sandbox(backend, warm=False)
    code = ("import os\nfor p in ('/tmp', '/dev/shm', '.'):\n"
            "    st = os.statvfs(p)\n    print(st.f_blocks * st.f_frsize // 2**20)")
    result = sandbox.run([sandbox.python, "-I", "-S", "-c", code], limits=LIMITS)
    sizes = [int(v) for v in result.stdout.split()]
    assert len(sizes) == 3 and all(0 < size <= BUDGET_MB for size in sizes), result


def test_groups_of_a_dead_owner_are_removed_and_live_ones_kept():
    from rlvr_envs.sandbox import cgroup
    if not cgroup.layout()[1]:
        pytest.skip("no writable cgroup filesystem here")
    dead = subprocess.Popen(["true"])
    dead.wait()
    parents = set(cgroup.layout()[1].values())
    for parent in parents:
        (parent / f"rlvr-{dead.pid}-stale").mkdir(exist_ok=True)
    own = cgroup.RunCgroup.create(8)
    try:
        cgroup.remove_stale()
        for parent in parents:
            assert not (parent / f"rlvr-{dead.pid}-stale").exists()
        assert all(d.exists() for d in own.dirs.values())
    finally:
        own.remove()
    assert not any(d.exists() for d in own.dirs.values())
