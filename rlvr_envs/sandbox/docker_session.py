"""A long-lived Docker container for one agent episode: many commands, one container.

`docker run` costs 0.5-1.3 s per command and `docker exec` 0.15-0.18 s on the 2-core dev box
(runc sets up every exec), too slow for an agent's many small `bash` steps. A session starts
one container of the backend's image, with the backend's isolation (no network, read-only
root, tmpfs /tmp, no capabilities, cgroup memory and pids limits, the working directory the
only writable host path), whose main process is a small command server (`SERVER`, run by the
image's python3 as PID 1). The host sends one JSON request per command over the container's
attached stdin and reads one JSON reply from its stdout.

Per command the server starts the argv in a new session with the given environment and
working directory, enforces the deadline, caps each stream, and afterwards kills every other
process in the container (`kill(-1, SIGKILL)` from PID 1 reaches all of them), so nothing an
agent starts outlives its command. A command can only disturb its own session: a forged reply
reaches the agent that forged it, and a killed server ends the session (the next command
starts a fresh container). Grading never runs in a session.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from rlvr_envs.sandbox.base import BASE_ENV, Limits, RunResult, check_command
from rlvr_envs.sandbox.docker import confined

if TYPE_CHECKING:
    from rlvr_envs.sandbox.docker import DockerSandbox

#: the command server; reads JSON requests on stdin, answers one JSON line each on stdout
SERVER = r'''
import codecs, json, os, resource, selectors, signal, subprocess, sys, time
BIN = "/tmp/.rlvr-bin"
os.chdir("/")  # the host kills what runs in the workspace after each command: not the server
os.makedirs(BIN, exist_ok=True)
for name, target in (("python", sys.executable), ("python3", sys.executable)):
    try:
        os.symlink(target, os.path.join(BIN, name))
    except FileExistsError:
        pass
out = os.fdopen(os.dup(1), "w")
null = os.open(os.devnull, os.O_RDWR)
for line in sys.stdin:
    req = json.loads(line)
    cap, deadline = req["cap"], time.monotonic() + req["timeout"]
    cpu = req["cpu"]
    def limits():
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    started = time.monotonic()
    merge = req.get("merge", False)
    try:
        proc = subprocess.Popen(req["argv"], cwd=req["cwd"], env=req["env"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT if merge else subprocess.PIPE,
                                start_new_session=True, preexec_fn=limits)
    except OSError as err:
        out.write(json.dumps({"out": "", "err": f"{err}\n", "exit": 127, "timed_out": False,
                              "killed": False, "truncated": False, "utf8": True}) + "\n")
        out.flush()
        continue
    streams = [proc.stdout] if merge else [proc.stdout, proc.stderr]
    fds = [st.fileno() for st in streams]
    data = {fd: [] for fd in fds}
    sizes = {fd: 0 for fd in data}
    tail = bytearray()
    sel = selectors.DefaultSelector()
    for stream in streams:
        sel.register(stream, selectors.EVENT_READ)
    try:
        proc.stdin.write(req["stdin"].encode())
    except OSError:
        pass
    try:
        proc.stdin.close()
    except OSError:
        pass
    timed_out = flood = False
    while sel.get_map():
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        for key, _ in sel.select(min(left, 0.5)):
            chunk = os.read(key.fd, 65536)
            if not chunk:
                sel.unregister(key.fileobj)
                continue
            if sizes[key.fd] < cap:
                data[key.fd].append(chunk[:cap - sizes[key.fd]])
            sizes[key.fd] += len(chunk)
            if merge:  # keep the real tail too: a cut output shows both ends
                tail += chunk
                del tail[:max(0, len(tail) - cap // 2)]
            elif sizes[key.fd] > 16 * cap:
                flood = True
        if flood:
            break
    sel.close()
    if timed_out or flood:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        code = proc.wait(timeout=max(0.0, deadline - time.monotonic()) + 1)
    except subprocess.TimeoutExpired:
        code = None
    try:
        os.kill(-1, signal.SIGKILL)  # everything but PID 1 (this server): no leftovers
    except ProcessLookupError:
        pass
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    for stream in streams:
        stream.close()
    first = b"".join(data[fds[0]])
    try:  # a character cut by the cap is not held against it
        codecs.getincrementaldecoder("utf-8")().decode(first, final=sizes[fds[0]] <= cap)
        utf8 = True
    except UnicodeDecodeError:
        utf8 = False
    if merge and sizes[fds[0]] > cap:
        half = cap // 2
        first = (first[:half] + (f"\n[... output cut: {sizes[fds[0]]} bytes in all, the first "
                                 f"{half} and the last {len(tail)} shown ...]\n").encode()
                 + bytes(tail))
    out.write(json.dumps({
        "out": first.decode("utf-8", "replace"),
        "err": "" if merge else b"".join(data[fds[1]]).decode("utf-8", "replace"),
        "exit": None if (timed_out or flood) else code, "timed_out": timed_out,
        "killed": timed_out or flood, "truncated": any(s > cap for s in sizes.values()),
        "seconds": time.monotonic() - started, "utf8": utf8}) + "\n")
    out.flush()
'''

#: the session's PATH: python/python3 links made by the server first, then the image's own
SESSION_PATH = "/tmp/.rlvr-bin:" + BASE_ENV["PATH"]


class DockerSession:
    """One container serving many commands in `workdir` (see the module docstring).
    `limits` bound the container (memory, processes, file sizes); each `run` has its own
    wall time, CPU time and output cap."""

    def __init__(self, sandbox: DockerSandbox, workdir: str | os.PathLike,
                 limits: Limits = Limits()):
        self.sandbox = sandbox
        self.workdir = Path(workdir).resolve()
        if not self.workdir.is_dir():
            raise FileNotFoundError(f"session workdir {str(self.workdir)!r} is not a directory")
        st = self.workdir.stat()
        self.user = f"{st.st_uid}:{st.st_gid}"
        self.limits = Limits(wall_time=7 * 24 * 3600.0, cpu_time=7 * 24 * 3600.0,
                             memory_mb=limits.memory_mb, max_processes=limits.max_processes,
                             max_output_bytes=limits.max_output_bytes,
                             max_file_bytes=limits.max_file_bytes,
                             max_open_files=limits.max_open_files)
        self.name = f"rlvr-session-{uuid.uuid4().hex[:16]}"
        self._proc: subprocess.Popen | None = None
        self.started = 0  # containers started (a killed server ends one)

    def _start(self) -> subprocess.Popen:
        env = {**BASE_ENV, "HOME": "/tmp"}
        argv = self.sandbox.docker_args(self.name, self.workdir, self.limits, env, self.user,
                                        False, None)
        self._proc = subprocess.Popen(argv + confined(["python3", "-I", "-S", "-c", SERVER]),
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.DEVNULL, start_new_session=True)
        self.started += 1
        return self._proc

    def run(self, command: list[str], *, env: Mapping[str, str] | None = None,
            limits: Limits = Limits(), stdin: str | bytes | None = None,
            merge_output: bool = False) -> RunResult:
        """Run `command` in the session's container (working directory: the workdir).
        `merge_output`: stderr joins stdout, and an output over `limits.max_output_bytes`
        comes back as its real first and last halves with a line saying how much was cut."""
        argv = check_command(command)
        limits = Limits.coerce(limits)
        proc = self._proc if self._proc is not None and self._proc.poll() is None \
            else self._start()
        text = stdin.decode("utf-8", "replace") if isinstance(stdin, bytes) else stdin or ""
        request = {"argv": argv, "cwd": str(self.workdir), "stdin": text,
                   "env": {**BASE_ENV, "PATH": SESSION_PATH, "HOME": "/tmp", **(env or {})},
                   "timeout": limits.wall_time, "cpu": limits.cpu_seconds,
                   "cap": limits.max_output_bytes, "merge": merge_output}
        started = time.monotonic()
        reply = None
        try:
            proc.stdin.write((json.dumps(request) + "\n").encode())
            proc.stdin.flush()
            reply = self._read_reply(proc, limits.wall_time + 30)
        except (BrokenPipeError, OSError):
            reply = None
        if reply is None:  # the server died (killed by the command) or hung: end the session
            self.close()
            return RunResult("", "the sandbox session ended; the next command starts a fresh "
                             "one\n", None, False, True, False, "docker",
                             time.monotonic() - started)
        return RunResult(reply["out"], reply["err"], reply["exit"], reply["timed_out"],
                         reply["killed"], reply["truncated"] and not merge_output, "docker",
                         time.monotonic() - started, stdout_utf8=reply.get("utf8", True))

    @staticmethod
    def _read_reply(proc: subprocess.Popen, timeout: float) -> dict | None:
        deadline = time.monotonic() + timeout
        buf = b""
        fd = proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in buf:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    return None
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return None
                buf += chunk
        try:
            reply = json.loads(buf.split(b"\n", 1)[0])
        except ValueError:
            return None
        return reply if isinstance(reply, dict) and "out" in reply else None

    def close(self) -> None:
        """Remove the container (idempotent)."""
        if self._proc is None:
            return
        from rlvr_envs.sandbox.docker import remove_container
        remove_container(self.name)
        for stream in (self._proc.stdin, self._proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
        self._proc = None
        self.name = f"rlvr-session-{uuid.uuid4().hex[:16]}"
