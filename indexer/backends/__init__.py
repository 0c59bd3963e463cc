"""Embedding backends and the one place that turns a recorded config back into a backend."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from indexer.backends.base import EmbeddingBackend
from indexer.backends.kinds import BACKEND_KINDS, backend_class
from indexer.errors import ConfigError

#: Settings an index built by an older version recorded at the top level; they now live under "http".
_LEGACY_HTTP_KEYS = ("timeout", "connect_timeout", "max_attempts", "retry_base_delay", "retry_max_delay")


def make_backend(config: dict[str, Any], one_shot: bool = False) -> EmbeddingBackend:
    """Build a backend from a config dict as :meth:`EmbeddingBackend.config` returns it.

    ``config["backend"]`` names the kind (built in, or registered by a package under the
    ``indexer.backends`` entry point group); the other keys are the class's keyword arguments.
    ``one_shot`` says the process will embed a text or two (a one-off query): a backend whose class
    takes a ``one_shot`` argument may then start faster.
    """
    cls = backend_class(config.get("backend", "embedded"))
    # what a config recorded by an older version leaves out means what that version did
    options = {**getattr(cls, "recorded_defaults", {}), **{k: v for k, v in config.items() if k != "backend"}}
    if hasattr(cls, "default_http"):
        options = _with_http_settings(cls, options)
    if one_shot and "one_shot" in inspect.signature(cls).parameters:
        options["one_shot"] = True
    try:
        return cls(**options)
    except TypeError as error:
        raise ConfigError(
            f"backend {config.get('backend')!r} cannot be made from {sorted(options)}: {error}"
        ) from error


def default_backend() -> EmbeddingBackend:
    """The backend of a new index: the embedded backend with the default packaged model, named in
    its config (an index that recorded no name keeps all-MiniLM-L6-v2), at its default precision."""
    from indexer.backends.embedded import EmbeddedBackend
    from indexer.backends.packaged import DEFAULT_EMBEDDING_MODEL

    return EmbeddedBackend(DEFAULT_EMBEDDING_MODEL)


def _with_http_settings(cls: type, options: dict[str, Any]) -> dict[str, Any]:
    from indexer.backends.http import HttpSettings

    http = dict(options.pop("http", None) or {})
    for key in _LEGACY_HTTP_KEYS:
        if key in options:
            http[key] = options.pop(key)
    defaults = cls.default_http.config()
    return {**options, "http": HttpSettings.from_config(http, **defaults)}


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
