"""Fixtures for the evaluation tests: suite files and env ids registered for one test only."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

from rlvr_envs import registry


@pytest.fixture
def write_suite(tmp_path):
    def write(data: dict, name: str = "suite.json") -> Path:
        path = tmp_path / name
        path.write_text(json.dumps(data))
        return path
    return write


@pytest.fixture
def temp_env():
    """Register env ids for one test and remove them afterwards (so no other test sees them)."""
    added: list[str] = []

    def register(env_id: str, factory, family: str) -> str:
        registry.register_env(env_id, factory, f"test env {env_id}", family=family)
        added.append(env_id)
        return env_id

    yield register
    for env_id in added:
        registry._CATALOGUE.pop(env_id, None)
        gym.envs.registry.pop(env_id, None)
