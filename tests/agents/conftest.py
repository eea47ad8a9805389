"""Fixtures of the agents tests: the tiny offline model; the test envs live in magic.py."""

from pathlib import Path

import pytest

from .magic import *  # noqa: F403 - registers the magic test envs


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    from rlvr_envs.agents.tiny import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=0)
