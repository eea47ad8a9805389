"""Helpers of the integrations tests: a free loopback port, `rlvr serve` started as users
run it, and the gold answer inside a ground-truth record."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

TOKEN = "test-token-5f1c"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def gold_of(ground_truth: str) -> str:
    return json.loads(ground_truth)["answer"]


def start_rlvr_serve(*extra: str, token: str = TOKEN) -> tuple[subprocess.Popen, str]:
    """`rlvr serve` as users run it (CLI → uvicorn) on 127.0.0.1; returns (process, base url)."""
    port = free_port()
    rlvr = Path(sys.executable).with_name("rlvr")
    log = tempfile.TemporaryFile(mode="w+")  # a file, not a pipe: a full pipe would block it
    process = subprocess.Popen(
        [str(rlvr), "serve", "--env", "rlvr/Math-v0", "--host", "127.0.0.1", "--port", str(port),
         "--workers", "2", "--item-timeout", "20", "--log-level", "warning", *extra],
        env={**os.environ, "RLVR_SERVER_TOKEN": token},
        stdout=log, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            log.seek(0)
            raise RuntimeError(f"rlvr serve did not come up:\n{log.read()[-4000:]}")
        time.sleep(0.2)
    return process, url
