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
   "wall": float|null, "tmpfs_mb": int, "cgroup": bool}       fds: channels [+ cgroup.procs]
      (the zygote kills the child 1 s after `wall`; null: the host enforces the deadline)
  {"op": "kill", "ids": [int], "report": bool}   with report, answered per id (once it and
      every process it started are gone) by {"op": "exited", "id": int}
End of file on the control socket kills every child and ends the zygote.

An *isolated* child (untrusted code) is cloned straight into new user, mount, PID, IPC,
network and UTS namespaces: it is PID 1 of its own PID namespace, so it cannot see or signal
any other process, and killing it kills every process it started; it cannot reach another
child's sockets or IPC objects. In its mount namespace every writable mount is remounted
read-only, /tmp (its working directory) and /dev/shm are fresh private tmpfs and /proc is
hidden. It has no capabilities, no_new_privs, its rlimits (RLIMIT_NPROC counts only its own
user namespace) and, when the host passes one, its own cgroup `pids` group. Where user
namespaces are unavailable it falls back to its own session (killed as a group) and a private
directory, the isolation of the `local` backend. A trusted child (the test driver) is made
non-dumpable, so no other process can read its memory, and gets its own session and rlimits.
Every child dies with the zygote (PR_SET_PDEATHSIG).
"""

import ctypes
import gc
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
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NAME, PR_SET_NO_NEW_PRIVS = 1, 4, 15, 38
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
    """(mount point, flags to keep) of every read-write directory mount outside /proc (a
    device node bound on its own, /dev/null say, holds no files to write)."""
    found, seen = [], set()
    with open("/proc/self/mountinfo") as fh:
        for line in fh:
            fields = line.split()
            point, options = _unescape(fields[4]), fields[5].split(",")
            if ("rw" not in options or point == "/proc" or point.startswith("/proc/")
                    or point in seen or not os.path.isdir(point)):
                continue
            seen.add(point)
            flags = 0
            for option in options:
                flags |= MOUNT_FLAGS.get(option, 0)
            found.append((point, flags))
    return found


WRITABLE = writable_mounts()
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
            which = getattr(resource, name)
            hard = resource.getrlimit(which)[1]
            value = int(limits[name])
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(which, (value, value))


def _close_all_but(keep):
    previous = 2
    for fd in sorted(set(keep)):
        if fd > previous + 1:
            os.closerange(previous + 1, fd)
        previous = max(previous, fd)
    os.closerange(previous + 1, 1 << 16)


_NAME = ctypes.create_string_buffer(16)


def _set_name(name):
    """The process name `ps` shows (rlvr-zygote, rlvr-<program>)."""
    _NAME.value = name.encode()[:15]
    _libc.prctl(PR_SET_NAME, ctypes.addressof(_NAME), 0, 0, 0)


def _enter_child(keep):
    """Common start of every child: no inherited fds or handlers, fds 0-2 on /dev/null."""
    signal.set_wakeup_fd(-1)
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    null = os.open(os.devnull, os.O_RDWR)
    keep = [fd if fd > 2 else os.dup(fd) for fd in keep]
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    _close_all_but(keep)
    return keep


RUN_LIMITS = ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CORE",
              "RLIMIT_NPROC")
SYS_CLONE = {"x86_64": 56, "aarch64": 220}.get(os.uname().machine)
_libc.syscall.restype = ctypes.c_long


def _clone(flags):
    """fork() into new namespaces (clone(2) with CLONE_NEW* flags): the child is PID 1 of its
    own PID namespace and a direct child of the zygote, with no intermediate process."""
    ctypes.pythonapi.PyOS_BeforeFork()
    pid = _libc.syscall(ctypes.c_long(SYS_CLONE), ctypes.c_long(flags | signal.SIGCHLD),
                        ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0))
    if pid == 0:
        ctypes.pythonapi.PyOS_AfterFork_Child()
        return 0
    err = ctypes.get_errno()
    ctypes.pythonapi.PyOS_AfterFork_Parent()
    if pid < 0:
        raise OSError(err, "clone: %s" % os.strerror(err))
    return pid


def _run_program(program, channels):
    _set_name("rlvr-" + program)
    try:
        PROGRAMS[program](*channels)
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    except BaseException:  # noqa: BLE001 - a crash ends the child; its peer sees end of file
        code = 1
    os._exit(code)


def _child(request, fds, cgroup_fd, mode, workdir):
    """Runs in the fresh child: confine it, then run its program."""
    try:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # die with the zygote
        keep = _enter_child(fds + ([cgroup_fd] if cgroup_fd is not None else []))
        channels, cgroup_fd = keep[:len(fds)], (keep[-1] if cgroup_fd is not None else None)
        if cgroup_fd is not None:
            os.write(cgroup_fd, b"0")
            os.close(cgroup_fd)
        limits = request.get("limits") or {}
        if mode == "namespace":
            _isolate_filesystem(int(request.get("tmpfs_mb", 256)))
            _drop_capabilities()
            workdir = "/tmp"
        else:
            os.setsid()
            # RLIMIT_NPROC counts all of the user's processes outside a user namespace of its
            # own: the zygote's budget (or its cgroup) caps these children instead
            limits = {k: v for k, v in limits.items() if k != "RLIMIT_NPROC"}
            if mode == "trusted":
                _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # no other process reads its memory
        if workdir is not None:
            os.chdir(workdir)
            os.environ["HOME"] = workdir
        _set_limits(limits, RUN_LIMITS)
        _run_program(request["program"], channels)
    finally:
        os._exit(71)


def _spawn(request, fds, namespaces):
    """Fork the requested child. Returns (pid, mode, private directory to remove or None)."""
    cgroup_fd = fds.pop() if request.get("cgroup") else None
    workdir = None
    if not request.get("isolate"):
        mode = "trusted"
    elif namespaces:
        mode = "namespace"
    else:  # no namespaces here: its own session (killed as a group) and a private directory
        mode = "group"
        workdir = tempfile.mkdtemp(prefix="run-", dir=os.getcwd())
    pid = _clone(ISOLATE) if mode == "namespace" else os.fork()
    if pid == 0:
        _child(request, fds, cgroup_fd, mode, workdir)
    return pid, mode, workdir


def _probe_namespaces():
    """Whether an isolated child can be set up here (user namespaces may be disabled)."""
    if SYS_CLONE is None:
        return False
    try:
        pid = _clone(ISOLATE)
    except OSError:
        return False
    if pid == 0:
        try:
            _enter_child([])
            _isolate_filesystem(1)
            _drop_capabilities()
            os._exit(0)
        finally:
            os._exit(1)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


def _load_programs(sources):
    programs = {}
    for name, source in sources.items():
        namespace = {"__name__": "rlvr_program_" + name}
        exec(compile(source, name + ".py", "exec"), namespace)
        programs[name] = namespace["main"]
    return programs


def _kill(child):
    """SIGKILL: to PID 1 of a namespace (the kernel kills every other process in it before
    that one can be reaped), else to the child's session / process group."""
    try:
        if child.mode == "namespace":
            os.kill(child.pid, signal.SIGKILL)
        else:
            os.killpg(child.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _Child:
    __slots__ = ("pid", "mode", "workdir", "deadline", "report")

    def __init__(self, pid, mode, workdir, deadline):
        self.pid, self.mode, self.workdir, self.deadline = pid, mode, workdir, deadline
        self.report = False


def serve():
    _set_name("rlvr-zygote")
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
    # what is loaded now stays shared with every child: moving it out of the collector's
    # reach keeps a child's garbage collections from copying the zygote's pages
    gc.collect()
    gc.freeze()
    control.send(json.dumps({"op": "ready", "namespaces": namespaces, "error": error}).encode())
    children = {}   # id -> _Child
    by_pid = {}

    def exited(ident):
        control.send(json.dumps({"op": "exited", "id": ident}).encode())

    while True:
        now = time.monotonic()
        for child in children.values():
            if child.deadline <= now:
                _kill(child)
                child.deadline = now + 5.0
        soonest = min((c.deadline for c in children.values()), default=now + 60)
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
            if child is not None:
                if child.workdir is not None:
                    shutil.rmtree(child.workdir, ignore_errors=True)
                if child.report:
                    exited(ident)
        if control not in readable:
            continue
        try:
            message, fds, _, _ = socket.recv_fds(control, 1 << 16, 8)
        except OSError:
            message, fds = b"", []
        if not message:
            for child in children.values():
                _kill(child)
            os._exit(0)
        try:
            request = json.loads(message)
            if request["op"] == "spawn":
                pid, mode, workdir = _spawn(request, list(fds), namespaces)
                wall = request.get("wall")
                deadline = time.monotonic() + (float(wall) + 1.0 if wall is not None else 1e9)
                children[request["id"]] = _Child(pid, mode, workdir, deadline)
                by_pid[pid] = request["id"]
            elif request["op"] == "kill":
                for ident in request["ids"]:
                    if ident in children:
                        children[ident].report = bool(request.get("report"))
                        _kill(children[ident])
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
