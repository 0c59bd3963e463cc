"""The SQLite engine's SQL: sqlite-vec for vectors, FTS5 for keywords.

One driver for everything: apsw, which carries its own recent SQLite and can load extensions on
Pythons whose ``sqlite3`` cannot (many pyenv and macOS builds). Loading sqlite-vec through two SQLite
libraries in one process has crashed, so the standard ``sqlite3`` module is never used here.

Opening touches nothing it does not own: a file that is not an index (another tool's database, or
not a database at all) is refused before anything is written to it, and a reader (``index query``,
``index status``) never creates or migrates anything. How the file is reached is
:mod:`indexer.store.sqlite.connections`; the vector graph searched beside it is
:class:`indexer.store.sqlite.graph.VectorGraph`, which the store holds and makes the first time a
search or a write needs vectors (with numpy, which a keyword query does without).

The statements both engines run alike are :class:`indexer.store.sql.SQLStore`'s; this engine's
own, except the schema and the graph's, live here, always with ``?`` parameters."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager, suppress
from typing import TYPE_CHECKING, Any, cast

import apsw
import orjson

from indexer.errors import (
    ConfigError,
    IndexerError,
    IndexNotFoundError,
    IndexOutdatedError,
    StorageError,
)
from indexer.records import StoredChunk
from indexer.store import SERVE_SUFFIX, keywords, migrations, records
from indexer.store.contract import AllowedChunks
from indexer.store.locks import FileWriterLock, is_locked_elsewhere, lock_path
from indexer.store.records import BuildCounts, ChunkFilter, NewFile
from indexer.store.sql import SQLStore
from indexer.store.sqlite.connections import Connections
from indexer.store.sqlite.layout import (
    COMPANION_SUFFIXES,
    REBUILD_SUFFIX,
    VECTOR_TABLE,
    graph_suffixes,
    remove_database,
)

if TYPE_CHECKING:
    import numpy as np

    from indexer.store.sqlite.graph import VectorGraph

ENGINE = "sqlite"
#: BM25 weight of a chunk's heading against its text: a name in a heading is what the section is
#: about. 3 lifted exact names on the CMake manual from 0.88 to 0.94 top-1 (bench/bench_ranking.py).
HEADING_WEIGHT = 3.0


class SQLiteStore(SQLStore):
    """An index in a SQLite file. Use :meth:`open`; close with :meth:`close` or ``with``.

    Safe to share between threads: each thread gets its own connection (see the module docstring).

    Its length is the contract's (:class:`indexer.store.contract.IndexStore`): one short method per
    contract method that is this engine's own (the statements both engines run alike are
    :class:`indexer.store.sql.SQLStore`'s).
    """

    engine = ENGINE
    placeholder = "?"
    supports_rebuild = True

    def __init__(self, path: str, writable: bool) -> None:
        self.path = path
        self.writable = writable
        self.connections = Connections(path, writable)
        self._value = self.connections.value
        self.query = self.connections.rows  # any read-only SQL, for tools and tests that look inside
        self.transaction = self.connections.transaction
        self.many_searches = False
        self._has_vector_table = False
        self._graph: VectorGraph | None = None
        self._graph_lock = threading.Lock()

    @classmethod
    def open(cls, path: str | os.PathLike[str], writable: bool = False, create: bool = False) -> SQLiteStore:
        """Open the index at ``path``.

        A reader (``writable=False``) needs an up-to-date index and writes nothing, not even the
        file's journal mode. A writer creates the file when ``create`` is set, and migrates it. A
        file that is not an index is refused, byte for byte unchanged.
        """
        path = os.fspath(path)
        if not os.path.exists(path) and not (writable and create):
            raise IndexNotFoundError(f"no index at {path}: build one first with `index build FOLDER`")
        if os.path.isdir(path):
            raise ConfigError(f"{path} is a folder, not an index file")
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):  # a typo in the location, not a storage failure
            raise ConfigError(f"cannot make index {path}: folder {folder} does not exist")
        store = cls(path, writable)
        try:
            store._verify()
        except BaseException:
            store.close()
            raise
        return store

    def _verify(self) -> None:
        """Refuse a database that is not ours before anything writes to it; migrate a writer's."""
        try:
            tables = {row[0] for row in self._rows("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except StorageError as error:
            if isinstance(error.__cause__, apsw.NotADBError):
                raise ConfigError(f"{self.path} is not an index: it is not a SQLite database") from error
            raise
        ours = migrations.RECORD_TABLE in tables  # what makes a database ours (see migrations)
        if tables and not ours:
            foreign = sorted(tables)[:5]
            raise ConfigError(
                f"{self.path} is not an index (a database with tables {', '.join(foreign)}): "
                "left unchanged; choose another location for the index"
            )
        if not ours and not self.writable:
            raise IndexNotFoundError(f"no index at {self.path}: build one first with `index build FOLDER`")
        if ours:
            migrations.refuse_newer(ENGINE, self._applied_versions(), self.path)
        if self.writable:
            self._write_mode()
            self.migrate()
            return
        missing = migrations.pending(ENGINE, self._applied_versions())
        if missing:
            raise IndexOutdatedError(
                f"index {self.path} was made by an older version of indexer "
                f"({len(missing)} schema changes to apply): run `index build` once to upgrade it"
            )

    def _write_mode(self) -> None:
        """WAL lets readers keep their snapshot while a build commits; set once, kept in the file."""
        self._rows("PRAGMA journal_mode = WAL")

    def close(self) -> None:
        """Close every thread's connection (call when no thread uses the store any more)."""
        self.connections.close()

    @property
    def db(self) -> apsw.Connection:
        """This thread's connection (for tools and tests that look inside the index)."""
        return self.connections.db

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- schema and transactions ----------------------------------------------------------------

    def migrate(self) -> list[str]:
        """Apply the numbered SQL files this index lacks (see :mod:`indexer.store.migrations`), on
        this thread's connection, given the function their SQL calls to rewrite a chunk's text for
        the keyword index (:func:`indexer.store.keywords.index_text`)."""
        # apsw's stubs type a function's arguments as any SQLite value; the migrations pass it text only
        self.db.create_scalar_function("keyword_text", keywords.index_text, 1, deterministic=True)  # type: ignore[arg-type]
        return migrations.migrate(ENGINE, _SQLiteMigrations(self))

    def _applied_versions(self) -> set[int]:
        return migrations.applied_versions(_SQLiteMigrations(self))

    def snapshot(self) -> AbstractContextManager[None]:
        """A read transaction (see :meth:`Connections.snapshot`). A reader first follows an index
        file deleted and built anew, or replaced, at its path: a server keeps answering from the
        index the path holds now, not from a deleted file."""
        if not self.writable and self.connections.reopen_if_replaced(self._is_current_index):
            self._has_vector_table = False
        return self.connections.snapshot()

    @staticmethod
    def _is_current_index(connection: apsw.Connection) -> bool:
        """Whether ``connection`` reads an index with every migration applied (one a build is still
        creating is not one yet)."""
        try:
            rows = connection.execute(f"SELECT version FROM {migrations.RECORD_TABLE}").fetchall()
        except apsw.Error:
            return False
        return not migrations.pending(ENGINE, {row[0] for row in rows if isinstance(row[0], int)})

    def writer_lock(self, root: str) -> FileWriterLock:
        """One writer per SQLite file, whatever the root: SQLite has one writer at a time anyway."""
        return FileWriterLock(self.path, self.running_build_holder)

    def expect_many_searches(self) -> None:
        """This process searches again and again: opening the vector graph may then take in more
        changes the index logged since it was saved (see :mod:`indexer.store.sqlite.vectors`)."""
        self.many_searches = True

    @property
    def graph(self) -> VectorGraph:
        """The vector graph beside this index (:class:`~indexer.store.sqlite.graph.VectorGraph`),
        made the first time a search or a write needs vectors."""
        with self._graph_lock:
            if self._graph is None:
                # the one late import: the graph loads numpy and usearch, which a keyword query
                # does without (tests/test_cli.py checks what a query imports)
                from indexer.store.sqlite.graph import VectorGraph

                self._graph = VectorGraph(self)
            return self._graph

    # -- metadata -------------------------------------------------------------------------------

    def create_vector_table(self, dimension: int) -> None:
        """Create the vec0 table once the first commit fixes the dimension (inside that transaction)."""
        records.check_dimension(dimension)
        # chunk_size 256 rather than vec0's 1024: each insert rewrites part of a chunk's blob, whose
        # cost grows with the blob (about 4x faster inserts at 768 dimensions, same scan time)
        self._rows(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {VECTOR_TABLE} "
            f"USING vec0(embedding float[{dimension}] distance_metric=cosine, chunk_size=256)"
        )
        self.set_meta({"dimension": str(dimension)})

    def has_vector_table(self) -> bool:
        if not self._has_vector_table:  # once there, it stays (asked for every file of a build)
            rows = self._rows("SELECT 1 FROM sqlite_master WHERE name = ?", (VECTOR_TABLE,))
            self._has_vector_table = bool(rows)
        return self._has_vector_table

    # -- files and chunks -----------------------------------------------------------------------

    def vectors_for_hashes(self, text_hashes: Iterable[str]) -> dict[str, bytes]:
        """Stored vectors (float32 blobs) of chunks whose text hash is one of ``text_hashes``."""
        wanted = list(dict.fromkeys(text_hashes))
        if not wanted or not self.has_vector_table():
            return {}
        rows = self._rows(
            f"SELECT c.text_hash, v.embedding FROM "
            "(SELECT text_hash, MIN(id) AS id FROM chunks "
            " WHERE text_hash IN (SELECT value FROM json_each(?)) GROUP BY text_hash) c "
            f"JOIN {VECTOR_TABLE} v ON v.rowid = c.id",
            (json.dumps(wanted),),
        )
        return dict(rows)

    def write_files(self, files: Sequence[NewFile]) -> None:
        """Replace each file's chunks and vectors with its new version (call inside a transaction).

        The new rows are written before the old ones are dropped, and the caller's transaction makes
        the swap atomic: after a crash each file is entirely old or entirely new. The chunks, their
        vectors and their keyword entries go in with one statement each for the whole group, not one
        per row: SQLite then runs the whole insert without coming back to Python, which a build's
        other threads need (each return costs a wait for the interpreter lock), and FTS5 merges its
        segments once per statement.
        """
        self.graph.update_during_build()
        rows: list[tuple[int, int, int, int, str, str, str, str, str, bool, bool, int]] = []
        vectors: list[bytes] = []
        old_ids: list[int] = []
        for new in files:
            file_id, replaced = self._upsert_file(new)
            old_ids.extend(replaced)
            for row, vector in new.chunk_rows(file_id):
                rows.append(row)
                vectors.append(vector)
        if rows:
            self._insert_chunks(rows, vectors)
        self._delete_chunks(old_ids)
        self._add_chunk_count(len(rows) - len(old_ids))

    def _insert_chunks(
        self,
        rows: list[tuple[int, int, int, int, str, str, str, str, str, bool, bool, int]],
        vectors: list[bytes],
    ) -> None:
        """Chunks get the ids after the largest in use (one writer at a time: the transaction holds the
        write lock); their vectors are cut from one blob by those ids."""
        first_id = self._value("SELECT COALESCE(MAX(id), 0) + 1 FROM chunks")
        self._rows(
            f"INSERT INTO chunks (id, {', '.join(records.CHUNK_COLUMNS)}) SELECT ? + key, "
            + ", ".join(f"value ->> {place}" for place in range(len(records.CHUNK_COLUMNS)))
            + " FROM json_each(?)",
            (first_id, orjson.dumps(rows).decode("utf-8")),
        )
        width = len(vectors[0])
        if any(len(vector) != width for vector in vectors):
            raise IndexerError("vectors of different lengths in one write")
        self._rows(
            f"INSERT INTO {VECTOR_TABLE} (rowid, embedding) "
            "SELECT id, substr(?, (id - ?) * ? + 1, ?) FROM chunks WHERE id >= ? ORDER BY id",
            (b"".join(vectors), first_id, width, width, first_id),
        )
        # the keyword index reads each heading and text as keywords.index_text rewrites it (a chunk
        # of source code with its names' parts); null where that is the text itself, not sent twice
        rewritten = [[_rewritten(text, code=row[10]) for text in row[4:6]] for row in rows]
        self._rows(
            "INSERT INTO chunks_fts (rowid, heading, text) "
            "SELECT c.id, coalesce(k.value ->> 0, c.heading), coalesce(k.value ->> 1, c.text) "
            "FROM json_each(?) AS k JOIN chunks AS c ON c.id = ? + k.key",
            (orjson.dumps(rewritten).decode("utf-8"), first_id),
        )
        self._forget_wordless_chunks(first_id)

    def _forget_wordless_chunks(self, first_id: int) -> None:
        """Take out of the keyword index the chunks from ``first_id`` on in which its tokenizer found
        no word (a size of zero in each column). A chunk of rules and symbols alone has nothing to
        find, and counted in BM25's statistics it would change every other chunk's score: as a row
        of the chunk count, and as a length of zero in the average, which makes every chunk that
        holds words look long (one such file of 2 MB took unrelated words' keyword evidence from 1
        to 0.02). A contentless-delete index forgets a row exactly, statistics included."""
        wordless = self._rows("SELECT id FROM chunks_fts_docsize WHERE id >= ? AND sz = x'0000'", (first_id,))
        if wordless:
            ids = json.dumps([row[0] for row in wordless])
            self._rows("DELETE FROM chunks_fts WHERE rowid IN (SELECT value FROM json_each(?))", (ids,))

    def _upsert_file(self, new: NewFile) -> tuple[int, list[int]]:
        """The file's row (updated or inserted) and the ids of the chunks its old version had."""
        file_id = self._value("SELECT id FROM files WHERE root = ? AND path = ?", (new.root, new.path))
        if file_id is None:
            self._rows(
                "INSERT INTO files (root, path, size, mtime_ns, content_hash, status, encoding) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (new.root, new.path, new.size, new.mtime_ns, new.content_hash, new.status, new.encoding),
            )
            return self.db.last_insert_rowid(), []
        old_ids = [row[0] for row in self._rows("SELECT id FROM chunks WHERE file_id = ?", (file_id,))]
        self._rows(
            "UPDATE files SET size = ?, mtime_ns = ?, content_hash = ?, status = ?, encoding = ? "
            "WHERE id = ?",
            (new.size, new.mtime_ns, new.content_hash, new.status, new.encoding, file_id),
        )
        return file_id, old_ids

    def _delete_chunks(self, chunk_ids: list[int]) -> None:
        """Drop chunks with their vectors and keyword entries (the keyword index forgets a row by
        its id: migrations/sqlite/0008_words_of_every_script.sql)."""
        if not chunk_ids:
            return
        ids = json.dumps(chunk_ids)
        self._rows("DELETE FROM chunks_fts WHERE rowid IN (SELECT value FROM json_each(?))", (ids,))
        if self.has_vector_table():
            # one rowid at a time: vec0 answers point deletes, not set deletes
            for chunk_id in chunk_ids:
                self._rows(f"DELETE FROM {VECTOR_TABLE} WHERE rowid = ?", (chunk_id,))
        self._rows("DELETE FROM chunks WHERE id IN (SELECT value FROM json_each(?))", (ids,))

    def _rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        return self.connections.rows(sql, params)

    def _execute(self, sql: str, params: Sequence[object] = ()) -> None:
        self.connections.rows(sql, params)

    def _execute_many(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        self.connections.many(sql, rows)

    def _drop_chunks(self, where: str, params: Sequence[object]) -> int:
        chunk_ids = [
            row[0]
            for row in self._rows(
                f"SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE {where}", params
            )
        ]
        self._delete_chunks(chunk_ids)
        return len(chunk_ids)

    # -- search ---------------------------------------------------------------------------------

    def chunk_filter(self, chunk_filter: ChunkFilter) -> AllowedChunks | None:
        """The restriction :meth:`nearest` and :meth:`keyword_matches` take: here, the chunk ids;
        None when every chunk passes (a filter that matches the whole index then costs nothing).

        Each kind of filter is one condition over a JSON list of its values, however many: an
        ``OR`` per value would exceed SQLite's expression depth (1,000) at about 500 paths. The
        conditions on files pick the files first, whose chunks are then looked up by file: tested on
        every chunk, they would cost a pass over every chunk of the index."""
        file_clauses: list[str] = []
        params: list[object] = []

        def any_of(condition: str, values: Sequence[object]) -> None:
            if values:
                file_clauses.append(f"EXISTS (SELECT 1 FROM json_each(?) WHERE {condition})")
                params.append(json.dumps(list(values)))

        any_of("f.path GLOB value", chunk_filter.folder_globs())
        any_of("lower(f.path) GLOB value", chunk_filter.type_globs)
        if chunk_filter.roots:
            file_clauses.append("f.root IN (SELECT value FROM json_each(?))")
            params.append(json.dumps(list(chunk_filter.roots)))
        clauses: list[str] = []
        if file_clauses:
            clauses.append(f"c.file_id IN (SELECT f.id FROM files f WHERE {' AND '.join(file_clauses)})")
        if chunk_filter.phrases:
            clauses.append("c.id IN (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?)")
            params.append(" AND ".join(fts_phrase(phrase) for phrase in chunk_filter.phrases))
        if chunk_filter.excluded:
            clauses.append("c.id NOT IN (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?)")
            params.append(" OR ".join(fts_phrase(phrase) for phrase in chunk_filter.excluded))
        where = " AND ".join(clauses) if clauses else "1"
        sql = f"SELECT c.id FROM chunks c WHERE {where}"
        allowed = [row[0] for row in self._rows(sql, params)]
        # searches run in a snapshot (Index.search), so the count and the ids are of one moment
        return None if len(allowed) == self.chunk_count() else AllowedChunks(allowed)

    def nearest(
        self, query: np.ndarray, k: int, allowed: AllowedChunks | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` chunks nearest to ``query`` by cosine distance, optionally among the ids
        ``allowed`` holds (the filter applies inside the search, so k hits come back when k exist):
        see :meth:`VectorGraph.nearest`."""
        allowed_ids = _chunk_ids(allowed)
        if k <= 0 or not self.has_vector_table() or (allowed_ids is not None and not allowed_ids):
            return []
        return self.graph.nearest(query, k, allowed_ids)

    def update_vector_graph(self, min_changes: int | None = None) -> None:
        """Save a new vector graph beside the index when enough changes call for it (see
        :meth:`VectorGraph.update`).

        Raises:
            StorageError: a file could not be written (the index keeps its graph as it was).
        """
        self.graph.update(min_changes)

    def vector_search_status(self) -> dict[str, Any]:
        """How searches find neighbours, for ``index status`` (see :meth:`VectorGraph.status`)."""
        return self.graph.status()

    def keyword_matches(
        self, words: Sequence[str], k: int, allowed: AllowedChunks | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` chunks that match any of ``words`` best, as (chunk id, bm25) where lower bm25 is
        better (FTS5's sign). Each word is quoted, so none is read as an FTS5 operator. A word in the
        heading counts :data:`HEADING_WEIGHT` times, as a title does in BM25F."""
        allowed_ids = _chunk_ids(allowed)
        fts_query = " OR ".join(fts_phrase(word) for word in words)
        if k <= 0 or not fts_query or (allowed_ids is not None and not allowed_ids):
            return []
        sql = "SELECT rowid, bm25(chunks_fts, ?, 1.0) AS rank FROM chunks_fts WHERE chunks_fts MATCH ?"
        params: list[object] = [HEADING_WEIGHT, fts_query]
        if allowed_ids is not None:
            # `+rowid`: a plain `rowid IN` is handed to FTS5, which then runs the MATCH once per
            # allowed id (6 s for 9,400 ids); this way the MATCH runs once and the ids filter it
            sql += " AND +rowid IN (SELECT value FROM json_each(?))"
            params.append(json.dumps(list(allowed_ids)))
        sql += " ORDER BY rank LIMIT ?"
        params.append(k)
        try:
            return [(int(chunk_id), float(bm25)) for chunk_id, bm25 in self.db.execute(sql, params)]
        except apsw.SQLError as error:
            raise ConfigError(f"keyword query {fts_query!r} is not valid: {error}") from error
        except apsw.Error as error:
            raise self.connections.failure(error) from error

    def keyword_chunk_count(self) -> int:
        """How many chunks the keyword index holds (those with a word): BM25's N, read from the row
        count FTS5 keeps for bm25() (the first varint of its averages record), not counted."""
        block = self._value("SELECT block FROM chunks_fts_data WHERE id = 1")
        return fts5_varint(block)[0] if block else 0

    def chunks_by_ids(self, chunk_ids: Sequence[int]) -> dict[int, StoredChunk]:
        sql = (
            f"SELECT {records.STORED_CHUNK_COLUMNS} FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE c.id IN (SELECT value FROM json_each(?))"
        )
        return records.stored_chunks(self._rows(sql, (json.dumps(list(chunk_ids)),)))

    # -- builds and status ----------------------------------------------------------------------

    def start_build(self, root: str, model: str, pid: int, host: str, started_at: float) -> int:
        with self.transaction():
            return super().start_build(root, model, pid, host, started_at)

    def finish_build(
        self, build_id: int, outcome: str, counts: BuildCounts, error: str | None, finished_at: float
    ) -> None:
        """Record how a build ended, and save the vector graph its changes call for. A build that
        went well is recorded so only once its graph is saved: one whose graph fails to be written
        is recorded as an error (or, when even that cannot be written, stays running, which reads as
        interrupted), never as ok. A failed build is recorded first, its graph saved after.

        Raises:
            StorageError: the graph could not be saved (what the build committed stays).
        """
        if outcome not in ("error", "interrupted"):
            try:
                self.update_vector_graph()
            except StorageError as failure:
                with suppress(IndexerError), self.transaction():
                    self._record_end(build_id, "error", counts, str(failure), finished_at)
                raise
        with self.transaction():
            self._record_end(build_id, outcome, counts, error, finished_at)
        if outcome in ("error", "interrupted"):
            self.update_vector_graph()

    def running_build_holder(self) -> str:
        """Who runs this index's newest unfinished build, for the message of a refused builder."""
        rows = self._rows(
            "SELECT pid, host, started_at FROM builds WHERE outcome = 'running' ORDER BY id DESC LIMIT 1"
        )
        return describe_holder(rows[0] if rows else None)

    def writer_active(self, root: str) -> bool:
        """Whether a build holds this index's writer lock now (any root: one writer per file)."""
        return is_locked_elsewhere(self.path)

    def size_bytes(self) -> int:
        """The index's size on disk: its file, the files SQLite keeps beside it, its vector graph
        (each as the name holds it: a link planted under one of them is not followed)."""
        paths = [self.path, *(self.path + suffix for suffix in COMPANION_SUFFIXES + graph_suffixes())]
        return sum(os.lstat(path).st_size for path in paths if os.path.lexists(path))

    def mark_interrupted_builds(self) -> None:
        """Builds still 'running' when the writer lock is free were killed: say so in their record."""
        if self._value("SELECT 1 FROM builds WHERE outcome = 'running' LIMIT 1") is None:
            return  # the usual case: no write transaction for nothing
        with self.transaction():
            self._rows("UPDATE builds SET outcome = 'interrupted' WHERE outcome = 'running'")

    def integrity_problems(self) -> list[str]:
        """What is wrong with the database, if anything: SQLite's own check plus orphan rows."""
        problems = [row[0] for row in self._rows("PRAGMA integrity_check") if row[0] != "ok"]
        problems += self._row_problems()
        if self.has_vector_table():
            missing = self._value(
                f"SELECT count(*) FROM chunks WHERE id NOT IN (SELECT rowid FROM {VECTOR_TABLE})"
            )
            orphans = self._value(
                f"SELECT count(*) FROM {VECTOR_TABLE} WHERE rowid NOT IN (SELECT id FROM chunks)"
            )
            if missing:
                problems.append(f"{missing} chunks without a vector")
            if orphans:
                problems.append(f"{orphans} vectors without a chunk")
        return problems

    # -- rebuilding -----------------------------------------------------------------------------

    def scratch_path(self) -> str:
        """Where a rebuild builds the new index before it is copied over this one."""
        return self.path + REBUILD_SUFFIX

    def own_files(self) -> list[str]:
        """Every file this index keeps on disk (a rebuild's scratch copy and a server's address
        included), for a watcher to ignore."""
        base = os.path.realpath(self.path)
        databases = (base, base + REBUILD_SUFFIX)
        return [
            lock_path(self.path),
            base + SERVE_SUFFIX,
            *(db + suffix for db in databases for suffix in ("", *COMPANION_SUFFIXES, *graph_suffixes())),
        ]

    def open_scratch(self) -> SQLiteStore:
        """A new, empty index beside this one (any leftover of a killed rebuild removed first)."""
        remove_database(self.scratch_path())
        return SQLiteStore.open(self.scratch_path(), writable=True, create=True)

    def replace_with(self, scratch: SQLiteStore) -> None:
        """Copy ``scratch`` over this index in one step (its readers see the old or the new one). Its
        vector graph moves first, into the slot this index's record does not name, and the scratch's
        record is made to name it there, so the copy brings a record of the file already in place:
        a reader meets the old graph with the old record or the new one with the new."""
        slot = self.graph.move_in(scratch)
        try:
            with self.db.backup("main", scratch.db, "main") as backup:
                while not backup.done:
                    backup.step(-1)
        except apsw.Error as error:
            raise self.connections.failure(error) from error
        self._has_vector_table = False
        self.graph.remove_unrecorded(slot)

    def discard_scratch(self) -> None:
        remove_database(self.scratch_path())


class _SQLiteMigrations:
    """How :func:`indexer.store.migrations.migrate` runs on a SQLite index (BEGIN IMMEDIATE: one
    process at a time)."""

    placeholder = "?"
    timestamp_type = "REAL"

    def __init__(self, store: SQLiteStore) -> None:
        self.execute = store._rows
        self.locked_transaction = store.transaction


def fts5_varint(blob: bytes, start: int = 0) -> tuple[int, int]:
    """The SQLite varint at ``start`` of ``blob`` (the integers of FTS5's records), and where it ends."""
    value = 0
    for place in range(start, start + 8):
        value = (value << 7) | (blob[place] & 0x7F)
        if blob[place] < 0x80:
            return value, place + 1
    return (value << 8) | blob[start + 8], start + 9


def _rewritten(text: str, code: bool) -> str | None:
    """``text`` as the keyword index reads it (:func:`indexer.store.keywords.index_text`), or None
    where that is ``text`` itself."""
    written = keywords.index_text(text, code)
    return None if written == text else written


def fts_phrase(term: str) -> str:
    """A term as FTS5 reads it literally: quoted (its words a phrase, no operator inside it), and
    a trailing ``*`` kept as a prefix search (``config*``); its runs of Chinese, Japanese or Korean
    letters as the index holds them (:func:`indexer.store.keywords.query_text`)."""
    term = keywords.query_text(term)
    prefix = term.endswith("*")
    words = term.rstrip("*") if prefix else term
    return '"' + words.replace('"', '""') + '"' + ("*" if prefix else "")


def describe_holder(row: Sequence[Any] | None) -> str:
    """``pid 4121 on build-02 since 09:14:03`` from a running build's (pid, host, started_at)."""
    if row is None or row[0] is None:
        return "another process"
    return f"pid {row[0]} on {row[1]} since {time.strftime('%H:%M:%S', time.localtime(row[2]))}"


def _chunk_ids(allowed: AllowedChunks | None) -> Sequence[int] | None:
    """The chunk ids in ``allowed``: what :meth:`SQLiteStore.chunk_filter` makes (or a caller's own
    list of ids), opaque to the searches that hand it back."""
    return cast("Sequence[int] | None", allowed)
