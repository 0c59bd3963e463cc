"""What the pipeline, the search and the API ask of an index store, whichever engine holds it.

Two stores implement it: :class:`indexer.store.sqlite.SQLiteStore` (one file, the default and the
reference) and :class:`indexer.store.postgres.PostgresStore` (PostgreSQL + pgvector, for an index
that several machines build and many people query). :func:`indexer.store.open_store` is the one
place that picks between them. No engine imports another; both share the records of
:mod:`indexer.store.records`, the migration runner and the lock's wait loop.

The contract is split by role, as each caller needs it: the search reads chunks and searches them,
the pipeline writes files and keeps the build log, ``index status`` and the rebuild look after the
index as a whole. :class:`IndexStore` is all of them, what an engine implements.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, NewType, Protocol, TypeVar

from indexer.records import StoredChunk
from indexer.store.records import BuildCounts, ChunkFilter, FileState, NewFile

if TYPE_CHECKING:  # not imported for annotations alone: `index query` through a server skips them
    import numpy as np

    from indexer.store.locks import WriterLock


#: A store of one engine: its scratch copy, and what replaces it, are of the same engine.
_Store = TypeVar("_Store", bound="Upkeep")

#: A filter in an engine's own form (SQLite: the ids of the matching chunks; PostgreSQL: a condition
#: for the search's SQL), made by :meth:`ChunkSearch.chunk_filter` and handed back, unopened, to the
#: same store's searches.
AllowedChunks = NewType("AllowedChunks", object)


class Connection(Protocol):
    """An open index: where it is, whether it may be written, its schema and its transactions.
    Writes happen inside :meth:`transaction`; searches see one committed state inside
    :meth:`snapshot`. Safe to share between threads: each thread gets its own connection. A store
    opened for reading (``writable`` false) creates, migrates and writes nothing."""

    path: str  # where the index is, safe to print (a URL without its password)
    writable: bool

    def close(self) -> None: ...

    def migrate(self) -> list[str]: ...

    def applied_migrations(self) -> list[str]: ...

    def transaction(self) -> AbstractContextManager[None]: ...

    def snapshot(self) -> AbstractContextManager[None]: ...


class Metadata(Protocol):
    """What the index records of the settings that built it, and the vector table's shape."""

    def get_meta(self, key: str) -> str | None: ...

    def set_meta(self, values: dict[str, str]) -> None: ...

    def get_json(self, key: str) -> dict | None: ...

    @property
    def dimension(self) -> int | None: ...

    def create_vector_table(self, dimension: int) -> None: ...

    def has_vector_table(self) -> bool: ...


class FileWrites(Protocol):
    """What a build reads of the files it holds, and writes in their place."""

    def writer_lock(self, root: str) -> WriterLock: ...

    def file_states(self, root: str) -> dict[str, FileState]: ...

    def vectors_for_hashes(self, text_hashes: Iterable[str]) -> dict[str, bytes]: ...

    def write_files(self, files: Sequence[NewFile]) -> None: ...

    def touch_file(self, file_id: int, size: int, mtime_ns: int) -> None: ...

    def remove_file(self, file_id: int) -> None: ...


class ChunkReads(Protocol):
    """Chunks read back: those a search found, and a whole file's for a citation."""

    def chunks_by_ids(self, chunk_ids: Sequence[int]) -> dict[int, StoredChunk]: ...

    def chunk_count(self) -> int:
        """How many chunks the index holds (for keyword scores' scale); may be an estimate."""
        ...

    def file_chunks(self, path: str, root: str | None = None) -> list[StoredChunk]:
        """Every chunk of one file (under ``root``, else under any root), ordered by root, then as
        they lie in the file: what reading a file back by its citation assembles."""
        ...


class ChunkSearch(Protocol):
    """The vector and keyword searches, each restricted by what :meth:`chunk_filter` made."""

    def chunk_filter(self, chunk_filter: ChunkFilter) -> AllowedChunks | None:
        """The restriction the searches take, in the engine's own form; None: every chunk passes."""
        ...

    def nearest(
        self, query: np.ndarray, k: int, allowed: AllowedChunks | None = None
    ) -> list[tuple[int, float]]: ...

    def keyword_matches(
        self, words: Sequence[str], k: int, allowed: AllowedChunks | None = None
    ) -> list[tuple[int, float]]: ...

    def keyword_chunk_count(self) -> int:
        """How many chunks BM25 counts in :meth:`keyword_matches` (its N), for the keyword scale."""
        ...

    def expect_many_searches(self) -> None:
        """A hint that this process will search many times (a server, an evaluation): a store may
        then prepare once what makes each search faster."""
        ...

    def vector_search_status(self) -> dict[str, Any]:
        """How searches find neighbours, for ``index status``: ``structure``, ``file`` and
        ``file_bytes`` (a structure kept beside the index), ``memory_bytes`` (what a searching
        process holds for it), and what each store adds."""
        ...


class BuildLog(Protocol):
    """The record of every build: started, alive, finished or interrupted."""

    def start_build(self, root: str, model: str, pid: int, host: str, started_at: float) -> int: ...

    def add_build_counts(self, build_id: int, counts: BuildCounts, seen_at: float) -> None:
        """Add to a build's record what a group committed, and the time it was last seen alive (the
        time a killed build's duration ends at)."""
        ...

    def finish_build(
        self, build_id: int, outcome: str, counts: BuildCounts, error: str | None, finished_at: float
    ) -> None: ...

    def recent_builds(self, limit: int = 5) -> list[dict[str, object]]: ...

    def mark_interrupted_builds(self) -> None: ...

    def writer_active(self, root: str) -> bool:
        """Whether a build holds the writer lock of ``root`` now (any process, any host)."""
        ...


class Upkeep(Protocol):
    """The index as a whole: its folders, its size and health, and the rebuild that replaces it."""

    supports_rebuild: bool  # whether :meth:`open_scratch` and :meth:`replace_with` work

    def roots(self) -> list[str]: ...

    def root_counts(self) -> list[dict[str, object]]:
        """Each root with its indexed files and chunks: ``{"path", "files", "chunks"}``."""
        ...

    def remove_root(self, root: str) -> int:
        """Drop a root's files, chunks, vectors and keyword entries (inside a transaction); returns
        how many indexed files it held."""
        ...

    def size_bytes(self) -> int: ...

    def is_empty(self) -> bool: ...

    def counts(self) -> dict[str, int]: ...

    def integrity_problems(self) -> list[str]: ...

    def own_files(self) -> list[str]: ...

    def open_scratch(self: _Store) -> _Store: ...

    def replace_with(self: _Store, scratch: _Store) -> None: ...

    def discard_scratch(self) -> None: ...


class SearchStore(Metadata, ChunkReads, ChunkSearch, Protocol):
    """What a search needs: the vector table's shape, the searches, and the chunks they found."""


class IndexStore(Connection, Metadata, FileWrites, ChunkReads, ChunkSearch, BuildLog, Upkeep, Protocol):
    """An open index, every role: what an engine implements and :func:`indexer.store.open_store`
    returns."""

    def __enter__(self: _Store) -> _Store: ...

    def __exit__(self, *exc_info: object) -> None: ...
