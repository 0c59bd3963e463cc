"""The vector graph beside a SQLite index, as a room of its own: its whole lifecycle, apart from the
store's SQL.

A search opens the graph saved beside the index (checked to be the recorded file), catches up with
the chunk changes the index logged since, and asks it; without a graph it can use, it scans with
sqlite-vec. A build folds the changes into a new graph when they grow, saves it with its float32
rows in the slot the record does not name, and swaps the record in its transaction. A rebuild moves
the new index's graph in beside the old one. How a graph is searched and saved is
:mod:`indexer.store.sqlite.vectors`; its float32 rows, :mod:`indexer.store.sqlite.vector_rows`; how
both files are written and recognised, :mod:`indexer.store.sqlite.side_files`.

The store makes a :class:`VectorGraph` the first time a search or a write needs vectors: this module
loads numpy and usearch, which a keyword query does without.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import logging
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import nullcontext, suppress
from typing import TYPE_CHECKING, Any

import apsw
import numpy as np

from indexer.errors import StorageError
from indexer.store.sqlite import side_files, vector_rows, vectors
from indexer.store.sqlite.connections import describe_failure
from indexer.store.sqlite.layout import (
    GRAPH_RECORD,
    ROWS_RECORD,
    SLOTS,
    VECTOR_LOG_ID,
    VECTOR_TABLE,
    graph_path,
    rows_path,
)
from indexer.store.sqlite.side_files import DamagedFile
from indexer.store.sqlite.vector_rows import RowsFile
from indexer.store.sqlite.vectors import GraphRecord, VectorSearch

if TYPE_CHECKING:
    from indexer.store.sqlite.store import SQLiteStore

#: The most neighbours sqlite-vec's KNN query returns at once; larger searches run in memory.
VEC0_MAX_K = 4096


class VectorGraph:
    """The vectors' search and the graph's lifecycle for one :class:`SQLiteStore`: open, catch up,
    fold, save, swap, and the rows file. Safe to share between threads: one search or save at a
    time holds the graph (a lock), each on its own thread's connection."""

    def __init__(self, store: SQLiteStore) -> None:
        self.store = store
        self.connections = store.connections
        self._search: VectorSearch | None = None
        self._search_lock = threading.Lock()
        self._refused_graph: tuple[str | None, ...] | None = None  # the key of a graph found damaged
        self._graph_checked: tuple[str, object] | None = None  # (its SHA-256, the identity it was checked at)
        self._warned: set[str] = set()

    @property
    def _dimension(self) -> int:
        """The vectors' length. The graph is reached only once the vector table exists, and the
        transaction that creates it records the length, so an index without one is damaged."""
        dimension = self.store.dimension
        if dimension is None:
            raise StorageError(f"index {self.store.path}: it has vectors but records no dimension for them")
        return dimension

    def nearest(
        self, query: np.ndarray, k: int, allowed_ids: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` chunks nearest to ``query`` by cosine distance, optionally among ``allowed_ids``,
        through the vector graph saved beside the index and the changes logged since; without a graph
        that can be used, or for more than :data:`~indexer.store.sqlite.vectors.GRAPH_MAX_K`
        neighbours, by sqlite-vec's scan. The filter applies inside the search, so k hits come back
        when k exist."""
        if k > vectors.GRAPH_MAX_K:
            return self._scan(query, k, allowed_ids)
        # one snapshot (unless the caller holds one): the changes taken in and the rows re-scored agree
        with (
            self._search_lock,
            nullcontext() if self.store.db.in_transaction else self.connections.snapshot(),
        ):
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
        rows = self.connections.rows(
            f"SELECT v.rowid, v.embedding FROM json_each(?) AS j "
            f"JOIN {VECTOR_TABLE} AS v ON v.rowid = j.value",
            (json.dumps(chunk_ids.tolist()),),
        )
        ids = np.array([row[0] for row in rows], dtype=np.int64)
        return ids, vectors.vectors_from_blobs([row[1] for row in rows], self._dimension)

    def _scan(self, query: np.ndarray, k: int, allowed_ids: Sequence[int] | None) -> list[tuple[int, float]]:
        """sqlite-vec's exact KNN (a scan of every vector), or for more neighbours than it returns at
        once, every vector read and scored here."""
        if k > VEC0_MAX_K:
            try:
                rows = self.store.db.execute(f"SELECT rowid, embedding FROM {VECTOR_TABLE}")
                return vectors.exact_nearest(rows, self._dimension, query, k, allowed_ids)
            except apsw.Error as error:
                raise self.connections.failure(error) from error
        blob = np.asarray(query, dtype=np.float32).tobytes()
        if allowed_ids is None:
            sql = f"SELECT rowid, distance FROM {VECTOR_TABLE} WHERE embedding MATCH ? AND k = ?"
            return self.connections.rows(sql, (blob, k))
        sql = (
            f"SELECT rowid, distance FROM {VECTOR_TABLE} WHERE embedding MATCH ? AND k = ? "
            "AND rowid IN (SELECT value FROM json_each(?))"
        )
        return self.connections.rows(sql, (blob, k, json.dumps(list(allowed_ids))))

    def _vector_search(self, limit: int | None = None, with_graph: bool = False) -> VectorSearch | None:
        """The saved graph with the changes logged since, up to the latest (call with the search
        lock held); None when no graph can be used: the recorded file is missing, damaged or not the
        one recorded (not tried again while the record stays), or more than ``limit`` changes would
        have to be read to catch up from it. Below the size where scoring every row is as fast
        (:func:`~indexer.store.sqlite.vectors.searched_exactly`), the graph's float32 copy is
        searched instead, unless ``with_graph`` (a build folds changes into the graph itself)."""
        if limit is None:
            limit = vectors.OPEN_LIMIT_MANY if self.store.many_searches else vectors.OPEN_LIMIT_ONCE
        with nullcontext() if self.store.db.in_transaction else self.connections.snapshot():
            key = (
                self.store.get_meta(VECTOR_LOG_ID),
                self.store.get_meta(GRAPH_RECORD),
                self.store.get_meta(ROWS_RECORD),
            )
            latest = self._log_position()
            search = self._search
            if search is None or search.key != key or (with_graph and search.exact is not None):
                self._search = None  # let the old graph go before the new one is opened
                refused = key == self._refused_graph
                search = self._search = None if refused else self._open_search(key, latest, limit, with_graph)
            if search is not None and search.position < latest:
                self._catch_up(search, latest)
            if search is not None and search.audit is None and self.store.many_searches:
                search.audit = vectors.WalkAudit()  # a server measures whether walks are right
        return search

    def _open_search(
        self, key: tuple[str | None, str | None, str | None], latest: int, limit: int, with_graph: bool
    ) -> VectorSearch | None:
        record = vectors.GraphRecord.from_json(key[1])
        if latest - (record.position if record else 0) > limit:
            return None
        if record is None:  # no graph saved yet: every change since the log began is read
            return vectors.VectorSearch(None, 0, self._dimension, key)
        if not with_graph and record.readable and vectors.searched_exactly(record.vectors):
            exact = self._exact_search(record, key)
            if exact is not None:
                return exact
        try:
            search = vectors.VectorSearch.open(
                graph_path(self.store.path, record.slot), record, self._dimension, key
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
        try:
            rows = self._rows_file(record, key[2])
            if rows is None:
                return None
            return vectors.VectorSearch.open_exact(rows, record.position, self._dimension, key)
        except DamagedFile as damage:
            self._warn_rows(damage)
            return None

    def _rows_file(self, record: GraphRecord, rows_record: str | None) -> RowsFile | None:
        """The float32 rows saved with the graph ``record`` names, when the rows record is of that
        graph (else None: the rows are read from sqlite-vec).

        Raises:
            DamagedFile: the recorded file is missing, changed since it was saved, or damaged.
        """
        return vector_rows.RowsFile.open(
            rows_path(graph_path(self.store.path, record.slot)),
            vector_rows.RowsRecord.from_json(rows_record),
            record.slot,
            record.position,
            record.vectors,
            self._dimension,
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

        logging.getLogger(__name__).warning("warning: index %s: %s", self.store.path, message)

    def _log_position(self) -> int:
        """The position of the latest chunk change logged (positions only grow, see the migration)."""
        return self.connections.value(
            "SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'vector_log'), 0)"
        )

    def _catch_up(self, search: VectorSearch, latest: int) -> None:
        """Give ``search`` the chunks logged after its position up to ``latest``, with the vectors of
        those that exist now."""
        changed = [
            row[0]
            for row in self.connections.rows(
                "SELECT DISTINCT chunk_id FROM vector_log WHERE position > ? AND position <= ?",
                (search.position, latest),
            )
        ]
        changed_ids = np.array(changed, dtype=np.int64)
        search.catch_up(changed_ids, *self._vectors_of(changed_ids), latest)

    def update(self, min_changes: int | None = None) -> None:
        """Save a new vector graph beside the index when ``min_changes`` (default
        :data:`~indexer.store.sqlite.vectors.FOLD_AT_END`) or more chunk changes are logged since the
        saved one, or when the saved one cannot be used (missing, damaged, another version's): what a
        build does at its end (:meth:`SQLiteStore.finish_build`) and, with more changes, during it. Inside the
        caller's transaction (the state it folds is then the committed one), or in one of its own.

        The new file goes in the slot the record does not name, and the record follows it in the
        transaction: rolled back or killed, the index still names a complete file that it matches.
        The float32 rows are saved beside the graph the same way (a graph whose rows file is missing
        or does not match counts as not saved: it is written again).

        Raises:
            StorageError: a file could not be written (the index keeps its graph as it was).
        """
        # not has_vector_table(): it remembers what it saw for every thread, and a table this
        # transaction creates is not there yet for the others
        if not self.connections.rows("SELECT 1 FROM sqlite_master WHERE name = ?", (VECTOR_TABLE,)):
            return
        if min_changes is None:
            min_changes = vectors.FOLD_AT_END
        with nullcontext() if self.store.db.in_transaction else self.store.transaction():
            record = vectors.GraphRecord.from_json(self.store.get_meta(GRAPH_RECORD))
            latest = self._log_position()
            pending = latest - (record.position if record else 0)
            usable = self._checked_graph(record) if record is not None else None
            complete = usable is not None and self._rows_complete(usable)
            if pending < min_changes and (complete or record is None):
                return
            with self._search_lock:
                search = None
                if usable is not None and pending <= vectors.OPEN_LIMIT_MANY:
                    search = self._vector_search(limit=vectors.OPEN_LIMIT_MANY, with_graph=True)
                if search is None:  # a first graph, or changes too many to look up one by one
                    search = self._graph_from_rows(latest)
                self._save_graph(search, record)

    def _save_graph(self, search: VectorSearch, record: GraphRecord | None) -> None:
        """Fold ``search``'s changes into a new graph file with its rows, in the slot ``record``
        does not name, and record both (inside the caller's transaction)."""
        slot = next(slot for slot in SLOTS if record is None or slot != record.slot)
        path = graph_path(self.store.path, slot)
        try:
            # the rows first: they are read from the graph's rows file and changes before the fold
            rows_file = self._write_rows(rows_path(path), search)
            search.fold()
            saved_file = search.save(path)
        except OSError as error:
            raise StorageError(
                f"index {self.store.path}: saving its vector graph failed ({describe_failure(error, path)}); "
                "searches stay complete without it, and the next build saves it again"
            ) from error
        saved = vectors.GraphRecord(
            slot,
            search.position,
            search.graph_size,
            file=saved_file.file,
            sha256=saved_file.sha256,
            checked_ns=saved_file.checked_ns,
        )
        rows = vector_rows.RowsRecord(slot, search.position, search.graph_size, rows_file)
        self.store.set_meta({GRAPH_RECORD: saved.to_json(), ROWS_RECORD: rows.to_json()})
        self.connections.rows("DELETE FROM vector_log WHERE position <= ?", (saved.position,))
        search.key = (self.store.get_meta(VECTOR_LOG_ID), saved.to_json(), rows.to_json())
        search.rows = self._rows_file(saved, rows.to_json())
        # below the size where every row is scored, the next search reads the new copy instead
        self._search = None if vectors.searched_exactly(search.graph_size) else search

    def _write_rows(self, path: str, search: VectorSearch) -> tuple[int, ...]:
        """Write the float32 rows of ``search`` at its position to ``path``: from its rows file and
        changes, or, without one or when that file turns out damaged, from sqlite-vec."""
        blocks = search.row_blocks()
        if blocks is not None:
            try:
                return vector_rows.write_rows(path, blocks, self._dimension, search.position)
            except DamagedFile as damage:
                self._warn_rows(damage)
        return vector_rows.write_rows(path, self._unit_row_blocks(), self._dimension, search.position)

    def _checked_graph(self, record: GraphRecord) -> GraphRecord | None:
        """``record`` when the file it names holds the bytes it records (checked once for each
        identity the file has, in full only when that identity is not the recorded one); recorded
        anew when those bytes lie under another identity (the file was copied, moved or touched:
        readers then trust its identity again); None when the file cannot be used (inside the
        caller's transaction)."""
        if not record.readable:
            return None
        path = graph_path(self.store.path, record.slot)
        if self._graph_checked == (record.sha256, side_files.current_identity(path)):
            return record
        try:
            unchanged = side_files.check_recorded(path, record)
        except side_files.DamagedFile:
            return None
        if not unchanged and side_files.current_identity(path) != record.file:
            try:
                file, checked_ns = side_files.settle(path, record.sha256)
            except OSError:
                return None
            record = dataclasses.replace(record, file=file, checked_ns=checked_ns)
            self.store.set_meta({GRAPH_RECORD: record.to_json()})
        self._graph_checked = (record.sha256, side_files.current_identity(path))
        return record

    def _rows_complete(self, record: GraphRecord) -> bool:
        """Whether the rows file of the graph ``record`` names is the one recorded for it."""
        try:
            return vector_rows.RowsFile.check(
                rows_path(graph_path(self.store.path, record.slot)),
                vector_rows.RowsRecord.from_json(self.store.get_meta(ROWS_RECORD)),
                record.slot,
                record.position,
                record.vectors,
                self.store.dimension or 0,
            )
        except DamagedFile:
            return False

    def _unit_row_blocks(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Every vector in the index as (chunk ids, unit float32 rows) blocks, read from sqlite-vec
        (inside the writer's transaction): for a rows file when none can be started from."""
        try:
            rows = self.store.db.execute(f"SELECT rowid, embedding FROM {VECTOR_TABLE}")
            while batch := list(itertools.islice(rows, vectors.LOAD_ROWS)):
                ids = np.array([row[0] for row in batch], dtype=np.int64)
                floats = vectors.vectors_from_blobs([row[1] for row in batch], self._dimension)
                yield ids, vectors.unit_rows(floats)
        except apsw.Error as error:
            raise self.connections.failure(error) from error

    def _graph_from_rows(self, latest: int) -> VectorSearch:
        """A new graph of every vector in the index (at log position ``latest``, inside the writer's
        transaction): when no saved graph can be used or caught up."""
        self._search = None
        search = vectors.VectorSearch(None, latest, self._dimension)
        try:
            rows = self.store.db.execute(f"SELECT rowid, embedding FROM {VECTOR_TABLE}")
            while batch := list(itertools.islice(rows, vectors.LOAD_ROWS)):
                ids = np.array([row[0] for row in batch], dtype=np.int64)
                search.add_to_graph(
                    ids, vectors.vectors_from_blobs([row[1] for row in batch], self._dimension)
                )
        except apsw.Error as error:
            raise self.connections.failure(error) from error
        return search

    def status(self) -> dict[str, Any]:
        """How searches find neighbours, for ``index status``: the graph file, how many vectors it
        holds and how many changes it lacks, and the memory a searching process holds for it (the
        graph file's bytes, read into its memory; the changes scored beside it; the ids of the
        float32 copy). ``rows_file_bytes`` is that copy of the graph's vectors (0 when none
        matches): a search reads its candidates' rows from it, through the page cache the
        processes share, so it is counted apart, not in ``memory_bytes``. ``problems`` says what is
        wrong with either file (damaged, changed since it was saved, missing), which the next
        build mends."""
        record = vectors.GraphRecord.from_json(self.store.get_meta(GRAPH_RECORD))
        pending = self._log_position() - (record.position if record else 0)
        path = graph_path(self.store.path, record.slot) if record else None
        usable, unchanged, rows, graph_problem, rows_problem = False, True, None, None, None
        if record is not None and path is not None and record.readable:
            try:
                unchanged = side_files.check_recorded(path, record)
                usable = True
                rows = self._rows_file(record, self.store.get_meta(ROWS_RECORD))
            except side_files.DamagedFile as damage:
                if usable:
                    rows_problem = f"its float32 copy {damage}"
                else:
                    graph_problem = f"its graph {damage}"
        file_bytes = record.file[0] if usable and record is not None else 0
        exact = (
            usable and rows is not None and record is not None and vectors.searched_exactly(record.vectors)
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
        elif record is None and pending <= vectors.OPEN_LIMIT_ONCE:
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
            + pending * 4 * (self.store.dimension or 0)
            + (0 if rows is None else rows.ids_bytes()),
            "problems": [problem for problem in (graph_problem, rows_problem) if problem],
        }

    def update_during_build(self) -> None:
        """What a build does before each write: fold the changes piled up since the saved graph
        into a new one, as committed so far, once they are many
        (:data:`~indexer.store.sqlite.vectors.FOLD_DURING_BUILD`)."""
        self.update(vectors.FOLD_DURING_BUILD)

    def move_in(self, scratch: SQLiteStore) -> str | None:
        """Move the graph of ``scratch`` (a rebuild's new index) beside this index, into the slot this
        index's record does not name, and make the scratch's record name it there; the slot, or None
        when the scratch has no graph this version reads.

        Raises:
            StorageError: the files could not be moved.
        """
        record = vectors.GraphRecord.from_json(scratch.get_meta(GRAPH_RECORD))
        current = vectors.GraphRecord.from_json(self.store.get_meta(GRAPH_RECORD))
        slot = next(slot for slot in SLOTS if current is None or slot != current.slot)
        if record is None or not record.readable:
            return None
        try:
            self._move_graph_in(scratch, record, slot)
        except OSError as error:
            raise StorageError(
                f"index {self.store.path}: moving its new vector graph beside it failed "
                f"({describe_failure(error, self.store.path)})"
            ) from error
        return slot

    def remove_unrecorded(self, kept_slot: str | None) -> None:
        """Remove the graphs (and rows) of every slot but ``kept_slot``: once an index is replaced, no
        record names them any more."""
        for old in SLOTS:
            if old != kept_slot:
                graph = graph_path(self.store.path, old)
                for path in (graph, rows_path(graph)):
                    with suppress(OSError):  # an open file cannot be removed on Windows: left for later
                        os.remove(path)

    def _move_graph_in(self, scratch: SQLiteStore, record: GraphRecord, slot: str) -> None:
        """Move the graph (and its rows) ``record`` names beside ``scratch`` to ``slot`` beside this
        index, and record them there in ``scratch``: a rename changes a file's change time, so the
        moved files are recorded anew (the graph once its bytes are checked again)."""
        source = graph_path(scratch.path, record.slot)
        target = graph_path(self.store.path, slot)
        os.replace(source, target)
        file, checked_ns = side_files.settle(target, record.sha256)
        moved = dataclasses.replace(record, slot=slot, file=file, checked_ns=checked_ns)
        values = {GRAPH_RECORD: moved.to_json()}
        rows = vector_rows.RowsRecord.from_json(scratch.get_meta(ROWS_RECORD))
        if rows is not None and rows.slot == record.slot:
            with suppress(FileNotFoundError):  # without its rows the graph re-scores on sqlite-vec's
                os.replace(rows_path(source), rows_path(target))
                rows_file = side_files.identity(os.lstat(rows_path(target)))
                values[ROWS_RECORD] = dataclasses.replace(rows, slot=slot, file=rows_file).to_json()
        with scratch.transaction():
            scratch.set_meta(values)
