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


#: a plugin (conftest, `-p` module, sitecustomize) that turns every test report into a pass
FORCE_PASS_PLUGIN = '''
import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
'''
