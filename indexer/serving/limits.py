"""How many connections ``index serve`` holds, and how long it waits for a request on each.

uvicorn has a keep-alive timeout between requests and ``limit_concurrency`` (503 beyond it), but no
deadline for a request's own arrival, and it counts a connection that has sent half a request as
one in use: a few hundred sockets that connect and never finish their request fill the cap, or the
process's file descriptors, and every client is locked out (slowloris). Two rules close that:

- a request must arrive whole (head and body) within :attr:`ServeLimits.request_seconds` of the
  connection opening, or of the previous answer on it; otherwise the connection is closed;
- at most :attr:`ServeLimits.max_connections` are open: one more, and the connection that has waited
  longest for its request is closed to make room. A client that sends its request as it connects is
  served whatever the number of idle sockets; only when every connection is busy answering does a
  newcomer get uvicorn's 503.

Both live in a subclass of uvicorn's h11 protocol (the pure-Python one it uses without httptools):
no ASGI middleware can act before a request's head has arrived.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import h11
import orjson
from uvicorn.protocols.http.h11_impl import H11Protocol


@dataclass(frozen=True)
class ServeLimits:
    """The limits of one server (the README lists the defaults)."""

    #: A request must arrive whole within this many seconds of its connection being ready for it.
    request_seconds: float = 10.0
    #: A connection idle after an answer is closed after this many seconds (uvicorn's keep-alive).
    keep_alive_seconds: int = 5
    #: Open connections at most; one more closes the one waiting longest for its request.
    max_connections: int = 64
    #: Connections the system queues before the server accepts them (``listen``'s backlog).
    backlog: int = 256
    #: The largest request head (request line and headers): a longer one gets 414 (its request line
    #: alone is longer) or 431.
    max_head_bytes: int = 64 * 1024

    def uvicorn_options(self) -> dict[str, Any]:
        """What ``uvicorn.Config`` takes of these limits."""
        return {
            "http": limited_protocol(self),
            "timeout_keep_alive": self.keep_alive_seconds,
            # 503 once max_connections are busy: a newcomer is the one over the cap when no other waits
            "limit_concurrency": self.max_connections + 1,
            "backlog": self.backlog,
            "h11_max_incomplete_event_size": self.max_head_bytes,
        }


DEFAULT_LIMITS = ServeLimits()


def limited_protocol(limits: ServeLimits) -> type[H11Protocol]:
    """uvicorn's h11 protocol under ``limits``."""
    return type("LimitedH11Protocol", (LimitedH11Protocol,), {"limits": limits})


class LimitedH11Protocol(H11Protocol):
    """One connection: waiting for a request (since ``waiting_since``) or answering one."""

    limits = ServeLimits()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.waiting_since: float | None = None
        self._deadline: asyncio.TimerHandle | None = None
        self._refused_head = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._wait_for_request()
        if len(self.connections) > self.limits.max_connections:
            self._make_room()

    def data_received(self, data: bytes) -> None:
        if self._refused_head:
            return  # the rest of a request already answered: read and dropped until the client closes
        waiting, _ = self.conn.trailing_data
        if self.conn.their_state is h11.IDLE and len(waiting) + len(data) > self.limits.max_head_bytes:
            self._refuse_head(waiting + data)
            return
        super().data_received(data)
        self._note_request()

    def _refuse_head(self, head: bytes) -> None:
        """Answer a request head longer than :attr:`ServeLimits.max_head_bytes`: 414 when its request
        line alone is (a question pasted into a URL), else 431; then close only once the client has
        stopped sending. Closing a socket with unread data resets it, and the client would see a
        reset instead of the answer."""
        if b"\n" not in head[: self.limits.max_head_bytes]:  # a question pasted into a URL
            status, reason, what = 414, b"URI Too Long", "the request line passes"
        else:
            status, reason, what = 431, b"Request Header Fields Too Large", "the request's headers pass"
        body = orjson.dumps({"error": f"{what} {self.limits.max_head_bytes:,} bytes: shorten it"})
        self._refused_head = True
        self._stop_waiting()
        self.transport.write(
            b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
            b"connection: close\r\n\r\n%s" % (status, reason, len(body), body)
        )
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(self.limits.request_seconds, self._close)

    def eof_received(self) -> None:
        if self._refused_head:
            self._close()
            return
        super().eof_received()

    def on_response_complete(self) -> None:
        if not self.transport.is_closing():
            self._wait_for_request()  # before uvicorn handles a request already sent behind this one
        super().on_response_complete()
        self._note_request()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    def _wait_for_request(self) -> None:
        self._stop_waiting()
        self.waiting_since = self.loop.time()
        self._deadline = self.loop.call_later(self.limits.request_seconds, self._close)

    def _note_request(self) -> None:
        """Stop the clock once a whole request is in (h11 has read its head and its body)."""
        if self.waiting_since is not None and self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
            self._stop_waiting()

    def _stop_waiting(self) -> None:
        self.waiting_since = None
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _make_room(self) -> None:
        """Close the connection that has waited longest for its request, other than this new one."""
        waiting = [
            (connection.waiting_since, connection)
            for connection in self.connections
            if connection is not self
            and isinstance(connection, LimitedH11Protocol)
            and connection.waiting_since is not None
        ]
        if waiting:
            _, oldest = min(waiting, key=lambda since_and_connection: since_and_connection[0])
            oldest._close()

    def _close(self) -> None:
        self._stop_waiting()
        self.connections.discard(self)  # counted out now, not when the loop gets to connection_lost
        if not self.transport.is_closing():
            self.transport.close()
