"""What the pipeline, the search and the API ask of an index store, whichever engine holds it.

Two stores implement it: :class:`indexer.store.Store` (SQLite, one file, the default and the
reference) and :class:`indexer.store_postgres.PostgresStore` (PostgreSQL + pgvector, for an index that
several machines build and many people query). :func:`open_store` is the one place that picks between
them, from the location given: a ``postgresql://`` URL, or a file path.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import numpy as np

    from indexer.store import FileState, NewFile, StoredChunk

from indexer.errors import ConfigError
from indexer.store import Store

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class WriterLockLike(Protocol):
    """One writer per root: ``acquire`` raises :class:`indexer.errors.IndexLockedError` when another
    build holds it past ``wait_seconds``; the lock is dropped on ``release``, on exit, or when the
    holding process dies."""

    def acquire(self, wait_seconds: float = 0) -> None: ...

    def release(self) -> None: ...

    def __enter__(self) -> WriterLockLike: ...

    def __exit__(self, *exc_info: object) -> None: ...


class IndexStore(Protocol):
    """An open index. Writes happen inside :meth:`transaction`; searches see one committed state
    inside :meth:`snapshot`.

    Searches are restricted by what :meth:`chunk_filter` returns, which each store reads its own way
    (SQLite: the ids of the matching chunks; PostgreSQL: a condition inside the search's SQL).
    """

    path: str  # where the index is, safe to print (a URL without its password)
    vectors_in_memory: bool  # a hint that this process will search many times

    def close(self) -> None: ...

    def reopen(self) -> IndexStore:
        """Another handle on the same index for another thread (the build's writer); close it after."""
        ...

    def __enter__(self) -> IndexStore: ...

    def __exit__(self, *exc_info: object) -> None: ...

    # schema and transactions
    def migrate(self) -> list[str]: ...

    def applied_migrations(self) -> list[str]: ...

    def transaction(self) -> AbstractContextManager[None]: ...

    def snapshot(self) -> AbstractContextManager[None]: ...

    def writer_lock(self, root: str) -> WriterLockLike: ...

    # metadata
    def get_meta(self, key: str) -> str | None: ...

    def set_meta(self, values: dict[str, str]) -> None: ...

    def get_json(self, key: str) -> dict | None: ...

    @property
    def dimension(self) -> int | None: ...

    def create_vector_table(self, dimension: int) -> None: ...

    def has_vector_table(self) -> bool: ...

    # files and chunks
    def file_states(self, root: str) -> dict[str, FileState]: ...

    def vectors_for_hashes(self, text_hashes: Iterable[str]) -> dict[str, bytes]: ...

    def write_files(self, files: Sequence[NewFile]) -> None: ...

    def touch_file(self, file_id: int, size: int, mtime_ns: int) -> None: ...

    def remove_file(self, file_id: int) -> None: ...

    # search
    def chunk_filter(self, path_globs: Sequence[str], extensions: Sequence[str]) -> Any: ...

    def nearest(self, query: np.ndarray, k: int, allowed: Any = None) -> list[tuple[int, float]]: ...

    def keyword_matches(
        self, words: Sequence[str], k: int, allowed: Any = None
    ) -> list[tuple[int, float]]: ...

    def chunks_by_ids(self, chunk_ids: Sequence[int]) -> dict[int, StoredChunk]: ...

    # builds and status
    def start_build(self, root: str, model: str) -> int: ...

    def finish_build(
        self, build_id: int, outcome: str, counts: dict[str, int], error: str | None
    ) -> None: ...

    def recent_builds(self, limit: int = 5) -> list[dict[str, object]]: ...

    def roots(self) -> list[str]: ...

    def mark_interrupted_builds(self) -> None: ...

    def is_empty(self) -> bool: ...

    def counts(self) -> dict[str, int]: ...

    def integrity_problems(self) -> list[str]: ...


def is_postgres_url(location: str | os.PathLike[str]) -> bool:
    """True for a ``postgresql://`` (or ``postgres://``) URL, false for a file path."""
    return isinstance(location, str) and location.startswith(POSTGRES_SCHEMES)


def open_store(location: str | os.PathLike[str], create: bool = True) -> IndexStore:
    """Open the index at ``location``: a PostgreSQL URL, or the path of a SQLite file."""
    if is_postgres_url(location):
        # imported only here: psycopg is an optional dependency (the `postgres` extra)
        try:
            from indexer.store_postgres import PostgresStore
        except ImportError as error:
            raise ConfigError(
                f"an index on PostgreSQL needs the postgres extra ({error.name} is missing): "
                "pip install 'indexer[postgres]'"
            ) from error
        return PostgresStore.open(str(location), create=create)
    return Store.open(location, create=create)
