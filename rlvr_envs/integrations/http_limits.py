"""Connection limits for `rlvr serve`: read deadlines, a connection cap, and safe binding.

uvicorn has a keep-alive timeout but no deadline for reading a request: a client that sends
its headers (or its body) one byte a second holds a connection, a file descriptor and a
buffer for as long as it likes, and a thousand of them exhaust the server. `guarded_protocol`
returns uvicorn's h11 protocol with three limits added:

- the request line and headers must arrive within `header_timeout` seconds of the first byte
  (or of the connection opening), and the body within `body_timeout` seconds of the headers:
  whole-phase deadlines, not idle timeouts, so a trickle of bytes does not reset them;
- at most `max_connections` connections at once; one past the cap gets a 503 and is closed.

`check_binding` refuses a non-loopback address without a token unless `insecure` is set.
"""

from __future__ import annotations

import asyncio
import ipaddress
from dataclasses import dataclass

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

REFUSED = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n"
           b"connection: close\r\ncontent-length: 32\r\n\r\ntoo many connections; try again\n")


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout: float = 10.0
    body_timeout: float = 60.0
    max_connections: int = 1024

    def __post_init__(self) -> None:
        for name in ("header_timeout", "body_timeout"):
            value = getattr(self, name)
            if not value > 0:
                raise ValueError(f"{name} must be > 0 seconds, got {value!r}")
        if self.max_connections < 1:
            raise ValueError(f"max_connections must be >= 1, got {self.max_connections}")


def guarded_protocol(limits: ConnectionLimits) -> type[H11Protocol]:
    """uvicorn's h11 protocol class with `limits` enforced (pass it as `uvicorn.Config(http=)`)."""

    class GuardedH11Protocol(H11Protocol):
        _read_deadline: asyncio.TimerHandle | None = None
        _phase: object = None  # h11.IDLE (reading headers) or h11.SEND_BODY (reading the body)

        def connection_made(self, transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > limits.max_connections:
                transport.write(REFUSED)
                transport.close()
                return
            self._arm(h11.IDLE, limits.header_timeout)

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            state = self.conn.their_state
            if state is h11.IDLE and self._read_deadline is None:  # a next request begins
                self._arm(h11.IDLE, limits.header_timeout)
            elif state is h11.SEND_BODY and self._phase is not h11.SEND_BODY:
                self._arm(h11.SEND_BODY, limits.body_timeout)
            elif state not in (h11.IDLE, h11.SEND_BODY):
                self._disarm()  # the request is in: the app's time is not the client's

        def _arm(self, phase: object, seconds: float) -> None:
            self._disarm()
            self._phase = phase
            self._read_deadline = self.loop.call_later(seconds, self._too_slow)

        def _disarm(self) -> None:
            if self._read_deadline is not None:
                self._read_deadline.cancel()
            self._read_deadline, self._phase = None, None

        def _too_slow(self) -> None:
            self._read_deadline = None
            if not self.transport.is_closing() and \
                    self.conn.their_state in (h11.IDLE, h11.SEND_BODY):
                self.transport.close()

    return GuardedH11Protocol


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def check_binding(host: str, token: str | None, insecure: bool) -> None:
    """ValueError for a non-loopback bind without a token, unless `insecure` says so."""
    if token or insecure or is_loopback(host):
        return
    raise ValueError(f"refusing to bind {host!r} without a token: anyone who reaches it could "
                     f"use the server; set --token (or RLVR_SERVER_TOKEN), bind 127.0.0.1, or "
                     f"pass --insecure to expose it anyway")
