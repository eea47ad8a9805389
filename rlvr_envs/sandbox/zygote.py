"""Runs inside a sandbox: a warm fork server (a "zygote") for graded programs.

The host starts this script once per sandbox backend (inside bubblewrap for `bwrap`), with a
SOCK_SEQPACKET control socket as fd 0. The interpreter, the stdlib modules programs commonly
use and the programs themselves are loaded once; every spawn request then forks a fresh child,
so a run costs a fork instead of an interpreter start.

The zygote never sees the code it runs or the tests: a spawn request carries only the program
name, limits and the child's channel fds (SCM_RIGHTS); the host writes code and tests straight
into those channels. What a child inherits from the zygote's memory is therefore nothing secret.

The command line starts only a bootstrap (`forkserver.ZYGOTE_BOOT`): this file arrives as the
first packet on the control socket, compiled by the host when both run the same interpreter.
Control messages then (one object per packet; host → zygote in marshal's format, which the
zygote reads with one C call; zygote → host in JSON):
  {"op": "programs", "programs": {name: source}, "compiled": {name: marshal of the code},
   "python": the host's sys.version, "view": {...}, "jail": bool}   first, once (the compiled
      code is used when "python" is this interpreter's: compiling here would leave the zygote
      megabytes of heap that every fork copies); answered by {"op": "ready", "namespaces":
      bool, "jail": bool, "run_proc": bool, "error": str|null}
  {"op": "spawn", "id": int, "program": str, "isolate": bool, "limits": {RLIMIT_*: int},
   "wall": float|null, "tmp_mb": int, "shm_mb": int, "cgroups": int, "pids_cgroup": bool}
      fds: channels [+ the run's cgroup.procs files]
      (the zygote kills the child 1 s after `wall`; null: the host enforces the deadline)
  {"op": "warm", "runs": int, "id": int}   make network namespaces for that many runs now
      (the jail's pool), instead of during the first runs; answered {"op": "exited", "id": int}
      once made
  {"op": "kill", "ids": [int], "report": bool}   with report, answered per id (once it and
      every process it started are gone) by {"op": "exited", "id": int}
End of file on the control socket kills every child and ends the zygote.

With "jail" (where user namespaces work) the zygote first moves into its *jail*: a user, mount
and network namespace of its own whose root holds only the view (read-only, private: nothing
mounted on the host later enters it), built once (`become_jail`). An *isolated* child
(untrusted code) is then cloned from the jail straight into new mount, PID, IPC and UTS
namespaces and joins a network namespace lent from a pool (one live run each): it is PID 1 of
its own PID namespace, so it cannot see or signal any other process, and killing it kills
every process it started; it cannot reach another child's sockets or IPC objects. It mounts
only a fresh private /tmp (its working directory) and /dev/shm and its own /proc (or keeps the
jail's empty one where the kernel refuses a new proc mount), then drops to uid 65534 with no
capabilities and no_new_privs (`enter_run`), with its rlimits and the run's cgroup. A run
without a pids cgroup gets a user namespace of its own too and builds its root per run
(`isolate`), as every run did before the jail. Where user namespaces are unavailable it falls
back to its own session (killed as a group) and a private directory, the isolation of the
`local-unsafe` backend. A trusted child (the test driver) is made non-dumpable, so no other
process can read its memory, and gets its own session and rlimits. Every child is in a
session of its own and dies with the zygote (PR_SET_PDEATHSIG).
"""

import _signal
import _socket
import ctypes
import fcntl
import gc
import json
import marshal
import os
import resource
import select
import signal
import sys
import time

# stdlib modules graded programs commonly import: loaded once here instead of in every child
# (not when this file only launches one command, `exec`). Every fork copies the page tables of
# all the memory this process holds, and every child unmaps them again at its exit, so what
# few programs import (ast, fractions, hashlib, random, statistics) is left to them, and the
# zygote itself uses _socket instead of socket.py and imports shutil and tempfile only where
# it needs them.
PRELOAD = ("bisect", "collections", "copy", "functools", "heapq", "itertools", "math",
           "operator", "re", "string", "typing")
for _name in () if sys.argv[1:2] == ["exec"] else PRELOAD:
    try:
        __import__(_name)
    except ImportError:
        pass

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
ISOLATE = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWUTS
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC = 1024, 2048, 4096, 16384
MS_PRIVATE, MS_RELATIME, MS_STRICTATIME = 1 << 18, 1 << 21, 1 << 24
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NAME, PR_SET_NO_NEW_PRIVS = 1, 4, 15, 38
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                        ctypes.c_char_p]
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                        ctypes.c_ulong]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]


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


SANDBOX_ID = 65534  # the run's uid and gid inside its user namespace ("nobody")
UID, GID = os.getuid(), os.getgid()
#: whether this process may map the child's uid to an unprivileged host uid (root on the
#: host); otherwise the child maps its own uid (the only mapping an unprivileged user may)
PARENT_MAPS = os.geteuid() == 0 and open("/proc/self/uid_map").read().split()[:3] == \
    ["0", "0", "4294967295"]
MNT_DETACH = 2
ST_FLAGS = {8: MS_NOEXEC, 1024: MS_NOATIME, 2048: MS_NODIRATIME, 4096: MS_RELATIME}


_CAP_HEADER = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
_NO_CAPABILITIES = (_CapData * 2)()
_libc.capset.argtypes = [ctypes.c_void_p, ctypes.c_void_p]


def _drop_capabilities():
    _check(_libc.capset(ctypes.addressof(_CAP_HEADER), ctypes.addressof(_NO_CAPABILITIES)),
           "capset")
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


#: the kernel's keyring calls (add_key, request_key, keyctl) per architecture, and its audit id
_KEYRING_CALLS = {"x86_64": (0xC000003E, (248, 249, 250)),
                  "aarch64": (0xC00000B7, (217, 218, 219))}.get(os.uname().machine)
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
_SECCOMP_ALLOW, _SECCOMP_EPERM, _SECCOMP_ENOSYS = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38
_X32_SYSCALL_BIT = 0x40000000


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


#: io_uring_setup, io_uring_enter, io_uring_register (one number on every architecture)
_IO_URING_CALLS = (425, 426, 427)


def syscall_filter():
    """The classic-BPF seccomp program [(code, jt, jf, k)] every run is under: the keyring
    calls fail with EPERM (as under Docker's default profile), and so does every system call
    of another ABI (i386 through int 0x80, x32), whose numbers differ; io_uring fails with
    ENOSYS, as where the kernel has none (libraries fall back to epoll and plain reads): its
    rings are kernel code with a long record of privilege escalations, and the operations
    they carry are invisible to seccomp (Docker's default profile refuses it since 25.0).
    None on an unknown machine."""
    if _KEYRING_CALLS is None:
        return None
    arch, calls = _KEYRING_CALLS
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    rules = ([(jge, _X32_SYSCALL_BIT, _SECCOMP_EPERM)] if arch == 0xC000003E else []) + \
        [(jeq, nr, _SECCOMP_EPERM) for nr in calls] + \
        [(jeq, nr, _SECCOMP_ENOSYS) for nr in _IO_URING_CALLS]
    program = [(ld, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, _SECCOMP_EPERM), (ld, 0, 0, 0)]
    for index, (code, k, action) in enumerate(rules):
        # taken: to the EPERM or the ENOSYS after the ALLOW that ends the rules
        program.append((code, len(rules) - index + (action == _SECCOMP_ENOSYS), 0, k))
    return program + [(ret, 0, 0, _SECCOMP_ALLOW), (ret, 0, 0, _SECCOMP_EPERM),
                      (ret, 0, 0, _SECCOMP_ENOSYS)]


def syscall_filter_bytes():
    """`syscall_filter` as the kernel's sock_filter array (what bubblewrap's --seccomp reads
    and `seccomp_launcher` installs), or None on an unknown machine."""
    program = syscall_filter()
    if program is None:
        return None
    return b"".join(code.to_bytes(2, sys.byteorder) + bytes([jt, jf]) +
                    k.to_bytes(4, sys.byteorder) for code, jt, jf, k in program)


def seccomp_launcher():
    """Python source (no single quote in it) that installs `syscall_filter` with
    no_new_privs and then execs its arguments: what a Docker run starts its command through,
    with the image's python3. Exits 71 when the filter cannot be installed (the run would be
    less confined than the backend states) and 127 when the command is not found."""
    data = syscall_filter_bytes()
    if data is None:
        return None
    return ("import ctypes, os, sys\n"
            "class P(ctypes.Structure):\n"
            "    _fields_ = [(\"n\", ctypes.c_ushort), (\"f\", ctypes.c_void_p)]\n"
            "f = ctypes.create_string_buffer(bytes.fromhex(\"%s\"), %d)\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "if libc.prctl(%d, 1, 0, 0, 0) or libc.prctl(%d, %d, ctypes.byref(P(%d, "
            "ctypes.addressof(f))), 0, 0):\n"
            "    sys.stderr.write(\"sandbox setup failed: seccomp: %%s\\n\" %% "
            "os.strerror(ctypes.get_errno()))\n"
            "    os._exit(71)\n"
            "try:\n"
            "    os.execvp(sys.argv[1], sys.argv[1:])\n"
            "except OSError as err:\n"
            "    sys.stderr.write(\"%%s: %%s\\n\" %% (sys.argv[1], err.strerror))\n"
            "    os._exit(127 if isinstance(err, FileNotFoundError) else 126)\n"
            % (data.hex(), len(data), PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER,
               len(data) // 8))


def install_syscall_filter():
    """`syscall_filter` installed here, inherited by every process started from here on. Runs
    of one jail share its user namespace, and with it uid 65534's user keyrings, which outlive
    a run (and a process may hold its caller's session keyring): without this a candidate
    could leave data for a later one (and request_key can make the kernel start a helper on
    the host). Returns whether the filter is in place."""
    program = syscall_filter()
    if program is None:
        return False
    fprog = _fprog(program)
    for attempt in (0, 1):
        if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) == 0:
            return True
        if attempt == 0 and ctypes.get_errno() == 13:  # EACCES: allowed with no_new_privs
            _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        else:
            return False
    return False


def _fprog(program):
    """A classic-BPF `program` as the kernel's struct sock_fprog (holding its instructions)."""
    filters = (_SockFilter * len(program))(*[_SockFilter(*line) for line in program])
    fprog = _SockFprog(len(program), filters)
    fprog.instructions = filters
    return fprog


#: per machine: clone and unshare (whose flags are their first argument) and clone3 (whose
#: flags lie in memory, which a filter cannot read)
_NAMESPACE_CALLS = {"x86_64": (56, 272, 435), "aarch64": (220, 97, 435)}.get(os.uname().machine)


def user_namespace_filter():
    """The classic-BPF seccomp program under which no user namespace can be made: clone and
    unshare with CLONE_NEWUSER fail with EPERM, clone3 (whose flags a filter cannot read)
    with ENOSYS, so that the C library falls back to clone (threads and fork work as
    before); None on an unknown machine. In a user namespace of its own a run would hold
    every capability: mount cgroup2 — the host's hierarchy from its root, writable where the
    run is the host's root (bubblewrap) —, make network namespaces (netfilter, raw sockets)
    and reach the kernel code most privilege escalations start from."""
    if _KEYRING_CALLS is None or _NAMESPACE_CALLS is None:
        return None
    clone, unshare, clone3 = _NAMESPACE_CALLS
    ld, jeq, jset, ret = 0x20, 0x15, 0x45, 0x06
    return [(ld, 0, 0, 4), (jeq, 1, 0, _KEYRING_CALLS[0]), (ret, 0, 0, _SECCOMP_EPERM),
            (ld, 0, 0, 0), (jeq, 5, 0, clone3), (jeq, 1, 0, clone), (jeq, 0, 2, unshare),
            (ld, 0, 0, 16), (jset, 2, 0, CLONE_NEWUSER),  # the flags' low half (little-endian)
            (ret, 0, 0, _SECCOMP_ALLOW), (ret, 0, 0, _SECCOMP_ENOSYS),
            (ret, 0, 0, _SECCOMP_EPERM)]


#: built once here: a child only installs it (`refuse_user_namespaces`)
_NO_USER_NAMESPACES = None if _NAMESPACE_CALLS is None else _fprog(user_namespace_filter())


def refuse_user_namespaces():
    """`user_namespace_filter` installed here (no_new_privs is set), for this process and all
    it starts: a run's processes, and those of every run of a jail, which share its user
    namespace (the limit of nested ones a namespace keeps would hold for the zygote too)."""
    if _NO_USER_NAMESPACES is not None:
        _check(_libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER,
                           ctypes.addressof(_NO_USER_NAMESPACES), 0, 0), "seccomp")


def write_id_maps(pid, host_id=SANDBOX_ID):
    """From the parent (root on the host): the child's uid/gid 65534 is the host's `host_id`
    (65534 itself, or the owner of a working directory the caller gave, as bubblewrap and
    Docker do). Root stays mapped to root only so the child can build its root from host
    paths under 0700 directories (/root/.pyenv); it then becomes 65534 for good (setresuid
    with no capability left, no_new_privs, nosuid mounts: nothing leads back to 0)."""
    lines = ("%d 0 1\n" % SANDBOX_ID if host_id == 0 else
             "0 0 1\n%d %d 1\n" % (SANDBOX_ID, host_id))
    for name in ("uid_map", "gid_map"):
        with open("/proc/%d/%s" % (pid, name), "w") as fh:
            fh.write(lines)


def _map_own_ids():
    """In the child, without a privileged parent: uid/gid 65534 inside is our own outside."""
    with open("/proc/self/setgroups", "w") as fh:
        fh.write("deny")
    with open("/proc/self/uid_map", "w") as fh:
        fh.write("%d %d 1" % (SANDBOX_ID, UID))
    with open("/proc/self/gid_map", "w") as fh:
        fh.write("%d %d 1" % (SANDBOX_ID, GID))


def _become_sandbox_user():
    if PARENT_MAPS:
        os.setgroups([])
        os.setresgid(SANDBOX_ID, SANDBOX_ID, SANDBOX_ID)
        os.setresuid(SANDBOX_ID, SANDBOX_ID, SANDBOX_ID)


def _settle_as_sandbox_user():
    """The last step of entering a run: its own host name, then the unprivileged id, with no
    capabilities left and no user namespace to be made."""
    try:
        _socket.sethostname("sandbox")
    except OSError:
        pass
    _become_sandbox_user()
    _drop_capabilities()
    refuse_user_namespaces()


def _makedirs(path):
    os.makedirs(path, mode=0o755, exist_ok=True)


def _bind(source, target, read_only, is_file=False, devices=False):
    if is_file:
        _makedirs(os.path.dirname(target))
        open(target, "a").close()
    else:
        _makedirs(target)
    try:  # only the directory itself: a mount made under it on the host stays out
        _mount(source, target, None, MS_BIND)
    except OSError:  # nested in bubblewrap, whose own (read-only) submounts are locked in
        _mount(source, target, None, MS_BIND | MS_REC)
    flags = _read_only_flags(source) & ~(0 if read_only else MS_RDONLY)
    if devices:
        flags &= ~MS_NODEV
    _mount(None, target, None, MS_REMOUNT | MS_BIND | flags)


def _read_only_flags(path):
    flags = MS_RDONLY | MS_NOSUID | MS_NODEV
    for st_flag, ms_flag in ST_FLAGS.items():  # flags a nested namespace may not clear
        if os.statvfs(path).f_flag & st_flag:
            flags |= ms_flag
    return flags


def _seal_submounts(tops, old):
    """Mounts under the read-only directories came along with them (a user namespace locks
    a mount to its children, so only a recursive bind works) — host mounts made at any time,
    writable ones too: remount each of them read-only."""
    with open(old + "/proc/self/mountinfo") as fh:
        points = [_unescape(line.split()[4]) for line in fh]
    for point in points:
        if any(point.startswith(top + "/") for top in tops):
            try:
                _mount(None, point, None, MS_REMOUNT | MS_BIND | _read_only_flags(point))
            except OSError:
                pass  # already read-only with flags a nested namespace cannot change


def _tmpfs(target, size_kb, mode="1777", flags=MS_NOSUID | MS_NODEV):
    _makedirs(target)
    _mount("tmpfs", target, "tmpfs", flags, "size=%dk,nr_inodes=16384,mode=%s" % (size_kb, mode))


def build_root(view, tmp_mb, shm_mb, workdir=None, proc="new"):
    """In a fresh user + mount (+ PID) namespace: a new root holding only `view` (read-only),
    /dev's harmless nodes, a private /tmp and /dev/shm of the given sizes, this namespace's
    own /proc (an empty one where the kernel refuses it) and `workdir` (writable) — all
    mounted now, from the host's current tree. `proc="bind"` (the jail, `become_jail`): the
    caller's /proc instead, so that its children may mount one of their own over it."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _tmpfs("/tmp", 1024, "0755")   # becomes the new root
    os.mkdir("/tmp/.old")
    _check(_libc.syscall(ctypes.c_long(SYS_PIVOT_ROOT), b"/tmp", b"/tmp/.old"), "pivot_root")
    os.chdir("/")
    old = "/.old"
    _tmpfs("/tmp", tmp_mb * 1024)  # before the view: a view path under the host's /tmp stays
    for path in view["ro_dirs"]:
        if os.path.isdir(old + path):
            _bind(old + path, path, True)
    for path, target in view["symlinks"].items():
        os.symlink(target, path)
    for path in view["ro_files"]:
        if os.path.isfile(old + path):
            _bind(old + path, path, True, is_file=True)
    _seal_submounts([p for p in view["ro_dirs"] if os.path.isdir(p)], old)
    for path in view["hidden"]:
        if os.path.isdir(path):
            _tmpfs(path, 4, "0755", MS_NOSUID | MS_NODEV | MS_RDONLY)
    _tmpfs("/dev", 64, "0755", MS_NOSUID | MS_NOEXEC)
    for node in ("null", "zero", "full", "random", "urandom"):
        _bind(old + "/dev/" + node, "/dev/" + node, False, is_file=True, devices=True)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, "/dev/" + name)
    _makedirs("/dev/shm")
    _mount(None, "/dev", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC)
    _tmpfs("/dev/shm", shm_mb * 1024)
    if workdir is not None:
        _bind(old + workdir, workdir, False)
    _makedirs("/proc")
    try:
        if proc == "bind":
            _bind(old + "/proc", "/proc", True)
        else:
            _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except OSError:  # a host /proc with masked parts: no /proc rather than the host's
        _tmpfs("/proc", 4, "0555", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY)
    _check(_libc.umount2(old.encode(), MNT_DETACH), "umount old root")
    os.rmdir(old)
    _mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(workdir or "/tmp")


def own_cgroup_root():
    """A cgroup namespace rooted at the cgroups this process is in (the run's, joined before):
    /proc/self/cgroup then names no host path and no grader pid."""
    try:
        _unshare(CLONE_NEWCGROUP)
    except OSError:
        pass  # a kernel without cgroup namespaces: the names stay visible, nothing else


#: per-user counts the kernel charges, beyond the user namespace they are made in, to the user
#: that made the namespace at every level above it (the host's root, for a jail or a run's
#: namespace made by root): without a cap of the namespace's own, a run could take all of
#: root's inotify instances (fs.inotify.max_user_instances, 128) and leave every root process
#: on the host without one while it lives. Capped per user of the namespace: the runs of a
#: jail (all uid 65534) share these.
USER_COUNT_LIMITS = (("max_inotify_instances", 16), ("max_inotify_watches", 8192),
                     ("max_fanotify_groups", 4), ("max_fanotify_marks", 1024))


def limit_user_counts():
    """In a user namespace this process has just made (holding every capability in it): cap
    `USER_COUNT_LIMITS` there (/proc/sys/user holds the values of the opener's namespace); a
    kernel without a count, or a read-only /proc/sys/user, leaves that one as it is."""
    for name, value in USER_COUNT_LIMITS:
        try:
            fd = os.open("/proc/sys/user/" + name, os.O_WRONLY)
        except OSError:
            continue
        try:
            os.write(fd, b"%d" % value)
        except OSError:
            pass
        finally:
            os.close(fd)


def isolate(view, tmp_mb, shm_mb, workdir=None, sync_fd=None):
    """The whole confinement of a child cloned into new namespaces: wait for the parent's id
    maps (or map our own ids), root its cgroups, build the root, become uid 65534, drop every
    capability, set no_new_privs and refuse user namespaces."""
    if sync_fd is not None:
        if os.read(sync_fd, 1) != b"1":
            os._exit(70)
        os.close(sync_fd)
    own_cgroup_root()
    if not PARENT_MAPS:
        _map_own_ids()
    limit_user_counts()
    build_root(view, tmp_mb, shm_mb, workdir)
    _settle_as_sandbox_user()


#: the namespaces each run is cloned into inside the jail (the jail's user namespace is
#: shared; the network namespace comes from `NETS`)
RUN_NAMESPACES = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS
#: set by `become_jail`: whether a run mounts a /proc of its own (else the jail's is empty),
#: whether a run without a pids cgroup can get a user namespace of its own, the jail's own
#: network namespace (an fd)
JAIL = {"active": False, "proc": False, "nested": True, "net": None}
#: idle network namespaces (fds): each is lent to one live run at a time and taken back when
#: that run's PID 1 has been reaped, i.e. when every process of the run, and with them every
#: socket it had, is gone. Making one costs about as much as the rest of a run's setup.
NETS = []
MAX_IDLE_NETS = 64
SIOCGSKNS = 0x894C


def _unshare(flags):
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def _current_netns():
    """An fd of this process's network namespace (no /proc needed)."""
    probe = _socket.socket(_socket.AF_UNIX, _socket.SOCK_DGRAM)
    try:
        return fcntl.ioctl(probe.fileno(), SIOCGSKNS)
    finally:
        probe.close()


def _take_net():
    """An idle network namespace of the jail, or a new one (nothing in it: no interface up,
    no socket left)."""
    if NETS:
        return NETS.pop()
    return _new_net()


def _new_net():
    _unshare(CLONE_NEWNET)
    try:
        return _current_netns()
    finally:
        _check(_libc.setns(JAIL["net"], CLONE_NEWNET), "setns")


def _give_back_net(fd):
    if len(NETS) < MAX_IDLE_NETS:
        NETS.append(fd)
    else:
        os.close(fd)


def become_jail(view):
    """Once, in the zygote: move into a user + mount namespace of its own whose root holds
    only `view` (built as `build_root` builds a run's), private, so that no mount made on the
    host later ever enters it. The zygote keeps its capabilities there (and only there); every
    run is then forked into fresh mount, PID, IPC, network and UTS namespaces inside the jail
    and only mounts its own /tmp, /dev/shm and /proc (`enter_run`) instead of building a root.
    As root on the host, a helper process writes the ids the jail maps (0 and 65534, each to
    itself); otherwise the jail maps 65534 to our own uid, as a run would."""
    if PARENT_MAPS:
        go_r, go_w = os.pipe()
        done_r, done_w = os.pipe()
        parent = os.getpid()
        helper = os.fork()
        if helper == 0:
            code = 1
            try:
                os.close(go_w)
                os.close(done_r)
                if os.read(go_r, 1) == b"1":
                    write_id_maps(parent)
                    code = 0
            finally:
                os._exit(code)
        os.close(go_r)
        os.close(done_w)
        try:
            _unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET)
            os.write(go_w, b"1")
        finally:
            os.close(go_w)
            _, status = os.waitpid(helper, 0)
            os.close(done_r)
        if os.waitstatus_to_exitcode(status) != 0:
            raise OSError("the jail's id maps could not be written")
    else:
        _unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET)
        _map_own_ids()
    JAIL["net"] = _current_netns()
    limit_user_counts()
    build_root(view, 1, 1, proc="bind")
    JAIL["active"] = True
    JAIL["proc"] = _probe_run_proc()
    if not JAIL["proc"]:  # runs cannot mount their own: they get an empty one, never ours
        _tmpfs("/proc", 4, "0555", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY)


def _probe_run_proc():
    """Whether a run forked in the jail may mount a /proc of its own (the kernel refuses where
    the /proc it could see is partly masked, as in bubblewrap or a container)."""
    pid = _clone(RUN_NAMESPACES)
    if pid == 0:
        try:
            _enter_child([])
            _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
            os._exit(0)
        finally:
            os._exit(1)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


def enter_run(tmp_mb, shm_mb, net_fd):
    """In a run forked in the jail (its own mount, PID, IPC, UTS namespaces): the network
    namespace lent to it (`net_fd`), a fresh private /tmp and /dev/shm of the given sizes and
    a /proc of its own PID namespace (or the jail's empty one), then uid 65534, no
    capabilities, no_new_privs. The jail's root stays read-only and nothing mounted here is
    seen by the jail or another run."""
    _check(_libc.setns(net_fd, CLONE_NEWNET), "setns")
    os.close(net_fd)
    flags = MS_NOSUID | MS_NODEV
    _mount("tmpfs", "/tmp", "tmpfs", flags, "size=%dk,nr_inodes=16384,mode=1777" % (tmp_mb * 1024))
    _mount("tmpfs", "/dev/shm", "tmpfs", flags,
           "size=%dk,nr_inodes=16384,mode=1777" % (shm_mb * 1024))
    if JAIL["proc"]:
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    _settle_as_sandbox_user()


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


#: plain ints (the signal module's enums cost a child more pages than the work itself)
SIGKILL, SIGCHLD = int(signal.SIGKILL), int(signal.SIGCHLD)
_RESET_SIGNALS = tuple(int(s) for s in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT))


def _reset_signals():
    """The dispositions this process keeps and its children inherit as they are: defaults,
    not the interpreter's SIGINT handler nor anything the host ignored (an ignored SIGCHLD
    would reap children before the zygote could wait for them); SIGPIPE ignored, as Python
    itself sets it (the zygote writes into pipes whose reader may have died, and a program
    gets BrokenPipeError as anywhere else)."""
    for sig in _RESET_SIGNALS:
        _signal.signal(sig, _signal.SIG_DFL)
    _signal.signal(int(signal.SIGPIPE), _signal.SIG_IGN)


def _enter_child(keep):
    """Common start of every child: no inherited fds, fds 0-2 on /dev/null (its signal
    dispositions are the zygote's defaults, `_reset_signals`)."""
    null = os.open(os.devnull, os.O_RDWR)
    keep = [fd if fd > 2 else os.dup(fd) for fd in keep]
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    _close_all_but(keep)
    return keep


RUN_LIMITS = ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CORE",
              "RLIMIT_SIGPENDING", "RLIMIT_MSGQUEUE",
              "RLIMIT_NPROC")
SYS_CLONE = {"x86_64": 56, "aarch64": 220}.get(os.uname().machine)
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(os.uname().machine)
_libc.syscall.restype = ctypes.c_long


# looked up here, once: a function pointer that ctypes first resolves in a child is built there
# anew by ctypes' Python code, in every child
_BEFORE_FORK = ctypes.pythonapi.PyOS_BeforeFork
_AFTER_FORK_PARENT = ctypes.pythonapi.PyOS_AfterFork_Parent
_AFTER_FORK_CHILD = ctypes.pythonapi.PyOS_AfterFork_Child
_CLONE_NR, _ZERO = ctypes.c_long(SYS_CLONE or -1), ctypes.c_long(0)


def _clone(flags):
    """fork() into new namespaces (clone(2) with CLONE_NEW* flags): the child is PID 1 of its
    own PID namespace and a direct child of the zygote, with no intermediate process."""
    _BEFORE_FORK()
    pid = _libc.syscall(_CLONE_NR, ctypes.c_long(flags | SIGCHLD), _ZERO, _ZERO, _ZERO, _ZERO)
    if pid == 0:
        _AFTER_FORK_CHILD()
        return 0
    _AFTER_FORK_PARENT()
    if pid < 0:
        err = ctypes.get_errno()  # ctypes' copy, saved as the call returned
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


def _child(request, fds, cgroup_fds, mode, workdir, sync_fd=None):
    """Runs in the fresh child: confine it, then run its program. `sync_fd`: the go-ahead
    pipe of a child with its own user namespace, or the network namespace of a jail run."""
    try:
        _libc.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)  # die with the zygote
        extra = list(cgroup_fds) + ([sync_fd] if sync_fd is not None else [])
        keep = _enter_child(fds + extra)
        channels, extra = keep[:len(fds)], keep[len(fds):]
        for fd in extra[:len(cgroup_fds)]:  # join the run's cgroups before anything else
            os.write(fd, b"0")
            os.close(fd)
        if mode == "jail":
            own_cgroup_root()
        limits = request.get("limits") or {}
        # a session and process group of its own (killed as one outside namespaces); kill(0),
        # which reaches the process group across PID namespaces, never reaches the zygote
        os.setsid()
        if mode == "jail":
            enter_run(int(request.get("tmp_mb", 64)), int(request.get("shm_mb", 64)), extra[-1])
            workdir = "/tmp"
            # every run of the jail is uid 65534 of one user namespace, where RLIMIT_NPROC
            # would count them all together: the run's own pids cgroup caps it instead
            if request.get("pids_cgroup"):
                limits = {k: v for k, v in limits.items() if k != "RLIMIT_NPROC"}
        elif mode == "namespace":
            isolate(VIEW, int(request.get("tmp_mb", 64)), int(request.get("shm_mb", 64)),
                    sync_fd=extra[-1] if sync_fd is not None else None)
            workdir = "/tmp"
        else:
            # RLIMIT_NPROC counts all of the user's processes outside a user namespace of its
            # own: the zygote's budget (or its cgroup) caps these children instead
            limits = {k: v for k, v in limits.items() if k != "RLIMIT_NPROC"}
            if mode == "trusted":
                _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # no other process reads its memory
        if workdir is not None:
            os.chdir(workdir)
            if workdir != HOME[0]:
                os.environ["HOME"] = workdir
        _set_limits(limits, RUN_LIMITS)
        _run_program(request["program"], channels)
    finally:
        os._exit(71)


def clone_isolated(host_id=SANDBOX_ID):
    """clone(2) into new namespaces, the parent writing the child's id maps where it may.
    Returns (pid, the child's end of the go-ahead pipe — None in the parent)."""
    sync_r, sync_w = os.pipe()
    try:
        pid = _clone(ISOLATE)
    except OSError:
        os.close(sync_r)
        os.close(sync_w)
        raise
    if pid == 0:
        os.close(sync_w)
        return 0, sync_r
    os.close(sync_r)
    try:
        if PARENT_MAPS:
            write_id_maps(pid, host_id)
        os.write(sync_w, b"1")
    except OSError:
        os.kill(pid, SIGKILL)
    finally:
        os.close(sync_w)
    return pid, None


def _spawn(request, fds, namespaces):
    """Fork the requested child. Returns (pid, mode, private directory to remove or None,
    network namespace lent to it or None)."""
    count = int(request.get("cgroups") or 0)
    cgroup_fds = fds[len(fds) - count:] if count else []
    fds = fds[:len(fds) - count] if count else fds
    workdir = sync_fd = net = None
    if not request.get("isolate"):
        mode = "trusted"
    elif namespaces and JAIL["active"] and (request.get("pids_cgroup") or not JAIL["nested"]):
        mode = "jail"
    elif namespaces:
        mode = "namespace"
    else:  # no namespaces here: its own session (killed as a group) and a private directory
        mode = "group"
        import tempfile
        workdir = tempfile.mkdtemp(prefix="run-", dir=os.getcwd())
    if mode == "jail":
        net = sync_fd = _take_net()
        try:
            pid = _clone(RUN_NAMESPACES)
        except OSError:
            _give_back_net(net)
            raise
    elif mode == "namespace":
        pid, sync_fd = clone_isolated()
    else:
        pid = os.fork()
    if pid == 0:
        _child(request, fds, cgroup_fds, mode, workdir, sync_fd)
    return pid, mode, workdir, net


def _probe_namespaces():
    """Whether an isolated child can be set up here (user namespaces may be disabled)."""
    if SYS_CLONE is None or SYS_PIVOT_ROOT is None:
        return False
    try:
        pid, sync_fd = clone_isolated()
    except OSError:
        return False
    if pid == 0:
        try:
            keep = _enter_child([sync_fd])
            isolate(VIEW, 1, 1, sync_fd=keep[0])
            os._exit(0)
        finally:
            os._exit(1)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


def _load_programs(sources, compiled=None):
    programs = {}
    for name, source in sources.items():
        namespace = {"__name__": "rlvr_program_" + name}
        exec(marshal.loads(compiled[name]) if compiled else compile(source, name + ".py", "exec"),
             namespace)
        programs[name] = namespace["main"]
        if "warm_up" in namespace:
            namespace["warm_up"]()
    return programs


def _kill(child):
    """SIGKILL: to PID 1 of a namespace (the kernel kills every other process in it before
    that one can be reaped), else to the child's session / process group."""
    try:
        if child.mode in ("namespace", "jail"):
            os.kill(child.pid, SIGKILL)
        else:
            os.killpg(child.pid, SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _Child:
    __slots__ = ("pid", "mode", "workdir", "deadline", "report", "net")

    def __init__(self, pid, mode, workdir, deadline, net=None):
        self.pid, self.mode, self.workdir, self.deadline = pid, mode, workdir, deadline
        self.report, self.net = False, net


def _recv_fds(sock, size, max_fds, flags=0):
    """socket.recv_fds on a plain _socket: (message, fds)."""
    message, ancillary, _, _ = sock.recvmsg(size, _socket.CMSG_SPACE(max(1, max_fds) * 4),
                                            flags)
    fds = []
    for level, kind, data in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            fds += [int.from_bytes(data[i:i + 4], sys.byteorder, signed=True)
                    for i in range(0, len(data) - len(data) % 4, 4)]
    return message, fds


#: the HOME every child of the jail gets (its /tmp), set once here rather than in each child
HOME = [None]
#: the longest the control loop waits with no child; with children; while a kill waits for
#: its report (how soon an ended child is reaped)
IDLE_WAIT, REAP_INTERVAL, REAP_POLL = 60.0, 0.05, 0.002


def serve():
    _set_name("rlvr-zygote")
    os.environ.pop("LD_BIND_NOW", None)  # the host's, for this process alone (forkserver)
    control = _socket.socket(fileno=0)
    sys.stdin = None
    _reset_signals()
    first, _ = _recv_fds(control, 1 << 22, 0)
    global PROGRAMS
    error, setup = None, {}
    global VIEW
    try:
        setup = marshal.loads(first)
        same = setup.get("python") == sys.version
        PROGRAMS = _load_programs(setup["programs"], setup.get("compiled") if same else None)
        VIEW = setup["view"]
        namespaces = _probe_namespaces()
    except BaseException as err:  # noqa: BLE001 - reported to the host
        namespaces, error = False, "%s: %s" % (type(err).__name__, err)
    if namespaces and error is None and setup.get("jail"):
        try:
            become_jail(VIEW)
            # a run without a pids cgroup gets a user namespace of its own too, where it works
            JAIL["nested"] = _probe_namespaces()
        except BaseException as err:  # noqa: BLE001 - half in a jail: no isolated runs at all
            namespaces, error = False, "jail: %s: %s" % (type(err).__name__, err)
    if not install_syscall_filter() and JAIL["active"]:
        # without the filter, runs may not share the jail's user namespace (and its keyrings):
        # each gets a user namespace of its own where that works, else none runs isolated
        JAIL["active"] = False
        namespaces = namespaces and JAIL["nested"]
    if namespaces:
        os.environ["HOME"] = HOME[0] = "/tmp"
    # the setup message (the programs' sources and code, ~120 kB) is not needed from here on:
    # held, it would be heap that every fork copies the page tables of (0.25 MB less)
    del first, setup
    # what is loaded now stays shared with every child: moving it out of the collector's
    # reach keeps a child's garbage collections from copying the zygote's pages
    gc.collect()
    gc.freeze()
    # and what setup freed goes back to the system: every fork copies the page tables of all
    # the anonymous memory this process holds (about a tenth less with this)
    _libc.malloc_trim(0)
    control.send(json.dumps({"op": "ready", "namespaces": namespaces, "jail": JAIL["active"],
                             "run_proc": JAIL["proc"], "error": error}).encode())
    children = {}   # id -> _Child
    by_pid = {}

    def exited(ident):
        control.send(json.dumps({"op": "exited", "id": ident}).encode())

    while True:
        # Children that ended are reaped when a message arrives, at least every REAP_INTERVAL
        # and every REAP_POLL while a kill waits for its report: no wake-up per exit, which
        # after each fork would cost a pass over this loop and a copy of each page it writes.
        now = time.monotonic()
        timeout = REAP_INTERVAL if by_pid else IDLE_WAIT
        for child in children.values():
            if child.deadline <= now:
                _kill(child)
                child.deadline = now + 5.0
            timeout = min(timeout, child.deadline - now)
            if child.report:
                timeout = min(timeout, REAP_POLL)
        readable, _, _ = select.select([control], [], [], max(0.0, timeout))
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
                    import shutil
                    shutil.rmtree(child.workdir, ignore_errors=True)
                if child.net is not None:  # the whole run is gone: lend it to the next
                    _give_back_net(child.net)
                if child.report:
                    exited(ident)
        if not readable:
            continue
        # every message already queued, before the next wait: each fork makes this process
        # pay again for every page it writes, so the loop's own work is done once per batch
        while readable:
            try:
                message, fds = _recv_fds(control, 1 << 16, 8, _socket.MSG_DONTWAIT)
            except BlockingIOError:
                break
            except OSError:
                message, fds = b"", []
            if not message:
                for child in children.values():
                    _kill(child)
                os._exit(0)
            _handle(message, fds, children, by_pid, namespaces, exited)
            readable = select.select([control], [], [], 0)[0]  # more queued (no exception)


def _handle(message, fds, children, by_pid, namespaces, exited):
    """One control message: fork the requested child or kill the listed ones."""
    try:
        request = marshal.loads(message)
        if request["op"] == "spawn":
            pid, mode, workdir, net = _spawn(request, list(fds), namespaces)
            wall = request.get("wall")
            deadline = time.monotonic() + (float(wall) + 1.0 if wall is not None else 1e9)
            children[request["id"]] = _Child(pid, mode, workdir, deadline, net)
            by_pid[pid] = request["id"]
        elif request["op"] == "warm":  # network namespaces for that many runs, made now
            while JAIL["active"] and len(NETS) < min(int(request["runs"]), MAX_IDLE_NETS):
                NETS.append(_new_net())
            exited(request["id"])
        elif request["op"] == "kill":
            for ident in request["ids"]:
                if ident in children:
                    children[ident].report = bool(request.get("report"))
                    _kill(children[ident])
                elif request.get("report"):
                    exited(ident)  # already reaped
    except (ValueError, EOFError, KeyError, TypeError, OSError):
        pass  # a malformed request or failed fork: the fds close, the peers see EOF
    finally:
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass


PROGRAMS = {}
VIEW = None  # the host paths an isolated child sees (rlvr_envs.sandbox.view), sent by the host

def run_isolated(config, argv):
    """`python -c <this file> exec <config> <argv...>`: run one command in the confinement of
    an isolated child (the local backend's `spawn`). This process stays as the parent that
    writes the id maps and then only waits; it exits as the command did."""
    config = json.loads(config)
    pid, sync_fd = clone_isolated(int(config.get("host_id", SANDBOX_ID)))
    if pid == 0:
        try:
            _libc.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)
            isolate(config["view"], config["tmp_mb"], config["shm_mb"], config["workdir"],
                    sync_fd=sync_fd)
            os.environ["HOME"] = config["workdir"]
            install_syscall_filter()  # its own user namespace holds its keyrings; no helper on the host
            os.execvp(argv[0], argv)
        except BaseException as err:  # noqa: BLE001 - reported on stderr, exit code 71
            os.write(2, ("sandbox setup failed: %s: %s\n" % (type(err).__name__, err)).encode())
        os._exit(71)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda number, _: os.kill(pid, signal.SIGKILL))
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):  # end the same way, so the caller sees the signal
        number = os.WTERMSIG(status)
        if number not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "exec":
        run_isolated(sys.argv[2], sys.argv[3:])
    serve()
