"""What the backends that embed on servers over HTTP share: one or several servers of one model, the
prefixes, the chunk limit, what is recorded, usage and closing.

A backend may be given several servers (a list of URLs). It keeps the kind's window of batches in flight
on each, so the build's default concurrency is their sum, and its :class:`ServerPool` decides which
server gets each batch: the pipeline sees one backend whatever the number of servers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from indexer.backends.base import EmbeddingBackend, ModelProbe
from indexer.backends.http import HttpClient, HttpSettings, display_url, recorded_url
from indexer.backends.prefixes import resolve_prefixes
from indexer.backends.servers import ServerPool
from indexer.errors import ConfigError


def url_list(given: str | Sequence[str] | None, setting: str) -> list[str] | None:
    """``given`` as a list of server URLs (one string is one server); None when not given."""
    if given is None:
        return None
    urls = [given] if isinstance(given, str) else list(given)
    if not urls or not all(isinstance(url, str) for url in urls):
        raise ConfigError(f"{setting} must be a URL or a non-empty list of URLs, not {given!r}")
    return urls


def as_recorded(urls: Sequence[str]) -> str | list[str]:
    """How a config records its servers: one URL as a string, as before there could be several."""
    return urls[0] if len(urls) == 1 else list(urls)


class HttpBackend(EmbeddingBackend):
    """Base of the HTTP backends. Subclasses call :meth:`_setup` and :meth:`_connect`, and implement
    :meth:`_embed_on` (one request to one server, its answer read)."""

    pool: ServerPool
    embeds_remotely = True
    #: The HTTP settings of this kind when an index recorded none of its own (a subclass's).
    default_http = HttpSettings()

    @classmethod
    def from_config(cls, options: dict[str, Any], one_shot: bool = False) -> EmbeddingBackend:
        """The recorded ``"http"`` dict becomes :class:`HttpSettings` over this kind's defaults."""
        settings = HttpSettings.from_config(options.get("http"), **cls.default_http.config())
        return cls(**{**options, "http": settings})

    def _setup(
        self, model: str, query_prefix: str | None, document_prefix: str | None, max_tokens: int | None
    ) -> None:
        self.model_name = model
        prefixes = resolve_prefixes(model, query_prefix, document_prefix)
        self.query_prefix = prefixes.query
        self.document_prefix = prefixes.document
        if max_tokens is not None:
            self.max_tokens = max_tokens

    def _connect(self, urls: Sequence[str], settings: HttpSettings, **client_options: Any) -> None:
        """One client per server URL; each server keeps the kind's window of batches in flight."""
        repeated = next((url for url in urls if list(urls).count(url) > 1), None)
        if repeated is not None:
            raise ConfigError(f"{self.kind} backend: {display_url(repeated)} is listed twice")
        clients = [HttpClient(self.kind, url, settings, **client_options) for url in urls]
        self.pool = ServerPool(clients, settings)
        self.default_concurrency = type(self).default_concurrency * len(clients)

    def embed(self, texts: list[str]) -> list[Any]:
        """Embed the batch in one request to a server with room; the vectors as they came (checked later)."""
        if not texts:
            return []
        return self.pool.embed(list(texts), self._embed_on)

    def _embed_on(self, client: HttpClient, texts: list[str]) -> list[Any]:
        """One request to the server of ``client`` for ``texts``; the subclass's protocol."""
        raise NotImplementedError(f"{type(self).__name__} cannot embed text")

    def hold_to_model(self, probe: ModelProbe | None) -> None:
        """Every server is held to the model that gave ``probe`` (see :mod:`indexer.backends.servers`)."""
        self.pool.hold_to(probe)

    def confirm_model(self) -> ModelProbe | None:
        """Each server that answered since its last probe is probed again (see :meth:`ServerPool.confirm`)."""
        self.pool.confirm(self._embed_on)
        return self.pool.model_probe()

    def _vector_options(self) -> dict[str, Any]:
        """What else, besides model and prefixes, changes the vectors this backend gets (a subclass's)."""
        return {}

    def _server_options(self) -> dict[str, Any]:
        """How this backend reaches its servers (a subclass's): recorded, not part of the fingerprint."""
        return {}

    def describe(self) -> dict[str, Any]:
        """What changes the vectors: model, prefixes and the backend's own (not the servers' addresses
        or number)."""
        return {
            "backend": self.kind,
            "model": self.model_name,
            "query_prefix": self.query_prefix,
            "document_prefix": self.document_prefix,
            **self._vector_options(),
        }

    def config(self) -> dict[str, Any]:
        """Settings that recreate this backend; never a secret (a key is read again from its variable)."""
        return {
            **self.describe(),
            **self._server_options(),
            "max_tokens": self.max_tokens,
            "http": self.pool.settings.config(),
        }

    def usage(self) -> dict[str, int]:
        """Requests (every HTTP attempt, retries and same-model checks included) and tokens the servers
        reported, over all servers."""
        total = {"requests": 0, "tokens": 0}
        for client in self.pool.clients:
            for name, count in client.usage().items():
                total[name] += count
        return total

    def requests_by_server(self) -> dict[str, int]:
        """Requests (every HTTP attempt) each server was sent, by its URL as the index records it."""
        return {recorded_url(str(client.url)): client.usage()["requests"] for client in self.pool.clients}

    def close(self) -> None:
        """Close every server's pooled connections."""
        for client in self.pool.clients:
            client.close()

    def __repr__(self) -> str:
        urls = [client.base_url for client in self.pool.clients]
        shown = f"url={urls[0]!r}" if len(urls) == 1 else f"urls={urls!r}"
        return f"{type(self).__name__}(model={self.model_name!r}, {shown})"
