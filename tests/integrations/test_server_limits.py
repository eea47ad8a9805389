"""`rlvr serve` against slow and greedy clients: headers or bodies sent a byte at a time are
dropped at their deadline, connections past the cap get 503, and honest requests are served
throughout."""

from __future__ import annotations

import socket
import time

import httpx
import pytest
from server_helpers import TOKEN, start_rlvr_serve

MAX_CONNECTIONS = 24


@pytest.fixture(scope="module")
def server():
    process, url = start_rlvr_serve("--header-timeout", "1", "--body-timeout", "2",
                                    "--max-connections", str(MAX_CONNECTIONS))
    yield url
    process.terminate()
    process.wait(timeout=30)


def _connect(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    return sock


def _closed_by_server(sock: socket.socket, within: float = 30.0) -> bool:
    """True once the server has closed the connection (EOF or reset)."""
    sock.settimeout(0.5)
    stop = time.monotonic() + within
    while time.monotonic() < stop:
        try:
            if sock.recv(4096) == b"":
                return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except TimeoutError:
            continue
    return False


def _honest(url: str) -> httpx.Response:
    return httpx.post(f"{url}/score", json={"responses": ["\\boxed{42}"], "labels": ["42"]},
                      headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)


@pytest.mark.slow
def test_slow_headers_and_bodies_are_dropped_while_honest_requests_are_served(server):
    slow_headers, slow_bodies = [], []
    for _ in range(6):
        sock = _connect(server)
        sock.sendall(b"POST /score HTTP/1.1\r\nHost: x\r\n")  # and never the end of the headers
        slow_headers.append(sock)
    for _ in range(4):
        sock = _connect(server)
        sock.sendall(b"POST /score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Authorization: Bearer " + TOKEN.encode() + b"\r\n"
                     b"Content-Length: 1000\r\n\r\n{\"responses\": [")  # 990 bytes short
        slow_bodies.append(sock)
    reply = _honest(server)
    assert reply.status_code == 200 and reply.json()["rewards"] == [1.0]
    for sock in slow_headers + slow_bodies:
        sock.sendall(b"x")  # a trickle does not reset a whole-phase deadline
    assert all(_closed_by_server(sock) for sock in slow_headers + slow_bodies)
    assert _honest(server).status_code == 200
    for sock in slow_headers + slow_bodies:
        sock.close()


@pytest.mark.slow
def test_connections_past_the_cap_get_503(server):
    held = [_connect(server) for _ in range(MAX_CONNECTIONS + 4)]
    refused = 0
    for sock in held:
        sock.settimeout(0.5)
        try:
            refused += sock.recv(64).startswith(b"HTTP/1.1 503")
        except (TimeoutError, ConnectionResetError):
            pass
    assert refused >= 4  # the 4 past the cap (more if the header deadline freed none yet)
    assert all(_closed_by_server(sock) for sock in held)  # idle ones: the header deadline
    for sock in held:
        sock.close()
    assert _honest(server).status_code == 200
