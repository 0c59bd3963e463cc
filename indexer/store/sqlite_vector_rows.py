"""The float32 rows of the vector graph's chunks, in a file saved beside the graph, for exact scores.

The graph holds int8 rows; the k best of its candidates are scored again on float32 so that the
distances a search returns are exact search's. Read from sqlite-vec, each of those rows costs a
lookup in a vec0 chunk (one large blob per chunk of rows), which made most of a search's time.
This file holds the same rows, unit length, one after another: a search reads its candidates' rows
and nothing else, and a one-off query opens it without reading it.

It is a cache of sqlite-vec, never the durable copy: it is written whenever the graph is (same slot,
same atomic write and rename), its record in the index names the graph's log position, its row
count and the file's identity, and its header repeats the position, count and dimension. A file
that does not match in every one of these, or whose size is not what its header implies, is not
used: the rows are read from sqlite-vec instead, and the next build writes the file again.

Layout: a header (magic, rows, dimension, log position: four 8-byte fields), the rows (float32,
row-major), then, 8-byte aligned, the chunk ids sorted and the row of each sorted id.
"""

from __future__ import annotations

import json
import os
import threading
import weakref
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import TypeVar

import numpy as np

MAGIC = b"IDXROWS1"
HEADER = np.dtype([("magic", "S8"), ("rows", "<i8"), ("dimension", "<i8"), ("position", "<i8")])


Record = TypeVar("Record", bound="SideFileRecord")


@dataclass(frozen=True)
class SideFileRecord:
    """What the index says of a file kept beside it (the graph, the rows): the slot it is in, the log
    position it reflects, how many vectors it holds, and which file it is (size, modification time
    in ns, inode), kept in the index's meta as JSON."""

    slot: str
    position: int
    vectors: int
    file: tuple[int, int, int]

    @classmethod
    def from_json(cls: type[Record], text: str | None) -> Record | None:
        if text is None:
            return None
        fields = json.loads(text)
        return cls(**{**fields, "file": tuple(fields["file"])})

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)


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

    The ids are memory-mapped (16 bytes a row); the rows are read from the file, each run of rows that follow
    one another in it at once (one read per candidate, few for a folder's chunks). A
    mapping of the rows would do the same reads, but the kernel maps the whole cached block around
    each page touched (large folios, readahead), and within a few hundred searches a process would
    hold the whole file as its own resident memory. Read, the file's pages stay in the shared page
    cache, which the kernel may drop."""

    def __init__(
        self, descriptor: int, rows: int, dimension: int, sorted_ids: np.ndarray, row_of: np.ndarray
    ):
        self.descriptor = descriptor
        self.dimension = dimension
        self.row_bytes = dimension * 4
        self.rows = rows
        self.sorted_ids = sorted_ids
        self.row_of = row_of
        self._read_lock = threading.Lock()  # for systems without pread
        weakref.finalize(self, os.close, descriptor)

    @classmethod
    def open(
        cls, path: str, record: RowsRecord | None, slot: str, position: int, vectors: int, dimension: int
    ) -> RowsFile | None:
        """The file at ``path`` when ``record`` names it and it holds the graph's rows (slot, log
        position, count) of this dimension; else None (missing, stale, damaged or truncated)."""
        if record is None or (record.slot, record.position, record.vectors) != (slot, position, vectors):
            return None
        try:
            descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except OSError:
            return None
        try:
            info = os.fstat(descriptor)
            header = np.frombuffer(os.read(descriptor, HEADER.itemsize), dtype=HEADER)
        except OSError:
            os.close(descriptor)
            return None
        if (
            (info.st_size, info.st_mtime_ns, info.st_ino) != record.file
            or info.st_size != file_size(vectors, dimension)
            or len(header) != 1
            or (
                bytes(header["magic"][0]),
                int(header["rows"][0]),
                int(header["dimension"][0]),
                int(header["position"][0]),
            )
            != (MAGIC, vectors, dimension, position)
        ):
            os.close(descriptor)
            return None
        if vectors == 0:
            empty = np.empty(0, dtype=np.int64)
            return cls(descriptor, 0, dimension, empty, empty)
        start = ids_offset(vectors, dimension)
        ids = np.memmap(path, dtype=np.int64, mode="r", offset=start, shape=(2, vectors))
        return cls(descriptor, vectors, dimension, ids[0], ids[1])

    def __len__(self) -> int:
        return self.rows

    def lookup(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(those of ``ids`` the file holds, in their order; their unit float32 rows)."""
        ids = np.asarray(ids, dtype=np.int64)
        if self.rows == 0 or len(ids) == 0:
            return ids[:0], np.empty((0, self.dimension), dtype=np.float32)
        places = np.minimum(np.searchsorted(self.sorted_ids, ids), self.rows - 1)
        held = self.sorted_ids[places] == ids
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
        return ids[held], found

    def block(self, start: int, stop: int) -> np.ndarray:
        """Rows ``start`` to ``stop`` (in file order), for a new rows file."""
        stop = min(stop, self.rows)
        if stop <= start:
            return np.empty((0, self.dimension), dtype=np.float32)
        return self._read(start, stop - start)

    def ids_in_row_order(self) -> np.ndarray:
        ids = np.empty(self.rows, dtype=np.int64)
        ids[self.row_of] = self.sorted_ids
        return ids

    def size_bytes(self) -> int:
        return file_size(self.rows, self.dimension)

    def ids_bytes(self) -> int:
        """What a searching process maps of the file: its ids (the rows are read, not mapped)."""
        return self.rows * 16

    def _read(self, row: int, count: int) -> np.ndarray:
        """``count`` rows from ``row`` on, in one read."""
        offset = HEADER.itemsize + row * self.row_bytes
        size = count * self.row_bytes
        if hasattr(os, "pread"):
            data = os.pread(self.descriptor, size, offset)
        else:
            with self._read_lock:  # a seek and a read as one step
                os.lseek(self.descriptor, offset, os.SEEK_SET)
                data = os.read(self.descriptor, size)
        if len(data) != size:
            raise OSError(f"rows file ends before row {row + count}: it changed since it was checked")
        return np.frombuffer(data, dtype=np.float32).reshape(count, self.dimension)


def write_rows(
    path: str, blocks: Iterable[tuple[np.ndarray, np.ndarray]], dimension: int, position: int
) -> tuple[int, int, int]:
    """Write (chunk ids, unit float32 rows) blocks to ``path`` in one step, as the graph is written: a
    scratch file, synced, renamed over. Returns the new file's identity (size, mtime ns, inode)."""
    scratch = path + ".tmp"
    ids: list[np.ndarray] = []
    with open(scratch, "wb") as out:
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
        out.flush()
        os.fsync(out.fileno())
    os.replace(scratch, path)
    info = os.stat(path)
    return info.st_size, info.st_mtime_ns, info.st_ino
