"""Fixtures for the task-family tests: small dataset files in the GSM8K and MATH schemas
(rows in math_fixture_data.py), and a hub that is never contacted."""

from __future__ import annotations

from pathlib import Path

import pytest
from math_fixture_data import GSM8K_ROWS, MATH_ROWS, write_jsonl, write_parquet


@pytest.fixture(autouse=True)
def no_hub(monkeypatch):
    """Tests never reach a hub: HF_HUB_OFFLINE makes the loaders skip it."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("RLVR_GSM8K_PATH", raising=False)
    monkeypatch.delenv("RLVR_MATH_PATH", raising=False)


@pytest.fixture
def gsm8k_jsonl(tmp_path) -> Path:
    return write_jsonl(tmp_path / "gsm8k_test.jsonl", GSM8K_ROWS)


@pytest.fixture
def gsm8k_parquet(tmp_path) -> Path:
    return write_parquet(tmp_path / "gsm8k_test.parquet", GSM8K_ROWS)


@pytest.fixture
def math_jsonl(tmp_path) -> Path:
    return write_jsonl(tmp_path / "math_test.jsonl", MATH_ROWS)


@pytest.fixture
def math_parquet(tmp_path) -> Path:
    return write_parquet(tmp_path / "math_test.parquet", MATH_ROWS)
