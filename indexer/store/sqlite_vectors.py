"""Nearest-neighbour search through a graph of the vectors saved beside the index file.

sqlite-vec's PyPI build scans every vector (70-150 ms per 100,000 of dimension 384), and exact search
in memory is a matrix product as long as the rows are many. An HNSW graph finds neighbours by walking
from vector to vector, in a time that grows with the logarithm of the rows. The vectors stay in the
SQLite file, the durable copy; the graph is rebuilt from it whenever it cannot be trusted. Choices
(figures in bench/RESULTS.md, from bench/bench_query.py, which measures the candidates side by side):

- **usearch** rather than faiss or hnswlib: it loads a saved graph from a buffer without parsing it
  into structures of its own (it searches the bytes as they are), removes and re-adds keys in place,
  takes our chunk ids as keys, and compares int8 vectors by cosine with SIMD kernels that need no
  AVX-512. faiss's 8-bit storage has one range per dimension, which loses the small differences of
  vectors that share a direction, and its graphs cannot remove; hnswlib stores float32 only (1.5 GB
  per million vectors of 384) and ships no wheels.
- **Read, never mapped, and checked first**: usearch trusts its file (damaged bytes make it read and
  write out of bounds: the process dies of SIGSEGV), and a mapped file truncated or rewritten under
  a running process faults it (SIGBUS). So a search reads the whole file into its own memory, and
  hands it to usearch only once it is shown to be the file the index recorded, by its identity or
  its SHA-256 (:mod:`indexer.store.sqlite_side_files`); whatever happens to the file afterwards
  cannot reach that copy. A file that is not the recorded one is never parsed: searches scan with
  sqlite-vec, with one warning, and the next build saves the graph again.
- **int8, one scale per row**: cosine ignores a vector's length, so each unit vector is stored with its
  largest component at 127 (usearch's own conversion maps 1.0 to 127, leaving the small components
  of dense vectors 3 bits): a quarter of float32's memory. int8 still moves cosines by about 4e-4,
  more than the gaps between the nearest neighbours of dense vectors (recall@10 about 0.975), so the
  graph's candidates (``EXTRA_CANDIDATES`` more than asked for) are scored on their int8 rows with
  the float32 query, and those that may be among the k best (above the k-th best, or too near it to
  tell their side: ``INT8_BAND``) again on their float32 rows: the distances returned are exact
  search's (scores, thresholds and calibration are float32 cosines; int8 moves those of sparse
  vectors by up to 3e-3). Those rows come from a float32 copy of the graph's vectors saved beside
  it (:mod:`indexer.store.sqlite_vector_rows`), from which a search reads its candidates' rows
  only; read from sqlite-vec instead, each costs 0.1-0.3 ms (a vec0 chunk is one large
  blob), which is what a search does when that copy is missing or does not match the graph.
- **What the file lacks**: every chunk written or deleted is logged in the index (``vector_log``, by
  triggers), and the graph's record in the index names the log position the file reflects and which
  file it is (its identity and SHA-256). A search reads the chunks logged after that position:
  those deleted or replaced since are dropped from the graph's answers, those added are scored
  exactly beside it. A file that does not match its record is never used. The builder folds the
  changes into a new file when they grow (:data:`FOLD_DURING_BUILD`, :data:`FOLD_AT_END`), written
  beside the one in use (two slots), so the file a record names is never overwritten.
- **How wide a walk is**: int8 is not what a walk misses (the int8 order of every row holds the k
  best within its first ``k + EXTRA_CANDIDATES``); the walk is. A graph built with a narrow queue
  (``EXPANSION_ADD``) links some rows so poorly that no walk reaches them, and a walk of a fixed
  breadth explores a shrinking share of a growing graph: the graph is built with a wide queue, and
  searched with one that grows with the rows (:func:`expansion`).
- **Exact below a size**: a walk scores about :func:`scored_by_walk` rows, each read at a random
  place in memory with a queue kept in order; exact search scores every row, one after another, in
  a matrix product. Below the size where the two cost the same (:func:`searched_exactly`, from
  :data:`WALK_ROW_COST`, what a row scored by a walk costs in rows scored in order), a search reads
  the float32 copy into memory once and scores all of it: as fast, and never wrong. The graph is
  then neither read nor imported; the builder still keeps it, for when the index grows past that size.
- **Filters**: a walk that must find k allowed rows among its neighbours costs per neighbour asked,
  about the rows divided by the filter's share, and finds the allowed rows far from the query
  poorly. While the allowed rows are fewer than such a walk would score (:func:`scored_by_walk`),
  they are all scored on the float32 copy instead, read a run of consecutive rows at a time (a
  folder's chunks were written together): exact among them, in about the time of the walk. Beyond,
  the graph is asked, and asked again for more while fewer than k pass.
"""

from __future__ import annotations

import ctypes
import hashlib
import itertools
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

import numpy as np

from indexer.store.sqlite_side_files import (
    DamagedFile,
    Identity,
    SideFileRecord,
    read_recorded,
    replacing,
    settle,
)
from indexer.store.sqlite_vector_rows import RowsFile

if TYPE_CHECKING:
    from usearch.index import Index as Graph


@cache
def graph_class() -> type[Graph]:
    """usearch's index class, imported on first use: a process that never searches vectors (a
    keyword query, a query through a server) does not pay for its import (urllib among others).

    usearch's Linux wheels carry their own copy of the C++ runtime, and the loader shares that
    copy's unique symbols with every library loaded after it: onnxruntime, loaded later, then runs
    the system's runtime on usearch's copy and crashes at its import. So the system's copy is loaded
    first, and is the one everything shares."""
    if sys.platform.startswith("linux"):
        with suppress(OSError):
            ctypes.CDLL("libstdc++.so.6", mode=ctypes.RTLD_GLOBAL)
    from usearch.index import Index

    return Index


CONNECTIVITY = 16
EXPANSION_ADD = 128
#: What a saved graph must have been made with to be read: the library's file format, how vectors
#: are stored in it, and the build queue that links them (a graph built with a narrower one leaves
#: rows no walk reaches). Another value means the file is rebuilt, by the next build.
LAYOUT = f"usearch-2 cos i8-row-scaled queue-{EXPANSION_ADD}"
#: A walk's breadth (ef) up to REFERENCE_ROWS rows, and how many times wider per tenfold beyond.
EXPANSION_SEARCH = 512
REFERENCE_ROWS = 100_000
EXPANSION_GROWTH = 2.0
EXTRA_CANDIDATES = 20
#: What a row scored in a graph walk costs, in rows scored in order by exact search (a read at a
#: random place in memory and the walk's queue kept in order, against a streamed multiply-add):
#: measured by bench/bench_query.py (bench/RESULTS.md, search at scale).
WALK_ROW_COST = 12
#: int8 moves a cosine by about 4e-4 (up to about 1e-3 for a row with a large component): candidates
#: scored this near the k-th best may lie on either side of it, and are scored again on float32.
INT8_BAND = 1e-3
#: A filter's graph search asks for the neighbours its share predicts for k + FILTER_EXTRA of them to
#: pass, FILTER_MARGIN times over, and twice as many (WIDEN) while fewer than k pass.
FILTER_EXTRA = 2
FILTER_MARGIN = 1.5
WIDEN = 2
INT8_MAX = 127
#: Pending changes at which a build folds them into a new graph file: at its end, and during it.
FOLD_AT_END = 1_000
FOLD_DURING_BUILD = 50_000
#: The most pending changes a search reads from the index when it opens the graph (each costs a
#: vector looked up); beyond, a one-off search scans sqlite-vec, which costs the same for any number.
OPEN_LIMIT_ONCE = 10_000
OPEN_LIMIT_MANY = 200_000
SLOTS = ("a", "b")
#: The most neighbours asked of the graph; more are found by reading every vector (as on PostgreSQL,
#: whose graph keeps at most 1,000 candidates). Asked for that many, a graph walk costs about what a
#: scan does, and the int8 order it takes them in is least sure far from the query.
GRAPH_MAX_K = 1_000
#: What gives the float32 rows of chunk ids, for the final scores: (the ids it found, their rows).
ExactRows = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
#: Blocks of (chunk ids, unit float32 rows), as a rows file is written from.
RowBlocks = Iterable[tuple[np.ndarray, np.ndarray]]
#: Rows read from the index at a time when a graph is built from all of them.
LOAD_ROWS = 16_384


@dataclass(frozen=True)
class GraphRecord(SideFileRecord):
    """The graph file's record, with the layout its rows are stored in."""

    layout: str = LAYOUT

    @property
    def readable(self) -> bool:
        """Whether this version reads the file it names: its layout, and a SHA-256 to check it by (a
        record of an older version has none; the next build saves the graph again)."""
        return self.layout == LAYOUT and bool(self.sha256)


@dataclass(frozen=True)
class SavedFile:
    """A file just saved beside the index: what its record says of it."""

    file: Identity
    sha256: str
    checked_ns: int


def graph_path(index_path: str, slot: str) -> str:
    return f"{index_path}.vectors-{slot}"


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1)


def quantize(unit: np.ndarray) -> np.ndarray:
    """int8 rows, each scaled so its largest component is 127 (a zero row stays zero)."""
    largest = np.abs(unit).max(axis=-1, keepdims=True)
    return np.round(unit * (INT8_MAX / np.where(largest > 0, largest, 1))).astype(np.int8)


def vectors_from_blobs(blobs: Sequence[bytes], dimension: int) -> np.ndarray:
    """float32 rows from sqlite-vec's blobs."""
    return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dimension)


def new_graph(dimension: int) -> Graph:
    return graph_class()(
        ndim=dimension,
        metric="cos",
        dtype="i8",
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )


def expansion(size: int) -> int:
    """How many candidates a walk of a graph of ``size`` rows keeps in its queue (HNSW's ef). A walk
    of a fixed breadth explores a share of the graph that shrinks as it grows, and misses more of
    the true neighbours: beyond :data:`REFERENCE_ROWS`, where :data:`EXPANSION_SEARCH` finds them
    on every set measured, it grows :data:`EXPANSION_GROWTH` times for every tenfold rows."""
    if size <= REFERENCE_ROWS:
        return EXPANSION_SEARCH
    return math.ceil(EXPANSION_SEARCH * EXPANSION_GROWTH ** math.log10(size / REFERENCE_ROWS))


def scored_by_walk(count: int, size: int) -> int:
    """About how many rows a walk asked for ``count`` neighbours scores: each of the candidates it
    takes from its queue (ef, or ``count`` when more) has its neighbours' rows scored, up to twice
    :data:`CONNECTIVITY` at the base layer, about half of them not yet seen. Each costs a row read at
    a random place in memory; an allowed row scored on the float32 copy costs a row read in order."""
    return max(expansion(size), count) * CONNECTIVITY


def searched_exactly(size: int) -> bool:
    """Whether scoring every one of ``size`` rows costs no more than a walk of a graph of them
    (asked for fewer neighbours than its queue holds: a search asked for more walks further, and
    exact search costs it nothing more)."""
    return size <= WALK_ROW_COST * scored_by_walk(0, size)


class VectorSearch:
    """A graph of the vectors with what it lacks since it was saved; answers ``nearest`` like the
    store's KNN (cosine distance).

    ``position`` is the log position everything here reflects: the graph's own (``graph_position``)
    plus ``stale`` (ids the graph holds whose chunks were deleted or replaced since) and ``added``
    (float32 unit rows, with ``added_ids``, of chunks written since). ``key`` says which index and
    record it was opened from. ``graph`` is None while no graph is saved and nothing went into one:
    the few vectors of a small index are searched without importing usearch (which imports an HTTP
    client, as a query must not). ``rows`` is the float32 copy of the graph's vectors saved beside
    it, when there is one that matches the graph (else candidates are re-scored on sqlite-vec's).
    ``exact`` is that copy read whole (with ``exact_ids``, its chunk ids in row order) when the
    search scores every row instead of walking the graph (:meth:`open_exact`); ``graph`` is then
    None.
    """

    def __init__(self, graph: Graph | None, position: int, dimension: int, key: object = None) -> None:
        self.graph = graph
        self.graph_position = position
        self.position = position
        self.dimension = dimension
        self.key = key
        self.viewed = False
        self.saved: np.ndarray | None = None
        self.stale = np.empty(0, dtype=np.int64)
        self.added_ids = np.empty(0, dtype=np.int64)
        self.added = np.empty((0, dimension), dtype=np.float32)
        self.rows: RowsFile | None = None
        self.exact: np.ndarray | None = None
        self.exact_ids = np.empty(0, dtype=np.int64)

    @classmethod
    def open(cls, path: str, record: GraphRecord, dimension: int, key: object = None) -> VectorSearch | None:
        """The graph saved at ``path``, read into this process's memory once its bytes are shown to
        be the recorded ones; None when the record is of a layout this version does not read.

        Raises:
            DamagedFile: the file is missing, or is not the recorded one (then it is never parsed).
        """
        if not record.readable:
            return None
        saved = read_recorded(path, record)
        try:
            graph = graph_class().restore(saved.data, view=True)
        except (RuntimeError, ValueError) as error:
            raise DamagedFile(path, f"cannot be read as a graph ({error})") from error
        if graph is None or graph.ndim != dimension or len(graph) != record.vectors:
            raise DamagedFile(path, "holds other vectors than the index recorded")
        search = cls(graph, record.position, dimension, key)
        search.viewed, search.saved = True, saved  # usearch reads the buffer as it is: kept alive here
        return search

    @classmethod
    def open_exact(cls, rows: RowsFile, position: int, dimension: int, key: object = None) -> VectorSearch:
        """A search that scores every row of ``rows``, the float32 copy of the graph saved at
        ``position``, read into memory here; the graph itself is not read (see
        :func:`searched_exactly`). It cannot fold: a build opens the graph.

        Raises:
            DamagedFile: the file changed since it was recorded.
        """
        search = cls(None, position, dimension, key)
        search.rows = rows
        search.exact = rows.block(0, len(rows))
        search.exact_ids = rows.ids_in_row_order()
        return search

    def __len__(self) -> int:
        return self.graph_size - len(self.stale) + len(self.added_ids)

    @property
    def graph_size(self) -> int:
        """The vectors in the graph itself, or in its copy searched exactly (stale ones included)."""
        return len(self.exact_ids) if self.graph is None else len(self.graph)

    @property
    def pending(self) -> int:
        """Log entries taken in since the graph was saved."""
        return self.position - self.graph_position

    def memory_bytes(self) -> int:
        """What this search holds: the graph (its file's bytes, or a graph of its own) and the changes."""
        if self.graph is None:
            graph = 0 if self.exact is None else self.exact.nbytes + self.exact_ids.nbytes
        else:
            graph = self.graph.serialized_length if self.viewed else self.graph.memory_usage
        return int(graph + self.added.nbytes + self.added_ids.nbytes + self.stale.nbytes)

    # -- keeping up -----------------------------------------------------------------------------

    def catch_up(self, changed: np.ndarray, ids: np.ndarray, vectors: np.ndarray, position: int) -> None:
        """Take in the log up to ``position``: ``changed``, the chunk ids logged since, of which
        ``ids`` (with their ``vectors``) exist now; the others were deleted."""
        changed = np.asarray(changed, dtype=np.int64)
        if len(changed):
            held = np.zeros(len(changed), dtype=bool)
            if self.graph is not None and len(self.graph):
                held = np.asarray(self.graph.contains(changed.astype(np.uint64)), dtype=bool)
            elif self.rows is not None and self.exact is not None:
                held = self.rows.places(changed)[1]
            # sorted, each once; not np.union1d, whose np.unique loads numpy.ma (15 ms) into every
            # one-off query that catches up with a build
            merged = np.sort(np.concatenate([self.stale, changed[held]]))
            self.stale = (
                merged[np.concatenate(([True], merged[1:] != merged[:-1]))] if len(merged) else merged
            )
            keep = ~np.isin(self.added_ids, changed)
            self.added_ids = np.concatenate([self.added_ids[keep], np.asarray(ids, dtype=np.int64)])
            self.added = np.vstack([self.added[keep], unit_rows(vectors).reshape(-1, self.dimension)])
        self.position = position

    def add_to_graph(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Put rows straight into the graph (a build from every row of the index)."""
        self._writable_graph().add(np.asarray(ids, dtype=np.uint64), quantize(unit_rows(vectors)))

    def row_blocks(self) -> RowBlocks | None:
        """The unit float32 rows of every vector at ``position`` (the rows file's, less the stale
        ones, then the added ones), a block at a time, for a new rows file; None without a rows file
        to start from."""
        rows = self.rows
        if rows is None:
            return None
        ids = rows.ids_in_row_order()
        stale, added_ids, added = self.stale, self.added_ids, self.added

        def blocks() -> Iterable[tuple[np.ndarray, np.ndarray]]:
            for start in range(0, len(ids), LOAD_ROWS):
                block = ids[start : start + LOAD_ROWS]
                keep = ~np.isin(block, stale)
                yield block[keep], rows.block(start, start + LOAD_ROWS)[keep]
            yield added_ids, added

        return blocks()

    def fold(self) -> None:
        """Move the changes into the graph itself (copied into memory first if it is mapped)."""
        graph = self._writable_graph()
        if len(self.stale):
            graph.remove(self.stale.astype(np.uint64))
        if len(self.added_ids):
            graph.add(self.added_ids.astype(np.uint64), quantize(self.added))
        self.stale = np.empty(0, dtype=np.int64)
        self.added_ids = np.empty(0, dtype=np.int64)
        self.added = np.empty((0, self.dimension), dtype=np.float32)
        self.graph_position = self.position
        self.rows = None  # the graph's rows before the fold: the new file is opened once written

    def save(self, path: str) -> SavedFile:
        """Write the graph (without pending changes: fold first) to ``path`` in one step: a reader
        sees the old file or the complete new one. usearch serialises it into memory, and the file
        is written from there through a descriptor of our own (usearch would open the path itself,
        following whatever link is planted there). Returns what the index records of the file.

        Raises:
            OSError: the file cannot be written (disk full, file size limit, read-only folder).
        """
        try:
            serialised = self._writable_graph().save()
        except RuntimeError as error:  # usearch's own failure, before anything is on disk
            raise OSError(f"the graph could not be serialised ({error})") from error
        if serialised is None:  # usearch hands the bytes back only when given no path to write
            raise OSError("the graph could not be serialised (usearch returned no bytes)")
        sha256 = hashlib.sha256(serialised).hexdigest()
        with replacing(path) as out:
            out.write(serialised)
        del serialised  # the graph's size in memory, let go before the file is read back
        file, checked_ns = settle(path, sha256)
        return SavedFile(file, sha256, checked_ns)

    def _writable_graph(self) -> Graph:
        if self.exact is not None:
            raise RuntimeError("a search over the float32 copy cannot fold: open the graph")
        if self.graph is None:
            self.graph = new_graph(self.dimension)
        elif self.viewed:
            self.graph = self.graph.copy()
            self.viewed, self.saved = False, None
        return self.graph

    # -- searching ------------------------------------------------------------------------------

    def nearest(
        self,
        query: np.ndarray,
        k: int,
        allowed_ids: Sequence[int] | None = None,
        exact_rows: ExactRows | None = None,
    ) -> list[tuple[int, float]]:
        """The ``k`` nearest chunks as (chunk id, cosine distance), nearest first; with
        ``allowed_ids``, only among those. The graph's candidates are scored on their int8 rows; those
        that may be among the k best are scored again on their float32 rows as ``exact_rows`` gives
        them (ids it does not give are gone)."""
        if k <= 0:
            return []
        query = unit_rows(query)
        allowed = None if allowed_ids is None else np.unique(np.fromiter(allowed_ids, dtype=np.int64))
        ids, similarities, exact = self._candidates(query, k, allowed, exact_rows)
        added_ids, added_similarities = self._from_added(query, allowed)
        if not exact and exact_rows is not None and len(ids):
            ids, similarities = self._rescored(query, k, ids, similarities, added_similarities, exact_rows)
        ids = np.concatenate([ids, added_ids])
        similarities = np.concatenate([similarities, added_similarities])
        order = np.lexsort((ids, -similarities))[:k]
        return [(int(i), 1.0 - float(s)) for i, s in zip(ids[order], similarities[order], strict=True)]

    def _rescored(
        self,
        query: np.ndarray,
        k: int,
        ids: np.ndarray,
        similarities: np.ndarray,
        others: np.ndarray,
        exact_rows: ExactRows,
    ) -> tuple[np.ndarray, np.ndarray]:
        """``ids`` with the similarities of those above the k-th best (of these and ``others``) or
        within :data:`INT8_BAND` of it replaced by their float32 ones; those ``exact_rows`` lacks
        dropped. The others lie below the band: int8 put them out of the k best."""
        pool = np.concatenate([similarities, others])
        kth = np.partition(pool, len(pool) - min(k, len(pool)))[len(pool) - min(k, len(pool))]
        may_be_best = similarities >= kth - INT8_BAND
        if not may_be_best.any():
            return ids, similarities
        found, rows = self._exact_rows(ids[may_be_best], exact_rows)
        exact = dict(
            zip(
                np.asarray(found).tolist(),
                (rows @ query).tolist(),
                strict=True,
            )
        )
        keep = ~may_be_best | np.isin(ids, found)
        rescored = np.array(
            [exact.get(int(i), s) for i, s in zip(ids, similarities, strict=True)], np.float32
        )
        return ids[keep], rescored[keep]

    def _exact_rows(self, ids: np.ndarray, exact_rows: ExactRows) -> tuple[np.ndarray, np.ndarray]:
        """(those of ``ids`` that exist, their unit float32 rows): from the rows file, or from
        ``exact_rows`` (sqlite-vec) for those it lacks. The rows file holds what unit_rows made of
        sqlite-vec's rows, bit for bit, so a score does not depend on where its row came from."""
        if self.rows is None:
            found, rows = exact_rows(ids)
            return np.asarray(found, dtype=np.int64), unit_rows(rows).reshape(-1, self.dimension)
        found, rows = self.rows.lookup(ids)
        if len(found) == len(ids):
            return found, rows
        others, other_rows = exact_rows(ids[~np.isin(ids, found)])
        return (
            np.concatenate([found, np.asarray(others, dtype=np.int64)]),
            np.vstack([rows, unit_rows(other_rows).reshape(-1, self.dimension)]),
        )

    def _candidates(
        self, query: np.ndarray, k: int, allowed: np.ndarray | None, exact_rows: ExactRows | None
    ) -> tuple[np.ndarray, np.ndarray, bool]:
        """(ids, similarities, whether those are float32's already) of the graph's best rows that are
        neither stale nor filtered out, up to ``k + EXTRA_CANDIDATES`` of them, best first. A filter whose
        allowed rows are fewer than a filtered walk would score (:func:`scored_by_walk`) has them
        scored on the float32 copy instead: exact, and cheaper."""
        if self.exact is not None:
            return (*self._exactly(query, k, allowed), True)
        graph = self.graph
        size = self.graph_size
        empty = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32), False
        if graph is None or size == 0:
            return empty
        passing = size - len(self.stale)
        if allowed is not None:
            allowed = allowed[graph.contains(allowed.astype(np.uint64))]
            allowed = allowed[~np.isin(allowed, self.stale)]
            passing = len(allowed)
        if passing == 0:
            return empty
        wanted = k + EXTRA_CANDIDATES
        # as many neighbours as it takes for enough of them to pass, as the share passing predicts
        if allowed is None:
            count, enough = math.ceil(wanted * size / passing), wanted
        else:
            count, enough = math.ceil(FILTER_MARGIN * (k + FILTER_EXTRA) * size / passing), k
        count = min(size, count)
        code = quantize(query)
        while allowed is None or scored_by_walk(count, size) < passing:  # else scoring them costs less
            # usearch defines this setter after another property's, which hides it from mypy
            graph.expansion_search = max(expansion(size), count)  # type: ignore[misc]
            found = graph.search(code, count).keys.astype(np.int64)
            found = found[~np.isin(found, self.stale)]
            if allowed is not None:
                found = found[np.isin(found, allowed)]
            if len(found) >= enough or count >= size:
                return (*self._scored(query, found[:wanted]), False)
            count = min(size, count * WIDEN)
        if self.rows is None or exact_rows is None:  # no float32 copy: the int8 rows, re-scored after
            ids, similarities = self._scored(query, allowed)
            best = np.argsort(-similarities, kind="stable")[:wanted]
            return ids[best], similarities[best], False
        ids, rows = self._exact_rows(allowed, exact_rows)
        similarities = rows @ query
        best = np.argsort(-similarities, kind="stable")[:wanted]
        return ids[best], similarities[best], True

    def _exactly(
        self, query: np.ndarray, k: int, allowed: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(ids, float32 similarities) of the best ``k + EXTRA_CANDIDATES`` rows of the copy read
        whole, neither stale nor filtered out, best first."""
        assert self.exact is not None and self.rows is not None
        if allowed is None:
            similarities = self.exact @ query
            ids = self.exact_ids
        else:
            places, held = self.rows.places(allowed)
            wanted_rows = self.rows.row_of[places[held]]
            similarities = self.exact[wanted_rows] @ query
            ids = self.exact_ids[wanted_rows]
        if len(self.stale):
            similarities = np.where(np.isin(ids, self.stale), -np.inf, similarities)
        wanted = min(len(ids), k + EXTRA_CANDIDATES)
        if wanted == 0:
            return ids[:0], similarities[:0]
        best = np.argpartition(-similarities, wanted - 1)[:wanted]
        best = best[np.isfinite(similarities[best])]
        best = best[np.lexsort((ids[best], -similarities[best]))]
        return ids[best], similarities[best].astype(np.float32)

    def _scored(self, query: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Cosines between the float32 query and the graph's int8 rows of ``ids``."""
        if len(ids) == 0:
            return ids, np.empty(0, dtype=np.float32)
        assert self.graph is not None  # ids from the graph: there is one
        rows = np.asarray(self.graph.get(ids.astype(np.uint64)), dtype=np.float32).reshape(len(ids), -1)
        norms = np.linalg.norm(rows, axis=1)
        return ids, (rows @ query) / np.where(norms > 0, norms, 1)

    def _from_added(self, query: np.ndarray, allowed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        ids, rows = self.added_ids, self.added
        if allowed is not None and len(ids):
            passing = np.isin(ids, allowed)
            ids, rows = ids[passing], rows[passing]
        return ids, rows @ query


def exact_nearest(
    rows: Iterable[tuple[int, bytes]],
    dimension: int,
    query: np.ndarray,
    k: int,
    allowed_ids: Sequence[int] | None = None,
    block: int = 4096,
) -> list[tuple[int, float]]:
    """The ``k`` nearest of (chunk id, float32 blob) rows by cosine, read a block at a time, keeping
    only the best so far: for searches sqlite-vec cannot answer (more than its 4,096 neighbours)
    where no graph can be used."""
    query = unit_rows(query)
    allowed = None if allowed_ids is None else np.unique(np.fromiter(allowed_ids, dtype=np.int64))
    best_ids, best = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
    rows = iter(rows)
    while batch := list(itertools.islice(rows, block)):
        ids = np.array([chunk_id for chunk_id, _ in batch], dtype=np.int64)
        scores = unit_rows(vectors_from_blobs([blob for _, blob in batch], dimension)) @ query
        if allowed is not None:
            passing = np.isin(ids, allowed)
            ids, scores = ids[passing], scores[passing]
        best_ids, best = np.concatenate([best_ids, ids]), np.concatenate([best, scores])
        if len(best) > k:
            top = np.argpartition(-best, k - 1)[:k]
            best_ids, best = best_ids[top], best[top]
    order = np.lexsort((best_ids, -best))[:k]
    return [(int(i), 1.0 - float(s)) for i, s in zip(best_ids[order], best[order], strict=True)]
