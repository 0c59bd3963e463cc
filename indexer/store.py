"""Stage 5: the SQLite store (one file, sqlite-vec for vectors, FTS5 for keywords).

One driver for everything: apsw, which carries its own recent SQLite and can load extensions on
Pythons whose ``sqlite3`` cannot (many pyenv and macOS builds). Loading sqlite-vec through two SQLite
libraries in one process has crashed, so the standard ``sqlite3`` module is never used here.

All SQL except the schema lives in this module, always with ``?`` parameters.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import apsw
import numpy as np
import orjson
import sqlite_vec

from indexer.errors import ConfigError, IndexerError, IndexLockedError
from indexer.vector_search import VectorMatrix

if TYPE_CHECKING:
    from indexer.chunking import Chunk

BUSY_TIMEOUT_MS = 10_000
VECTOR_TABLE = "chunk_vectors"
#: BM25 weight of a chunk's heading against its text: a name in a heading is what the section is
#: about. 3 lifted exact names on the CMake manual from 0.88 to 0.94 top-1 (bench/bench_ranking.py).
HEADING_WEIGHT = 3.0


def migrations_folder() -> Path:
    """The numbered SQL files: inside the installed package, or beside it in a source checkout."""
    packaged = Path(__file__).parent / "migrations" / "sqlite"
    if packaged.is_dir():
        return packaged
    return Path(__file__).parent.parent / "migrations" / "sqlite"


class FileState(NamedTuple):
    """What the index knows of a file, to decide whether it changed (a tuple: one per file per run)."""

    id: int
    size: int
    mtime_ns: int
    content_hash: str
    status: str


@dataclass(frozen=True)
class StoredChunk:
    """A chunk as the search reads it back."""

    id: int
    root: str
    path: str
    start_line: int
    end_line: int
    heading: str
    text: str


@dataclass(frozen=True)
class NewFile:
    """A file's new version, ready to replace its old one in one transaction."""

    root: str
    path: str
    size: int
    mtime_ns: int
    content_hash: str
    status: str
    chunks: Sequence[Chunk]
    text_hashes: Sequence[str]
    vectors: Sequence[bytes]  # float32 blobs, one per chunk


class MetaValues:
    """What both stores derive from their ``meta`` table, in one place: a store supplies ``get_meta``."""

    def get_meta(self, key: str) -> str | None:
        raise NotImplementedError

    def get_json(self, key: str) -> dict | None:
        value = self.get_meta(key)
        return json.loads(value) if value is not None else None

    @property
    def dimension(self) -> int | None:
        value = self.get_meta("dimension")
        return int(value) if value is not None else None


class Store(MetaValues):
    """An open index database. Use :meth:`open`; close with :meth:`close` or ``with``."""

    def __init__(self, path: str, connection: apsw.Connection) -> None:
        self.path = path
        self.db = connection
        #: search vectors in memory (see :mod:`indexer.vector_search`) instead of scanning ``vec0``
        self.vectors_in_memory = False
        self._matrix: VectorMatrix | None = None
        self._matrix_version: tuple[int, int] | None = None
        self._own_commits = 0
        self._has_vector_table = False

    @classmethod
    def open(cls, path: str | os.PathLike[str], create: bool = True) -> Store:
        """Open (and migrate) the index at ``path``; create it when ``create`` is true."""
        path = os.fspath(path)
        if not create and not os.path.exists(path):
            raise ConfigError(f"no index at {path}: build one first with `index build FOLDER`")
        flags = apsw.SQLITE_OPEN_READWRITE | (apsw.SQLITE_OPEN_CREATE if create else 0)
        try:
            connection = apsw.Connection(path, flags=flags)
            connection.enable_load_extension(True)
            connection.load_extension(sqlite_vec.loadable_path())
            connection.enable_load_extension(False)
            connection.set_busy_timeout(BUSY_TIMEOUT_MS)
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
        except apsw.Error as error:
            raise ConfigError(f"cannot open index {path}: {error}") from error
        store = cls(path, connection)
        store.migrate()
        return store

    def reopen(self) -> Store:
        """A second connection to the same index, for another thread: an apsw connection serves one
        thread at a time, and a build writes on one connection while it reads on the other."""
        return Store.open(self.path, create=False)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- schema -------------------------------------------------------------------------------

    def migrate(self) -> list[str]:
        """Apply the numbered SQL files not yet recorded, in order, each in its own transaction."""
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations "
            "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"
        )
        applied = {row[0] for row in self.db.execute("SELECT version FROM schema_migrations")}
        done = []
        for file in sorted(migrations_folder().glob("[0-9]*.sql")):
            version = int(file.name.split("_", 1)[0])
            if version in applied:
                continue
            with self.transaction():
                if self.db.execute(
                    "SELECT 1 FROM schema_migrations WHERE version = ?", (version,)
                ).fetchall():
                    continue  # another process applied it while we waited for the lock
                self.db.execute(file.read_text(encoding="utf-8"))
                self.db.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (version, file.name, time.time()),
                )
            done.append(file.name)
        return done

    def applied_migrations(self) -> list[str]:
        return [row[0] for row in self.db.execute("SELECT name FROM schema_migrations ORDER BY version")]

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction (BEGIN IMMEDIATE: take the write lock now, not halfway through)."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        try:
            self.db.execute("COMMIT")
        except apsw.Error:
            if not self.db.in_transaction:
                raise
            self.db.execute("ROLLBACK")
            raise
        self._own_commits += 1

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """A read transaction: every query inside sees the same committed state, even while a build
        commits files (WAL lets readers keep their snapshot without blocking the writer)."""
        self.db.execute("BEGIN")
        try:
            yield
        finally:
            self.db.execute("COMMIT")

    # -- metadata -----------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        rows = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchall()
        return rows[0][0] if rows else None

    def set_meta(self, values: dict[str, str]) -> None:
        """Write several metadata values (call inside a transaction)."""
        for key, value in values.items():
            self.db.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def create_vector_table(self, dimension: int) -> None:
        """Create the vec0 table once the first batch has fixed the dimension (inside a transaction)."""
        if not isinstance(dimension, int) or dimension <= 0:
            raise IndexerError(f"invalid vector dimension {dimension!r}")
        # chunk_size 256 rather than vec0's 1024: each insert rewrites part of a chunk's blob, whose
        # cost grows with the blob (about 4x faster inserts at 768 dimensions, same scan time)
        self.db.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {VECTOR_TABLE} "
            f"USING vec0(embedding float[{dimension}] distance_metric=cosine, chunk_size=256)"
        )
        self.set_meta({"dimension": str(dimension)})

    def has_vector_table(self) -> bool:
        if not self._has_vector_table:  # once there, it stays (asked for every file of a build)
            rows = self.db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (VECTOR_TABLE,)).fetchall()
            self._has_vector_table = bool(rows)
        return self._has_vector_table

    # -- files and chunks ---------------------------------------------------------------------

    def file_states(self, root: str) -> dict[str, FileState]:
        rows = self.db.execute(
            "SELECT path, id, size, mtime_ns, content_hash, status FROM files WHERE root = ?", (root,)
        )
        return {row[0]: FileState._make(row[1:]) for row in rows}

    def vectors_for_hashes(self, text_hashes: Iterable[str]) -> dict[str, bytes]:
        """Stored vectors (float32 blobs) of chunks whose text hash is one of ``text_hashes``."""
        wanted = list(dict.fromkeys(text_hashes))
        found: dict[str, bytes] = {}
        if not wanted or not self.has_vector_table():
            return found
        rows = self.db.execute(
            "SELECT c.text_hash, MIN(c.id) FROM chunks c "
            "WHERE c.text_hash IN (SELECT value FROM json_each(?)) GROUP BY c.text_hash",
            (json.dumps(wanted),),
        ).fetchall()
        for text_hash, chunk_id in rows:
            blob = self.db.execute(
                f"SELECT embedding FROM {VECTOR_TABLE} WHERE rowid = ?", (chunk_id,)
            ).fetchall()
            if blob:
                found[text_hash] = blob[0][0]
        return found

    def write_files(self, files: Sequence[NewFile]) -> None:
        """Replace each file's chunks and vectors with its new version (call inside a transaction).

        The new rows are written before the old ones are dropped, and the caller's transaction makes
        the swap atomic: after a crash each file is entirely old or entirely new. The chunks, their
        vectors and their keyword entries go in with one statement each for the whole group, not one
        per row: SQLite then runs the whole insert without coming back to Python, which a build's
        other threads need (each return costs a wait for the interpreter lock), and FTS5 merges its
        segments once per statement.
        """
        rows: list[tuple[int, int, int, int, str, str, str]] = []
        vectors: list[bytes] = []
        old_ids: list[int] = []
        for new in files:
            file_id, replaced = self._upsert_file(new)
            old_ids.extend(replaced)
            for seq, (chunk, text_hash, vector) in enumerate(
                zip(new.chunks, new.text_hashes, new.vectors, strict=True)
            ):
                rows.append(
                    (file_id, seq, chunk.start_line, chunk.end_line, chunk.heading, chunk.text, text_hash)
                )
                vectors.append(vector)
        if rows:
            self._insert_chunks(rows, vectors)
        self._delete_chunks(old_ids)

    def _insert_chunks(
        self, rows: list[tuple[int, int, int, int, str, str, str]], vectors: list[bytes]
    ) -> None:
        """Chunks get the ids after the largest in use (one writer at a time: the transaction holds the
        write lock); their vectors are cut from one blob by those ids."""
        first_id = self.db.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM chunks").fetchall()[0][0]
        self.db.execute(
            "INSERT INTO chunks (id, file_id, seq, start_line, end_line, heading, text, text_hash) "
            "SELECT ? + key, value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, "
            "value ->> 6 FROM json_each(?)",
            (first_id, orjson.dumps(rows).decode("utf-8")),
        )
        width = len(vectors[0])
        if any(len(vector) != width for vector in vectors):
            raise IndexerError("vectors of different lengths in one write")
        self.db.execute(
            f"INSERT INTO {VECTOR_TABLE} (rowid, embedding) "
            "SELECT id, substr(?, (id - ?) * ? + 1, ?) FROM chunks WHERE id >= ? ORDER BY id",
            (b"".join(vectors), first_id, width, width, first_id),
        )
        self.db.execute(
            "INSERT INTO chunks_fts (rowid, heading, text) "
            "SELECT id, heading, text FROM chunks WHERE id >= ?",
            (first_id,),
        )

    def _upsert_file(self, new: NewFile) -> tuple[int, list[int]]:
        """The file's row (updated or inserted) and the ids of the chunks its old version had."""
        existing = self.db.execute(
            "SELECT id FROM files WHERE root = ? AND path = ?", (new.root, new.path)
        ).fetchall()
        if not existing:
            self.db.execute(
                "INSERT INTO files (root, path, size, mtime_ns, content_hash, status) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (new.root, new.path, new.size, new.mtime_ns, new.content_hash, new.status),
            )
            return self.db.last_insert_rowid(), []
        file_id = existing[0][0]
        old_ids = [row[0] for row in self.db.execute("SELECT id FROM chunks WHERE file_id = ?", (file_id,))]
        self.db.execute(
            "UPDATE files SET size = ?, mtime_ns = ?, content_hash = ?, status = ? WHERE id = ?",
            (new.size, new.mtime_ns, new.content_hash, new.status, file_id),
        )
        return file_id, old_ids

    def touch_file(self, file_id: int, size: int, mtime_ns: int) -> None:
        """Record new stat facts for a file whose content did not change (inside a transaction)."""
        self.db.execute("UPDATE files SET size = ?, mtime_ns = ? WHERE id = ?", (size, mtime_ns, file_id))

    def remove_file(self, file_id: int) -> None:
        """Drop a file with its chunks, vectors and keyword entries (inside a transaction)."""
        chunk_ids = [row[0] for row in self.db.execute("SELECT id FROM chunks WHERE file_id = ?", (file_id,))]
        self._delete_chunks(chunk_ids)
        self.db.execute("DELETE FROM files WHERE id = ?", (file_id,))

    def _delete_chunks(self, chunk_ids: list[int]) -> None:
        """Drop chunks with their vectors and keyword entries (FTS5 needs the old text to forget it)."""
        if not chunk_ids:
            return
        ids = json.dumps(chunk_ids)
        self.db.execute(
            "INSERT INTO chunks_fts (chunks_fts, rowid, heading, text) "
            "SELECT 'delete', id, heading, text FROM chunks WHERE id IN (SELECT value FROM json_each(?))",
            (ids,),
        )
        if self.has_vector_table():
            # one rowid at a time: vec0 answers point deletes, not set deletes
            for chunk_id in chunk_ids:
                self.db.execute(f"DELETE FROM {VECTOR_TABLE} WHERE rowid = ?", (chunk_id,))
        self.db.execute("DELETE FROM chunks WHERE id IN (SELECT value FROM json_each(?))", (ids,))

    # -- search -------------------------------------------------------------------------------

    def nearest(
        self, query: np.ndarray, k: int, allowed_ids: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` chunks nearest to ``query`` by cosine distance, optionally among ``allowed_ids``.

        The filter is applied inside the KNN scan (``rowid IN``), so k hits come back when k exist.
        """
        if k <= 0 or not self.has_vector_table() or (allowed_ids is not None and not allowed_ids):
            return []
        if self.vectors_in_memory:
            return self._vector_matrix().nearest(query, k, allowed_ids)
        blob = np.asarray(query, dtype=np.float32).tobytes()
        if allowed_ids is None:
            sql = f"SELECT rowid, distance FROM {VECTOR_TABLE} WHERE embedding MATCH ? AND k = ?"
            rows = self.db.execute(sql, (blob, k))
        else:
            sql = (
                f"SELECT rowid, distance FROM {VECTOR_TABLE} WHERE embedding MATCH ? AND k = ? "
                "AND rowid IN (SELECT value FROM json_each(?))"
            )
            rows = self.db.execute(sql, (blob, k, json.dumps(list(allowed_ids))))
        return [(row[0], row[1]) for row in rows]

    def _vector_matrix(self) -> VectorMatrix:
        """All vectors in memory, reloaded when any connection has committed since the last load."""
        version = (self.db.execute("PRAGMA data_version").fetchall()[0][0], self._own_commits)
        if self._matrix is None or version != self._matrix_version:
            rows = self.db.execute(f"SELECT rowid, embedding FROM {VECTOR_TABLE}").fetchall()
            ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
            vectors = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float32).reshape(len(rows), -1)
            self._matrix, self._matrix_version = VectorMatrix(ids, vectors), version
        return self._matrix

    def keyword_matches(
        self, words: Sequence[str], k: int, allowed_ids: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` chunks that match any of ``words`` best, as (chunk id, bm25) where lower bm25 is
        better (FTS5's sign). Each word is quoted, so none is read as an FTS5 operator. A word in the
        heading counts :data:`HEADING_WEIGHT` times, as a title does in BM25F."""
        fts_query = " OR ".join(f'"{word}"' for word in words)
        if k <= 0 or not fts_query or (allowed_ids is not None and not allowed_ids):
            return []
        sql = "SELECT rowid, bm25(chunks_fts, ?, 1.0) AS rank FROM chunks_fts WHERE chunks_fts MATCH ?"
        params: list[object] = [HEADING_WEIGHT, fts_query]
        if allowed_ids is not None:
            sql += " AND rowid IN (SELECT value FROM json_each(?))"
            params.append(json.dumps(list(allowed_ids)))
        sql += " ORDER BY rank LIMIT ?"
        params.append(k)
        try:
            return [(row[0], row[1]) for row in self.db.execute(sql, params)]
        except apsw.SQLError as error:
            raise ConfigError(f"keyword query {fts_query!r} is not valid: {error}") from error

    def chunk_ids_matching(self, path_globs: Sequence[str], extensions: Sequence[str]) -> list[int]:
        """Ids of chunks whose file path matches any glob and whose extension is one of ``extensions``."""
        clauses, params = [], []
        if path_globs:
            clauses.append("(" + " OR ".join("f.path GLOB ?" for _ in path_globs) + ")")
            params.extend(path_globs)
        if extensions:
            clauses.append("(" + " OR ".join("lower(f.path) GLOB ?" for _ in extensions) + ")")
            params.extend(f"*.{extension.lower().lstrip('.')}" for extension in extensions)
        where = " AND ".join(clauses) if clauses else "1"
        sql = f"SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE {where}"
        return [row[0] for row in self.db.execute(sql, params)]

    def chunk_filter(self, path_globs: Sequence[str], extensions: Sequence[str]) -> list[int]:
        """The restriction :meth:`nearest` and :meth:`keyword_matches` take: here, the chunk ids."""
        return self.chunk_ids_matching(path_globs, extensions)

    def chunks_by_ids(self, chunk_ids: Sequence[int]) -> dict[int, StoredChunk]:
        rows = self.db.execute(
            "SELECT c.id, f.root, f.path, c.start_line, c.end_line, c.heading, c.text "
            "FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(chunk_ids)),),
        )
        return {row[0]: StoredChunk(*row) for row in rows}

    # -- builds and status --------------------------------------------------------------------

    def start_build(self, root: str, model: str) -> int:
        with self.transaction():
            return self.db.execute(
                "INSERT INTO builds (root, started_at, model) VALUES (?, ?, ?) RETURNING id",
                (root, time.time(), model),
            ).fetchall()[0][0]

    def finish_build(self, build_id: int, outcome: str, counts: dict[str, int], error: str | None) -> None:
        columns = [name for name in counts if name in BUILD_COUNT_COLUMNS]
        assignments = ", ".join(f"{name} = ?" for name in columns)
        with self.transaction():
            self.db.execute(
                f"UPDATE builds SET finished_at = ?, outcome = ?, error = ?, {assignments} WHERE id = ?",
                (time.time(), outcome, error, *(counts[name] for name in columns), build_id),
            )

    def recent_builds(self, limit: int = 5) -> list[dict[str, object]]:
        cursor = self.db.execute("SELECT * FROM builds ORDER BY id DESC LIMIT ?", (limit,))
        names = [column[0] for column in cursor.getdescription()]
        return [dict(zip(names, row, strict=False)) for row in cursor]

    def roots(self) -> list[str]:
        return [row[0] for row in self.db.execute("SELECT DISTINCT root FROM files ORDER BY root")]

    def mark_interrupted_builds(self) -> None:
        """Builds still 'running' when the writer lock is free were killed: say so in their record."""
        if not self.db.execute("SELECT 1 FROM builds WHERE outcome = 'running' LIMIT 1").fetchall():
            return  # the usual case: no write transaction for nothing
        with self.transaction():
            self.db.execute("UPDATE builds SET outcome = 'interrupted' WHERE outcome = 'running'")

    def is_empty(self) -> bool:
        """No chunk at all (one row looked at, unlike ``counts``, which scans every row)."""
        return not self.db.execute("SELECT 1 FROM chunks LIMIT 1").fetchall()

    def counts(self) -> dict[str, int]:
        files = self.db.execute("SELECT count(*) FROM files WHERE status = 'indexed'").fetchall()[0][0]
        chunks = self.db.execute("SELECT count(*) FROM chunks").fetchall()[0][0]
        return {"files": files, "chunks": chunks}

    def integrity_problems(self) -> list[str]:
        """What is wrong with the database, if anything: SQLite's own check plus orphan rows."""
        problems = [row[0] for row in self.db.execute("PRAGMA integrity_check") if row[0] != "ok"]
        orphan_chunks = self.db.execute(
            "SELECT count(*) FROM chunks WHERE file_id NOT IN (SELECT id FROM files)"
        ).fetchall()[0][0]
        if orphan_chunks:
            problems.append(f"{orphan_chunks} chunks without a file")
        if self.has_vector_table():
            missing = self.db.execute(
                f"SELECT count(*) FROM chunks WHERE id NOT IN (SELECT rowid FROM {VECTOR_TABLE})"
            ).fetchall()[0][0]
            orphans = self.db.execute(
                f"SELECT count(*) FROM {VECTOR_TABLE} WHERE rowid NOT IN (SELECT id FROM chunks)"
            ).fetchall()[0][0]
            if missing:
                problems.append(f"{missing} chunks without a vector")
            if orphans:
                problems.append(f"{orphans} vectors without a chunk")
        return problems

    def writer_lock(self, root: str) -> WriterLock:
        """One writer per SQLite file, whatever the root: SQLite has one writer at a time anyway."""
        return WriterLock(self.path)

    def backup_into(self, destination: Store) -> None:
        """Copy this whole database over ``destination`` in one step (readers of it see old or new)."""
        with destination.db.backup("main", self.db, "main") as backup:
            while not backup.done:
                backup.step(-1)
        destination._own_commits += 1
        destination._has_vector_table = False


BUILD_COUNT_COLUMNS = frozenset(
    """files_added files_changed files_removed files_failed files_skipped chunks_embedded chunks_reused
    requests tokens""".split()
)


class WriterLock:
    """One writer per index: an advisory ``flock`` on ``<index>.lock``.

    The kernel drops the lock when the holding process dies, even by SIGKILL, so a stale lock never
    blocks; the file's contents only name the holder for the error message.
    """

    def __init__(self, index_path: str) -> None:
        self.path = index_path + ".lock"
        self._handle: int | None = None

    def acquire(self, wait_seconds: float = 0) -> None:
        handle = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + max(0.0, wait_seconds)
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = self._read_holder(handle)
                    os.close(handle)
                    raise IndexLockedError(
                        f"index {self.path[:-5]} is being built by {holder}; "
                        "try again later or pass --wait SECONDS"
                    ) from None
                time.sleep(0.1)
        os.ftruncate(handle, 0)
        os.write(
            handle, f"pid {os.getpid()} on {os.uname().nodename} since {time.strftime('%H:%M:%S')}".encode()
        )
        self._handle = handle

    @staticmethod
    def _read_holder(handle: int) -> str:
        os.lseek(handle, 0, os.SEEK_SET)
        text = os.read(handle, 200).decode("utf-8", "replace").strip()
        return text or "another process"

    def release(self) -> None:
        if self._handle is not None:
            os.ftruncate(self._handle, 0)
            fcntl.flock(self._handle, fcntl.LOCK_UN)
            os.close(self._handle)
            self._handle = None

    def __enter__(self) -> WriterLock:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()
