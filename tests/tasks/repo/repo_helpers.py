"""Helpers shared by the repo tests (a module with a unique name: `from repo_helpers import`)."""

import io
import tarfile

from rlvr_envs.tasks.repo.shipped import MINIREPOS


def fake_sdist(tmp_path):
    """The intervals mini repo as a PyPI-style sdist with a licence file."""
    archive = tmp_path / "intervals-0.1.0.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(MINIREPOS / "intervals", arcname="intervals-0.1.0")
        licence = b"Permission is hereby granted, free of charge, to any person (MIT)\n"
        info = tarfile.TarInfo("intervals-0.1.0/LICENSE")
        info.size = len(licence)
        tar.addfile(info, io.BytesIO(licence))
    return archive
