"""The backend kinds, known without importing them: the built-in ones and those other packages
register under the ``indexer.backends`` entry point group. Light on purpose: the CLI reads it for
its help and choices, and a query pays only for the one backend it uses."""

from __future__ import annotations

import importlib

from indexer.backends.base import EmbeddingBackend
from indexer.errors import ConfigError

ENTRY_POINT_GROUP = "indexer.backends"

#: kind -> "module:Class" of the built-in backends
BUILTIN = {
    "embedded": "indexer.backends.embedded:EmbeddedBackend",
    "ollama": "indexer.backends.ollama:OllamaBackend",
    "openai": "indexer.backends.openai:OpenAIBackend",
}
BACKEND_KINDS = tuple(BUILTIN)
#: Batches each built-in backend keeps in flight by default, on each server for the HTTP ones (the
#: classes read it from here, so the CLI's help can say it without importing them); see each class's
#: docstring for why. The embedded backend's two: while one batch is tokenized, or runs its last
#: sub-batch on one core, the other keeps the rest of the model's threads busy.
BUILTIN_CONCURRENCY = {"embedded": 2, "ollama": 2, "openai": 8}


def registered_kinds() -> dict[str, str]:
    """Every kind a build may name: the built-in ones, then the installed packages' entry points.

    importlib.metadata is imported here, not above: reading the packages' metadata is needed only
    for a kind that is not built in, and a one-off query should not pay for the import."""
    from importlib.metadata import entry_points

    kinds = dict(BUILTIN)
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        kinds.setdefault(entry.name, entry.value)
    return kinds


def backend_class(kind: str) -> type[EmbeddingBackend]:
    """The class of a backend kind (its module imported only now): a subclass of
    :class:`EmbeddingBackend`, whose hooks make it from a recorded config."""
    target = BUILTIN.get(kind) or registered_kinds().get(kind)
    if target is None:
        known = ", ".join(registered_kinds())
        raise ConfigError(
            f"unknown backend {kind!r} (choose one of: {known}; a package can add one under the "
            f"{ENTRY_POINT_GROUP!r} entry point group)"
        )
    module, _, name = target.partition(":")
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as error:
        raise ConfigError(f"backend {kind!r} ({target}) cannot be loaded: {error}") from error
    if not (isinstance(found, type) and issubclass(found, EmbeddingBackend)):
        raise ConfigError(f"backend {kind!r} ({target}) is not a subclass of EmbeddingBackend")
    return found
