"""The seccomp filter every run is under (`zygote.syscall_filter`), through the launcher that
starts a Docker run's command (`zygote.seccomp_launcher`), tried here on the host: the filter
is the same one bubblewrap's `--seccomp` and the fork server install."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rlvr_envs.sandbox.docker import confined
from rlvr_envs.sandbox.zygote import seccomp_launcher, syscall_filter

pytestmark = pytest.mark.skipif(syscall_filter() is None,
                                reason=f"no filter for this machine ({os.uname().machine})")

PROBE = r'''
import ctypes, os, threading
libc = ctypes.CDLL(None, use_errno=True)
def errno_of(result):
    return 0 if result >= 0 else ctypes.get_errno()
uring = errno_of(libc.syscall(425, 4, ctypes.create_string_buffer(120)))  # io_uring_setup
enter = errno_of(libc.syscall(426, -1, 0, 0, 0, None, 0))  # io_uring_enter on no ring
number = {"x86_64": 248, "aarch64": 217}[os.uname().machine]
keyring = errno_of(libc.syscall(number, b"user", b"rlvr-probe", b"x", 1, -4))  # add_key
worker = threading.Thread(target=print, args=("thread ran",))
worker.start()
worker.join()
print(uring, enter, keyring, os.getpid() > 0)
'''


def launched(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-I", "-S", "-c", seccomp_launcher(), *argv],
                          capture_output=True, text=True, timeout=60)


def test_io_uring_fails_as_on_a_kernel_without_it_and_keyrings_are_refused():
    done = launched(sys.executable, "-I", "-S", "-c", PROBE)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n")
    assert lines[0] == "thread ran"  # everything else still works
    # ENOSYS (38) for io_uring, whatever its arguments; EPERM (1) for the keyring calls
    assert lines[1].split() == ["38", "38", "1", "True"], done.stdout


def test_the_launcher_runs_its_command_as_itself_and_reports_a_missing_one():
    done = launched(sys.executable, "-c", "import os, sys; print(open('/proc/self/status')"
                                          ".read().count('Seccomp:\\t2')); sys.exit(5)")
    assert done.returncode == 5 and done.stdout.split() == ["1"], done
    missing = launched("rlvr-no-such-command")
    assert missing.returncode == 127 and "rlvr-no-such-command" in missing.stderr


def test_a_docker_command_goes_through_the_launcher():
    argv = confined(["python3", "prog.py"])
    assert argv[:4] == ["python3", "-I", "-S", "-c"] and argv[-2:] == ["python3", "prog.py"]
    assert "'" not in argv[4]  # safe inside the single-quoted shell text of the entry scripts
