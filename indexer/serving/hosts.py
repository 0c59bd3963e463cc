"""Which ``Host`` headers name this server: the defence against DNS rebinding.

A web page the user opens elsewhere can point a name of its own at 127.0.0.1 and then read the
index as if it were its own origin; the browser sends that name in ``Host``. A server answers only
the names of the address it listens on, loopback's, and those given with ``--allowed-host``. The
port is not compared: an SSH tunnel or a proxy in front changes it, and the name alone is what a
rebinding page cannot choose. Standard library only: the CLI checks ``--allowed-host`` with it.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARD_ADDRESSES = frozenset({"", "0.0.0.0", "::"})
_NAME = re.compile(r"[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*\.?")


@dataclass(frozen=True)
class HostRule:
    """The names a request's ``Host`` may give for this server.

    ``names``: lower-case host names and IP addresses. ``any_address``: the server listens on every
    address (``0.0.0.0``, ``::``), so any IP address may be one of this machine's; an IP address is
    never a rebinding page's (there is no name to point elsewhere)."""

    names: frozenset[str]
    any_address: bool = False

    @classmethod
    def serving(cls, host: str, allowed: Iterable[str] = ()) -> HostRule:
        """The rule for a server listening on ``host``, with the extra names ``allowed``."""
        bound = host.strip("[]").lower()
        extra = {host_name(name) or name.lower() for name in allowed}
        return cls(frozenset({*LOOPBACK_NAMES, bound, *extra} - {""}), bound in WILDCARD_ADDRESSES)

    def admits(self, host: str | None) -> bool:
        """Whether ``host`` (a ``Host`` header, with or without its port) names this server."""
        name = host_name(host or "")
        if name is None:
            return False
        return name in self.names or (self.any_address and is_ip_address(name))

    def admits_origin(self, origin: str) -> bool:
        """Whether a request's ``Origin`` is a page of this server (by the same names)."""
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and self.admits(parts.netloc)

    def describe(self) -> str:
        return ", ".join(sorted(self.names)) + (" or any IP address" if self.any_address else "")


def host_name(value: str) -> str | None:
    """The name in a ``Host`` value, lower case, without its port: ``Localhost:8765`` is
    ``localhost``, ``[::1]:8765`` is ``::1``; None when it is no host (empty, a bad port, a
    character no host name holds)."""
    value = value.strip().lower()
    if value.startswith("["):
        name, bracket, rest = value[1:].partition("]")
        if not bracket or (rest and not (rest.startswith(":") and rest[1:].isdigit())):
            return None
        return name if is_ip_address(name) else None
    name, colon, port = value.partition(":")
    if colon and not port.isdigit():
        return None
    return name if _NAME.fullmatch(name) else None


def is_ip_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True
