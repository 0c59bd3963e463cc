"""Run ``index serve`` (uvicorn) and ``index mcp`` (stdio) on one open :class:`Index`.

The rules a server keeps: it loads the model and the vectors before it answers anything; it binds
to loopback unless given a token; it writes its address beside the index only once it listens, and
removes it when it stops (:mod:`indexer.serving.discovery`); it holds a bounded number of
connections, each for a bounded time before its request is in (:mod:`indexer.serving.limits`).
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import socket
from collections.abc import Callable, Sequence

import uvicorn

from indexer.api import Index
from indexer.errors import ConfigError, IndexerError
from indexer.serving.discovery import Prover, ServerAddress, announce, new_secret, serve_file, withdraw
from indexer.serving.hosts import HostRule
from indexer.serving.http_app import make_app
from indexer.serving.limits import DEFAULT_LIMITS, ServeLimits
from indexer.serving.mcp_tools import make_mcp_server
from indexer.store import is_postgres_url


def serve(
    index: Index,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    mcp: bool = False,
    say: Callable[[str], None] = print,
    allowed_hosts: Sequence[str] = (),
    limits: ServeLimits = DEFAULT_LIMITS,
) -> None:
    """Answer HTTP requests for ``index`` at ``host``:``port`` until SIGINT or SIGTERM.

    ``port`` 0 takes a free port (its number is in the message and the address file). A ``host``
    other than loopback needs a ``token``; with one, every request needs ``Authorization: Bearer``.
    ``mcp`` also serves the MCP tools over streamable HTTP at ``/mcp``. A request's ``Host`` must
    name ``host`` (or loopback), or one of ``allowed_hosts``. ``limits``: how many connections, how
    long each may take to send its request (:class:`ServeLimits`).

    Raises:
        ConfigError: a host beyond loopback without a token, or an address that cannot be bound.
    """
    token = token or None
    if token is None and not is_loopback(host):
        raise ConfigError(
            f"serving on {host} opens the index beyond this machine: set a token (INDEX_TOKEN) "
            "that every request must carry, or serve on 127.0.0.1"
        )
    warm(index, say)
    listener = bind(host, port, limits.backlog)
    instance, secret = secrets.token_hex(8), new_secret()
    where = index.store.path if is_postgres_url(index.location) else os.path.abspath(index.location)
    bound_host, bound_port = listener.getsockname()[:2]
    address = ServerAddress(bound_host, bound_port, os.getpid(), instance, where, bool(token), secret)
    shown = f"[{host}]" if ":" in host else host

    def started() -> None:
        try:
            announce(index.location, address)
        except OSError as error:
            say(
                f"warning: cannot write {serve_file(index.location)} ({error.strerror or error}): "
                "`index query` will search in its own process"
            )
        say(f"serving {where} on http://{shown}:{address.port}" + (" (MCP at /mcp)" if mcp else ""))

    app = make_app(
        index,
        instance,
        token,
        make_mcp_server(index) if mcp else None,
        on_start=started,
        on_stop=lambda: withdraw(index.location, instance),
        hosts=HostRule.serving(host, allowed_hosts),
    )
    # the address file is written and removed in the app's lifespan: after a SIGTERM uvicorn ends
    # the process by the signal once the app has shut down, before a `finally` here would run
    config = uvicorn.Config(
        Prover(app, secret), log_level="warning", timeout_graceful_shutdown=5, **limits.uvicorn_options()
    )
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[listener])
    finally:
        listener.close()


def serve_mcp_stdio(index: Index, say: Callable[[str], None]) -> None:
    """Answer MCP requests on stdin/stdout until the client closes them."""
    warm(index, say)
    make_mcp_server(index).run("stdio")


def warm(index: Index, say: Callable[[str], None]) -> None:
    """Load the model and the vectors now, so the first question is answered as fast as the rest. A
    backend that fails here is reported, not fatal: keyword searches and reads need none."""
    index.store.expect_many_searches()
    try:
        index.search("warm up", k=1)
    except IndexerError as error:
        say(f"warning: vector search will fail until this is fixed: {error}")


def is_loopback(host: str) -> bool:
    """Whether ``host`` is this machine alone (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind(host: str, port: int, backlog: int = ServeLimits.backlog) -> socket.socket:
    """A listening socket on ``host``:``port``, bound before the address is announced."""
    try:
        family, kind, proto, _, where = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)[0]
        listener = socket.socket(family, kind, proto)
    except OSError as error:
        raise ConfigError(f"cannot listen on {host}:{port}: {error.strerror or error}") from error
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(where)
        listener.listen(backlog)
    except OSError as error:
        listener.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {error.strerror or error}") from error
    return listener
