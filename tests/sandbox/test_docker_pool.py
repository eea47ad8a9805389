"""The Docker backend's warm pool and its clock: a run's time limit starts when its command
starts (a slow container start is never a timeout, a busy loop still is), every pooled
container serves exactly one run (nothing a run leaves reaches the next), a candidate that
wrecks its container does not change the next verdict, the limits hold in pooled containers,
and pooled containers are removed at close, at exit and, when their owner died, by cleanup."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from rlvr_envs.tasks.code.humaneval import load_humaneval
from rlvr_envs.tasks.code.scoring import CodeScorer

from rlvr_envs.sandbox import Limits, docker
from rlvr_envs.verify.code.grader import grade_stdio

pytestmark = [pytest.mark.docker, pytest.mark.slow]  # containers, seconds each
LIMITS = Limits(wall_time=3.0, memory_mb=256, max_processes=32)
BUSY = "def has_close_elements(numbers, threshold):\n    while True:\n        pass\n"
ECHO = [{"input": "3\n", "output": "3\n"}, {"input": "5\n", "output": "5\n"}]


@pytest.fixture(scope="module")
def humaneval():
    return load_humaneval()


@pytest.fixture(params=["pool", "fresh"])
def sandbox(request, docker_image):
    backend = docker.DockerSandbox(image=docker_image, warm=request.param == "pool")
    yield backend
    backend.close()


def pooled_names() -> set[str]:
    listed = subprocess.run(["docker", "ps", "-a", "--filter", f"label={docker.POOL_LABEL}",
                             "--format", "{{.Names}}"], capture_output=True, text=True,
                            check=True)
    return set(listed.stdout.split())


def test_slow_container_start_is_not_a_timeout(sandbox, humaneval, monkeypatch):
    # every container takes 4 s to start, longer than the whole 3 s limit of the run
    monkeypatch.setattr(docker, "ANNOUNCE", "sleep 4; " + docker.ANNOUNCE)
    scorer = CodeScorer(sandbox, limits=LIMITS)
    task = humaneval.get("HumanEval/0")
    score = scorer.score(task, scorer.gold_completion(task))
    assert score.reward == 1.0, score
    verdict = grade_stdio(sandbox, "print(input())", tests=ECHO, limits=LIMITS)
    assert verdict.passed and verdict.tests_passed == 2, verdict
    quick = sandbox.run(["true"], limits=Limits(wall_time=1.0))
    assert quick.exit_code == 0 and not quick.timed_out


def test_stdout_ahead_of_the_start_is_kept_and_does_not_stall_it(sandbox, monkeypatch):
    # on a busy machine the engine can deliver a command's first stdout ahead of READY on
    # stderr; a flood then filled the client's stdout pipe and READY never came (a run of
    # 3 s ended as a timeout after 125 s). Here the wrapper itself writes ahead of READY.
    monkeypatch.setattr(docker, "ANNOUNCE", "head -c 500000 /dev/zero; " + docker.ANNOUNCE)
    run = sandbox.run([sandbox.python, "-c", "print('hi')"], limits=LIMITS)
    assert run.exit_code == 0 and not run.timed_out, run
    assert run.stdout == "\0" * 500_000 + "hi\n" and not run.truncated
    capped = Limits(wall_time=3.0, memory_mb=256, max_processes=32, max_output_bytes=10_000)
    flood = sandbox.run([sandbox.python, "-c", "print('hi')"], limits=capped)
    assert flood.truncated and flood.killed and not flood.timed_out, flood
    assert flood.stdout == "\0" * 10_000


def test_busy_loop_still_times_out(sandbox, humaneval):
    scorer = CodeScorer(sandbox, limits=LIMITS)
    score = scorer.score(humaneval.get("HumanEval/0"), f"```python\n{BUSY}```")
    assert score.reward == 0.0 and score.verifier == "timeout", score
    verdict = grade_stdio(sandbox, "while True:\n    pass\n", tests=ECHO, limits=LIMITS)
    assert not verdict.passed and verdict.reason == "timeout", verdict
    assert sandbox.run(["sleep", "30"], limits=Limits(wall_time=1.0)).timed_out


@pytest.fixture
def pooled(docker_image):
    backend = docker.DockerSandbox(image=docker_image, pool=2)
    yield backend
    backend.close()


PROBE = ("import json, os\n"
         "print(json.dumps({'tmp': sorted(os.listdir('/tmp')), 'cwd': sorted(os.listdir('.')),"
         " 'pids': sorted(int(p) for p in os.listdir('/proc') if p.isdigit()),"
         " 'uid': os.getuid(), 'host': open('/etc/hostname').read().strip()}))\n")


def test_nothing_passes_from_one_pooled_run_to_the_next(pooled):
    script = "echo x > /tmp/left; echo y > mine; (sleep 300 &) ; echo started"
    first = pooled.spawn(["sh", "-c", script], limits=LIMITS)
    out, _, _, _ = first.communicate()
    assert out == b"started\n" and first.container_id is not None
    first.close()
    second = pooled.spawn([pooled.python, "-I", "-S", "probe.py"], files={"probe.py": PROBE},
                          limits=LIMITS)
    out, _, _, _ = second.communicate()
    second.close()
    assert second.container != first.container
    seen = json.loads(out)
    assert seen["tmp"] == [] and seen["cwd"] == ["probe.py"], seen
    assert seen["uid"] == 65534 and len(seen["pids"]) <= 4, seen  # sleep, sh, python, ...


def test_wrecked_container_does_not_change_the_next_verdict(pooled, humaneval):
    scorer = CodeScorer(pooled, limits=LIMITS)
    task = humaneval.get("HumanEval/0")
    wreck = ("import os, signal\n"
             "def has_close_elements(numbers, threshold):\n"
             "    for pid in (1, -1):\n"
             "        try:\n            os.kill(pid, signal.SIGKILL)\n"
             "        except OSError:\n            pass\n"
             "    try:\n"
             "        with open('fill', 'wb') as fh:\n"
             "            while True:\n                fh.write(b'x' * 2**20)\n"
             "    except OSError:\n        pass\n"
             "    return True\n")
    for _ in range(2):
        assert scorer.score(task, f"```python\n{wreck}```").reward == 0.0
        score = scorer.score(task, scorer.gold_completion(task))
        assert score.reward == 1.0, score


def test_limits_hold_in_pooled_containers(pooled, humaneval):
    scorer = CodeScorer(pooled, limits=LIMITS)
    task = humaneval.get("HumanEval/0")
    hog = ("def has_close_elements(numbers, threshold):\n"
           "    keep = [b'x' * 2**20 for _ in range(1024)]\n    return True\n")
    score = scorer.score(task, f"```python\n{hog}```")
    assert score.reward == 0.0 and score.verifier == "memory", score
    probe = ("import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), 2)\n"
             "    print('net')\nexcept OSError:\n    print('nonet')\n")
    net = pooled.run([pooled.python, "-I", "-S", "-c", probe], limits=LIMITS)
    assert net.stdout.strip() == "nonet" and net.isolation == "docker"


def test_pool_containers_are_removed_at_close(docker_image):
    backend = docker.DockerSandbox(image=docker_image, pool=2)
    result = backend.run(["echo", "hi"], limits=LIMITS)
    assert result.stdout == "hi\n"
    pool = backend.pool(LIMITS)
    for _ in range(100):  # wait for the replacements to be up
        if len(pool.idle) == 2:
            break
        time.sleep(0.2)
    mine = {name for name, _ in pool.idle}
    assert len(mine) == 2 and mine <= pooled_names()
    backend.close()
    docker.finish_removals()
    assert not mine & pooled_names()


def test_pool_containers_are_removed_at_exit(docker_image):
    # exits right after a run, with the replacements still starting: none may be left
    code = ("import os\nfrom rlvr_envs.sandbox import docker, Limits\n"
            f"sb = docker.DockerSandbox(image={docker_image!r}, pool=2)\n"
            "limits = Limits(wall_time=3.0, memory_mb=128)\n"
            "assert sb.run(['true'], limits=limits).exit_code == 0\n"
            "print(docker.pool_owner())\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    owner = done.stdout.strip()
    listed = subprocess.run(["docker", "ps", "-a", "--filter",
                             f"label={docker.POOL_LABEL}={owner}", "--format", "{{.Names}}"],
                            capture_output=True, text=True, check=True)
    assert listed.stdout.split() == []


def test_cleanup_removes_orphans_of_dead_owners(docker_image, rlvr_cli):
    dead = subprocess.Popen(["true"])
    dead.wait()
    name = f"rlvr-pool-orphan-{dead.pid}"
    subprocess.run(["docker", "run", "-d", "--name", name, "--label",
                    f"{docker.POOL_LABEL}={docker.pool_owner().rpartition(':')[0]}:{dead.pid}",
                    "--network", "none", docker_image, "sleep", "infinity"],
                   capture_output=True, check=True)
    assert name in pooled_names()
    result = rlvr_cli("sandbox", "cleanup")
    assert result.exit_code == 0, result.output
    assert name not in pooled_names()
