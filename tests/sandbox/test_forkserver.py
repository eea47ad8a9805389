"""The warm fork server: every child is a fresh process with its own namespaces, private /tmp,
/dev/shm and sockets, nothing of another child in reach, and nothing left once its run ends."""

from __future__ import annotations

import json
import marshal
import os
import signal
import socket
import time
import uuid

import pytest

from rlvr_envs.sandbox import Limits, get_sandbox
from rlvr_envs.sandbox.bwrap import bwrap_problem
from rlvr_envs.tasks.code.humaneval import load_humaneval
from rlvr_envs.tasks.code.scoring import CodeScorer

needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None,
                                 reason=f"bubblewrap unavailable: {bwrap_problem()}")

#: runs the Python it is sent (one JSON line: {"code": ...}) and answers `result` as JSON
PROBE = '''
import json, os
def main(fd):
    reader = os.fdopen(fd, "rb")
    writer = os.fdopen(fd, "wb", closefd=False)
    for line in reader:
        scope = {}
        exec(json.loads(line)["code"], scope)
        writer.write(json.dumps(scope.get("result")).encode() + b"\\n")
        writer.flush()
'''
LIMITS = Limits(wall_time=10, memory_mb=512, max_processes=16)


@pytest.fixture(params=["local", pytest.param("bwrap", marks=needs_bwrap)])
def server(request):
    sandbox = get_sandbox(request.param)
    server = sandbox.fork_server({"probe": PROBE})
    assert server is not None and server.isolation == request.param
    yield server
    sandbox.close()


class Child:
    """One isolated probe child and our end of its channel."""

    def __init__(self, server, isolate=True):
        self.job = server.job(LIMITS)
        self.sock, theirs = socket.socketpair()
        self.job.spawn("probe", [theirs], isolate=isolate)
        theirs.close()
        self.reader = self.sock.makefile("rb")

    def run(self, code: str):
        self.sock.sendall(json.dumps({"code": code}).encode() + b"\n")
        self.sock.settimeout(10)
        return json.loads(self.reader.readline())

    def close(self, wait=True):
        self.reader.close()
        self.sock.close()
        self.job.close(wait=wait)


def test_isolated_child_sees_only_itself(server):
    if not server.namespaces:
        pytest.skip("user namespaces are unavailable here; children fall back to local isolation")
    child = Child(server)
    view = child.run("""
import os, signal, socket
def attempt(fn):
    try:
        fn()
        return "allowed"
    except OSError as err:
        return type(err).__name__
result = {
    "pid": os.getpid(), "cwd": os.getcwd(), "uid": os.getuid(),
    "pids": sorted(p for p in os.listdir("/proc") if p.isdigit()),
    "write_root": attempt(lambda: open("/escape", "w")),
    "write_usr": attempt(lambda: open("/usr/escape", "w")),
    "write_dev": attempt(lambda: open("/dev/escape", "w")),
    "write_tmp": attempt(lambda: open("/tmp/mine", "w").write("x")),
    "sethostname": attempt(lambda: socket.sethostname("escaped")),
    "network": attempt(lambda: socket.create_connection(("127.0.0.1", 9), timeout=1)),
    "environ": sorted(os.environ),
    "signals": [int(signal.getsignal(s)) for s in (signal.SIGINT, signal.SIGTERM,
                                                   signal.SIGCHLD, signal.SIGPIPE)],
}
""")
    child.close()
    assert "LD_BIND_NOW" not in view["environ"]  # the zygote's own, not its children's
    # no handler of the zygote's; SIGPIPE ignored as Python itself sets it
    assert view["signals"] == [signal.SIG_DFL] * 3 + [signal.SIG_IGN]
    # its own /proc (its PID namespace holds only itself), uid 65534, never root
    assert view["pid"] == 1 and view["pids"] in ([], ["1"]) and view["cwd"] == "/tmp"
    assert view["uid"] == 65534
    assert view["write_root"] != "allowed" and view["write_usr"] != "allowed"
    assert view["write_dev"] != "allowed" and view["write_tmp"] == "allowed"
    assert view["sethostname"] != "allowed"  # no capabilities left, even in its own namespace
    assert view["network"] != "allowed"


def test_concurrent_children_share_nothing(server):
    if not server.namespaces:
        pytest.skip("user namespaces are unavailable here")
    name = f"rlvr-test-{uuid.uuid4().hex[:8]}"
    first, second = Child(server), Child(server)
    planted = first.run(f"""
import os, socket
open("/tmp/{name}", "w").write("secret")
open("/dev/shm/{name}", "w").write("secret")
server = socket.socket(socket.AF_UNIX)
server.bind("\\0{name}")
server.listen(1)
KEEP = server
result = sorted(os.listdir("/tmp"))
""")
    assert planted == [name]
    seen = second.run(f"""
import os, socket
probe = socket.socket(socket.AF_UNIX)
try:
    probe.connect("\\0{name}")
    reached = True
except OSError:
    reached = False
result = [os.path.exists("/tmp/{name}"), os.path.exists("/dev/shm/{name}"), reached]
""")
    first.close()
    second.close()
    assert seen == [False, False, False]


def test_trusted_child_is_not_dumpable(server):
    child = Child(server, isolate=False)
    dumpable = child.run("import ctypes\nresult = ctypes.CDLL(None).prctl(3, 0, 0, 0, 0)")
    child.close()
    assert dumpable == 0


def processes_named(name: str) -> list[str]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/comm") as fh:
                    if fh.read().strip() == name:
                        found.append(entry)
            except OSError:
                pass
    return found


def test_closing_a_run_kills_what_it_left_behind(server):
    marker = f"rlvr-{uuid.uuid4().hex[:8]}"
    child = Child(server)
    child.run(f"""
import ctypes, os, time
if os.fork() == 0:
    os.setsid()
    ctypes.CDLL(None).prctl(15, b"{marker}", 0, 0, 0)
    time.sleep(60)
    os._exit(0)
result = None
""")
    deadline = time.monotonic() + 5
    while not processes_named(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_named(marker), "the background process never started"
    child.close(wait=True)
    assert processes_named(marker) == []


def test_a_run_closed_cleanly_leaves_nothing_running(server):
    """A run closed without waiting, whose PID 1 outlives its channel (it replaced os._exit),
    is killed all the same: by the janitor of the run's cgroup, or by the zygote where the run
    has none."""
    marker = f"rlvr-{uuid.uuid4().hex[:8]}"
    child = Child(server)
    child.run(f"""
import ctypes, os
ctypes.CDLL(None).prctl(15, b"{marker}", 0, 0, 0)
os._exit = lambda *args: None
result = None
""")
    assert processes_named(marker)
    child.close(wait=False)
    deadline = time.monotonic() + 10
    while processes_named(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_named(marker) == []


def test_zygote_restarts_after_it_dies():
    sandbox = get_sandbox("bwrap" if bwrap_problem() is None else "local")
    scorer = CodeScorer(sandbox, limits=Limits(wall_time=10))
    task = load_humaneval().get("HumanEval/2")
    try:
        assert scorer.score(task, scorer.gold_completion(task)).reward == 1.0
        from rlvr_envs.verify.code.grader import PROGRAMS
        first = sandbox.fork_server(PROGRAMS)
        first.popen.kill()
        first.popen.wait(5)
        deadline = time.monotonic() + 5
        while first.alive and time.monotonic() < deadline:
            time.sleep(0.05)
        assert scorer.score(task, scorer.gold_completion(task)).reward == 1.0
        assert sandbox.fork_server(PROGRAMS) is not first
    finally:
        sandbox.close()


@pytest.mark.parametrize("backend", ["local", pytest.param("bwrap", marks=needs_bwrap)])
def test_cold_path_still_grades(backend):
    """warm=False: two fresh sandboxed interpreters per run, the grader relaying calls."""
    scorer = CodeScorer(get_sandbox(backend, warm=False), limits=Limits(wall_time=10))
    task = load_humaneval().get("HumanEval/0")
    assert scorer.score(task, scorer.gold_completion(task)).reward == 1.0
    always = ("```python\nclass A:\n    def __eq__(self, other): return True\n"
              "def has_close_elements(numbers, threshold):\n    return A()\n```")
    assert scorer.score(task, always).reward == 0.0
    crash = scorer.score(task, "```python\nimport os\nos._exit(0)\n```")
    assert crash.reward == 0.0 and crash.verifier == "crashed"


def test_candidates_run_in_the_jail(server):
    """Where user namespaces work the zygote builds the view once (its jail) and forks each
    candidate into fresh namespaces inside it — the path every test of this module takes."""
    if not server.namespaces:
        pytest.skip("user namespaces are unavailable here")
    assert server.jail


@pytest.mark.parametrize("same_interpreter", [True, False])
@pytest.mark.parametrize("backend", ["local", pytest.param("bwrap", marks=needs_bwrap)])
def test_the_zygote_runs_code_compiled_by_the_host(backend, same_interpreter, monkeypatch):
    """The zygote and its programs arrive compiled by the host when both run the same
    interpreter (compiling them in the zygote left it megabytes of heap that every fork copied);
    a zygote whose interpreter differs compiles the sources itself."""
    from rlvr_envs.sandbox import forkserver
    compiled = {"probe": PROBE.replace("exec(", "scope['host_compiled'] = True; exec(")}
    monkeypatch.setattr(forkserver, "compiled_programs",
                        lambda programs: {name: marshal.dumps(compile(code, name, "exec"))
                                          for name, code in compiled.items()})
    if not same_interpreter:
        monkeypatch.setattr(forkserver, "host_python", lambda: "another interpreter")
    sandbox = get_sandbox(backend)
    try:
        child = Child(sandbox.fork_server({"probe": PROBE}))
        assert child.run("result = 'host_compiled' in globals()") is same_interpreter
        child.close()
    finally:
        sandbox.close()


@pytest.mark.parametrize("backend", ["local", pytest.param("bwrap", marks=needs_bwrap)])
def test_without_the_jail_each_candidate_builds_its_own_root(backend):
    """The fallback where the jail cannot be built: every candidate gets its own user
    namespace and root, with the same isolation."""
    sandbox = get_sandbox(backend)
    server = sandbox._new_fork_server({"probe": PROBE}, jail=False)
    try:
        if not server.namespaces:
            pytest.skip("user namespaces are unavailable here")
        assert not server.jail
        child = Child(server)
        view = child.run("""
import os
def attempt(fn):
    try:
        fn()
        return "allowed"
    except OSError as err:
        return type(err).__name__
result = {"pid": os.getpid(), "uid": os.getuid(), "cwd": os.getcwd(),
          "write_usr": attempt(lambda: open("/usr/escape", "w")),
          "write_tmp": attempt(lambda: open("/tmp/mine", "w").write("x"))}
""")
        child.close()
        assert view == {"pid": 1, "uid": 65534, "cwd": "/tmp", "write_usr": view["write_usr"],
                        "write_tmp": "allowed"} and view["write_usr"] != "allowed"
    finally:
        server.close()
        sandbox.close()


def test_what_one_run_leaves_is_gone_for_the_next(server):
    """Two runs one after the other on the same zygote (the second gets the network
    namespace the first had): no file in /tmp or /dev/shm, no process, no abstract socket
    and no System V IPC object of the first is visible to the second."""
    if not server.namespaces:
        pytest.skip("user namespaces are unavailable here")
    name = f"rlvr-test-{uuid.uuid4().hex[:8]}"
    key = 0x5EED0000 + os.getpid() % 0xFFFF
    first = Child(server)
    planted = first.run(f"""
import ctypes, os, socket, time
open("/tmp/{name}", "w").write("secret")
open("/dev/shm/{name}", "w").write("secret")
listener = socket.socket(socket.AF_UNIX)
listener.bind("\\0{name}")
listener.listen(1)
shm = ctypes.CDLL(None, use_errno=True).shmget({key}, 4096, 0o1666)  # IPC_CREAT | 0666
if os.fork() == 0:  # a process left behind, holding the socket
    os.setsid()
    time.sleep(60)
    os._exit(0)
result = [sorted(os.listdir("/tmp")), shm >= 0]
""")
    assert planted == [[name], True]
    first.close(wait=True)
    second = Child(server)
    seen = second.run(f"""
import ctypes, os, socket
probe = socket.socket(socket.AF_UNIX)
try:
    probe.connect("\\0{name}")
    reached = True
except OSError:
    reached = False
again = socket.socket(socket.AF_UNIX)
again.bind("\\0{name}")  # the name is free again
result = {{"files": [os.path.exists("/tmp/{name}"), os.path.exists("/dev/shm/{name}")],
          "reached": reached, "pids": sorted(p for p in os.listdir("/proc") if p.isdigit()),
          "shm": ctypes.CDLL(None, use_errno=True).shmget({key}, 0, 0)}}
""")
    second.close()
    assert seen["files"] == [False, False] and not seen["reached"]
    assert seen["pids"] in ([], ["1"]) and seen["shm"] == -1


@pytest.mark.parametrize("backend", ["local", pytest.param("bwrap", marks=needs_bwrap)])
def test_a_candidate_that_attacks_its_zygote_changes_no_later_verdict(backend):
    """A candidate that signals every pid it can name, tries to reach its parent and floods
    its /tmp leaves the zygote serving: the next candidate is graded as before, by the same
    zygote."""
    from rlvr_envs.verify.code.grader import PROGRAMS
    sandbox = get_sandbox(backend, fork_servers=1)
    scorer = CodeScorer(sandbox, limits=Limits(wall_time=10, memory_mb=256))
    task = load_humaneval().get("HumanEval/0")
    attack = ("```python\nimport os, signal\n"
              "for pid in [-1, 0, *range(1, 2000)]:\n"
              "    try:\n        os.kill(pid, signal.SIGKILL)\n    except OSError:\n        pass\n"
              "for path in ('/proc/1/mem', '/proc/%d/mem' % os.getppid()):\n"
              "    try:\n        open(path, 'wb').write(b'x')\n    except OSError:\n        pass\n"
              "try:\n    open('/tmp/fill', 'wb').write(b'x' * (300 << 20))\nexcept OSError:\n"
              "    pass\n"
              "def has_close_elements(numbers, threshold):\n    return True\n```")
    try:
        assert scorer.score(task, scorer.gold_completion(task)).reward == 1.0
        zygote = sandbox.fork_server(PROGRAMS)
        for _ in range(3):
            assert scorer.score(task, attack).reward == 0.0
            assert scorer.score(task, scorer.gold_completion(task)).reward == 1.0
        assert zygote.alive and sandbox.fork_server(PROGRAMS) is zygote
    finally:
        sandbox.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting on the host needs root")
def test_a_mount_made_after_the_zygote_started_stays_out(server):
    """The jail is built once, private: a writable mount that appears on the host later,
    even under a directory of the view, never reaches a candidate."""
    import subprocess
    import sys
    from pathlib import Path
    if not server.namespaces:
        pytest.skip("user namespaces are unavailable here")
    Child(server).close()  # the zygote is up before the mount
    late = Path(sys.base_prefix).resolve() / f"rlvr-late-{uuid.uuid4().hex[:8]}"
    late.mkdir()
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(late)], check=True)
        (late / "secret").write_text("late")
        child = Child(server)
        seen = child.run(f"""
import os
try:
    open({str(late / 'planted')!r}, 'w')
    wrote = True
except OSError:
    wrote = False
result = [os.path.exists({str(late / 'secret')!r}), wrote]
""")
        child.close()
        assert seen == [False, False]
        assert not (late / "planted").exists()
    finally:
        subprocess.run(["umount", "-l", str(late)], check=False)
        late.rmdir()
