"""Embedding backends and the one place that turns a recorded config back into a backend."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from indexer.backends.base import EmbeddingBackend
from indexer.backends.kinds import BACKEND_KINDS, backend_class
from indexer.errors import ConfigError


def make_backend(config: dict[str, Any], one_shot: bool = False) -> EmbeddingBackend:
    """Build a backend from a config dict as :meth:`EmbeddingBackend.config` returns it.

    ``config["backend"]`` names the kind (built in, or registered by a package under the
    ``indexer.backends`` entry point group); the class's :meth:`~EmbeddingBackend.from_config` makes
    it from the other keys. ``one_shot`` says the process will embed a text or two (a one-off query).
    """
    kind = config.get("backend", "embedded")
    options = {key: value for key, value in config.items() if key != "backend"}
    try:
        return backend_class(kind).from_config(options, one_shot)
    except TypeError as error:
        raise ConfigError(
            f"backend {kind!r} cannot be made from {sorted(options)}: {error} (an index built by an "
            "earlier version of indexer may need `index build DOCS --rebuild`)"
        ) from error


def default_backend() -> EmbeddingBackend:
    """The backend of a new index: the embedded backend with the default packaged model, named in
    its config (an index that recorded no name keeps all-MiniLM-L6-v2), at its default precision."""
    from indexer.backends.embedded import EmbeddedBackend
    from indexer.backends.packaged import DEFAULT_EMBEDDING_MODEL

    return EmbeddedBackend(DEFAULT_EMBEDDING_MODEL)


def with_connection(
    config: dict[str, Any], base_url: str | Sequence[str] | None = None, api_key: str | None = None
) -> dict[str, Any]:
    """A recorded config pointed at other server addresses (one, or a list of servers of the same
    model) or given an API key; the model, prefixes and everything else that decides the vectors stay
    as recorded."""
    kind = config.get("backend", "embedded")
    updated = dict(config)
    if base_url is not None:
        if kind not in ("ollama", "openai"):
            raise ConfigError(
                f"a server address applies to ollama and openai indexes; this one uses {kind!r}"
            )
        urls = [base_url] if isinstance(base_url, str) else list(base_url)
        updated["host" if kind == "ollama" else "base_url"] = urls[0] if len(urls) == 1 else urls
    if api_key is not None:
        if kind != "openai":
            raise ConfigError(f"an API key applies to openai indexes; this one uses {kind!r}")
        updated["api_key"] = api_key
    return updated


__all__ = ["BACKEND_KINDS", "EmbeddingBackend", "default_backend", "make_backend", "with_connection"]
