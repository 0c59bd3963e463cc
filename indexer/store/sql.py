"""What both engines run alike: the statements on ``meta``, ``files`` and ``builds``, and the reads
of chunks and counts, written once.

SQLite and PostgreSQL hold the same tables (``migrations/``), so most of what a store asks of them
is the same statement. Those statements live here, written with ``?`` parameters, and reach each
engine in its own placeholder (:func:`in_placeholder`): a change to the ``files`` or ``builds``
tables is made in this module, once. An engine supplies how a statement is run (:meth:`SQLStore._rows`,
:meth:`SQLStore._execute`, :meth:`SQLStore._execute_many`) and how chunks are dropped with what
hangs off them (:meth:`SQLStore._drop_chunks`); it keeps what differs: how files and vectors are
written, searches and filters, locks, and its own checks.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import ClassVar

from indexer.records import StoredChunk
from indexer.store import migrations, records
from indexer.store.records import BuildCounts, FileState

UPSERT_META = (
    "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"
)
#: The update that keeps the chunk count (meta key :data:`~indexer.store.records.CHUNK_COUNT`), given
#: the number of chunks added, negative when removed.
ADD_CHUNK_COUNT = "UPDATE meta SET value = CAST(CAST(value AS INTEGER) + ? AS TEXT) WHERE key = 'chunk_count'"
#: Files and chunks of each root (an index may hold several folders), for ``index status``.
ROOT_COUNTS = (
    "SELECT f.root, count(DISTINCT f.id) FILTER (WHERE f.status = 'indexed'), count(c.id) "
    "FROM files f LEFT JOIN chunks c ON c.file_id = f.id GROUP BY f.root ORDER BY f.root"
)


@functools.cache
def in_placeholder(sql: str, placeholder: str) -> str:
    """``sql``, written with ``?`` parameters, with ``placeholder`` in their place (the statements of
    this module hold no other ``?``)."""
    return sql if placeholder == "?" else sql.replace("?", placeholder)


class SQLStore:
    """The statements both engines share, run through the engine's own primitives."""

    #: The engine's parameter placeholder: ``?`` (SQLite) or ``%s`` (psycopg).
    placeholder: ClassVar[str]

    # -- what an engine supplies ----------------------------------------------------------------

    def _rows(self, sql: str, params: Sequence[object] = ()) -> list[tuple]:
        """Run a statement that returns rows, and return them."""
        raise NotImplementedError

    def _execute(self, sql: str, params: Sequence[object] = ()) -> None:
        """Run a statement that returns nothing."""
        raise NotImplementedError

    def _execute_many(self, sql: str, rows: Sequence[Sequence[object]]) -> None:
        """Run a statement once per row of parameters."""
        raise NotImplementedError

    def _drop_chunks(self, where: str, params: Sequence[object]) -> int:
        """Delete the chunks matching ``where`` (a condition on ``c``, the chunks, and ``f``, their
        files, in this engine's placeholder) with their vectors and keyword entries; how many."""
        raise NotImplementedError

    def _sql(self, sql: str) -> str:
        """A shared statement in this engine's placeholder."""
        return in_placeholder(sql, self.placeholder)

    # -- metadata -------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        rows = self._rows(self._sql("SELECT value FROM meta WHERE key = ?"), (key,))
        return rows[0][0] if rows else None

    def set_meta(self, values: dict[str, str]) -> None:
        """Write several metadata values (call inside a transaction)."""
        self._execute_many(self._sql(UPSERT_META), list(values.items()))

    def get_json(self, key: str) -> dict | None:
        value = self.get_meta(key)
        return json.loads(value) if value is not None else None

    @property
    def dimension(self) -> int | None:
        value = self.get_meta("dimension")
        return int(value) if value is not None else None

    def applied_migrations(self) -> list[str]:
        return [row[0] for row in self._rows(f"SELECT name FROM {migrations.RECORD_TABLE} ORDER BY version")]

    # -- files and chunks -----------------------------------------------------------------------

    def file_states(self, root: str) -> dict[str, FileState]:
        sql = f"SELECT {records.FILE_STATE_COLUMNS} FROM files WHERE root = ?"
        return records.file_states(self._rows(self._sql(sql), (root,)))

    def touch_file(self, file_id: int, size: int, mtime_ns: int) -> None:
        """Record new stat facts for a file whose content did not change (inside a transaction)."""
        self._execute(
            self._sql("UPDATE files SET size = ?, mtime_ns = ? WHERE id = ?"), (size, mtime_ns, file_id)
        )

    def remove_file(self, file_id: int) -> None:
        """Drop a file with its chunks, vectors and keyword entries (inside a transaction)."""
        removed = self._drop_chunks(self._sql("f.id = ?"), (file_id,))
        self._execute(self._sql("DELETE FROM files WHERE id = ?"), (file_id,))
        self._add_chunk_count(-removed)

    def remove_root(self, root: str) -> int:
        """Drop a root's files with their chunks, vectors and keyword entries (inside a transaction);
        how many indexed files it held."""
        statuses = self._rows(self._sql("SELECT status FROM files WHERE root = ?"), (root,))
        removed = self._drop_chunks(self._sql("f.root = ?"), (root,))
        self._execute(self._sql("DELETE FROM files WHERE root = ?"), (root,))
        self._add_chunk_count(-removed)
        return sum(status == "indexed" for (status,) in statuses)

    def _add_chunk_count(self, added: int) -> None:
        """Keep the chunk count of ``meta`` (nothing to write when nothing changed)."""
        if added:
            self._execute(self._sql(ADD_CHUNK_COUNT), (added,))

    def file_chunks(self, path: str, root: str | None = None) -> list[StoredChunk]:
        """Every chunk of the file at ``path`` (under ``root``, else under any root), in file order."""
        sql = (
            f"SELECT {records.STORED_CHUNK_COLUMNS} FROM chunks c JOIN files f ON f.id = c.file_id "
            "WHERE f.path = ? AND (CAST(? AS TEXT) IS NULL OR f.root = ?) ORDER BY f.root, c.seq"
        )
        return list(records.stored_chunks(self._rows(self._sql(sql), (path, root, root))).values())

    # -- builds and status ----------------------------------------------------------------------

    def start_build(self, root: str, model: str, pid: int, host: str, started_at: float) -> int:
        sql = (
            "INSERT INTO builds (root, started_at, seen_at, model, pid, host) "
            "VALUES (?, ?, ?, ?, ?, ?) RETURNING id"
        )
        return self._rows(self._sql(sql), (root, started_at, started_at, model, pid, host))[0][0]

    def add_build_counts(self, build_id: int, counts: BuildCounts, seen_at: float) -> None:
        """Add what a group of files did to its build's record (inside that group's transaction), so
        the record says what is committed, and when the build was last seen alive, even when it dies
        before it ends."""
        sql = f"UPDATE builds SET {BuildCounts.assignments('?', add=True)}, seen_at = ? WHERE id = ?"
        self._execute(self._sql(sql), (*counts.values(), seen_at, build_id))

    def _record_end(
        self, build_id: int, outcome: str, counts: BuildCounts, error: str | None, finished_at: float
    ) -> None:
        """Write how a build ended into its record."""
        sql = (
            "UPDATE builds SET finished_at = ?, seen_at = ?, outcome = ?, error = ?, "
            f"{BuildCounts.assignments('?')} WHERE id = ?"
        )
        self._execute(self._sql(sql), (finished_at, finished_at, outcome, error, *counts.values(), build_id))

    def recent_builds(self, limit: int = 5) -> list[dict[str, object]]:
        sql = f"SELECT {', '.join(records.BUILD_FIELDS)} FROM builds ORDER BY id DESC LIMIT ?"
        return records.build_records(self._rows(self._sql(sql), (limit,)))

    def roots(self) -> list[str]:
        return [row[0] for row in self._rows("SELECT DISTINCT root FROM files ORDER BY root")]

    def chunk_count(self) -> int:
        """How many chunks the index holds (kept in ``meta`` by every write)."""
        return int(self.get_meta(records.CHUNK_COUNT) or 0)

    def root_counts(self) -> list[dict[str, object]]:
        return records.root_counts(self._rows(ROOT_COUNTS))

    def is_empty(self) -> bool:
        """No chunk at all (one row looked at, unlike :meth:`counts`, which counts every row)."""
        return not self._rows("SELECT 1 FROM chunks LIMIT 1")

    def counts(self) -> dict[str, int]:
        files = self._rows("SELECT count(*) FROM files WHERE status = 'indexed'")[0][0]
        chunks = self._rows("SELECT count(*) FROM chunks")[0][0]
        return {"files": files, "chunks": chunks}

    def _row_problems(self) -> list[str]:
        """What either engine's integrity check finds in the rows: a chunk count that does not agree
        with the chunks, chunks without a file."""
        problems = records.count_problems(self.chunk_count(), self._rows("SELECT count(*) FROM chunks")[0][0])
        orphans = self._rows("SELECT count(*) FROM chunks WHERE file_id NOT IN (SELECT id FROM files)")[0][0]
        if orphans:
            problems.append(f"{orphans} chunks without a file")
        return problems
