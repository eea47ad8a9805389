"""Fixtures for the integration tests: a live `rlvr serve` on a loopback port, gold answers."""

from __future__ import annotations

import subprocess

import pytest
from server_helpers import start_rlvr_serve


@pytest.fixture(scope="module")
def live_server():
    """A live `rlvr serve` with a bearer token, for the whole module."""
    process, url = start_rlvr_serve()
    yield url
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
