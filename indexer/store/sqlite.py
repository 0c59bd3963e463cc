"""The index in one SQLite file: sqlite-vec for vectors, FTS5 for keywords.

One driver for everything: apsw, which carries its own recent SQLite and can load extensions on
Pythons whose ``sqlite3`` cannot (many pyenv and macOS builds). Loading sqlite-vec through two SQLite
libraries in one process has crashed, so the standard ``sqlite3`` module is never used here.

Opening touches nothing it does not own: a file that is not an index (another tool's database, or
not a database at all) is refused before anything is written to it, and a reader (``index query``,
``index status``) never creates or migrates anything. How the file is reached (a connection per
thread, read-only or immutable readers, one-line storage errors) is
:mod:`indexer.store.sqlite_connections`; the vector graph searched beside it is
:mod:`indexer.store.sqlite_vectors`, imported (with numpy) by the methods that search or save vectors
only, so that a keyword query does without both.

All SQL except the schema lives in this module, always with ``?`` parameters. The class is long
because the store contract is: some forty short methods, one per question the pipeline, the search
and the API ask; splitting them would scatter one engine's SQL over several classes."""

from __future__ import annotations

import dataclasses
import errno
import itertools
import json
import os
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext, suppress
from typing import TYPE_CHECKING, Any

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
from indexer.store.locks import FileWriterLock, is_locked_elsewhere, lock_path
from indexer.store.records import BuildCounts, ChunkFilter, FileState, MetaValues, NewFile
from indexer.store.sqlite_connections import Connections, space_hint

if TYPE_CHECKING:
    import numpy as np

    from indexer.store.sqlite_side_files import DamagedFile
    from indexer.store.sqlite_vector_rows import RowsFile
    from indexer.store.sqlite_vectors import GraphRecord, VectorSearch

ENGINE = "sqlite"
VECTOR_TABLE = "chunk_vectors"
#: BM25 weight of a chunk's heading against its text: a name in a heading is what the section is
#: about. 3 lifted exact names on the CMake manual from 0.88 to 0.94 top-1 (bench/bench_ranking.py).
HEADING_WEIGHT = 3.0
#: The most neighbours sqlite-vec's KNN query returns at once; larger searches run in memory.
VEC0_MAX_K = 4096
#: Which log of chunk changes this index keeps (migrations/sqlite/0006_vector_log.sql), and the record
#: of the vector graph saved beside it (:class:`indexer.store.sqlite_vectors.GraphRecord`).
VECTOR_LOG_ID = "vector_log_id"
GRAPH_RECORD = "vector_graph"
#: The record of the float32 rows saved beside the graph
#: (:class:`indexer.store.sqlite_vector_rows.RowsRecord`); a key of its own, so a version that does
#: not write it leaves a record that no longer matches the graph, and the file goes unused.
ROWS_RECORD = "vector_rows"
#: The files SQLite keeps beside an index (the graph's are :func:`graph_suffixes`), and the scratch
#: copy a rebuild makes.
COMPANION_SUFFIXES = ("-wal", "-shm", "-journal")
REBUILD_SUFFIX = ".rebuild"


class SQLiteStore(MetaValues):
    """An index in a SQLite file. Use :meth:`open`; close with :meth:`close` or ``with``.

    Safe to share between threads: each thread gets its own connection (see the module docstring).

    Its length is the contract's (:class:`indexer.store.contract.IndexStore`): one short method per
    contract method, each holding this engine's SQL; what both engines decide alike lives in
    records, migrations and locks.
    """

    engine = ENGINE
    supports_rebuild = True

    def __init__(self, path: str, writable: bool) -> None:
        self.path = path
        self.writable = writable
        self.connections = Connections(path, writable)
        self._rows = self.connections.rows
        self._value = self.connections.value
        self.query = self.connections.rows  # any read-only SQL, for tools and tests that look inside
        self.transaction = self.connections.transaction
        self._many_searches = False
        self._search: VectorSearch | None = None
        self._search_lock = threading.Lock()
        self._has_vector_table = False
        self._refused_graph: tuple[str | None, ...] | None = None  # the key of a graph found damaged
        self._graph_checked: tuple[str, object] | None = None  # (its SHA-256, the identity it was checked at)
        self._warned: set[str] = set()

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
        self.db.create_scalar_function("keyword_text", keywords.index_text, 1, deterministic=True)
        return migrations.migrate(ENGINE, _SQLiteMigrations(self))

    def _applied_versions(self) -> set[int]:
        return migrations.applied_versions(_SQLiteMigrations(self))

    def applied_migrations(self) -> list[str]:
        return [row[0] for row in self._rows(f"SELECT name FROM {migrations.RECORD_TABLE} ORDER BY version")]

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
        return not migrations.pending(ENGINE, {row[0] for row in rows})

    def writer_lock(self, root: str) -> FileWriterLock:
        """One writer per SQLite file, whatever the root: SQLite has one writer at a time anyway."""
        return FileWriterLock(self.path, self.running_build_holder)

    def expect_many_searches(self) -> None:
        """This process searches again and again: opening the vector graph may then take in more
        changes the index logged since it was saved (see :mod:`indexer.store.sqlite_vectors`)."""
        self._many_searches = True

    # -- metadata -------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        return self._value("SELECT value FROM meta WHERE key = ?", (key,))

    def set_meta(self, values: dict[str, str]) -> None:
        """Write several metadata values (call inside a transaction)."""
        upsert = f"INSERT INTO meta (key, value) VALUES (?, ?) {records.UPSERT_META}"
        self.connections.many(upsert, list(values.items()))

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

    def file_states(self, root: str) -> dict[str, FileState]:
        return records.file_states(
            self._rows(f"SELECT {records.FILE_STATE_COLUMNS} FROM files WHERE root = ?", (root,))
        )

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
        from indexer.store import sqlite_vectors

        # changes piled up since the saved graph go into a new one first, as committed so far
        self.update_vector_graph(sqlite_vectors.FOLD_DURING_BUILD)
        rows: list[tuple[int, int, int, int, str, str, str, str, str, bool]] = []
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
        self._chunks_changed(len(rows) - len(old_ids), bool(rows or old_ids))

    def _insert_chunks(
        self, rows: list[tuple[int, int, int, int, str, str, str, str, str, bool]], vectors: list[bytes]
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
        # the keyword index reads each heading and text as keywords.index_text rewrites it; null
        # where that is the text itself (any text without Chinese, Japanese or Korean letters)
        rewritten = [
            [keywords.index_text(text) if keywords.has_runs(text) else None for text in row[4:6]]
            for row in rows
        ]
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

    def touch_file(self, file_id: int, size: int, mtime_ns: int) -> None:
        """Record new stat facts for a file whose content did not change (inside a transaction)."""
        self._rows("UPDATE files SET size = ?, mtime_ns = ? WHERE id = ?", (size, mtime_ns, file_id))

    def remove_file(self, file_id: int) -> None:
        """Drop a file with its chunks, vectors and keyword entries (inside a transaction)."""
        chunk_ids = [row[0] for row in self._rows("SELECT id FROM chunks WHERE file_id = ?", (file_id,))]
        self._delete_chunks(chunk_ids)
        self._rows("DELETE FROM files WHERE id = ?", (file_id,))
        self._chunks_changed(-len(chunk_ids), bool(chunk_ids))

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

    def _chunks_changed(self, added: int, changed: bool) -> None:
        """Keep the chunk count (the vector log's triggers record which chunks changed)."""
        if changed:
            self._rows(records.ADD_CHUNK_COUNT.replace("%s", "?"), (added,))

    # -- search ---------------------------------------------------------------------------------

    def chunk_filter(self, chunk_filter: ChunkFilter) -> list[int] | None:
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
        suffixes = [f"*.{extension.lower().lstrip('.')}" for extension in chunk_filter.extensions]
        any_of("lower(f.path) GLOB value", suffixes)
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
        return None if len(allowed) == self.chunk_count() else allowed

    def nearest(
        self, query: np.ndarray, k: int, allowed_ids: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` chunks nearest to ``query`` by cosine distance, optionally among ``allowed_ids``,
        through the vector graph saved beside the index and the changes logged since; without a graph
        that can be used, or for more than :data:`~indexer.store.sqlite_vectors.GRAPH_MAX_K`
        neighbours, by sqlite-vec's scan. The filter applies inside the search, so k hits come back
        when k exist."""
        if k <= 0 or not self.has_vector_table() or (allowed_ids is not None and not allowed_ids):
            return []
        # one snapshot (unless the caller holds one): the changes taken in and the rows re-scored agree
        from indexer.store import sqlite_vectors
        from indexer.store.sqlite_side_files import DamagedFile

        if k > sqlite_vectors.GRAPH_MAX_K:
            return self._scan(query, k, allowed_ids)
        with self._search_lock, nullcontext() if self.db.in_transaction else self.connections.snapshot():
            search = self._vector_search()
            if search is not None:
                try:
                    return search.nearest(query, k, allowed_ids, self._vectors_of)
                except DamagedFile as damage:  # the float32 copy changed under this process
                    search.rows = None
                    self._warn_rows(damage)
                    return search.nearest(query, k, allowed_ids, self._vectors_of)
        return self._scan(query, k, allowed_ids)

    def _vectors_of(self, chunk_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The float32 vectors of those ``chunk_ids`` that are in the index: (ids, rows)."""
        import numpy as np

        from indexer.store import sqlite_vectors

        rows = self._rows(
            f"SELECT v.rowid, v.embedding FROM json_each(?) AS j "
            f"JOIN {VECTOR_TABLE} AS v ON v.rowid = j.value",
            (json.dumps(chunk_ids.tolist()),),
        )
        ids = np.array([row[0] for row in rows], dtype=np.int64)
        return ids, sqlite_vectors.vectors_from_blobs([row[1] for row in rows], self.dimension)

    def _scan(self, query: np.ndarray, k: int, allowed_ids: Sequence[int] | None) -> list[tuple[int, float]]:
        """sqlite-vec's exact KNN (a scan of every vector), or for more neighbours than it returns at
        once, every vector read and scored here."""
        import numpy as np

        from indexer.store import sqlite_vectors

        if k > VEC0_MAX_K:
            try:
                rows = self.db.execute(f"SELECT rowid, embedding FROM {VECTOR_TABLE}")
                return sqlite_vectors.exact_nearest(rows, self.dimension, query, k, allowed_ids)
            except apsw.Error as error:
                raise self.connections.failure(error) from error
        blob = np.asarray(query, dtype=np.float32).tobytes()
        if allowed_ids is None:
            sql = f"SELECT rowid, distance FROM {VECTOR_TABLE} WHERE embedding MATCH ? AND k = ?"
            return self._rows(sql, (blob, k))
        sql = (
            f"SELECT rowid, distance FROM {VECTOR_TABLE} WHERE embedding MATCH ? AND k = ? "
            "AND rowid IN (SELECT value FROM json_each(?))"
        )
        return self._rows(sql, (blob, k, json.dumps(list(allowed_ids))))

    def _vector_search(self, limit: int | None = None, with_graph: bool = False) -> VectorSearch | None:
        """The saved graph with the changes logged since, up to the latest (call with the search
        lock held); None when no graph can be used: the recorded file is missing, damaged or not the
        one recorded (not tried again while the record stays), or more than ``limit`` changes would
        have to be read to catch up from it. Below the size where scoring every row is as fast
        (:func:`~indexer.store.sqlite_vectors.searched_exactly`), the graph's float32 copy is
        searched instead, unless ``with_graph`` (a build folds changes into the graph itself)."""
        from indexer.store import sqlite_vectors

        if limit is None:
            limit = sqlite_vectors.OPEN_LIMIT_MANY if self._many_searches else sqlite_vectors.OPEN_LIMIT_ONCE
        with nullcontext() if self.db.in_transaction else self.connections.snapshot():
            key = (self.get_meta(VECTOR_LOG_ID), self.get_meta(GRAPH_RECORD), self.get_meta(ROWS_RECORD))
            latest = self._log_position()
            search = self._search
            if search is None or search.key != key or (with_graph and search.exact is not None):
                self._search = None  # let the old graph go before the new one is opened
                refused = key == self._refused_graph
                search = self._search = None if refused else self._open_search(key, latest, limit, with_graph)
            if search is not None and search.position < latest:
                self._catch_up(search, latest)
        return search

    def _open_search(
        self, key: tuple[str | None, str | None, str | None], latest: int, limit: int, with_graph: bool
    ) -> VectorSearch | None:
        from indexer.store import sqlite_vectors
        from indexer.store.sqlite_side_files import DamagedFile

        record = sqlite_vectors.GraphRecord.from_json(key[1])
        if latest - (record.position if record else 0) > limit:
            return None
        if record is None:  # no graph saved yet: every change since the log began is read
            return sqlite_vectors.VectorSearch(None, 0, self.dimension, key)
        if not with_graph and record.readable and sqlite_vectors.searched_exactly(record.vectors):
            exact = self._exact_search(record, key)
            if exact is not None:
                return exact
        try:
            search = sqlite_vectors.VectorSearch.open(
                sqlite_vectors.graph_path(self.path, record.slot), record, self.dimension, key
            )
        except DamagedFile as damage:
            self._refused_graph = key
            self._warn(
                f"its vector graph {damage}: searching every vector with sqlite-vec instead, until "
                "`index build` saves the graph again"
            )
            return None
        if search is not None:
            try:
                search.rows = self._rows_file(record, key[2])
            except DamagedFile as damage:
                self._warn_rows(damage)
        return search

    def _exact_search(
        self, record: GraphRecord, key: tuple[str | None, str | None, str | None]
    ) -> VectorSearch | None:
        """A search over the float32 copy of the graph ``record`` names, read whole; None when that
        copy does not match the graph or is damaged (then the graph is walked)."""
        from indexer.store import sqlite_vectors
        from indexer.store.sqlite_side_files import DamagedFile

        try:
            rows = self._rows_file(record, key[2])
            if rows is None:
                return None
            return sqlite_vectors.VectorSearch.open_exact(rows, record.position, self.dimension, key)
        except DamagedFile as damage:
            self._warn_rows(damage)
            return None

    def _rows_file(self, record: GraphRecord, rows_record: str | None) -> RowsFile | None:
        """The float32 rows saved with the graph ``record`` names, when the rows record is of that
        graph (else None: the rows are read from sqlite-vec).

        Raises:
            DamagedFile: the recorded file is missing, changed since it was saved, or damaged.
        """
        from indexer.store import sqlite_vector_rows, sqlite_vectors

        return sqlite_vector_rows.RowsFile.open(
            sqlite_vector_rows.rows_path(sqlite_vectors.graph_path(self.path, record.slot)),
            sqlite_vector_rows.RowsRecord.from_json(rows_record),
            record.slot,
            record.position,
            record.vectors,
            self.dimension,
        )

    def _warn_rows(self, damage: DamagedFile) -> None:
        self._warn(
            f"the float32 copy of its vectors {damage}: re-scoring candidates from sqlite-vec instead, "
            "until `index build` writes the copy again"
        )

    def _warn(self, message: str) -> None:
        """Say ``message`` once in this process, through logging (``indexer.store``): with nothing
        set up, as in the CLI, it is one line on stderr; a server's log gets it too."""
        if message in self._warned:
            return
        self._warned.add(message)
        import logging  # here: a search that has nothing to say does not load it

        logging.getLogger(__name__).warning("warning: index %s: %s", self.path, message)

    def _log_position(self) -> int:
        """The position of the latest chunk change logged (positions only grow, see the migration)."""
        return self._value("SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'vector_log'), 0)")

    def _catch_up(self, search: VectorSearch, latest: int) -> None:
        """Give ``search`` the chunks logged after its position up to ``latest``, with the vectors of
        those that exist now."""
        import numpy as np

        changed = [
            row[0]
            for row in self._rows(
                "SELECT DISTINCT chunk_id FROM vector_log WHERE position > ? AND position <= ?",
                (search.position, latest),
            )
        ]
        changed_ids = np.array(changed, dtype=np.int64)
        search.catch_up(changed_ids, *self._vectors_of(changed_ids), latest)

    def update_vector_graph(self, min_changes: int | None = None) -> None:
        """Save a new vector graph beside the index when ``min_changes`` (default
        :data:`~indexer.store.sqlite_vectors.FOLD_AT_END`) or more chunk changes are logged since the
        saved one, or when the saved one cannot be used (missing, damaged, another version's): what a
        build does at its end (:meth:`finish_build`) and, with more changes, during it. Inside the
        caller's transaction (the state it folds is then the committed one), or in one of its own.

        The new file goes in the slot the record does not name, and the record follows it in the
        transaction: rolled back or killed, the index still names a complete file that it matches.
        The float32 rows are saved beside the graph the same way (a graph whose rows file is missing
        or does not match counts as not saved: it is written again).

        Raises:
            StorageError: a file could not be written (the index keeps its graph as it was).
        """
        from indexer.store import sqlite_vectors

        # not has_vector_table(): it remembers what it saw for every thread, and a table this
        # transaction creates is not there yet for the others
        if not self._rows("SELECT 1 FROM sqlite_master WHERE name = ?", (VECTOR_TABLE,)):
            return
        if min_changes is None:
            min_changes = sqlite_vectors.FOLD_AT_END
        with nullcontext() if self.db.in_transaction else self.transaction():
            record = sqlite_vectors.GraphRecord.from_json(self.get_meta(GRAPH_RECORD))
            latest = self._log_position()
            pending = latest - (record.position if record else 0)
            usable = self._checked_graph(record) if record is not None else None
            complete = usable is not None and self._rows_complete(usable)
            if pending < min_changes and (complete or record is None):
                return
            with self._search_lock:
                search = None
                if usable is not None and pending <= sqlite_vectors.OPEN_LIMIT_MANY:
                    search = self._vector_search(limit=sqlite_vectors.OPEN_LIMIT_MANY, with_graph=True)
                if search is None:  # a first graph, or changes too many to look up one by one
                    search = self._graph_from_rows(latest)
                self._save_graph(search, record)

    def _save_graph(self, search: VectorSearch, record: GraphRecord | None) -> None:
        """Fold ``search``'s changes into a new graph file with its rows, in the slot ``record``
        does not name, and record both (inside the caller's transaction)."""
        from indexer.store import sqlite_vector_rows, sqlite_vectors

        slot = next(slot for slot in sqlite_vectors.SLOTS if record is None or slot != record.slot)
        path = sqlite_vectors.graph_path(self.path, slot)
        try:
            # the rows first: they are read from the graph's rows file and changes before the fold
            rows_file = self._write_rows(sqlite_vector_rows.rows_path(path), search)
            search.fold()
            saved_file = search.save(path)
        except OSError as error:
            raise StorageError(
                f"index {self.path}: saving its vector graph failed ({describe_failure(error, path)}); "
                "searches stay complete without it, and the next build saves it again"
            ) from error
        saved = sqlite_vectors.GraphRecord(
            slot,
            search.position,
            search.graph_size,
            file=saved_file.file,
            sha256=saved_file.sha256,
            checked_ns=saved_file.checked_ns,
        )
        rows = sqlite_vector_rows.RowsRecord(slot, search.position, search.graph_size, rows_file)
        self.set_meta({GRAPH_RECORD: saved.to_json(), ROWS_RECORD: rows.to_json()})
        self._rows("DELETE FROM vector_log WHERE position <= ?", (saved.position,))
        search.key = (self.get_meta(VECTOR_LOG_ID), saved.to_json(), rows.to_json())
        search.rows = self._rows_file(saved, rows.to_json())
        # below the size where every row is scored, the next search reads the new copy instead
        self._search = None if sqlite_vectors.searched_exactly(search.graph_size) else search

    def _write_rows(self, path: str, search: VectorSearch) -> tuple[int, ...]:
        """Write the float32 rows of ``search`` at its position to ``path``: from its rows file and
        changes, or, without one or when that file turns out damaged, from sqlite-vec."""
        from indexer.store import sqlite_vector_rows
        from indexer.store.sqlite_side_files import DamagedFile

        blocks = search.row_blocks()
        if blocks is not None:
            try:
                return sqlite_vector_rows.write_rows(path, blocks, self.dimension, search.position)
            except DamagedFile as damage:
                self._warn_rows(damage)
        return sqlite_vector_rows.write_rows(path, self._unit_row_blocks(), self.dimension, search.position)

    def _checked_graph(self, record: GraphRecord) -> GraphRecord | None:
        """``record`` when the file it names holds the bytes it records (checked once for each
        identity the file has, in full only when that identity is not the recorded one); recorded
        anew when those bytes lie under another identity (the file was copied, moved or touched:
        readers then trust its identity again); None when the file cannot be used (inside the
        caller's transaction)."""
        from indexer.store import sqlite_side_files, sqlite_vectors

        if not record.readable:
            return None
        path = sqlite_vectors.graph_path(self.path, record.slot)
        if self._graph_checked == (record.sha256, sqlite_side_files.current_identity(path)):
            return record
        try:
            unchanged = sqlite_side_files.check_recorded(path, record)
        except sqlite_side_files.DamagedFile:
            return None
        if not unchanged and sqlite_side_files.current_identity(path) != record.file:
            try:
                file, checked_ns = sqlite_side_files.settle(path, record.sha256)
            except OSError:
                return None
            record = dataclasses.replace(record, file=file, checked_ns=checked_ns)
            self.set_meta({GRAPH_RECORD: record.to_json()})
        self._graph_checked = (record.sha256, sqlite_side_files.current_identity(path))
        return record

    def _rows_complete(self, record: GraphRecord) -> bool:
        """Whether the rows file of the graph ``record`` names is the one recorded for it."""
        from indexer.store import sqlite_vector_rows, sqlite_vectors
        from indexer.store.sqlite_side_files import DamagedFile

        try:
            return sqlite_vector_rows.RowsFile.check(
                sqlite_vector_rows.rows_path(sqlite_vectors.graph_path(self.path, record.slot)),
                sqlite_vector_rows.RowsRecord.from_json(self.get_meta(ROWS_RECORD)),
                record.slot,
                record.position,
                record.vectors,
                self.dimension or 0,
            )
        except DamagedFile:
            return False

    def _unit_row_blocks(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Every vector in the index as (chunk ids, unit float32 rows) blocks, read from sqlite-vec
        (inside the writer's transaction): for a rows file when none can be started from."""
        import numpy as np

        from indexer.store import sqlite_vectors

        try:
            rows = self.db.execute(f"SELECT rowid, embedding FROM {VECTOR_TABLE}")
            while batch := list(itertools.islice(rows, sqlite_vectors.LOAD_ROWS)):
                ids = np.array([row[0] for row in batch], dtype=np.int64)
                vectors = sqlite_vectors.vectors_from_blobs([row[1] for row in batch], self.dimension)
                yield ids, sqlite_vectors.unit_rows(vectors)
        except apsw.Error as error:
            raise self.connections.failure(error) from error

    def _graph_from_rows(self, latest: int) -> VectorSearch:
        """A new graph of every vector in the index (at log position ``latest``, inside the writer's
        transaction): when no saved graph can be used or caught up."""
        import numpy as np

        from indexer.store import sqlite_vectors

        self._search = None
        search = sqlite_vectors.VectorSearch(None, latest, self.dimension)
        try:
            rows = self.db.execute(f"SELECT rowid, embedding FROM {VECTOR_TABLE}")
            while batch := list(itertools.islice(rows, sqlite_vectors.LOAD_ROWS)):
                ids = np.array([row[0] for row in batch], dtype=np.int64)
                search.add_to_graph(
                    ids, sqlite_vectors.vectors_from_blobs([row[1] for row in batch], self.dimension)
                )
        except apsw.Error as error:
            raise self.connections.failure(error) from error
        return search

    def vector_search_status(self) -> dict[str, Any]:
        """How searches find neighbours, for ``index status``: the graph file, how many vectors it
        holds and how many changes it lacks, and the memory a searching process holds for it (the
        graph file's bytes, read into its memory; the changes scored beside it; the ids of the
        float32 copy). ``rows_file_bytes`` is that copy of the graph's vectors (0 when none
        matches): a search reads its candidates' rows from it, through the page cache the
        processes share, so it is counted apart, not in ``memory_bytes``. ``problems`` says what is
        wrong with either file (damaged, changed since it was saved, missing), which the next
        build mends."""
        from indexer.store import sqlite_side_files, sqlite_vectors

        record = sqlite_vectors.GraphRecord.from_json(self.get_meta(GRAPH_RECORD))
        pending = self._log_position() - (record.position if record else 0)
        path = sqlite_vectors.graph_path(self.path, record.slot) if record else None
        usable, unchanged, rows, graph_problem, rows_problem = False, True, None, None, None
        if record is not None and path is not None and record.readable:
            try:
                unchanged = sqlite_side_files.check_recorded(path, record)
                usable = True
                rows = self._rows_file(record, self.get_meta(ROWS_RECORD))
            except sqlite_side_files.DamagedFile as damage:
                if usable:
                    rows_problem = f"its float32 copy {damage}"
                else:
                    graph_problem = f"its graph {damage}"
        file_bytes = record.file[0] if usable and record is not None else 0
        exact = (
            usable
            and rows is not None
            and record is not None
            and sqlite_vectors.searched_exactly(record.vectors)
        )
        if exact:
            structure = (
                "float32 copy of the vectors, scored exactly (the graph beside it is kept for a larger index)"
            )
        elif usable:
            structure = "hnsw graph (usearch, int8)"
            if not unchanged:  # its bytes are the recorded ones, under another identity
                structure += " (moved or touched since it was saved: checked in full until the next build)"
            if rows_problem:
                structure += f"; {rows_problem}: re-scoring from sqlite-vec until the next `index build`"
        elif graph_problem:
            structure = f"none: {graph_problem}; sqlite-vec scans every vector until the next `index build`"
        elif record is None and pending <= sqlite_vectors.OPEN_LIMIT_ONCE:
            structure = "none yet: the vectors are few and scored exactly in memory"
        else:
            structure = "none: sqlite-vec scans every vector until `index build` saves a graph"
        return {
            "structure": structure,
            "file": path if usable else None,
            "file_bytes": file_bytes,
            "vectors": record.vectors if usable and record is not None else 0,
            "rows_file_bytes": 0 if rows is None else rows.size_bytes(),
            "pending_changes": pending,
            "memory_bytes": (rows.size_bytes() if exact and rows is not None else file_bytes)
            + pending * 4 * (self.dimension or 0)
            + (0 if rows is None else rows.ids_bytes()),
            "problems": [problem for problem in (graph_problem, rows_problem) if problem],
        }

    def keyword_matches(
        self, words: Sequence[str], k: int, allowed_ids: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` chunks that match any of ``words`` best, as (chunk id, bm25) where lower bm25 is
        better (FTS5's sign). Each word is quoted, so none is read as an FTS5 operator. A word in the
        heading counts :data:`HEADING_WEIGHT` times, as a title does in BM25F."""
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
            return self.db.execute(sql, params).fetchall()
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

    def file_chunks(self, path: str, root: str | None = None) -> list[StoredChunk]:
        """Every chunk of the file at ``path`` (under ``root``, else under any root), in file order."""
        sql = (
            f"SELECT {records.STORED_CHUNK_COLUMNS} FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE f.path = ? AND (? IS NULL OR f.root = ?) ORDER BY f.root, c.seq"
        )
        return list(records.stored_chunks(self._rows(sql, (path, root, root))).values())

    # -- builds and status ----------------------------------------------------------------------

    def start_build(self, root: str, model: str, pid: int, host: str, started_at: float) -> int:
        with self.transaction():
            return self._value(
                "INSERT INTO builds (root, started_at, seen_at, model, pid, host) "
                "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                (root, started_at, started_at, model, pid, host),
            )

    def add_build_counts(self, build_id: int, counts: BuildCounts, seen_at: float) -> None:
        """Add what a group of files did to its build's record (inside that group's transaction), so
        the record says what is committed, and when the build was last seen alive, even when it dies
        before it ends."""
        added = BuildCounts.assignments("?", add=True)
        self._rows(
            f"UPDATE builds SET {added}, seen_at = ? WHERE id = ?", (*counts.values(), seen_at, build_id)
        )

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
                with suppress(IndexerError):
                    self._record_end(build_id, "error", counts, str(failure), finished_at)
                raise
        self._record_end(build_id, outcome, counts, error, finished_at)
        if outcome in ("error", "interrupted"):
            self.update_vector_graph()

    def _record_end(
        self, build_id: int, outcome: str, counts: BuildCounts, error: str | None, finished_at: float
    ) -> None:
        counted = BuildCounts.assignments("?")
        sql = (
            f"UPDATE builds SET finished_at = ?, seen_at = ?, outcome = ?, error = ?, {counted} WHERE id = ?"
        )
        with self.transaction():
            self._rows(sql, (finished_at, finished_at, outcome, error, *counts.values(), build_id))

    def recent_builds(self, limit: int = 5) -> list[dict[str, object]]:
        sql = f"SELECT {', '.join(records.BUILD_FIELDS)} FROM builds ORDER BY id DESC LIMIT ?"
        return records.build_records(self._rows(sql, (limit,)))

    def running_build_holder(self) -> str:
        """Who runs this index's newest unfinished build, for the message of a refused builder."""
        rows = self._rows(
            "SELECT pid, host, started_at FROM builds WHERE outcome = 'running' ORDER BY id DESC LIMIT 1"
        )
        return describe_holder(rows[0] if rows else None)

    def roots(self) -> list[str]:
        return [row[0] for row in self._rows("SELECT DISTINCT root FROM files ORDER BY root")]

    def chunk_count(self) -> int:
        """How many chunks the index holds (kept in ``meta`` by every write)."""
        return int(self.get_meta(records.CHUNK_COUNT) or 0)

    def root_counts(self) -> list[dict[str, object]]:
        return records.root_counts(self._rows(records.ROOT_COUNTS_SQL))

    def remove_root(self, root: str) -> int:
        """Drop a root's files with their chunks, vectors and keyword entries (inside a transaction);
        how many indexed files it held."""
        files = self._rows("SELECT id, status FROM files WHERE root = ?", (root,))
        chunk_ids = [
            row[0]
            for row in self._rows(
                "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.root = ?", (root,)
            )
        ]
        self._delete_chunks(chunk_ids)
        self._rows("DELETE FROM files WHERE root = ?", (root,))
        self._chunks_changed(-len(chunk_ids), bool(chunk_ids))
        return sum(status == "indexed" for _, status in files)

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

    def is_empty(self) -> bool:
        """No chunk at all (one row looked at, unlike ``counts``, which scans every row)."""
        return self._value("SELECT 1 FROM chunks LIMIT 1") is None

    def counts(self) -> dict[str, int]:
        files = self._value("SELECT count(*) FROM files WHERE status = 'indexed'")
        chunks = self._value("SELECT count(*) FROM chunks")
        return {"files": files, "chunks": chunks}

    def integrity_problems(self) -> list[str]:
        """What is wrong with the database, if anything: SQLite's own check plus orphan rows."""
        problems = [row[0] for row in self._rows("PRAGMA integrity_check") if row[0] != "ok"]
        problems += records.count_problems(self.chunk_count(), self._value("SELECT count(*) FROM chunks"))
        orphan_chunks = self._value("SELECT count(*) FROM chunks WHERE file_id NOT IN (SELECT id FROM files)")
        if orphan_chunks:
            problems.append(f"{orphan_chunks} chunks without a file")
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
        from indexer.store import sqlite_vector_rows, sqlite_vectors

        record = sqlite_vectors.GraphRecord.from_json(scratch.get_meta(GRAPH_RECORD))
        current = sqlite_vectors.GraphRecord.from_json(self.get_meta(GRAPH_RECORD))
        slot = next(slot for slot in sqlite_vectors.SLOTS if current is None or slot != current.slot)
        moved = record is not None and record.readable
        if moved:
            assert record is not None
            try:
                self._move_graph_in(scratch, record, slot)
            except OSError as error:
                raise StorageError(
                    f"index {self.path}: moving its new vector graph beside it failed "
                    f"({describe_failure(error, self.path)})"
                ) from error
        try:
            with self.db.backup("main", scratch.db, "main") as backup:
                while not backup.done:
                    backup.step(-1)
        except apsw.Error as error:
            raise self.connections.failure(error) from error
        self._has_vector_table = False
        for old in sqlite_vectors.SLOTS:  # the old index's graphs: no record names them any more
            if not moved or old != slot:
                graph = sqlite_vectors.graph_path(self.path, old)
                for path in (graph, sqlite_vector_rows.rows_path(graph)):
                    with suppress(OSError):  # an open file cannot be removed on Windows: left for later
                        os.remove(path)

    def _move_graph_in(self, scratch: SQLiteStore, record: GraphRecord, slot: str) -> None:
        """Move the graph (and its rows) ``record`` names beside ``scratch`` to ``slot`` beside this
        index, and record them there in ``scratch``: a rename changes a file's change time, so the
        moved files are recorded anew (the graph once its bytes are checked again)."""
        from indexer.store import sqlite_side_files, sqlite_vector_rows, sqlite_vectors

        source = sqlite_vectors.graph_path(scratch.path, record.slot)
        target = sqlite_vectors.graph_path(self.path, slot)
        os.replace(source, target)
        file, checked_ns = sqlite_side_files.settle(target, record.sha256)
        moved = dataclasses.replace(record, slot=slot, file=file, checked_ns=checked_ns)
        values = {GRAPH_RECORD: moved.to_json()}
        rows = sqlite_vector_rows.RowsRecord.from_json(scratch.get_meta(ROWS_RECORD))
        if rows is not None and rows.slot == record.slot:
            with suppress(FileNotFoundError):  # without its rows the graph re-scores on sqlite-vec's
                os.replace(sqlite_vector_rows.rows_path(source), sqlite_vector_rows.rows_path(target))
                rows_file = sqlite_side_files.identity(os.lstat(sqlite_vector_rows.rows_path(target)))
                values[ROWS_RECORD] = dataclasses.replace(rows, slot=slot, file=rows_file).to_json()
        with scratch.transaction():
            scratch.set_meta(values)

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


def graph_suffixes() -> tuple[str, ...]:
    """The files of the vector graph beside an index: its two slots with their float32 rows, and
    their files being written."""
    from indexer.store import sqlite_vector_rows, sqlite_vectors  # numpy: see SQLiteStore.nearest

    return tuple(
        name + tmp
        for slot in sqlite_vectors.SLOTS
        for name in (
            sqlite_vectors.graph_path("", slot),
            sqlite_vector_rows.rows_path(sqlite_vectors.graph_path("", slot)),
        )
        for tmp in ("", ".tmp")
    )


def describe_failure(error: OSError, path: str) -> str:
    """An error of the file system in a few words, with where there is room for the index when it
    is about room (disk full, file size limit, quota)."""
    reason = error.strerror or str(error)
    if error.filename:
        reason = f"{reason}: {error.filename}"
    if error.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
        reason = f"{reason}; {space_hint(path)}"
    return reason


def remove_database(path: str) -> None:
    """Delete a SQLite file with the files SQLite and its vector graph keep beside it."""
    for suffix in ("", *COMPANION_SUFFIXES, *graph_suffixes()):
        try:
            os.remove(path + suffix)
        except FileNotFoundError:
            continue
