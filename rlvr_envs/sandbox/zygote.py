"""Runs inside a sandbox: a warm fork server (a "zygote") for graded programs.

The host starts this script once per sandbox backend (inside bubblewrap for `bwrap`), with a
SOCK_SEQPACKET control socket as fd 0. The interpreter, the stdlib modules programs commonly
use and the programs themselves are loaded once; every spawn request then forks a fresh child,
so a run costs a fork instead of an interpreter start.

The zygote never sees the code it runs or the tests: a spawn request carries only the program
name, limits and the child's channel fds (SCM_RIGHTS); the host writes code and tests straight
into those channels. What a child inherits from the zygote's memory is therefore nothing secret.

Control messages (one JSON object per packet, host → zygote):
  {"op": "programs", "programs": {name: source}}            first, once; answered by
      {"op": "ready", "namespaces": bool, "error": str|null}
  {"op": "spawn", "id": int, "program": str, "isolate": bool, "limits": {RLIMIT_*: int},
   "wall": float, "tmpfs_mb": int, "cgroup": bool}            fds: channels [+ cgroup.procs]
  {"op": "kill", "ids": [int], "report": bool}   with report, answered per id (once it and
      every process it started are gone) by {"op": "exited", "id": int}
End of file on the control socket kills every child and ends the zygote.

An *isolated* child (untrusted code) gets, on top of its rlimits: new user, mount, PID, IPC,
network and UTS namespaces (so it cannot see or signal any other process, nor reach another
child's sockets or IPC), every writable mount remounted read-only, a fresh private tmpfs on
/tmp (its working directory) and /dev/shm, /proc hidden, no capabilities, no_new_privs, and
(when the host passes one) its own cgroup `pids` group. It runs as PID 1 of its namespace
under a small stub; killing the stub kills the namespace, and with it every process the
program started. A plain child (the trusted test driver) is made non-dumpable, so no other
process can read its memory, and gets its own session and rlimits.
"""

import ctypes
import json
import os
import resource
import select
import shutil
import signal
import socket
import sys
import tempfile
import time

# stdlib modules graded programs commonly import: loaded once here instead of in every child
for _name in ("ast", "bisect", "collections", "copy", "fractions", "functools", "hashlib",
              "heapq", "itertools", "math", "operator", "random", "re", "statistics", "string",
              "typing"):
    try:
        __import__(_name)
    except ImportError:
        pass

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
ISOLATE = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWUTS
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC = 1024, 2048, 4096, 16384
MS_PRIVATE, MS_RELATIME, MS_STRICTATIME = 1 << 18, 1 << 21, 1 << 24
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
MOUNT_FLAGS = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC,
               "noatime": MS_NOATIME, "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME,
               "strictatime": MS_STRICTATIME}

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                        ctypes.c_char_p]
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                        ctypes.c_ulong]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def _check(result, what):
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, "%s: %s" % (what, os.strerror(err)))


def _mount(source, target, fstype, flags, data=None):
    _check(_libc.mount(source and source.encode(), target.encode(), fstype and fstype.encode(),
                       flags, data and data.encode()), "mount %s" % target)


def _unescape(field):
    return field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n") \
        .replace("\\134", "\\")


def writable_mounts():
    """(mount point, flags to keep) of every read-write mount outside /proc."""
    found = []
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            fields = line.split()
            point, options = _unescape(fields[4]), fields[5].split(",")
            if "rw" not in options or point == "/proc" or point.startswith("/proc/"):
                continue
            flags = 0
            for option in options:
                flags |= MOUNT_FLAGS.get(option, 0)
            found.append((point, flags))
    return found


WRITABLE = writable_mounts()
ZYGOTE_PID = os.getpid()
UID, GID = os.getuid(), os.getgid()


def _drop_capabilities():
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), ctypes.byref(data)), "capset")
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


def _isolate_filesystem(tmpfs_mb):
    """In a fresh user + mount namespace: everything read-only, private /tmp and /dev/shm."""
    with open("/proc/self/setgroups", "w") as fh:
        fh.write("deny")
    with open("/proc/self/uid_map", "w") as fh:
        fh.write("%d %d 1" % (UID, UID))
    with open("/proc/self/gid_map", "w") as fh:
        fh.write("%d %d 1" % (GID, GID))
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    for point, flags in WRITABLE:
        _mount(None, point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | flags)
    size = "size=%dm,nr_inodes=16384,mode=1777" % tmpfs_mb
    _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, size)
    if os.path.isdir("/dev/shm"):
        _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, size)
    _mount("tmpfs", "/proc", "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k")


def _set_limits(limits, names):
    for name in names:
        if name in limits:
            value = int(limits[name])
            resource.setrlimit(getattr(resource, name), (value, value))


def _close_all_but(keep):
    previous = 2
    for fd in sorted(set(keep)):
        if fd > previous + 1:
            os.closerange(previous + 1, fd)
        previous = max(previous, fd)
    os.closerange(previous + 1, 1 << 16)


def _enter_child(keep):
    """Common start of every child: die with the zygote, no inherited fds or handlers."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != ZYGOTE_PID:
        os._exit(70)
    signal.set_wakeup_fd(-1)
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    null = os.open(os.devnull, os.O_RDWR)
    keep = [fd if fd > 2 else os.dup(fd) for fd in keep]
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    _close_all_but(keep)
    return keep


RUN_LIMITS = ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CORE")


def _run_program(program, channels):
    try:
        PROGRAMS[program](*channels)
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    except BaseException:  # noqa: BLE001 - a crash ends the child; its peer sees end of file
        code = 1
    os._exit(code)


def _isolated_child(request, channels, cgroup_fd, namespaces):
    """Runs in the stub: enter the cgroup and namespaces, fork the program as PID 1."""
    limits = request.get("limits") or {}
    if cgroup_fd is not None:
        os.write(cgroup_fd, b"0")
        os.close(cgroup_fd)
    workdir = None
    if namespaces:
        _set_limits(limits, ("RLIMIT_NPROC",))  # counted per user namespace from here on
        _check(_libc.unshare(ISOLATE), "unshare")
        _isolate_filesystem(int(request.get("tmpfs_mb", 256)))
    else:  # no namespaces here: a process group, killed as a group, and a private directory
        os.setsid()
        workdir = tempfile.mkdtemp(prefix="run-", dir=os.getcwd())
    program_pid = []

    def stop(*_):
        # asked to stop: kill the program (PID 1 of its namespace, so every process in it)
        # and stay until it is reaped, so the zygote's "exited" means the whole run is gone
        if program_pid:
            os.kill(program_pid[0], signal.SIGKILL)
        else:
            os._exit(75)

    signal.signal(signal.SIGTERM, stop)
    alive_r, alive_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        os.close(alive_w)
        if select.select([alive_r], [], [], 0)[0]:  # the stub died before the line above
            os._exit(70)
        os.close(alive_r)
        os.chdir(workdir or "/tmp")
        os.environ["HOME"] = workdir or "/tmp"
        if namespaces:
            _drop_capabilities()
        _set_limits(limits, RUN_LIMITS)
        _run_program(request["program"], channels)
    program_pid.append(pid)
    os.close(alive_r)
    for fd in channels:
        os.close(fd)
    try:
        _, status = os.waitpid(pid, 0)
    finally:
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


def _plain_child(request, channels):
    _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    os.setsid()
    _set_limits(request.get("limits") or {}, RUN_LIMITS)
    _run_program(request["program"], channels)


def _spawn(request, fds, namespaces):
    cgroup_fd = fds.pop() if request.get("cgroup") else None
    pid = os.fork()
    if pid == 0:
        try:
            keep = _enter_child(fds + ([cgroup_fd] if cgroup_fd is not None else []))
            channels = keep[:len(fds)]
            cgroup_fd = keep[len(fds)] if cgroup_fd is not None else None
            if request.get("isolate"):
                _isolated_child(request, channels, cgroup_fd, namespaces)
            else:
                _plain_child(request, channels)
        finally:
            os._exit(71)
    return pid


def _probe_namespaces():
    """Whether an isolated child can be set up here (user namespaces may be disabled)."""
    pid = os.fork()
    if pid == 0:
        try:
            _enter_child([])
            _check(_libc.unshare(ISOLATE), "unshare")
            _isolate_filesystem(1)
            inner = os.fork()
            if inner == 0:
                _drop_capabilities()
                os._exit(0)
            os._exit(os.waitstatus_to_exitcode(os.waitpid(inner, 0)[1]))
        except BaseException:  # noqa: BLE001
            os._exit(1)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


def _load_programs(sources):
    programs = {}
    for name, source in sources.items():
        namespace = {"__name__": "rlvr_program_" + name}
        exec(compile(source, name + ".py", "exec"), namespace)
        programs[name] = namespace["main"]
    return programs


def _kill(child, now):
    """SIGTERM to a namespace stub (it kills its namespace and waits for it; SIGKILL follows
    if it has not ended in 2 s), SIGKILL to a process group."""
    pid, in_namespace = child[0], child[1]
    try:
        if in_namespace and not child[4]:
            os.kill(pid, signal.SIGTERM)
            child[4] = True
            child[2] = now + 2.0
            return
        if in_namespace:
            os.kill(pid, signal.SIGKILL)
        else:
            os.killpg(pid, signal.SIGKILL)  # the child's own session / process group
    except (ProcessLookupError, PermissionError):
        pass
    child[2] = now + 3600


def serve():
    control = socket.socket(fileno=0)
    sys.stdin = None
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    first, _, _, _ = socket.recv_fds(control, 1 << 22, 0)
    global PROGRAMS
    error = None
    try:
        PROGRAMS = _load_programs(json.loads(first)["programs"])
        namespaces = _probe_namespaces()
    except BaseException as err:  # noqa: BLE001 - reported to the host
        namespaces, error = False, "%s: %s" % (type(err).__name__, err)
    control.send(json.dumps({"op": "ready", "namespaces": namespaces, "error": error}).encode())
    children = {}   # id -> [pid, in its own namespaces, deadline, report exit, stopping]
    by_pid = {}

    def exited(ident):
        control.send(json.dumps({"op": "exited", "id": ident}).encode())

    while True:
        now = time.monotonic()
        for ident, child in list(children.items()):
            if child[2] <= now:
                _kill(child, now)
        soonest = min((c[2] for c in children.values()), default=now + 60)
        readable, _, _ = select.select([control, wake_r], [], [], max(0.0, soonest - now))
        if wake_r in readable:
            try:
                while os.read(wake_r, 512):
                    pass
            except BlockingIOError:
                pass
        while by_pid:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            ident = by_pid.pop(pid, None)
            child = children.pop(ident, None)
            if child is not None and child[3]:
                exited(ident)
        if control not in readable:
            continue
        try:
            message, fds, _, _ = socket.recv_fds(control, 1 << 16, 8)
        except OSError:
            message, fds = b"", []
        if not message:
            for child in children.values():
                child[4] = True
                _kill(child, now)
            os._exit(0)
        try:
            request = json.loads(message)
            if request["op"] == "spawn":
                pid = _spawn(request, list(fds), namespaces)
                deadline = time.monotonic() + float(request.get("wall", 60)) + 1.0
                in_namespace = bool(request.get("isolate")) and namespaces
                children[request["id"]] = [pid, in_namespace, deadline, False, False]
                by_pid[pid] = request["id"]
            elif request["op"] == "kill":
                for ident in request["ids"]:
                    if ident in children:
                        children[ident][3] = bool(request.get("report"))
                        _kill(children[ident], time.monotonic())
                    elif request.get("report"):
                        exited(ident)  # already reaped
        except (ValueError, KeyError, TypeError, OSError):
            pass  # a malformed request or failed fork: the fds close, the peers see EOF
        finally:
            for fd in fds:
                try:
                    os.close(fd)
                except OSError:
                    pass


PROGRAMS = {}

if __name__ == "__main__":
    serve()
