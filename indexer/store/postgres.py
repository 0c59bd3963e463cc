"""The index in PostgreSQL: vectors in pgvector (HNSW), keywords in a tsvector (GIN).

The same index as :mod:`indexer.store.sqlite` (same tables, same transactions per group of files, same
answers to the same calls), for a team whose index outgrows one SQLite file: several machines build
different roots at once, and many people query it.

- Connections come from a pool (psycopg_pool). A thread that opens a :meth:`PostgresStore.transaction`
  or :meth:`PostgresStore.snapshot` keeps one connection for everything it does inside; any other call
  borrows one for that call. Threads that share one store each get their own.
- One writer per root, not per index: a session-level advisory lock keyed on (schema, root) is held
  on a connection of its own for the whole build. PostgreSQL drops it when that connection ends,
  even when the builder is killed, so a stale lock never blocks.
- Search filters (path globs, file types) are conditions inside the vector and keyword queries. With
  a filter, pgvector's iterative index scan (pgvector 0.8+) keeps reading the HNSW graph until ``k``
  rows pass it.

All SQL except the schema (``migrations/postgres``) lives in this module, always with parameters.
The class is long for the reason the SQLite store's is: one short method per question of the store
contract, each engine's SQL kept in one place.
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg import errors as pg_errors
from psycopg_pool import ConnectionPool, PoolTimeout

from indexer.errors import (
    ConfigError,
    DatabaseUnreachableError,
    IndexerError,
    IndexLockedError,
    IndexNotFoundError,
    IndexOutdatedError,
    StorageError,
)
from indexer.records import StoredChunk
from indexer.store import keywords, migrations, records
from indexer.store.contract import AllowedChunks
from indexer.store.locks import wait_for
from indexer.store.records import BuildCounts, ChunkFilter, NewFile
from indexer.store.sql import ADD_CHUNK_COUNT, SQLStore

CONNECT_TIMEOUT_SECONDS = 10
POOL_MAX_SIZE = 8
#: HNSW build parameters (pgvector's defaults): 16 links per node, 64 candidates while inserting.
HNSW_OPTIONS = "m = 16, ef_construction = 64"
#: Candidates kept while searching the graph; pgvector's default is 40. At a million vectors the
#: default misses about half of the true top 10 and 400 a few percent, for a few milliseconds more
#: (bench/RESULTS.md, the `pgvector HNSW ... ef_search` rows): a missed answer costs more.
EF_SEARCH = 400
#: The most candidates pgvector's HNSW search can keep (``hnsw.ef_search`` runs from 1 to 1,000), so
#: the most neighbours one graph search can return in order.
MAX_EF_SEARCH = 1000
#: Rows an iterative scan may visit before it gives up on a very selective filter (pgvector's default).
MAX_SCAN_TUPLES = 20_000
MIGRATION_LOCK_KEY = 0x1D3_E7E8  # any fixed number: serialises migrations of one database
VECTOR_INDEX_LOCK_KEY = 0x1D3_E7E9  # serialises the HNSW index's creation, without blocking migrations
VECTOR_INDEX = "chunks_embedding_hnsw"
#: memory for building the HNSW graph in one go: a graph that does not fit is built much more slowly
#: (about 2 GB for a million 384-d vectors; past 1 GB the rest of the graph is built on disk)
VECTOR_INDEX_BUILD_MEMORY = "1GB"
TEXT_SEARCH_CONFIG = "english"
ENGINE = "postgres"
#: Tables of an index: a schema that has one of them but no migration record is not ours.
_OUR_TABLES = ("meta", "files", "chunks", "builds")
#: BM25's term-frequency saturation, as FTS5's bm25() uses it.
BM25_K1 = 1.2
#: A search term (``word``, as :func:`indexer.store.keywords.query_text` writes it) as a tsquery:
#: its words as a phrase, or, ending with ``*``, a prefix search.
TERM_QUERY = (
    f"CASE WHEN right(word, 1) = '*' "
    f"THEN to_tsquery('{TEXT_SEARCH_CONFIG}', quote_literal(rtrim(word, '*')) || ':*') "
    f"ELSE phraseto_tsquery('{TEXT_SEARCH_CONFIG}', word) END"
)
#: The same for a term given as a parameter.
TERM_PARAMETER_QUERY = f"(SELECT {TERM_QUERY} FROM (SELECT %s::text AS word) AS term)"


def printable_url(url: str) -> str:
    """The URL without its password, for messages and ``index status``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = (parts.username or "") + ":***"
    return urlunsplit(parts._replace(netloc=f"{user}@{netloc[1]}"))


def filter_sql(chunk_filter: ChunkFilter | None) -> tuple[str, list[object]]:
    """A condition on ``f`` (the files table) for a search filter, and its parameters. Globs are
    SQLite's: ``*``, ``?`` and ``[...]``, case-sensitive, ``*`` crossing folders. Each kind of filter
    is one condition over an array of its values, so a thousand paths make one parameter, not a
    thousand."""
    chunk_filter = chunk_filter or ChunkFilter()
    clauses: list[str] = []
    params: list[object] = []
    globs = chunk_filter.folder_globs()
    if globs:
        clauses.append("f.path ~ ANY(%s)")
        params.append([glob_to_regex(glob) for glob in globs])
    if chunk_filter.type_globs:
        clauses.append("lower(f.path) ~ ANY(%s)")
        params.append([glob_to_regex(glob) for glob in chunk_filter.type_globs])
    if chunk_filter.roots:
        clauses.append("f.root = ANY(%s)")
        params.append(list(chunk_filter.roots))
    for phrase in chunk_filter.phrases:
        clauses.append(f"c.search_text @@ {TERM_PARAMETER_QUERY}")
        params.append(keywords.query_text(phrase))
    for phrase in chunk_filter.excluded:
        clauses.append(f"NOT c.search_text @@ {TERM_PARAMETER_QUERY}")
        params.append(keywords.query_text(phrase))
    return (" AND ".join(clauses) or "TRUE"), params


def glob_to_regex(glob: str) -> str:
    """A POSIX regular expression matching what SQLite's GLOB matches, anchored at both ends."""
    parts = ["^"]
    position = 0
    while position < len(glob):
        char = glob[position]
        if char == "*":
            parts.append(".*")
        elif char == "?":
            parts.append(".")
        elif char == "[" and "]" in glob[position + 2 :]:
            end = glob.index("]", position + 2)
            body = glob[position + 1 : end]
            negate = body.startswith("^")
            body = body[1:] if negate else body
            parts.append("[" + ("^" if negate else "") + body.replace("\\", "\\\\") + "]")
            position = end
        else:
            parts.append(re.escape(char))
        position += 1
    parts.append("$")
    return "".join(parts)


class PostgresStore(SQLStore):
    """An index in a PostgreSQL database with pgvector. Use :meth:`open`; close with :meth:`close`.

    Safe to share between threads: each borrows its own connection from the pool.

    Its length is the contract's (:class:`indexer.store.contract.IndexStore`): one short method per
    contract method that is this engine's own (the statements both engines run alike are
    :class:`indexer.store.sql.SQLStore`'s).
    """

    engine = ENGINE
    placeholder = "%s"
    supports_rebuild = False

    def __init__(self, url: str, pool: ConnectionPool, schema: str, writable: bool) -> None:
        self.path = printable_url(url)
        self.url = url
        self.pool = pool
        self.schema = schema
        self.writable = writable
        self._local = threading.local()
        self._locked_roots: set[str] = set()
        self._has_vector_table = False

    @classmethod
    def open(cls, url: str, writable: bool = False, create: bool = False) -> PostgresStore:
        """Connect to the database at ``url``. A writer makes sure pgvector is there and migrates the
        schema (creating the index when ``create`` is set); a reader changes nothing and needs an
        up-to-date index. A schema holding tables of our names without being an index is refused."""
        with _connect(url, autocommit=True) as connection:
            schema = _one_value(connection, "SELECT current_schema()")
            if schema is None:
                raise ConfigError(
                    f"database {printable_url(url)} has no schema to hold an index (search_path)"
                )
            _check_ours(connection, url, writable and create)
            if _one_value(connection, f"SELECT to_regclass('{migrations.RECORD_TABLE}') IS NOT NULL"):
                migrations.refuse_newer(ENGINE, _applied_versions(connection), printable_url(url))
            if writable:
                _ensure_vector_extension(connection, url)
                migrations.migrate(ENGINE, _PostgresMigrations(connection))
            elif migrations.pending(ENGINE, _applied_versions(connection)):
                raise IndexOutdatedError(
                    f"index {printable_url(url)} was made by an older version of indexer: "
                    "run `index build` once to upgrade it"
                )
        pool = ConnectionPool(
            url,
            min_size=1,
            max_size=POOL_MAX_SIZE,
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_SECONDS},
            configure=register_vector,
            open=False,
            name="indexer",
        )
        try:
            pool.open(wait=True, timeout=CONNECT_TIMEOUT_SECONDS)
        except PoolTimeout as error:
            pool.close()
            raise DatabaseUnreachableError(
                f"database {printable_url(url)} did not answer: {error}"
            ) from error
        return cls(url, pool, schema, writable)

    def close(self) -> None:
        self.pool.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- connections and transactions -----------------------------------------------------------

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection]:
        """The connection of this thread's open transaction, else one borrowed for this call."""
        held = getattr(self._local, "connection", None)
        if held is not None:
            yield held
            return
        try:
            with self.pool.connection(timeout=CONNECT_TIMEOUT_SECONDS) as connection:
                yield connection
        except PoolTimeout as error:
            raise DatabaseUnreachableError(f"database {self.path} did not answer: {error}") from error

    def _rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        with self._connection() as connection:
            return connection.execute(sql, params).fetchall()

    def _execute(self, sql: str, params: Sequence[object] = ()) -> None:
        with self._connection() as connection:
            connection.execute(sql, params)

    def _execute_many(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        with self._connection() as connection, connection.cursor() as cursor:
            cursor.executemany(sql, rows)

    def _drop_chunks(self, where: str, params: Sequence[object]) -> int:
        with self._connection() as connection:
            sql = f"DELETE FROM chunks c USING files f WHERE f.id = c.file_id AND {where}"
            return connection.execute(sql, params).rowcount

    def query(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        """Rows of any read-only SQL, for tools and tests that look inside the index."""
        return self._rows(sql, params)

    @contextmanager
    def _held(self, read_only: bool) -> Iterator[None]:
        if getattr(self._local, "connection", None) is not None:
            raise IndexerError("a transaction is already open in this thread")
        with self._connection() as connection, connection.transaction():
            if read_only:
                connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            self._local.connection = connection
            try:
                yield
            finally:
                self._local.connection = None

    def transaction(self) -> Any:
        """One write transaction: every call inside it commits together, or none does."""
        return self._held(read_only=False)

    def snapshot(self) -> Any:
        """A read transaction: every query inside sees the same committed state while builds commit."""
        return self._held(read_only=True)

    # -- schema ---------------------------------------------------------------------------------

    def migrate(self) -> list[str]:
        """Apply the numbered SQL files this index lacks (see :mod:`indexer.store.migrations`)."""
        with self._connection() as connection:
            return migrations.migrate(ENGINE, _PostgresMigrations(connection))

    def writer_lock(self, root: str) -> PostgresWriterLock:
        """The one-writer rule for ``root`` of this index: other roots can be built at the same time."""
        return PostgresWriterLock(self, root)

    def expect_many_searches(self) -> None:
        """Nothing to prepare: the HNSW index already answers without a full scan."""

    # -- metadata -------------------------------------------------------------------------------

    def create_vector_table(self, dimension: int) -> None:
        """Fix the vector column's dimension once the first batch has told it (inside a transaction).

        A typed ``vector(N)`` column lets pgvector check every vector's length on insert and lets
        ``ORDER BY embedding <=> q`` use a plain index; an untyped column would need every query to
        repeat the cast of an expression index. The table is empty when this runs, so the change
        costs nothing. Builders of two roots may get here together: a transaction lock makes the
        second one find the first one's work done. The HNSW index comes at the end of this first
        build (:meth:`finish_build`).
        """
        records.check_dimension(dimension)
        with self._connection() as connection:
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK_KEY,))
            recorded = connection.execute("SELECT value FROM meta WHERE key = 'dimension'").fetchall()
            if recorded:
                if int(recorded[0][0]) != dimension:
                    raise IndexerError(
                        f"index {self.path} holds vectors of dimension {recorded[0][0]}, not {dimension}"
                    )
                return
            # the dimension is a checked int: a type modifier cannot be a parameter
            connection.execute(f"ALTER TABLE chunks ALTER COLUMN embedding TYPE vector({dimension})")
            self.set_meta({"dimension": str(dimension)})

    def create_vector_index(self) -> None:
        """Create the HNSW index if it is missing: once, over every vector of the first build.

        Building the graph once over all rows is several times faster than growing it row by row
        (bench/RESULTS.md), so the first build writes its chunks without it; until it exists,
        searches scan exactly. Later builds add to it as they write. A second builder that gets here
        meanwhile waits (transaction lock) and finds it made; writes wait while it is built, reads
        do not.
        """
        if not self.has_vector_table():
            return
        with self._connection() as connection, connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (VECTOR_INDEX_LOCK_KEY,))
            if _one_value(connection, "SELECT to_regclass(%s)", (VECTOR_INDEX,)) is not None:
                return
            connection.execute(f"SET LOCAL maintenance_work_mem = '{VECTOR_INDEX_BUILD_MEMORY}'")
            connection.execute(
                f"CREATE INDEX {VECTOR_INDEX} ON chunks "
                f"USING hnsw (embedding vector_cosine_ops) WITH ({HNSW_OPTIONS})"
            )

    def has_vector_table(self) -> bool:
        if not self._has_vector_table:  # once typed, it stays (asked for every search)
            self._has_vector_table = self.dimension is not None
        return self._has_vector_table

    # -- files and chunks -----------------------------------------------------------------------

    def vectors_for_hashes(self, text_hashes: Iterable[str]) -> dict[str, bytes]:
        """Stored vectors (float32 blobs) of chunks whose text hash is one of ``text_hashes``, from
        any root of the index."""
        wanted = list(dict.fromkeys(text_hashes))
        if not wanted:
            return {}
        # the cast keeps the result type `vector` whether or not the column is typed yet: psycopg
        # prepares a statement run five times, and a prepared result type must not change
        rows = self._rows(
            "SELECT DISTINCT ON (text_hash) text_hash, embedding::vector FROM chunks "
            "WHERE text_hash = ANY(%s) ORDER BY text_hash, id",
            (wanted,),
        )
        return {text_hash: vector.to_numpy().astype(np.float32).tobytes() for text_hash, vector in rows}

    def write_files(self, files: Sequence[NewFile]) -> None:
        """Replace each file's chunks with its new version (call inside a transaction).

        The caller's transaction makes the swap atomic: after a crash each file is entirely old or
        entirely new. The new chunks of the whole group go in with one binary COPY; the keyword
        column is computed by PostgreSQL in the same rows.
        """
        rows: list[tuple] = []
        removed = 0
        with self._connection() as connection:
            for new in files:
                file_id = _one_value(
                    connection,
                    "INSERT INTO files (root, path, size, mtime_ns, content_hash, status, encoding) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (root, path) DO UPDATE SET "
                    "size = excluded.size, mtime_ns = excluded.mtime_ns, "
                    "content_hash = excluded.content_hash, status = excluded.status, "
                    "encoding = excluded.encoding RETURNING id",
                    (new.root, new.path, new.size, new.mtime_ns, new.content_hash, new.status, new.encoding),
                )
                removed += connection.execute("DELETE FROM chunks WHERE file_id = %s", (file_id,)).rowcount
                for row, vector in new.chunk_rows(file_id):  # COPY takes the vector after the row
                    rows.append((*row, np.frombuffer(vector, dtype=np.float32)))
            if rows:
                self.copy_chunks(connection, rows)
            connection.execute(self._sql(ADD_CHUNK_COUNT), (len(rows) - removed,))

    @staticmethod
    def copy_chunks(connection: psycopg.Connection, rows: Iterable[tuple]) -> None:
        """Stream chunk rows (:data:`indexer.store.records.CHUNK_COLUMNS`, then the vector) in with
        binary COPY, on ``connection``'s open transaction; the benchmark loads with it too."""
        columns = ", ".join(records.CHUNK_COLUMNS)
        with (
            connection.cursor() as cursor,
            cursor.copy(f"COPY chunks ({columns}, embedding) FROM STDIN (FORMAT BINARY)") as copy,
        ):
            copy.set_types([*records.CHUNK_COLUMN_TYPES.values(), "vector"])
            for row in rows:
                copy.write_row(row)

    # -- search ---------------------------------------------------------------------------------

    def chunk_filter(self, chunk_filter: ChunkFilter) -> AllowedChunks | None:
        """The restriction :meth:`nearest` and :meth:`keyword_matches` apply inside their SQL."""
        return AllowedChunks(chunk_filter)

    def nearest(
        self, query: np.ndarray, k: int, allowed: AllowedChunks | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` chunks nearest to ``query`` by cosine distance, through the HNSW index.

        With a filter the index scan is iterative (pgvector 0.8): it goes on through the graph until
        ``k`` rows pass the filter, rather than filtering ``ef_search`` candidates after the fact.
        Beyond :data:`MAX_EF_SEARCH` neighbours the graph cannot be asked for them all: the search
        then reads every vector (exact, and as long as the index is large).
        """
        if k <= 0 or not self.has_vector_table():
            return []
        vector = np.asarray(query, dtype=np.float32)
        where, params = filter_sql(cast("ChunkFilter | None", allowed))  # what chunk_filter made
        sql = (
            "SELECT c.id, c.embedding <=> %b AS distance FROM chunks c JOIN files f ON f.id = c.file_id "
            f"WHERE {where} ORDER BY c.embedding <=> %b LIMIT %s"
        )
        with self._connection() as connection, self._search_settings(connection, k, allowed is not None):
            rows = connection.execute(sql, (vector, *params, vector, k)).fetchall()
        return [(row[0], float(row[1])) for row in rows]

    @contextmanager
    def _search_settings(self, connection: psycopg.Connection, k: int, filtered: bool) -> Iterator[None]:
        """HNSW settings for one search, local to its transaction (one is opened if none is).

        ``ef_search`` is at least :data:`EF_SEARCH` and ``k``, or the connection's own when higher
        (``?options=-c%20hnsw.ef_search%3D400`` in the URL). More than :data:`MAX_EF_SEARCH`
        neighbours: no index scan (pgvector's way to an exact search), for this search only."""
        ef_search = (
            "set_config('hnsw.ef_search', "
            "greatest(%s, current_setting('hnsw.ef_search', true)::int)::text, true)"
        )
        with connection.transaction():
            if k > MAX_EF_SEARCH:
                before = _one_value(connection, "SELECT current_setting('enable_indexscan')")
                connection.execute("SELECT set_config('enable_indexscan', 'off', true)")
                yield
                # a failed search rolls the setting back with its savepoint; a done one puts it back
                connection.execute("SELECT set_config('enable_indexscan', %s, true)", (before,))
                return
            if filtered:
                connection.execute(
                    f"SELECT {ef_search}, set_config('hnsw.iterative_scan', 'strict_order', true), "
                    "set_config('hnsw.max_scan_tuples', %s, true)",
                    (max(EF_SEARCH, k), str(MAX_SCAN_TUPLES)),
                )
            else:
                connection.execute(f"SELECT {ef_search}", (max(EF_SEARCH, k),))
            yield

    def keyword_matches(
        self, words: Sequence[str], k: int, allowed: AllowedChunks | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` chunks that match any of ``words`` best, as (chunk id, score) where lower is
        better, as SQLite's BM25: the negated BM25 of the match, with each word's inverse document
        frequency counted through the GIN index and its frequency in the chunk from ``ts_rank_cd``
        (about a tenth per occurrence). Unlike FTS5, chunk length is not taken into account. A word with
        several parts (``add_library``) is looked for as a phrase. A word given several times counts
        that many times, as FTS5 counts a repeated term; terms that the text search parser makes into
        the same query count as the most repeated of them: ``how_tall`` loses its stopword and would
        count ``tall`` again, where FTS5 looks for the joined word and finds none. Equal scores come in
        file order, not id order, so two databases holding the same files answer alike whatever order
        their builders committed in (which of several tied chunks makes the cut decides a hybrid search)."""
        if k <= 0 or not words:
            return []
        where, params = filter_sql(cast("ChunkFilter | None", allowed))  # what chunk_filter made
        sql = (
            "WITH asked AS (SELECT word, count(*) AS times FROM unnest(%s::text[]) AS word GROUP BY word"
            f"), term AS (SELECT {TERM_QUERY} AS query, max(times) AS times FROM asked GROUP BY 1"
            "), weighted AS ("
            "  SELECT query, times,"
            "  greatest(ln((greatest(total, found.df) - found.df + 0.5) / (found.df + 0.5)), 1e-6) AS idf"
            "  FROM term, (SELECT %s::float8 AS total) AS everything,"
            "  LATERAL (SELECT count(*) AS df FROM chunks WHERE search_text @@ term.query) AS found"
            "  WHERE numnode(query) > 0"
            ") "
            "SELECT c.id, -sum(w.times * w.idf * r.tf * %s / (r.tf + %s)) AS score "
            "FROM weighted w JOIN chunks c ON c.search_text @@ w.query JOIN files f ON f.id = c.file_id "
            "CROSS JOIN LATERAL (SELECT 10 * ts_rank_cd(c.search_text, w.query) AS tf) AS r "
            f"WHERE {where} GROUP BY c.id, f.root, f.path ORDER BY score, f.root, f.path, c.seq LIMIT %s"
        )
        terms = [keywords.query_text(word) for word in words]
        found = self._rows(sql, (terms, self.chunk_count(), BM25_K1 + 1, BM25_K1, *params, k))
        return [(row[0], float(row[1])) for row in found]

    def chunks_by_ids(self, chunk_ids: Sequence[int]) -> dict[int, StoredChunk]:
        columns = records.STORED_CHUNK_COLUMNS
        sql = f"SELECT {columns} FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id = ANY(%s)"
        return records.stored_chunks(self._rows(sql, (list(chunk_ids),)))

    # -- builds and status ----------------------------------------------------------------------

    def finish_build(
        self, build_id: int, outcome: str, counts: BuildCounts, error: str | None, finished_at: float
    ) -> None:
        """Record how a build ended, after making the HNSW index if this was the first build."""
        self.create_vector_index()
        self._record_end(build_id, outcome, counts, error, finished_at)

    def keyword_chunk_count(self) -> int:
        """BM25's N in :meth:`keyword_matches`: every chunk (with no length normalisation, a chunk
        without words changes a word's weight and the keyword scale alike)."""
        return self.chunk_count()

    def writer_active(self, root: str) -> bool:
        """Whether a build holds the writer lock of ``root`` now."""
        return PostgresWriterLock(self, root).held_elsewhere()

    def size_bytes(self) -> int:
        """The index's tables with their indexes and TOAST data, in its schema."""
        tables = ["meta", "files", "chunks", "builds", migrations.RECORD_TABLE]
        rows = self._rows(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
            "WHERE c.relname = ANY(%s) AND c.relnamespace = to_regnamespace(%s) AND c.relkind = 'r'",
            (tables, self.schema),
        )
        return int(rows[0][0])

    def vector_search_status(self) -> dict[str, object]:
        """How searches find neighbours: pgvector's HNSW index inside PostgreSQL, and its size (what
        the server's cache holds of it when searches have read it all)."""
        rows = self._rows(
            "SELECT coalesce(pg_relation_size(to_regclass(%s)), 0)", (f"{self.schema}.{VECTOR_INDEX}",)
        )
        size = int(rows[0][0])
        return {
            "structure": "pgvector hnsw" if size else "none yet",
            "file": None,
            "file_bytes": 0,
            "memory_bytes": size,
        }

    def mark_interrupted_builds(self) -> None:
        """Builds still 'running' on a root whose writer lock this store now holds were killed: say
        so in their record. Builds of other roots may be running right now, and are left alone."""
        if self._locked_roots:
            self._execute(
                "UPDATE builds SET outcome = 'interrupted' WHERE outcome = 'running' AND root = ANY(%s)",
                (sorted(self._locked_roots),),
            )

    def integrity_problems(self) -> list[str]:
        """What is wrong with the index, if anything: chunks without a file or with a vector of the
        wrong length (the foreign key and the typed column should make both impossible), an invalid
        HNSW or keyword index."""
        problems = self._row_problems()
        dimension = self.dimension
        if dimension is not None:
            wrong = self._rows("SELECT count(*) FROM chunks WHERE vector_dims(embedding) <> %s", (dimension,))
            if wrong[0][0]:
                problems.append(f"{wrong[0][0]} vectors whose dimension is not {dimension}")
        invalid = self._rows(
            "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "JOIN pg_class t ON t.oid = i.indrelid "
            "WHERE t.relname = 'chunks' AND t.relnamespace = to_regnamespace(%s) AND NOT i.indisvalid",
            (self.schema,),
        )
        problems.extend(f"index {row[0]} is not valid" for row in invalid)
        return problems

    # -- rebuilding: not on PostgreSQL ----------------------------------------------------------

    def own_files(self) -> list[str]:
        """None: the index lives in the database server."""
        return []

    def open_scratch(self) -> PostgresStore:
        raise ConfigError(
            "a rebuild is not available on PostgreSQL: build into a new database (or schema) with "
            "the new settings, then point INDEX_DB at it"
        )

    def replace_with(self, scratch: PostgresStore) -> None:
        raise ConfigError("an index on PostgreSQL cannot be replaced by another")

    def discard_scratch(self) -> None:
        """Nothing to discard: PostgreSQL indexes are never rebuilt beside themselves."""


class PostgresWriterLock:
    """One writer per (index, root): a session-level advisory lock on a connection of its own.

    The connection's ``application_name`` names the holder, so a refused builder can say who holds it.
    """

    def __init__(self, store: PostgresStore, root: str) -> None:
        self.store = store
        self.root = root
        digest = hashlib.blake2b(f"indexer\0{store.schema}\0{root}".encode(), digest_size=8).digest()
        self.key = int.from_bytes(digest, "big", signed=True)
        self._connection: psycopg.Connection | None = None

    def acquire(self, wait_seconds: float = 0) -> None:
        holder = (
            f"indexer build pid {os.getpid()} on {socket.gethostname()} since {time.strftime('%H:%M:%S')}"
        )
        connection = _connect(self.store.url, autocommit=True, application_name=holder[:63])

        def refusal() -> IndexLockedError:
            current = self._holder(connection)
            connection.close()
            return IndexLockedError(
                f"root {self.root} of index {self.store.path} is being built by {current}; "
                "try again later, or wait for it (--wait SECONDS)",
                current,
            )

        wait_for(
            lambda: _one_value(connection, "SELECT pg_try_advisory_lock(%s)", (self.key,)),
            wait_seconds,
            refusal,
        )
        self._connection = connection
        self.store._locked_roots.add(self.root)

    def held_elsewhere(self) -> bool:
        """Whether some session holds this lock now."""
        with self.store._connection() as connection:
            return bool(self._holders(connection))

    def _holders(self, connection: psycopg.Connection) -> list[str]:
        """The ``application_name`` of the sessions holding this lock (pg_locks splits the key)."""
        unsigned = self.key & 0xFFFF_FFFF_FFFF_FFFF
        rows = connection.execute(
            "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
            "AND l.classid = %s::bigint::oid AND l.objid = %s::bigint::oid",
            (unsigned >> 32, unsigned & 0xFFFF_FFFF),
        ).fetchall()
        return [row[0] for row in rows]

    def _holder(self, connection: psycopg.Connection) -> str:
        """Who holds this lock, from the holder's ``application_name``."""
        names = self._holders(connection)
        return (names[0] if names else "").removeprefix("indexer build ") or "another process"

    def release(self) -> None:
        if self._connection is not None:
            self.store._locked_roots.discard(self.root)
            self._connection.close()  # ends the session, which drops the lock
            self._connection = None

    def __enter__(self) -> PostgresWriterLock:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


# -- opening ----------------------------------------------------------------------------------------


def _connect(url: str, autocommit: bool, application_name: str | None = None) -> psycopg.Connection:
    """A connection, or :class:`DatabaseUnreachableError` naming the server and why; the server shows
    ``application_name`` in ``pg_stat_activity`` (psycopg leaves it out when None)."""
    try:
        return psycopg.connect(
            url,
            autocommit=autocommit,
            connect_timeout=CONNECT_TIMEOUT_SECONDS,
            application_name=application_name,
        )
    except psycopg.OperationalError as error:
        reason = " ".join(line.strip() for line in str(error).splitlines() if line.strip())
        raise DatabaseUnreachableError(f"cannot reach database {printable_url(url)}: {reason}") from error


def _one_value(connection: psycopg.Connection, sql: str, params: Sequence[object] = ()) -> Any:
    """The value of a query that answers one row of one column (a setting, a lock taken or not, a
    row's new id); a server that answers no row has failed, and says so instead of a TypeError."""
    row = connection.execute(sql, params).fetchone()
    if row is None:
        raise StorageError(f"PostgreSQL answered no row to: {' '.join(sql.split()[:3])} ...")
    return row[0]


def _check_ours(connection: psycopg.Connection, url: str, create: bool) -> None:
    """Raise unless the schema holds an index, or (when ``create``) none of an index's tables."""
    if _one_value(connection, f"SELECT to_regclass('{migrations.RECORD_TABLE}') IS NOT NULL"):
        return
    clashing = [
        name for name in _OUR_TABLES if _one_value(connection, "SELECT to_regclass(%s) IS NOT NULL", (name,))
    ]
    if clashing:
        raise ConfigError(
            f"{printable_url(url)} is not an index but its schema has tables named "
            f"{', '.join(clashing)}: left unchanged; use another database or schema"
        )
    if not create:
        raise IndexNotFoundError(
            f"no index at {printable_url(url)}: build one first with `index build FOLDER`"
        )


def _applied_versions(connection: psycopg.Connection) -> set[int]:
    return migrations.applied_versions(_PostgresMigrations(connection))


def _ensure_vector_extension(connection: psycopg.Connection, url: str) -> None:
    """Create pgvector in this database if it is missing, or say exactly what to do. Two processes
    opening a new database at once take turns (a transaction lock), so the second finds it there."""
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK_KEY,))
        if connection.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchall():
            return
        available = connection.execute(
            "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
        ).fetchall()
        if not available:
            raise ConfigError(
                f"the server of {printable_url(url)} does not have the pgvector extension installed: "
                "install pgvector on it, then run `CREATE EXTENSION vector;` in this database"
            )
        try:
            connection.execute("CREATE EXTENSION vector")
        except pg_errors.InsufficientPrivilege as error:
            raise ConfigError(
                f"database {printable_url(url)} lacks the pgvector extension and this user may not create "
                "it: run `CREATE EXTENSION vector;` in it as a superuser"
            ) from error


class _PostgresMigrations:
    """How :func:`indexer.store.migrations.migrate` runs on a PostgreSQL index: an advisory lock
    makes a second process wait, then find the work done."""

    placeholder = "%s"
    timestamp_type = "DOUBLE PRECISION"

    def __init__(self, connection: psycopg.Connection) -> None:
        self.connection = connection

    def execute(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        cursor = self.connection.execute(sql, params)
        return cursor.fetchall() if cursor.description else []

    @contextmanager
    def locked_transaction(self) -> Iterator[None]:
        with self.connection.transaction():
            self.connection.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK_KEY,))
            yield
