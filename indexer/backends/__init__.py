"""Embedding backends and the one place that turns a recorded config back into a backend."""

from __future__ import annotations

from typing import Any

from indexer.backends.base import EmbeddingBackend
from indexer.errors import ConfigError

BACKEND_KINDS = ("embedded", "ollama", "openai")


def make_backend(config: dict[str, Any]) -> EmbeddingBackend:
    """Build a backend from a config dict as :meth:`EmbeddingBackend.config` returns it.

    ``config["backend"]`` names the kind; the other keys are the class's keyword arguments (a new
    embedded backend passes ``"precision": None`` for the default).
    Imports are per kind so a query on the embedded model never pays for HTTP code, and the reverse.
    """
    options = {key: value for key, value in config.items() if key != "backend"}
    kind = config.get("backend", "embedded")
    if kind == "embedded":
        from indexer.backends.embedded import EmbeddedBackend

        # A config recorded before int8 products existed names no precision: its index is float32.
        options.setdefault("precision", "float32")
        return EmbeddedBackend(**options)
    if kind == "ollama":
        from indexer.backends.ollama import OllamaBackend

        return OllamaBackend(**options)
    if kind == "openai":
        from indexer.backends.openai import OpenAIBackend

        return OpenAIBackend(**options)
    raise ConfigError(f"unknown backend {kind!r} (choose one of: {', '.join(BACKEND_KINDS)})")


def with_connection(
    config: dict[str, Any], base_url: str | None = None, api_key: str | None = None
) -> dict[str, Any]:
    """A recorded config pointed at another server address or given an API key; the model, prefixes
    and everything else that decides the vectors stay as recorded."""
    kind = config.get("backend", "embedded")
    updated = dict(config)
    if base_url is not None:
        if kind not in ("ollama", "openai"):
            raise ConfigError(f"--base-url applies to ollama and openai indexes; this one uses {kind!r}")
        updated["host" if kind == "ollama" else "base_url"] = base_url
    if api_key is not None:
        if kind != "openai":
            raise ConfigError(f"--api-key applies to openai indexes; this one uses {kind!r}")
        updated["api_key"] = api_key
    return updated


__all__ = ["BACKEND_KINDS", "EmbeddingBackend", "make_backend", "with_connection"]
