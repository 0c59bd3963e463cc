"""Stage 5: where the index is kept. :func:`open_store` picks the engine from the location given."""

from __future__ import annotations

import os

from indexer.errors import ConfigError
from indexer.store.contract import IndexStore

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
#: Beside a SQLite index, a running ``index serve`` says where it listens (indexer.serving.discovery).
SERVE_SUFFIX = ".serve.json"


def is_postgres_url(location: str | os.PathLike[str]) -> bool:
    """True for a ``postgresql://`` (or ``postgres://``) URL, false for a file path."""
    return isinstance(location, str) and location.startswith(POSTGRES_SCHEMES)


def open_store(location: str | os.PathLike[str], writable: bool = False, create: bool = False) -> IndexStore:
    """Open the index at ``location``: a PostgreSQL URL, or the path of a SQLite file.

    A reader (``writable`` false) never creates, migrates or writes anything; a writer migrates the
    index, and creates it when ``create`` is set.
    """
    if is_postgres_url(location):
        # imported only here: psycopg is an optional dependency (the `postgres` extra)
        try:
            from indexer.store.postgres import PostgresStore
        except ImportError as error:
            raise ConfigError(
                f"an index on PostgreSQL needs the postgres extra ({error.name} is missing): "
                "pip install 'indexer-search[postgres]'"
            ) from error
        return PostgresStore.open(str(location), writable=writable, create=create)
    from indexer.store.sqlite import SQLiteStore

    return SQLiteStore.open(location, writable=writable, create=create)


__all__ = ["SERVE_SUFFIX", "IndexStore", "is_postgres_url", "open_store"]
