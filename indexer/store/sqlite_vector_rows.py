"""The float32 rows of the vector graph's chunks, in a file saved beside the graph, for exact scores.

The graph holds int8 rows; the k best of its candidates are scored again on float32 so that the
distances a search returns are exact search's. Read from sqlite-vec, each of those rows costs a
lookup in a vec0 chunk (one large blob per chunk of rows), which made most of a search's time.
This file holds the same rows, unit length, one after another: a search reads its candidates' rows
and nothing else, and a one-off query opens it without reading it.

It is a cache of sqlite-vec, never the durable copy: it is written whenever the graph is (same slot,
written the same way: :func:`indexer.store.sqlite_side_files.replacing`), its record in the index
names the graph's log position, its row count and the file's identity, and its header repeats the
position, count and dimension. A file that does not match in every one of these is not used: the
rows are read from sqlite-vec instead (with one warning), and the next build writes the file again.

Nothing of it is mapped: its ids are read into memory when it is opened, its rows with ``pread``
when a search needs them, and after every read the file's identity is asked again (one ``fstat``).
A write to the file changes its change time, so rows rewritten in place under a running process,
or a file truncated under it, are seen at the next read: the search drops the file and goes on
with sqlite-vec's rows, and no score ever comes from bytes the index did not record. (Unlike the
graph's, its identity is recorded without waiting out the clock tick of its rename: a write in that
tick could change scores, never crash a process, and whoever can write beside the index can as
well replace the index itself.)

Layout: a header (magic, rows, dimension, log position: four 8-byte fields), the rows (float32,
row-major), then, 8-byte aligned, the chunk ids sorted and the row of each sorted id.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from indexer.store.sqlite_side_files import (
    DamagedFile,
    Identity,
    SideFileRecord,
    identity,
    open_regular,
    other_size,
    read_private,
    replacing,
)

MAGIC = b"IDXROWS1"
HEADER = np.dtype([("magic", "S8"), ("rows", "<i8"), ("dimension", "<i8"), ("position", "<i8")])
CHANGED = "changed since the index recorded it (written, truncated or replaced)"


@dataclass(frozen=True)
class RowsRecord(SideFileRecord):
    """The rows file's record: the graph slot it belongs to, with the graph's position and count."""


def rows_path(graph_path: str) -> str:
    return graph_path + ".f32"


def ids_offset(rows: int, dimension: int) -> int:
    end = HEADER.itemsize + rows * dimension * 4
    return -(-end // 8) * 8


def file_size(rows: int, dimension: int) -> int:
    return ids_offset(rows, dimension) + rows * 16


class RowsFile:
    """A saved rows file: :meth:`lookup` gives the rows of chunk ids.

    The ids are read into memory when it is opened (16 bytes a row); the rows are read from the file,
    each run of rows that follow one another in it at once (one read per candidate, few for a
    folder's chunks). A mapping of the rows would do the same reads, but the kernel maps the whole
    cached block around each page touched (large folios, readahead), and within a few hundred
    searches a process would hold the whole file as its own resident memory; and a mapped file
    truncated under the process faults it. Read, the file's pages stay in the shared page cache,
    which the kernel may drop."""

    def __init__(
        self,
        descriptor: int,
        path: str,
        recorded: Identity,
        dimension: int,
        sorted_ids: np.ndarray,
        row_of: np.ndarray,
    ):
        self.descriptor = descriptor
        self.path = path
        self.recorded = recorded
        self.dimension = dimension
        self.row_bytes = dimension * 4
        self.rows = len(sorted_ids)
        self.sorted_ids = sorted_ids
        self.row_of = row_of
        self._read_lock = threading.Lock()  # for systems without pread
        weakref.finalize(self, os.close, descriptor)

    @classmethod
    def open(
        cls, path: str, record: RowsRecord | None, slot: str, position: int, vectors: int, dimension: int
    ) -> RowsFile | None:
        """The file at ``path``, its ids read, when ``record`` is of the graph's rows (slot, log
        position, count); None when it is not (a record left from another graph).

        Raises:
            DamagedFile: the recorded file is missing, changed since it was recorded, or damaged.
        """
        if not is_record_of(record, slot, position, vectors):
            return None
        assert record is not None
        descriptor = open_regular(path)
        try:
            check_header(descriptor, path, record, dimension)
            start = ids_offset(vectors, dimension)
            ids = read_private(descriptor, vectors * 16, path, offset=start).view("<i8").reshape(2, vectors)
            if identity(os.fstat(descriptor)) != record.file:
                raise DamagedFile(path, "changed while it was opened")
            sorted_ids, row_of = ids[0], ids[1]
            if vectors and (
                np.any(sorted_ids[1:] <= sorted_ids[:-1]) or row_of.min() < 0 or row_of.max() >= vectors
            ):
                raise DamagedFile(path, "holds a damaged list of chunk ids")
        except BaseException:
            os.close(descriptor)
            raise
        return cls(descriptor, path, record.file, dimension, sorted_ids, row_of)

    @staticmethod
    def check(
        path: str, record: RowsRecord | None, slot: str, position: int, vectors: int, dimension: int
    ) -> bool:
        """Whether the file at ``path`` is the graph's rows as recorded, by its identity and header
        (not its ids: what a build asks at every commit).

        Raises:
            DamagedFile: as :meth:`open`.
        """
        if not is_record_of(record, slot, position, vectors):
            return False
        assert record is not None
        descriptor = open_regular(path)
        try:
            check_header(descriptor, path, record, dimension)
        finally:
            os.close(descriptor)
        return True

    def __len__(self) -> int:
        return self.rows

    def lookup(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(those of ``ids`` the file holds, in their order; their unit float32 rows).

        Raises:
            DamagedFile: the file changed since it was recorded (its rows cannot be trusted).
        """
        ids = np.asarray(ids, dtype=np.int64)
        if self.rows == 0 or len(ids) == 0:
            return ids[:0], np.empty((0, self.dimension), dtype=np.float32)
        places, held = self.places(ids)
        wanted = self.row_of[places[held]]
        found = np.empty((len(wanted), self.dimension), dtype=np.float32)
        if len(wanted) == 0:
            return ids[held], found
        # rows that follow one another in the file (a folder's chunks, written together) in one read
        order = np.argsort(wanted, kind="stable")
        in_file_order = wanted[order]
        starts = np.flatnonzero(np.diff(in_file_order, prepend=-2) != 1)
        stops = np.append(starts[1:], len(in_file_order))
        for start, stop in zip(starts.tolist(), stops.tolist(), strict=True):
            found[order[start:stop]] = self._read(int(in_file_order[start]), stop - start)
        self._check_unchanged()
        return ids[held], found

    def places(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(where each of ``ids`` is or would be in the sorted ids, whether the file holds it): the
        row of a held id is ``row_of[place]``."""
        ids = np.asarray(ids, dtype=np.int64)
        if self.rows == 0:
            return np.zeros(len(ids), dtype=np.int64), np.zeros(len(ids), dtype=bool)
        places = np.minimum(np.searchsorted(self.sorted_ids, ids), self.rows - 1)
        return places, self.sorted_ids[places] == ids

    def block(self, start: int, stop: int) -> np.ndarray:
        """Rows ``start`` to ``stop`` (in file order), for a new rows file.

        Raises:
            DamagedFile: as :meth:`lookup`.
        """
        stop = min(stop, self.rows)
        if stop <= start:
            return np.empty((0, self.dimension), dtype=np.float32)
        rows = self._read(start, stop - start)
        self._check_unchanged()
        return rows

    def ids_in_row_order(self) -> np.ndarray:
        ids = np.empty(self.rows, dtype=np.int64)
        ids[self.row_of] = self.sorted_ids
        return ids

    def size_bytes(self) -> int:
        return file_size(self.rows, self.dimension)

    def ids_bytes(self) -> int:
        """What a searching process holds of the file: its ids (the rows are read when needed)."""
        return self.rows * 16

    def _read(self, row: int, count: int) -> np.ndarray:
        """``count`` rows from ``row`` on, in one read."""
        offset = HEADER.itemsize + row * self.row_bytes
        size = count * self.row_bytes
        try:
            if hasattr(os, "pread"):
                data = os.pread(self.descriptor, size, offset)
            else:
                with self._read_lock:  # a seek and a read as one step
                    os.lseek(self.descriptor, offset, os.SEEK_SET)
                    data = os.read(self.descriptor, size)
        except OSError as error:
            raise DamagedFile(self.path, f"cannot be read ({error.strerror})") from error
        if len(data) != size:
            raise DamagedFile(self.path, f"ends before row {row + count}: it was truncated")
        return np.frombuffer(data, dtype=np.float32).reshape(count, self.dimension)

    def _check_unchanged(self) -> None:
        """Raise unless the file is still the recorded one: a write before this, even one during the
        reads just made, changed its change time."""
        if identity(os.fstat(self.descriptor)) != self.recorded:
            raise DamagedFile(self.path, CHANGED)


def is_record_of(record: RowsRecord | None, slot: str, position: int, vectors: int) -> bool:
    """Whether ``record`` is of the graph in ``slot`` at ``position`` with ``vectors`` rows."""
    return record is not None and (record.slot, record.position, record.vectors) == (slot, position, vectors)


def check_header(descriptor: int, path: str, record: RowsRecord, dimension: int) -> None:
    """Raise unless the open file is the recorded one and its header says what its record does."""
    info = os.fstat(descriptor)
    if identity(info) != record.file:
        raise DamagedFile(path, CHANGED)
    if info.st_size != file_size(record.vectors, dimension):
        raise DamagedFile(path, other_size(info.st_size, file_size(record.vectors, dimension)))
    header = np.frombuffer(read_private(descriptor, HEADER.itemsize, path), dtype=HEADER)
    if len(header) != 1 or (
        bytes(header["magic"][0]),
        int(header["rows"][0]),
        int(header["dimension"][0]),
        int(header["position"][0]),
    ) != (MAGIC, record.vectors, dimension, record.position):
        raise DamagedFile(path, "holds another header than the index recorded")


def write_rows(
    path: str, blocks: Iterable[tuple[np.ndarray, np.ndarray]], dimension: int, position: int
) -> Identity:
    """Write (chunk ids, unit float32 rows) blocks to ``path`` in one step, as the graph is written
    (:func:`~indexer.store.sqlite_side_files.replacing`). Returns the new file's identity."""
    ids: list[np.ndarray] = []
    with replacing(path) as out:
        out.write(bytes(HEADER.itemsize))
        for block_ids, block_rows in blocks:
            rows = np.ascontiguousarray(block_rows, dtype=np.float32).reshape(-1, dimension)
            if len(rows) != len(block_ids):
                raise ValueError("a block of rows and its ids differ in length")
            out.write(rows.tobytes())
            ids.append(np.asarray(block_ids, dtype=np.int64))
        every = np.concatenate(ids) if ids else np.empty(0, dtype=np.int64)
        out.write(bytes(ids_offset(len(every), dimension) - out.tell()))
        order = np.argsort(every, kind="stable")
        out.write(every[order].tobytes())
        out.write(order.astype(np.int64).tobytes())
        header = np.array([(MAGIC, len(every), dimension, position)], dtype=HEADER)
        out.seek(0)
        out.write(header.tobytes())
    return identity(os.lstat(path))
