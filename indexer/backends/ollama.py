"""Embeddings from an Ollama server, through its native ``/api/embed`` endpoint.

The whole batch goes in one request. Ollama runs one embedding request per model at a time (more with
``OLLAMA_NUM_PARALLEL``) and queues the others, so two batches in flight on each server by default
(:attr:`OllamaBackend.default_concurrency`): one being embedded, the next already waiting, so the
model never idles while an answer travels back and the next request travels out.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Sequence
from typing import Any

from indexer.backends.base import EmbeddingBackend
from indexer.backends.http import ErrorResponse, HttpClient, HttpSettings, recorded_url
from indexer.backends.kinds import BUILTIN_CONCURRENCY
from indexer.backends.remote import HttpBackend, as_recorded, url_list
from indexer.errors import BackendError, BackendUnreachableError

DEFAULT_OLLAMA_URL = "http://127.0.0.1:11434"
_DEFAULT_PORT = 11434
_SCHEME_PORTS = {"http": 80, "https": 443}
#: Addresses a server listens on to accept every interface; a client reaches them on the loopback.
_LISTEN_ALL = {"0.0.0.0": "127.0.0.1", "::": "::1"}


def ollama_base_url(host: str | None) -> str:
    """The server URL for an ``OLLAMA_HOST``-style value, read the way Ollama reads it.

    The scheme is optional (default ``http``); without a scheme the port defaults to 11434, with
    ``http://`` or ``https://`` to 80 or 443; ``:PORT`` alone means 127.0.0.1; an empty value means
    ``http://127.0.0.1:11434``; a port that is not a number from 0 to 65535 falls back to the default,
    as Ollama does; a path is kept. Unlike Ollama, a listen-everywhere address (``0.0.0.0`` or ``::``,
    common in OLLAMA_HOST because the server shares it) is reached on the loopback address, since
    connecting to it fails on some systems.
    """
    value = (host or "").strip().strip("\"'").strip()
    if value == "ollama.com":
        return "https://ollama.com:443"
    scheme, separator, rest = value.partition("://")
    if not separator:
        scheme, rest = "http", value
    default_port = _SCHEME_PORTS.get(scheme, _DEFAULT_PORT) if separator else _DEFAULT_PORT
    authority, _, path = rest.partition("/")
    userinfo, at, hostport = authority.rpartition("@")  # user:password@ goes to basic authentication
    name, port_text = _split_host_port(hostport)
    name = _LISTEN_ALL.get(name, name) or "127.0.0.1"
    port = int(port_text) if port_text.isdigit() and int(port_text) <= 65535 else default_port
    if _is_ipv6(name):
        name = f"[{name}]"
    path = path.rstrip("/")
    return f"{scheme}://{userinfo}{at}{name}:{port}" + (f"/{path}" if path else "")


def _split_host_port(hostport: str) -> tuple[str, str]:
    """``host`` and ``port`` text; the port is empty when ``hostport`` has none."""
    if hostport.startswith("["):
        inside, bracket, after = hostport[1:].partition("]")
        if bracket and after.startswith(":"):
            return inside, after[1:]
        return inside, ""
    if hostport.count(":") == 1:
        name, _, port = hostport.partition(":")
        return name, port
    return hostport, ""


def _is_ipv6(name: str) -> bool:
    try:
        return isinstance(ipaddress.ip_address(name), ipaddress.IPv6Address)
    except ValueError:
        return False


class OllamaBackend(HttpBackend):
    """Embed with a model served by Ollama.

    Args:
        model: The Ollama model name, for example ``nomic-embed-text`` or ``embeddinggemma:300m``.
        host: The server, in any form ``OLLAMA_HOST`` accepts, or a list of servers that serve the same
            model: batches go to whichever has room (see :mod:`indexer.backends.servers`), a question
            to the first that answers. Default: ``OLLAMA_HOST``, else ``http://127.0.0.1:11434``.
        truncate: Let Ollama cut inputs longer than the model's context. Off by default, so an
            over-long input is reported (:class:`InputTooLongError`) instead of silently shortened.
        keep_alive: How long Ollama keeps the model loaded after a request (for example ``"10m"``);
            sent only when set.
        query_prefix, document_prefix: Override the prefixes known for the model ("" means none).
        max_tokens: The longest chunk the chunker may make for this model (default 512).
        http: Timeouts and retries (:class:`HttpSettings`); the answer timeout defaults to 120 s,
            since the first request may have to load the model.
    """

    kind = "ollama"
    default_concurrency = BUILTIN_CONCURRENCY["ollama"]
    default_http = HttpSettings(timeout=120.0)
    command_line_options = ("base_url", "query_prefix", "document_prefix")
    needs_model = True

    @classmethod
    def from_command_line(cls, model: str | None, **options: Any) -> EmbeddingBackend:
        """``--base-url`` names Ollama's hosts."""
        return super().from_command_line(model, host=options.pop("base_url", None), **options)

    def __init__(
        self,
        model: str,
        host: str | Sequence[str] | None = None,
        *,
        truncate: bool = False,
        keep_alive: str | None = None,
        query_prefix: str | None = None,
        document_prefix: str | None = None,
        max_tokens: int | None = None,
        http: HttpSettings = default_http,
    ) -> None:
        self._setup(model, query_prefix, document_prefix, max_tokens)
        given = url_list(host, "host")
        hosts: list[str | None] = list(given) if given else [os.environ.get("OLLAMA_HOST")]
        #: The servers' URLs, resolved as Ollama resolves ``OLLAMA_HOST``.
        self.hosts = tuple(ollama_base_url(value) for value in hosts)
        self.truncate = truncate
        self.keep_alive = keep_alive
        self._connect(self.hosts, http, explain=self._explain)

    def _embed_on(self, client: HttpClient, texts: list[str]) -> list[Any]:
        """One request for the batch; Ollama's vectors as they came."""
        payload: dict[str, Any] = {"model": self.model_name, "input": texts, "truncate": self.truncate}
        if self.keep_alive is not None:
            payload["keep_alive"] = self.keep_alive
        answer = client.post("/api/embed", payload)
        if not isinstance(answer, dict) or not isinstance(answer.get("embeddings"), list):
            raise client.error(BackendError, "answer has no `embeddings` list", client.endpoint("/api/embed"))
        tokens = answer.get("prompt_eval_count")
        if isinstance(tokens, int):
            client.add_tokens(tokens)
        return answer["embeddings"]

    def _vector_options(self) -> dict[str, Any]:
        return {"truncate": self.truncate}

    def _server_options(self) -> dict[str, Any]:
        return {
            "host": as_recorded([recorded_url(host) for host in self.hosts]),
            "keep_alive": self.keep_alive,
        }

    def _explain(self, failure: ErrorResponse) -> tuple[type[BackendError], str] | None:
        said = f"HTTP {failure.status}: {failure.message}"
        if failure.status == 404 and "model" in failure.message.lower():
            pull = f"run `ollama pull {self.model_name}`"
            return (
                BackendUnreachableError,
                f"model {self.model_name!r} is not on this server ({said}); {pull}",
            )
        if failure.status == 404:
            return BackendUnreachableError, f"no /api/embed endpoint ({said}); Ollama 0.3 or newer is needed"
        return None
