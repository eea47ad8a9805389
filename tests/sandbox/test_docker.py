"""The Docker backend for real: the project's own image, no network, read-only root, limits,
HumanEval graded in containers, and hacks scoring 0 there too."""

from __future__ import annotations

import os
import uuid

import pytest

from rlvr_envs.sandbox import Limits
from rlvr_envs.tasks.code.humaneval import load_humaneval
from rlvr_envs.tasks.code.scoring import CodeScorer

pytestmark = [pytest.mark.docker, pytest.mark.slow]  # containers, seconds each
LIMITS = Limits(wall_time=8.0, memory_mb=256, max_processes=32)


def test_container_limits_and_isolation(docker_sandbox, tmp_path):
    escape = f"/tmp/rlvr-escape-{uuid.uuid4().hex[:8]}"
    code = ("import os, socket\n"
            "try:\n    socket.create_connection(('1.1.1.1', 53), timeout=2); print('net')\n"
            "except OSError: print('nonet')\n"
            "for p in ('/etc/x', '/usr/x'):\n"
            "    try:\n        open(p, 'w'); print('wrote')\n    except OSError: print('ro')\n"
            f"open({escape!r}, 'w').write('x')\n"
            "open('kept.txt', 'w').write('ok')\n"
            "print(os.getuid())\n")
    result = docker_sandbox.run([docker_sandbox.python, "-I", "-S", "-c", code],
                                collect=["kept.txt"], limits=LIMITS)
    assert result.isolation == "docker" and result.exit_code == 0, result.stderr
    assert result.stdout.split() == ["nonet", "ro", "ro", "65534"]
    assert result.files == {"kept.txt": b"ok"}
    assert not os.path.exists(escape)
    persistent = docker_sandbox.run(["sh", "-c", "echo there > here.txt"], workdir=tmp_path)
    assert persistent.exit_code == 0 and (tmp_path / "here.txt").read_text() == "there\n"


def test_collected_files_come_only_from_the_working_directory(docker_sandbox):
    """The copy-out runs as root: a symlinked directory on a collected path (or a symlink as
    the file) must not lead it to the image's /etc/shadow or PID 1's environment."""
    command = ("ln -s /etc d; ln -s /proc/1 p; ln -s /etc/shadow s; mkdir -p sub; "
               "echo mine > sub/ok.txt")
    result = docker_sandbox.run(["sh", "-c", command], limits=LIMITS,
                                collect=["d/shadow", "p/environ", "s", "sub/ok.txt"])
    assert result.exit_code == 0, result.stderr
    assert result.files == {"sub/ok.txt": b"mine\n"}


def test_container_deadline_and_memory(docker_sandbox):
    slow = docker_sandbox.run(["sleep", "60"], limits=Limits(wall_time=1.5))
    assert slow.timed_out and slow.killed
    hog = docker_sandbox.run([docker_sandbox.python, "-I", "-S", "-c",
                              "b = bytearray(1024 * 1024 * 1024)"], limits=LIMITS)
    assert hog.exit_code != 0


@pytest.mark.slow
def test_humaneval_in_docker(docker_sandbox):
    scorer = CodeScorer(docker_sandbox, limits=LIMITS)
    tasks = load_humaneval()
    for key in ("HumanEval/0", "HumanEval/38", "HumanEval/32"):
        task = tasks.get(key)
        score = scorer.score(task, scorer.gold_completion(task))
        assert score.reward == 1.0 and score.details["isolation"] == "docker", score
    task = tasks.get("HumanEval/0")
    hacks = [
        "class A:\n    def __eq__(s, o): return True\ndef has_close_elements(n, t): return A()",
        "import os\nos._exit(0)",
        "import os\ndef has_close_elements(n, t):\n    while True:\n        try: os.fork()\n"
        "        except OSError: pass",
        "import socket\ndef has_close_elements(n, t):\n"
        "    socket.create_connection(('1.1.1.1', 53), timeout=1)\n    return True",
    ]
    for code in hacks:
        score = scorer.score(task, f"```python\n{code}\n```")
        assert score.reward == 0.0, (code, score)


@pytest.mark.parametrize("route", ["anonymous", "memfd", "tmp", "shm", "workdir"])
def test_container_memory_routes_share_one_budget(docker_sandbox, route):
    import shutil
    import tempfile

    from code_attacks import LIMITS as MEMORY_LIMITS
    from code_attacks import SPAWN_ROUTES

    disk_before = shutil.disk_usage(tempfile.gettempdir()).free
    result = docker_sandbox.run([docker_sandbox.python, "-I", "-S", "-c",
                                 "import os\n" + SPAWN_ROUTES[route]], limits=MEMORY_LIMITS)
    assert result.exit_code != 0 and result.out_of_memory, result
    assert disk_before - shutil.disk_usage(tempfile.gettempdir()).free < 96 * 2**20


def test_container_candidate_output_is_bounded(docker_sandbox):
    from code_attacks import hostile

    scorer = CodeScorer(docker_sandbox, limits=LIMITS)
    task = load_humaneval().get("HumanEval/0")
    for name in ("nesting", "invalid_utf8"):
        score = scorer.score(task, hostile("has_close_elements", "numbers, threshold", name))
        assert score.reward == 0.0 and score.verifier == "bad_output", (name, score)


def test_session_command_that_cannot_start_keeps_the_session(docker_sandbox, tmp_path):
    # its reply used to lack the keys the host reads, which ended the session
    session = docker_sandbox.session(tmp_path)
    try:
        missing = session.run(["no-such-command-here"])
        assert missing.exit_code == 127 and "no-such-command-here" in missing.stderr, missing
        raw = session.run(["sh", "-c", "printf 'a\\377b'"])
        assert raw.stdout == "a\ufffdb" and not raw.stdout_utf8, raw
        assert session.run(["sh", "-c", "echo ok"]).stdout_utf8 and session.started == 1
    finally:
        session.close()
