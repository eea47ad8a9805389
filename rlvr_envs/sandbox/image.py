"""Builds the Docker sandbox image locally, with no registry pull.

`debootstrap --variant=minbase` makes a Debian bookworm root filesystem with python3 from the
apt mirror this machine is configured with (read from
/etc/apt/sources.list[.d] at run time) and pytest `PYTEST_VERSION` from PyPI wheels (the same
pytest the host's virtualenv pins, so repository tests run alike on every backend), then `tar -C DIR -c . | docker import - TAG` turns it
into an image. Takes about a minute; built once per tag (`ensure_image` reuses it), guarded by
a lock file so concurrent test sessions do not build twice. CLI: `rlvr sandbox build-image`.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

SUITE = "bookworm"
PACKAGES = ("python3",)
#: the one pytest every backend runs repository tests with: the image installs it from PyPI
#: wheels, and the host's virtualenv pins the same version (pyproject's `dev` extra)
PYTEST_VERSION = "9.2.0"
#: the Python minor version of the image (Debian bookworm) and of the supported host
PYTHON_VERSION = "3.11"
IMAGE_VERSION = f"2-pytest{PYTEST_VERSION}"
IMAGE = f"rlvr-sandbox:{SUITE}-py3-{IMAGE_VERSION}"
LOCK_FILE = Path(tempfile.gettempdir()) / "rlvr-sandbox-image.lock"
APT_SOURCES = (Path("/etc/apt/sources.list"), Path("/etc/apt/sources.list.d"))


class ImageBuildError(RuntimeError):
    """Building the sandbox image failed; the message says which step and why."""


def find_mirror(suite: str = SUITE) -> str:
    """The Debian mirror URL this machine's apt uses for `suite` (deb822 or one-line format)."""
    files: list[Path] = []
    for source in APT_SOURCES:
        if source.is_dir():
            files += sorted(p for p in source.iterdir() if p.suffix in (".sources", ".list"))
        elif source.is_file():
            files.append(source)
    for path in files:
        text = path.read_text(errors="replace")
        if path.suffix == ".sources":
            for stanza in re.split(r"\n\s*\n", text):
                fields = dict(re.findall(r"^(\w[\w-]*):\s*(.*)$", stanza, re.M))
                if suite in fields.get("Suites", "").split() and \
                        "deb" in fields.get("Types", "deb").split():
                    return fields["URIs"].split()[0]
        else:
            for line in text.splitlines():
                parts = re.sub(r"\[[^]]*\]", "", line).split()
                if len(parts) >= 3 and parts[0] == "deb" and parts[2] == suite:
                    return parts[1]
    raise ImageBuildError(f"no apt source for Debian {suite!r} found in "
                          f"{[str(p) for p in APT_SOURCES]}; debootstrap needs a mirror URL")


def image_exists(tag: str = IMAGE) -> bool:
    return subprocess.run(["docker", "image", "inspect", tag], capture_output=True).returncode == 0


def build_image(tag: str = IMAGE, *, mirror: str | None = None, force: bool = False,
                log=print) -> str:
    """Build `tag` (unless it exists and not `force`); returns the tag."""
    LOCK_FILE.touch(exist_ok=True)
    with open(LOCK_FILE) as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if image_exists(tag) and not force:
            return tag
        for tool in ("debootstrap", "docker", "tar"):
            if shutil.which(tool) is None:
                raise ImageBuildError(f"building {tag} needs `{tool}` on PATH "
                                      f"(apt-get install debootstrap docker.io)")
        if os.geteuid() != 0:
            raise ImageBuildError(f"building {tag} runs debootstrap, which needs root")
        mirror = mirror or find_mirror()
        root = Path(tempfile.mkdtemp(prefix="rlvr-rootfs-", dir="/var/tmp"))
        try:
            log(f"debootstrap {SUITE} ({', '.join(PACKAGES)}) from {mirror} into {root}")
            step = subprocess.run(["debootstrap", "--variant=minbase",
                                   f"--include={','.join(PACKAGES)}", SUITE, str(root), mirror],
                                  capture_output=True, text=True)
            if step.returncode != 0:
                raise ImageBuildError(f"debootstrap failed ({step.returncode}):\n"
                                      f"{(step.stdout + step.stderr)[-3000:]}")
            for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
                for item in (root / junk).glob("*"):
                    if item.is_file():
                        item.unlink()
            install_pytest(root, log)
            (root / "work").mkdir(exist_ok=True)
            log(f"docker import → {tag}")
            tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
            imp = subprocess.run(["docker", "import", "--change",
                                  "ENV PATH=/usr/local/bin:/usr/bin:/bin", "--change",
                                  "ENV LANG=C.UTF-8", "-", tag], stdin=tar.stdout,
                                 capture_output=True, text=True)
            tar.stdout.close()
            tar.wait()
            if imp.returncode != 0 or tar.returncode != 0:
                raise ImageBuildError(f"docker import failed: {imp.stderr.strip()}")
        finally:
            shutil.rmtree(root, ignore_errors=True)
        return tag


def install_pytest(root: Path, log=print) -> None:
    """pytest PYTEST_VERSION and its dependencies, as wheels from PyPI (`pip download`, the
    only network step besides the apt mirror), unpacked into the image's
    /usr/local/lib/python3.X/dist-packages, with a /usr/local/bin/pytest launcher."""
    import sys
    import zipfile

    site = root / "usr" / "local" / "lib" / f"python{PYTHON_VERSION}" / "dist-packages"
    site.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="rlvr-wheels-") as wheels:
        log(f"pip download pytest=={PYTEST_VERSION} (python {PYTHON_VERSION} wheels)")
        step = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet",
                               "--only-binary=:all:", "--python-version", PYTHON_VERSION,
                               "--dest", wheels, f"pytest=={PYTEST_VERSION}"],
                              capture_output=True, text=True)
        if step.returncode != 0:
            raise ImageBuildError(f"pip download pytest=={PYTEST_VERSION} failed:\n"
                                  f"{(step.stdout + step.stderr)[-2000:]}")
        for wheel in sorted(Path(wheels).glob("*.whl")):
            with zipfile.ZipFile(wheel) as archive:
                archive.extractall(site)
    launcher = root / "usr" / "local" / "bin" / "pytest"
    launcher.parent.mkdir(parents=True, exist_ok=True)
    launcher.write_text('#!/bin/sh\nexec /usr/bin/python3 -m pytest "$@"\n')
    launcher.chmod(0o755)


def ensure_image(tag: str = IMAGE) -> str:
    """The image tag, built first if missing (once; later calls find it)."""
    if image_exists(tag):
        return tag
    return build_image(tag)
