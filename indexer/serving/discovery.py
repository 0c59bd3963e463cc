"""How ``index query`` finds a running ``index serve`` for the same index, and asks it.

``index serve`` writes a small JSON file beside a SQLite index (``index.db.serve.json``: address,
process id, and an instance id it sends back in the ``X-Indexer-Instance`` header of every answer)
and removes it when it stops. A query that finds the file, a live process and a server that answers
as that instance within the time limits is answered by it, with the model already loaded; anything
else (no file, a dead process, a refused connection, a slow or wrong answer) makes the caller search
locally, as it would with no server. A PostgreSQL index has no file beside it: its queries are
always local.

Standard library only: this runs before anything heavy is imported, which is what makes a warm
query fast.
"""

from __future__ import annotations

import http.client
import json
import os
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlencode

from indexer.store import SERVE_SUFFIX, is_postgres_url

#: Header by which a server proves it is the one its file names (not another on a reused port).
INSTANCE_HEADER = "X-Indexer-Instance"
#: A server that cannot be connected to in this time is taken as gone.
CONNECT_SECONDS = 0.2
#: A server that has not answered a search in this time is left alone: the query runs locally.
ANSWER_SECONDS = 2.0


@dataclass(frozen=True)
class ServerAddress:
    """What ``index serve`` writes beside the index it serves."""

    host: str
    port: int
    pid: int
    instance: str
    index: str  # the index's real path
    token: bool  # whether requests need ``Authorization: Bearer`` (the token itself is never written)

    @property
    def connect_host(self) -> str:
        """Where a client on this machine reaches it (a server listening everywhere is on loopback)."""
        return {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(self.host, self.host)


def serve_file(location: str) -> str | None:
    """Where a server of the index at ``location`` writes its address; None for PostgreSQL."""
    if is_postgres_url(location):
        return None
    return os.path.realpath(location) + SERVE_SUFFIX


def announce(location: str, address: ServerAddress) -> None:
    """Write ``address`` beside the index (one small write: a reader that catches it half-written
    reads no address, and searches locally)."""
    path = serve_file(location)
    if path is not None:
        with open(path, "w", encoding="utf-8") as file:
            file.write(json.dumps(asdict(address)))


def withdraw(location: str, instance: str) -> None:
    """Remove the address file if it is still this server's (a newer server may have replaced it)."""
    path = serve_file(location)
    address = read_address(location)
    if path is not None and address is not None and address.instance == instance:
        try:
            os.remove(path)
        except FileNotFoundError:
            return


def read_address(location: str) -> ServerAddress | None:
    """The address a server wrote beside the index, or None (no file, or not one of ours)."""
    path = serve_file(location)
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as file:
            return ServerAddress(**json.load(file))
    except (OSError, ValueError, TypeError):
        return None


def search_through_server(location: str, params: dict[str, Any], token: str | None) -> list[dict] | None:
    """The hits a running server of this index gives for ``params`` (``GET /search``'s), or None
    when no server answers as it should: the caller then searches locally."""
    address = read_address(location)
    if address is None or not _alive(address.pid) or (address.token and not token):
        return None
    connection = http.client.HTTPConnection(address.connect_host, address.port, timeout=CONNECT_SECONDS)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        connection.connect()
        connection.sock.settimeout(ANSWER_SECONDS)
        connection.request("GET", "/search?" + urlencode(params, doseq=True), headers=headers)
        response = connection.getresponse()
        body = response.read()
        if response.status != 200 or response.getheader(INSTANCE_HEADER) != address.instance:
            return None
        hits = json.loads(body)
    except (OSError, http.client.HTTPException, ValueError):
        return None
    finally:
        connection.close()
    return hits if isinstance(hits, list) else None


def _alive(pid: int) -> bool:
    """Whether a process with this id exists (a server killed with SIGKILL leaves its file)."""
    if os.name != "posix":  # signal 0 is a probe only on POSIX; elsewhere the instance header decides
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True
