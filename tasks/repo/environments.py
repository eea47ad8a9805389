"""Per-package test environments: the same interpreter and dependency versions on Docker and
bubblewrap.

A package's environment is a directory of pure-Python distributions — pytest and its
dependencies plus the package's own test dependencies — copied file by file (from their
installed RECORD) out of the running Python installation, so building it needs no network.
It is used two ways:

- Docker: the image ``rlvr-repo-<package>:<digest>`` is the project's base sandbox image
  (Debian bookworm's ``/usr/bin/python3``) plus that directory at ``/opt/rlvr-env/site``
  (``docker build``, cached: the tag's digest covers the pinned versions, so an unchanged
  environment is never rebuilt);
- bubblewrap: the host's ``/usr/bin/python3`` — the same Debian bookworm build as the image's
  when the host runs bookworm — with its site-packages hidden and the directory bound
  read-only.

Either way the directory is put first on ``PYTHONPATH`` by `EnvironmentSandbox`, so pytest and
every test dependency come from it, never from the host or image installation.

    rlvr sandbox build-image --package toolz          # or: rlvr tasks build-repo ... --image
    box = package_sandbox("toolz", "docker")          # or "bwrap"
"""

from __future__ import annotations

import hashlib
import importlib.metadata as metadata
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Mapping, Sequence

#: what every repo task's tests need
BASE_REQUIREMENTS = ("pytest", "pluggy", "iniconfig", "packaging")
#: extra test dependencies of packages whose suites need them (the pack's packages need none)
TEST_REQUIREMENTS: dict[str, tuple[str, ...]] = {}
SYSTEM_PYTHON = "/usr/bin/python3"
#: where the environment sits in a package image (readable by the sandbox's user)
IMAGE_SITE = "/opt/rlvr-env/site"


class PackageEnvironmentError(RuntimeError):
    """A package environment cannot be built (the message says which distribution and why)."""


def env_root() -> Path:
    """Where environments live: $RLVR_ENV_DIR, else ~/.cache/rlvr-envs/envs. Never under
    /tmp: sandboxes mount a fresh /tmp, which would hide a directory bound from there."""
    root = Path(os.environ.get("RLVR_ENV_DIR") or Path.home() / ".cache" / "rlvr-envs" / "envs")
    if Path(tempfile.gettempdir()) in root.resolve().parents or root.resolve() == Path("/tmp"):
        raise PackageEnvironmentError(f"package environments cannot live under /tmp ({root}): "
                                      f"the sandbox's own /tmp hides them; set RLVR_ENV_DIR")
    return root


def requirements_of(package: str, extra: Sequence[str] = ()) -> list[str]:
    """The distributions of the environment: the direct ones and, transitively, what they
    require on this interpreter (extras left out)."""
    from packaging.requirements import Requirement

    todo = list(dict.fromkeys([*BASE_REQUIREMENTS, *TEST_REQUIREMENTS.get(package, ()),
                               *extra]))
    seen: dict[str, None] = {}
    while todo:
        name = todo.pop(0)
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        seen[key] = None
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue  # reported with a clear message when it is copied
        for text in requires:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return list(seen)


def _copy_distribution(name: str, dest: Path) -> str:
    """Copy an installed pure-Python distribution into `dest`; return `name==version`."""
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError as err:
        raise PackageEnvironmentError(f"{name} is not installed in {sys.prefix}; install it "
                                f"(pip install {name}) to put it in a package environment") \
            from err
    for file in dist.files or ():
        rel = Path(str(file))
        if ".." in rel.parts or rel.is_absolute() or "__pycache__" in rel.parts:
            continue  # console scripts live outside site-packages; caches are rebuilt
        if rel.suffix in (".so", ".pyd", ".dylib"):
            raise PackageEnvironmentError(f"{name} has compiled modules ({rel}); a package "
                                    f"environment holds pure-Python distributions only")
        source = Path(str(dist.locate_file(file)))
        if source.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, dest / rel)
    return f"{dist.metadata['Name']}=={dist.version}"


def build_environment(package: str, extra: Sequence[str] = (), root: Path | None = None
                      ) -> tuple[Path, list[str]]:
    """The environment directory of `package` (built once; rebuilt when the installed
    versions change) and its pinned requirements."""
    pins = []
    for name in requirements_of(package, extra):
        try:
            pins.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError as err:
            raise PackageEnvironmentError(f"{name} is not installed in {sys.prefix}") from err
    digest = hashlib.sha256("\n".join(pins).encode()).hexdigest()[:12]
    site = (root or env_root()) / f"{package}-{digest}" / "site"
    if not (site / "REQUIREMENTS.txt").is_file():
        tmp = site.with_name("site.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        for name in requirements_of(package, extra):
            _copy_distribution(name, tmp)
        (tmp / "REQUIREMENTS.txt").write_text("\n".join(pins) + "\n")
        shutil.rmtree(site, ignore_errors=True)
        tmp.rename(site)
    return site, pins


def image_tag(package: str, site: Path) -> str:
    from rlvr_envs.sandbox.image import IMAGE
    digest = hashlib.sha256(f"{IMAGE}|{(site / 'REQUIREMENTS.txt').read_text()}"
                            .encode()).hexdigest()[:12]
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in package.lower())
    return f"rlvr-repo-{name}:{digest}"


def build_package_image(package: str, extra: Sequence[str] = (), *, log=print) -> str:
    """Build (once) the package's Docker image: the base image plus its environment at the
    same absolute path as on the host. Returns the tag."""
    from rlvr_envs.sandbox.image import IMAGE, ensure_image, image_exists

    site, pins = build_environment(package, extra)
    tag = image_tag(package, site)
    if image_exists(tag):
        return tag
    ensure_image(IMAGE)
    context = site.parent
    (context / "Dockerfile").write_text(
        f"FROM {IMAGE}\nCOPY site {IMAGE_SITE}\n"
        f"LABEL org.rlvr-envs.package={package} org.rlvr-envs.requirements=\"{' '.join(pins)}\"\n")
    log(f"docker build {tag} ({', '.join(pins)})")
    proc = subprocess.run(["docker", "build", "-q", "-t", tag, str(context)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise PackageEnvironmentError(f"docker build of {tag} failed: {proc.stderr.strip()[-2000:]}")
    return tag


class EnvironmentSandbox:
    """A sandbox whose runs use `python` with `site` first on PYTHONPATH (see module doc);
    everything else is the wrapped sandbox's. `bin_dir`, when given, holds `python`,
    `python3` and `pytest` for the agent's shell (`tools.tool_env`)."""

    def __init__(self, inner, site: Path, python: str = SYSTEM_PYTHON,
                 bin_dir: Path | None = None):
        self.inner, self.site, self.python, self.bin_dir = inner, site, python, bin_dir

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _env(self, env: Mapping[str, str] | None) -> dict[str, str]:
        env = dict(env or {})
        env["PYTHONPATH"] = ":".join(p for p in (str(self.site), env.get("PYTHONPATH", "")) if p)
        return env

    def run(self, command, **kw):
        kw["env"] = self._env(kw.get("env"))
        return self.inner.run(command, **kw)

    def spawn(self, command, **kw):
        kw["env"] = self._env(kw.get("env"))
        return self.inner.spawn(command, **kw)

    def close(self) -> None:
        self.inner.close()


def _command_dir(site: Path, python: str) -> Path:
    """`python`, `python3` (links to the interpreter) and a `pytest` script next to `site`."""
    bin_dir = site.parent / "bin"
    script = f"#!{python}\nimport sys\nfrom pytest import console_main\nsys.exit(console_main())\n"
    if (bin_dir / "pytest").is_file() and (bin_dir / "pytest").read_text() == script \
            and os.path.realpath(bin_dir / "python") == os.path.realpath(python):
        return bin_dir
    tmp = Path(tempfile.mkdtemp(prefix="bin.", dir=site.parent))
    for name in ("python", "python3"):
        (tmp / name).symlink_to(python)
    (tmp / "pytest").write_text(script)
    (tmp / "pytest").chmod(0o755)
    shutil.rmtree(bin_dir, ignore_errors=True)
    tmp.rename(bin_dir)
    return bin_dir


def pytest_sandbox(backend: str, extra: Sequence[str] = (), **options: Any) -> EnvironmentSandbox:
    """The default repo-task sandbox on "bwrap" or "local": this interpreter with its
    site-packages (and the virtualenv) hidden and only pytest, its dependencies and `extra`
    (the tasks' own test dependencies) shown, copied into an environment directory. Nothing
    else the trainer installed is readable: not this project's task data (gold patches), not
    an installed copy of a package a task repairs."""
    from rlvr_envs.sandbox import get_sandbox

    try:
        site, _ = build_environment("pytest", extra)
    except OSError as err:
        raise PackageEnvironmentError(
            f"cannot build the repo tasks' test environment under {env_root()}: {err}; set "
            f"RLVR_ENV_DIR to a writable directory outside /tmp") from err
    inner = get_sandbox(backend, hide_site_packages=True, ro_binds=[str(site.parent)], **options)
    return EnvironmentSandbox(inner, site, python=inner.python,
                              bin_dir=_command_dir(site, inner.python))


def package_sandbox(package: str, backend: str = "docker", extra: Sequence[str] = ()
                    ) -> EnvironmentSandbox:
    """A sandbox running `package`'s tests in its environment on `backend` ("docker" or
    "bwrap"): Debian's /usr/bin/python3 and the environment's pinned distributions."""
    if backend == "docker":
        from rlvr_envs.sandbox.docker import DockerSandbox
        return EnvironmentSandbox(DockerSandbox(image=build_package_image(package, extra),
                                                build=False), Path(IMAGE_SITE))
    if backend == "bwrap":
        from rlvr_envs.sandbox.bwrap import BwrapSandbox
        if not Path(SYSTEM_PYTHON).is_file():
            raise PackageEnvironmentError(f"{SYSTEM_PYTHON} is missing: the bwrap environment uses "
                                    f"the system interpreter (the Docker image's)")
        site, _ = build_environment(package, extra)
        return EnvironmentSandbox(BwrapSandbox(hide_site_packages=True, ro_binds=[str(site)]),
                                  site)
    raise ValueError(f"package environments run on 'docker' or 'bwrap', got {backend!r}")
