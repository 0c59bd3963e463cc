"""How ``index query`` finds a running ``index serve`` for the same index, and asks it.

``index serve`` writes a small JSON file beside a SQLite index (``index.db.serve.json``: address,
process id, instance id, and a secret made for this run) that only its owner may read or write,
and removes it when it stops. Anyone who can write beside the index could put such a file there, so
a query trusts it only when it is a regular file of its own user, closed to group and others, naming
a loopback address; and it sends nothing of its own (no question, no ``INDEX_TOKEN``) before the
server at that address has proved it holds the file's secret: the query sends a random challenge,
the server answers HMAC-SHA256(secret, challenge), and the search follows on the same connection.
A process that merely took the port of a server that died cannot answer, and one that is asked
sees a challenge it cannot use. The secret, rather than the token, is what the server proves: a
server without a token needs proving too, and the token is never put at risk by the proof.

A file refused for what it is (another user's, open to others, pointing elsewhere) or a server that
fails the proof is said in one line (``warn``), and the query runs locally; so does anything merely
stale or slow (no file, a dead process, a refused connection, a slow or wrong answer), silently. A
PostgreSQL index has no file beside it: its queries are always local.

Standard library only: this runs before anything heavy is imported, which is what makes a warm
query fast.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from indexer.store import SERVE_SUFFIX, is_postgres_url

if TYPE_CHECKING:
    import http.client

    from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Header by which a server names its run (stamped on every answer).
INSTANCE_HEADER = "X-Indexer-Instance"
#: The challenge a query sends, and the header in which the server proves it holds the file's secret.
CHALLENGE_HEADER = "X-Indexer-Challenge"
PROOF_HEADER = "X-Indexer-Proof"
#: A server that cannot be connected to in this time is taken as gone.
CONNECT_SECONDS = 0.2
#: A server that has not answered a search in this time is left alone: the query runs locally.
ANSWER_SECONDS = 2.0
#: The same for a re-ranked search, which takes the server seconds on a small CPU.
RERANK_ANSWER_SECONDS = 120.0
#: More than any address file holds: a larger one is not ours.
MAX_FILE_BYTES = 4096
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NON_BLOCKING = getattr(os, "O_NONBLOCK", 0)  # a FIFO planted under the name must not hang the query


@dataclass(frozen=True)
class ServerAddress:
    """What ``index serve`` writes beside the index it serves."""

    host: str  # the address it listens on, as bound
    port: int
    pid: int
    instance: str
    index: str  # the index's real path
    token: bool  # whether requests need ``Authorization: Bearer`` (the token itself is never written)
    secret: str  # hex; made for this run, proved by the server (see :func:`proof`)

    @property
    def connect_host(self) -> str:
        """Where a client on this machine reaches it (a server listening everywhere is on loopback)."""
        return {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(self.host, self.host)


class UntrustedAddressFile(Exception):
    """An address file is there but is not to be trusted; the message says why."""


def serve_file(location: str) -> str | None:
    """Where a server of the index at ``location`` writes its address; None for PostgreSQL."""
    if is_postgres_url(location):
        return None
    return os.path.realpath(location) + SERVE_SUFFIX


def new_secret() -> str:
    """A secret for one run of a server."""
    return secrets.token_hex(32)


def proof(secret: str, challenge: str) -> str:
    """What a server holding ``secret`` answers to ``challenge``."""
    return hmac.new(bytes.fromhex(secret), challenge.encode("ascii"), hashlib.sha256).hexdigest()


def announce(location: str, address: ServerAddress) -> None:
    """Write ``address`` beside the index, readable and writable by this user alone. Whatever is
    there under that name is removed first and the file is made anew, never written through: a file
    planted by someone else (or a link) would otherwise keep its owner, or lead elsewhere.

    Raises:
        OSError: the file cannot be replaced (another user's, in a folder that forbids removing it).
    """
    path = serve_file(location)
    if path is None:
        return
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NO_FOLLOW, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(json.dumps(asdict(address)))  # one small write: a reader seeing half reads nothing


def withdraw(location: str, instance: str) -> None:
    """Remove the address file if it is still this server's (a newer server may have replaced it)."""
    path = serve_file(location)
    try:
        address = read_address(location)
    except UntrustedAddressFile:
        return  # not ours
    if path is not None and address is not None and address.instance == instance:
        try:
            os.remove(path)
        except FileNotFoundError:
            return


def read_address(location: str) -> ServerAddress | None:
    """The address a server wrote beside the index; None when there is none, or it is not one of
    ours (half written, an older version's).

    Raises:
        UntrustedAddressFile: a file someone else could have written, or naming another machine.
    """
    path = serve_file(location)
    if path is None:
        return None
    try:
        descriptor = os.open(path, os.O_RDONLY | _NO_FOLLOW | _NON_BLOCKING)
    except FileNotFoundError:
        return None
    except OSError as error:  # ELOOP: a symbolic link
        raise UntrustedAddressFile(f"{path} cannot be opened as a plain file ({error.strerror})") from error
    with os.fdopen(descriptor, "rb") as file:
        _check_private(path, os.fstat(file.fileno()))
        data = file.read(MAX_FILE_BYTES + 1)
    try:
        address = ServerAddress(**json.loads(data))
    except (ValueError, TypeError):
        return None
    if not _is_loopback(address.connect_host):
        raise UntrustedAddressFile(f"{path} names {address.host}, which is not this machine's loopback")
    return address


def _check_private(path: str, facts: os.stat_result) -> None:
    """Raise unless the file is a regular file of this user that nobody else may read or write."""
    if not stat.S_ISREG(facts.st_mode):
        raise UntrustedAddressFile(f"{path} is not a regular file")
    if os.name != "posix":  # ownership and mode bits mean little there; the server's proof still holds
        return
    if facts.st_uid != os.getuid():
        raise UntrustedAddressFile(f"{path} belongs to another user (uid {facts.st_uid})")
    if facts.st_mode & 0o077:
        mode = stat.S_IMODE(facts.st_mode)
        raise UntrustedAddressFile(f"{path} is open to group or others (mode {mode:o}, not 600)")


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a name: it could resolve anywhere
        return False


def search_through_server(
    location: str,
    params: dict[str, Any],
    token: str | None,
    warn: Callable[[str], None] = lambda message: None,
    answer_seconds: float = ANSWER_SECONDS,
) -> list[dict] | None:
    """The hits a running server of this index gives for ``params`` (``GET /search``'s), or None
    when no trusted server answers as it should: the caller then searches locally. ``warn`` hears
    why a file or a server was refused (not why a server was merely gone or slow)."""
    try:
        address = read_address(location)
    except UntrustedAddressFile as refusal:
        warn(f"{refusal}: searching in this process")
        return None
    if address is None or not _alive(address.pid) or (address.token and not token):
        return None
    return _ask(address, location, params, token, warn, answer_seconds)


def _ask(
    address: ServerAddress,
    location: str,
    params: dict[str, Any],
    token: str | None,
    warn: Callable[[str], None],
    answer_seconds: float,
) -> list[dict] | None:
    """The hits of a live server at ``address``, once it has proved its secret; None otherwise.

    http.client (and the ssl module it loads) is imported here, when there is a server to ask: a
    query with none, the usual case, never pays for it."""
    import http.client

    connection = http.client.HTTPConnection(address.connect_host, address.port, timeout=CONNECT_SECONDS)
    connection.auto_open = 0  # never reconnect between the proof and the search: it is one connection
    try:
        connection.connect()
        connection.sock.settimeout(answer_seconds)
        if not _proves_secret(connection, address.secret):
            warn(
                f"the server at {address.connect_host}:{address.port} did not prove it is the one that "
                f"wrote {serve_file(location)}: searching in this process"
            )
            return None
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        connection.request("GET", "/search?" + urlencode(params, doseq=True), headers=headers)
        response = connection.getresponse()
        body = response.read()
        if response.status != 200:
            return None
        hits = json.loads(body)
    except (OSError, http.client.HTTPException, ValueError):
        return None
    finally:
        connection.close()
    return hits if isinstance(hits, list) else None


def _proves_secret(connection: http.client.HTTPConnection, secret: str) -> bool:
    """Ask the server for the proof of a fresh challenge (``/health``, which carries nothing)."""
    challenge = secrets.token_hex(16)
    connection.request("GET", "/health", headers={CHALLENGE_HEADER: challenge})
    response = connection.getresponse()
    response.read()
    answered = response.getheader(PROOF_HEADER) or ""
    return hmac.compare_digest(answered.encode("ascii", "replace"), proof(secret, challenge).encode("ascii"))


def _alive(pid: int) -> bool:
    """Whether a process with this id exists (a server killed with SIGKILL leaves its file)."""
    if os.name != "posix":  # signal 0 is a probe only on POSIX; elsewhere the proof decides
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


class Prover:
    """ASGI middleware of ``index serve``: answers a query's challenge with the proof of the
    secret its address file holds, in a header of whatever the request gets (200, 401...)."""

    def __init__(self, app: ASGIApp, secret: str) -> None:
        self.app = app
        self.secret = secret

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        challenge = _challenge(scope) if scope["type"] == "http" else None
        if challenge is None:
            await self.app(scope, receive, send)
            return
        answer = (PROOF_HEADER.lower().encode(), proof(self.secret, challenge).encode("ascii"))

        async def proved(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), answer]
            await send(message)

        await self.app(scope, receive, proved)


def _challenge(scope: Scope) -> str | None:
    """The request's challenge, when it carries one a query could have made (hex, short)."""
    for name, value in scope.get("headers", ()):
        if name == CHALLENGE_HEADER.lower().encode():
            text = value.decode("latin-1")
            if 0 < len(text) <= 128 and all(char in "0123456789abcdef" for char in text):
                return text
    return None
