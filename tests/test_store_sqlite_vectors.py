"""Vector search through the graph saved beside the index: as good as exact search whatever the
model's vectors look like, filters that still return k hits, and a graph that follows every change
committed to the index, after crashes and replacements too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from helpers import HashBackend, write_corpus

from indexer import Index
from indexer.cli.output import status_lines
from indexer.records import Chunk
from indexer.store.records import ChunkFilter, NewFile
from indexer.store.sqlite import GRAPH_RECORD, ROWS_RECORD, SQLiteStore
from indexer.store.sqlite import vectors as sqlite_vectors

CHUNKS_PER_FILE = 20
#: The indexes here are small enough to be searched exactly; the graph is what most tests here test,
#: so it is walked at any size unless a test says otherwise.
pytestmark = pytest.mark.usefixtures("graph_walked")


def clustered_vectors(count: int, dimension: int = 64, clusters: int = 50, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, dimension))
    vectors = centres[rng.integers(0, clusters, count)] + 0.6 * rng.standard_normal((count, dimension))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def with_offset(vectors: np.ndarray, mean_cosine: float, seed: int = 4) -> np.ndarray:
    """Every vector moved along one shared direction, so unrelated ones meet at about ``mean_cosine``:
    all of them in one cone, as many embedding models' vectors are."""
    rng = np.random.default_rng(seed)
    direction = np.where(rng.random(vectors.shape[1]) < 0.5, -1.0, 1.0) / np.sqrt(vectors.shape[1])
    shifted = vectors + np.sqrt(mean_cosine / (1 - mean_cosine)) * direction
    return (shifted / np.linalg.norm(shifted, axis=1, keepdims=True)).astype(np.float32)


def queries_near(vectors: np.ndarray, count: int, seed: int = 9) -> np.ndarray:
    """Queries near the data, as questions are near their answers (not random directions)."""
    rng = np.random.default_rng(seed)
    picked = vectors[rng.integers(0, len(vectors), count)]
    return (picked + 0.03 * rng.standard_normal(picked.shape)).astype(np.float32)


def new_files(vectors: np.ndarray, first_file: int = 0, version: str = "v1") -> list[NewFile]:
    """Files of CHUNKS_PER_FILE chunks holding ``vectors`` in order, ten folders of them."""
    files = []
    for start in range(0, len(vectors), CHUNKS_PER_FILE):
        number = first_file + start // CHUNKS_PER_FILE
        rows = vectors[start : start + CHUNKS_PER_FILE]
        files.append(
            NewFile(
                root="/corpus",
                path=f"part-{number % 10}/file-{number}.txt",
                size=1,
                mtime_ns=1,
                content_hash=f"{version}-{number}",
                status="indexed",
                chunks=[Chunk(1, 1, "", f"chunk {number}.{seq}") for seq in range(len(rows))],
                text_hashes=[f"{version}-{number}-{seq}" for seq in range(len(rows))],
                vectors=[row.tobytes() for row in rows],
            )
        )
    return files


def written(path, vectors: np.ndarray, graph: bool = True) -> SQLiteStore:
    """A writable index whose chunks 1..N hold ``vectors``, with its graph saved when ``graph``."""
    store = SQLiteStore.open(path, writable=True, create=True)
    with store.transaction():
        store.create_vector_table(vectors.shape[1])
        store.write_files(new_files(vectors))
    if graph:
        store.update_vector_graph(min_changes=1)
    return store


def exact_ids(
    vectors: np.ndarray, query: np.ndarray, k: int = 10, among: np.ndarray | None = None
) -> list[int]:
    """Chunk ids (1-based rows) of the k nearest by float32 exact search, among some rows if given."""
    rows = np.arange(len(vectors)) if among is None else np.asarray(among) - 1
    scores = vectors[rows] @ (query / np.linalg.norm(query))
    return [int(rows[i]) + 1 for i in np.argsort(-scores, kind="stable")[:k]]


def recall_at_10(store: SQLiteStore, vectors: np.ndarray, queries: np.ndarray, allowed=None) -> float:
    found = [{chunk_id for chunk_id, _ in store.nearest(query, 10, allowed)} for query in queries]
    truth = [set(exact_ids(vectors, query, among=allowed)) for query in queries]
    return float(np.mean([len(f & t) / 10 for f, t in zip(found, truth, strict=True)]))


@pytest.mark.slow
@pytest.mark.parametrize("mean_cosine", [0.0, 0.7])
def test_graph_search_finds_what_exact_search_finds_even_when_all_vectors_share_a_direction(
    tmp_path, mean_cosine
):
    vectors = clustered_vectors(4000, dimension=128, clusters=80)
    if mean_cosine:
        vectors = with_offset(vectors, mean_cosine)
    pairs = np.random.default_rng(3).integers(0, len(vectors), (2, 2000))
    assert np.mean(np.sum(vectors[pairs[0]] * vectors[pairs[1]], axis=1)) == pytest.approx(
        mean_cosine, abs=0.05
    )
    with written(tmp_path / "index.db", vectors), SQLiteStore.open(tmp_path / "index.db") as reader:
        assert recall_at_10(reader, vectors, queries_near(vectors, 50)) >= 0.97
        assert reader.graph._search.viewed
        assert reader.graph._search.pending == 0  # the saved graph, mapped
        hits = reader.nearest(vectors[17], 5)
        assert hits[0][0] == 18
        assert hits[0][1] == pytest.approx(0.0, abs=1e-3)
        assert [d for _, d in hits] == sorted(d for _, d in hits)


def test_vectors_are_held_as_int8_scaled_per_row(tmp_path):
    """A quarter of float32's memory; each row's largest component at 127, so the small components of
    dense vectors keep their precision (usearch's own conversion would map 1.0, not the largest, to
    127)."""
    vectors = with_offset(clustered_vectors(300, dimension=100), 0.5)
    with written(tmp_path / "index.db", vectors) as store:
        graph = store.graph._search.graph
        rows = np.vstack(graph.get(np.arange(1, 301, dtype=np.uint64)))
    assert rows.dtype == np.int8
    assert rows.shape == (300, 100)
    assert np.abs(rows.astype(np.int16)).max(axis=1).tolist() == [127] * 300
    restored = rows / np.linalg.norm(rows.astype(np.float32), axis=1, keepdims=True)
    assert np.abs(np.sum(restored * vectors, axis=1) - 1).max() < 1e-3


@pytest.mark.parametrize(
    "chunk_filter", [ChunkFilter(path_globs=("part-3/",)), ChunkFilter(roots=("/corpus",))]
)
def test_a_filter_returns_k_hits_all_allowed_and_the_nearest_of_them(tmp_path, chunk_filter):
    vectors = with_offset(clustered_vectors(4000), 0.7)
    with written(tmp_path / "index.db", vectors) as store:
        allowed = store.chunk_filter(chunk_filter)
        if chunk_filter.roots:  # the whole index: no restriction at all
            assert allowed is None
            allowed = list(range(1, 4001))
        queries = queries_near(vectors, 20)
        for query in queries:
            hits = store.nearest(query, 10, allowed)
            assert len(hits) == 10
            assert {chunk_id for chunk_id, _ in hits} <= set(allowed)
        assert recall_at_10(store, vectors, queries, allowed) >= 0.97


def test_a_filter_keeping_one_chunk_in_a_hundred_scores_them_exactly_on_the_float32_copy(
    tmp_path, monkeypatch
):
    """Fewer allowed rows than a filtered walk of the graph would score: they are scored on their
    float32 rows, read from the copy beside the graph a run of consecutive rows at a time, so the
    hits are exact search's among them; the graph is not walked and sqlite-vec is not read."""
    vectors = with_offset(clustered_vectors(6000), 0.7)
    with written(tmp_path / "index.db", vectors) as store:
        search = store.graph._search
        asked, reads, sqlite_vec = [], [], []
        monkeypatch.setattr(search.graph, "search", _recording(search.graph.search, asked))
        monkeypatch.setattr(search.rows, "_read", _recording(search.rows._read, reads))
        monkeypatch.setattr(store.graph, "_vectors_of", _recording(store.graph._vectors_of, sqlite_vec))
        spread = list(range(1, 6001, 100))  # 60 rows, 1%, none next to another
        folder = store.chunk_filter(ChunkFilter(path_globs=("part-3/",)))  # 30 files of 20 chunks
        assert len(folder) == 600
        queries = queries_near(vectors, 10)
        for allowed, runs in ((spread, 60), (folder, 30)):
            reads.clear()
            for query in queries:
                hits = store.nearest(query, 10, allowed)
                assert [chunk_id for chunk_id, _ in hits] == exact_ids(vectors, query, among=allowed)
                scanned = dict(store.graph._scan(query, 10, allowed))  # sqlite-vec's own cosine distances
                assert np.allclose([d for _, d in hits], [scanned[i] for i, _ in hits], rtol=0, atol=1e-6)
            assert len(reads) == len(queries) * runs
        assert not asked
        assert not sqlite_vec


@pytest.mark.slow
def test_a_filter_keeping_most_chunks_walks_the_graph_and_still_returns_k_allowed_hits(tmp_path, monkeypatch):
    """More allowed rows than a walk scores: the graph is asked for neighbours enough that k of them
    pass, as the share allowed predicts, and the best of them are re-scored on float32."""
    vectors = clustered_vectors(12_000)
    wide = [i for i in range(1, 12_001) if i % 4]  # three quarters of the rows
    with written(tmp_path / "index.db", vectors) as store:
        search = store.graph._search
        assert sqlite_vectors.scored_by_walk(10, 12_000) < len(wide)
        asked = []
        monkeypatch.setattr(search.graph, "search", _recording(search.graph.search, asked))
        queries = queries_near(vectors, 20)
        for query in queries:
            hits = store.nearest(query, 10, wide)
            assert len(hits) == 10
            assert {chunk_id for chunk_id, _ in hits} <= set(wide)
        assert len(asked) == len(queries)
        assert all(args[1] < 100 for args in asked)  # 1.5 x (k + 2) x 4 / 3 neighbours
        assert recall_at_10(store, vectors, queries, wide) >= 0.97


@pytest.mark.slow
def test_without_the_float32_copy_a_selective_filter_scores_the_int8_rows_and_stays_exact(tmp_path):
    vectors = clustered_vectors(6000)
    allowed = list(range(1, 6001, 100))
    with written(tmp_path / "index.db", vectors) as store:
        store.nearest(vectors[0], 10)
        store.graph._search.rows = None
        for query in queries_near(vectors, 10):
            hits = store.nearest(query, 10, allowed)
            assert [chunk_id for chunk_id, _ in hits] == exact_ids(vectors, query, among=allowed)


def _recording(function, calls: list):
    """``function``, recording each call's positional arguments and, last, its keywords."""

    def recorded(*args, **kwargs):
        calls.append((*args, kwargs))
        return function(*args, **kwargs)

    return recorded


def test_a_long_lived_reader_sees_added_replaced_and_removed_files_without_reopening_its_graph(tmp_path):
    vectors = clustered_vectors(2000)
    with written(tmp_path / "index.db", vectors) as writer, SQLiteStore.open(tmp_path / "index.db") as reader:
        reader.expect_many_searches()
        assert reader.nearest(vectors[0], 1)[0][0] == 1
        graph = reader.graph._search.graph
        newcomer = -vectors[0]
        replacement = clustered_vectors(CHUNKS_PER_FILE, seed=11)
        with writer.transaction():
            writer.write_files(new_files(np.vstack([newcomer] * CHUNKS_PER_FILE), first_file=500))
            writer.write_files(new_files(replacement, first_file=0, version="v2"))  # file 0: new chunks
            writer.remove_file(writer._value("SELECT id FROM files WHERE path = 'part-1/file-1.txt'"))
        added = {chunk_id for chunk_id, _ in reader.nearest(newcomer, CHUNKS_PER_FILE)}
        assert added == set(range(2001, 2001 + CHUNKS_PER_FILE))
        gone = set(range(1, 2 * CHUNKS_PER_FILE + 1))  # file 0's old chunks, and file 1's
        for query in queries_near(vectors, 20):
            assert not gone & {chunk_id for chunk_id, _ in reader.nearest(query, 50)}
        assert reader.nearest(replacement[3], 1)[0][0] == 2001 + CHUNKS_PER_FILE + 3
        assert reader.graph._search.graph is graph
        assert reader.graph._search.pending == 4 * CHUNKS_PER_FILE
        # the writer folds the changes into a new file in the other slot: the reader moves to it
        writer.update_vector_graph(min_changes=1)
        assert json.loads(writer.get_meta(GRAPH_RECORD))["slot"] == "b"
        assert reader.nearest(newcomer, 1)[0][0] in added
        assert reader.graph._search.pending == 0
        assert reader.graph._search.graph is not graph
        assert len(reader.graph._search.graph) == 2000


def test_a_server_sees_chunks_a_build_commits_at_once(tmp_path):
    """A build commits group after group; a search right after a commit finds its chunks."""
    vectors = clustered_vectors(1000)
    with written(tmp_path / "index.db", vectors) as writer, SQLiteStore.open(tmp_path / "index.db") as reader:
        reader.expect_many_searches()
        for group in range(3):
            fresh = clustered_vectors(CHUNKS_PER_FILE, seed=100 + group)
            with writer.transaction():
                writer.write_files(new_files(fresh, first_file=100 + group))
            first = 1001 + group * CHUNKS_PER_FILE
            assert reader.nearest(fresh[5], 1)[0][0] == first + 5


KILLED_WRITER = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    sys.path[:0] = [{tests!r}, {support!r}]
    from test_store_sqlite_vectors import clustered_vectors, new_files
    from indexer.store.sqlite import SQLiteStore
    store = SQLiteStore.open({path!r}, writable=True)
    if {during_fold!r}:
        original = store.set_meta
        def killed(values):
            if "vector_graph" in values:  # the new file is saved; its record not yet committed
                os._exit(9)
            original(values)
        store.set_meta = killed
        store.update_vector_graph(min_changes=1)
    with store.transaction():
        store.write_files(new_files(-clustered_vectors(20, seed=5), first_file=900))
        store.remove_file(store._value("SELECT id FROM files WHERE path = 'part-2/file-2.txt'"))
    os._exit(9)  # killed before the build's end, which would fold
    """
)


@pytest.mark.heavy
@pytest.mark.parametrize("during_fold", [False, True], ids=["after-commit", "while-saving-a-graph"])
def test_a_killed_build_never_leaves_a_graph_that_answers_with_deleted_chunks_or_misses_new_ones(
    tmp_path, during_fold
):
    vectors = clustered_vectors(1500)
    path = str(tmp_path / "index.db")
    with written(path, vectors) as store:
        with store.transaction():  # a change not folded yet: the killed fold would have taken it in
            store.write_files(new_files(clustered_vectors(20, seed=6), first_file=800))
    tests = os.path.dirname(__file__)
    script = KILLED_WRITER.format(
        tests=tests, support=os.path.join(tests, "support"), path=path, during_fold=during_fold
    )
    assert subprocess.run([sys.executable, "-c", script], timeout=120).returncode == 9
    assert os.path.exists(path + ".vectors-b") == during_fold  # a complete file, never recorded
    with SQLiteStore.open(path) as reader:
        assert json.loads(reader.get_meta(GRAPH_RECORD))["slot"] == "a"
        stored = dict(reader.query("SELECT rowid, embedding FROM chunk_vectors"))
        ids = np.array(sorted(stored))
        matrix = np.vstack([np.frombuffer(stored[i], dtype=np.float32) for i in ids])
        queries = np.vstack([queries_near(vectors, 10), -clustered_vectors(3, seed=5)])
        found = 0
        for query in queries:
            hits = [chunk_id for chunk_id, _ in reader.nearest(query, 10)]
            assert set(hits) <= set(stored.keys())  # file 2's chunks are gone from the answers
            expected = ids[np.argsort(-(matrix @ (query / np.linalg.norm(query))))[:10]].tolist()
            found += len(set(hits) & set(expected))
        # the graph is approximate and built in threads: recall over all the questions, not each
        assert found >= 0.9 * 10 * len(queries)
        assert reader.nearest(-clustered_vectors(20, seed=5)[4], 1)[0][0] in stored


def test_a_graph_file_that_is_not_the_recorded_one_is_never_used_and_the_next_build_rebuilds_it(tmp_path):
    vectors = clustered_vectors(1500)
    path = str(tmp_path / "index.db")
    with written(path, vectors) as store:
        graph_file = path + ".vectors-a"
        # another index's graph put in its place (an external copy, a restored backup)
        with written(tmp_path / "other.db", clustered_vectors(1500, seed=99)):
            pass
        os.replace(str(tmp_path / "other.db.vectors-a"), graph_file)
        with SQLiteStore.open(path) as reader:
            scanned = reader.nearest(vectors[7], 5)
            assert reader.graph._search is None  # not used: sqlite-vec's scan answered
            assert scanned[0][0] == 8
            assert reader.vector_search_status()["structure"].startswith("none")
        with open(graph_file, "r+b") as damaged:  # and a truncated file is no better
            damaged.truncate(1000)
        with SQLiteStore.open(path) as reader:
            assert reader.nearest(vectors[7], 5) == scanned
            assert reader.graph._search is None
        store.update_vector_graph()  # a build's end: fewer changes than a fold needs, but no usable graph
        record = json.loads(store.get_meta(GRAPH_RECORD))
        assert record["slot"] == "b"
        assert record["vectors"] == 1500
    with SQLiteStore.open(path) as reader:
        assert reader.nearest(vectors[7], 1)[0][0] == 8
        assert reader.graph._search is not None


def test_an_index_deleted_and_built_anew_ignores_the_graph_left_beside_it(tmp_path):
    path = str(tmp_path / "index.db")
    with written(path, clustered_vectors(1000)):
        pass
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    fresh = clustered_vectors(100, seed=42)
    with written(path, fresh, graph=False) as store:
        assert os.path.exists(path + ".vectors-a")  # the old index's graph is still there
        hits = store.nearest(fresh[3], 3)
        assert hits[0][0] == 4
        assert all(chunk_id <= 100 for chunk_id, _ in hits)


def test_a_rebuild_moves_its_graph_beside_the_index(tmp_path):
    vectors = clustered_vectors(1200)
    path = str(tmp_path / "index.db")
    with written(path, clustered_vectors(1200, seed=3)) as store:
        store.update_vector_graph(min_changes=0)  # saved again: the old index has both slots
        assert os.path.exists(path + ".vectors-a")
        assert os.path.exists(path + ".vectors-b")
        with store.open_scratch() as scratch:
            with scratch.transaction():
                scratch.create_vector_table(vectors.shape[1])
                scratch.write_files(new_files(vectors))
            scratch.update_vector_graph(min_changes=1)
            store.replace_with(scratch)
        store.discard_scratch()
        assert not [name for name in os.listdir(tmp_path) if ".rebuild" in name]
        assert not os.path.exists(path + ".vectors-b")  # the old index's graph is gone with it
        assert not os.path.exists(path + ".vectors-b.f32")
        with SQLiteStore.open(path) as reader:
            assert reader.nearest(vectors[9], 1)[0][0] == 10
            assert reader.graph._search.pending == 0
            assert reader.graph._search.rows is not None
            assert len(reader.graph._search.rows) == 1200  # its copy, moved too


def test_status_states_the_graph_file_and_the_memory_a_search_holds(tmp_path):
    vectors = clustered_vectors(1000)
    with written(tmp_path / "index.db", vectors) as store:
        with store.transaction():
            store.write_files(new_files(clustered_vectors(40, seed=2), first_file=100))
        status = store.vector_search_status()
        assert status["file"] == str(tmp_path / "index.db.vectors-a")
        assert status["file_bytes"] == os.path.getsize(status["file"]) > 1000 * 64
        assert status["vectors"] == 1000
        assert status["pending_changes"] == 40
        assert status["memory_bytes"] == status["file_bytes"] + 40 * 64 * 4 + 1000 * 16
        # the float32 copy: counted apart (mapped, only the candidates' pages are read)
        assert status["rows_file_bytes"] == 32 + 1000 * 64 * 4 + 1000 * 16  # header, rows, ids
        assert store.size_bytes() >= os.path.getsize(status["file"] + ".f32") + status["file_bytes"]
        assert store.size_bytes() >= os.path.getsize(tmp_path / "index.db") + status["file_bytes"]


def test_more_neighbours_than_sqlite_vec_returns_at_once_without_a_graph(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_vectors, "OPEN_LIMIT_ONCE", 1000)
    vectors = clustered_vectors(5000, dimension=16)
    with written(tmp_path / "index.db", vectors, graph=False) as store:
        assert store.vector_search_status()["pending_changes"] == 5000  # too many to catch up once
        hits = store.nearest(vectors[0], 4500)
        assert store.graph._search is None
        assert len(hits) == 4500
        assert [h[0] for h in hits[:10]] == exact_ids(vectors, vectors[0])


def test_a_build_saves_the_graph_and_index_status_states_its_file_and_memory(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_vectors, "FOLD_AT_END", 50)
    corpus = write_corpus(tmp_path / "docs", files=30)
    with Index.open(tmp_path / "index.db") as index:
        index.build(corpus, backend=HashBackend(), warn=lambda message: None)
        info = index.status()
        hits = index.search("word3x2x4", k=3, mode="vector")
    vectors = info["vector_search"]
    assert vectors["structure"].startswith("hnsw graph")
    assert vectors["pending_changes"] == 0
    assert vectors["file_bytes"] == os.path.getsize(tmp_path / "index.db.vectors-a") > 0
    assert vectors["vectors"] == info["chunks"]
    assert vectors["memory_bytes"] == vectors["file_bytes"] + 16 * info["chunks"]
    assert hits
    assert all(hit.vector_score is not None for hit in hits)
    line = next(line for line in status_lines(info) if line.startswith("vectors"))
    assert f"{vectors['file_bytes'] / 2**20:.1f} MB file" in line
    assert "in memory when searching" in line
    assert "float32 copy" in line
    assert vectors["rows_file_bytes"] > 0


def test_hits_carry_exact_distances_from_the_float32_copy_beside_the_graph_without_reading_sqlite_vec(
    tmp_path, monkeypatch
):
    """int8 scores settle which candidates may be among the k best; those are scored again on the
    float32 rows saved beside the graph, so the hits and their distances are exact search's, bit for
    bit what the same rows read from sqlite-vec give, and sqlite-vec is not read at all."""
    vectors = with_offset(clustered_vectors(3000), 0.7)
    with written(tmp_path / "index.db", vectors) as store:
        read: list[int] = []
        original = store.graph._vectors_of
        monkeypatch.setattr(store.graph, "_vectors_of", lambda ids: (read.append(len(ids)), original(ids))[1])
        queries = queries_near(vectors, 20)
        from_copy = [store.nearest(query, 10) for query in queries]
        assert store.graph._search.rows is not None
        assert read == []
        store.graph._search.rows = None  # as without the copy: the same candidates read from sqlite-vec
        from_sqlite_vec = [store.nearest(query, 10) for query in queries]
        assert len(read) == 20
        assert 20 * 10 <= sum(read) < 20 * (10 + sqlite_vectors.EXTRA_CANDIDATES) / 2
        assert from_copy == from_sqlite_vec  # ids and distances equal, not close
        for query, hits in zip(queries, from_copy, strict=True):
            assert len({chunk_id for chunk_id, _ in hits} & set(exact_ids(vectors, query))) >= 9
            scanned = dict(store.graph._scan(query, 50, None))  # sqlite-vec's own cosine distances
            assert np.allclose([d for _, d in hits], [scanned[i] for i, _ in hits], rtol=0, atol=1e-6)


def rows_file(path) -> str:
    slot = json.loads(SQLiteStore.open(path).get_meta(GRAPH_RECORD))["slot"]
    return f"{path}.vectors-{slot}.f32"


@pytest.mark.parametrize("damage", ["truncated", "missing", "header", "other index"])
def test_a_damaged_float32_copy_is_refused_searches_stay_exact_and_the_next_build_writes_it_again(
    tmp_path, damage
):
    vectors = clustered_vectors(1500)
    path = str(tmp_path / "index.db")
    queries = queries_near(vectors, 10)
    with written(path, vectors) as store:
        with SQLiteStore.open(path) as reader:
            expected = [reader.nearest(query, 10) for query in queries]
            assert reader.graph._search.rows is not None
        copy = rows_file(path)
        size = os.path.getsize(copy)
        if damage == "truncated":
            with open(copy, "r+b") as damaged:
                damaged.truncate(size - 64 * 4)
        elif damage == "missing":
            os.remove(copy)
        elif damage == "header":  # same size, time and inode: only the header tells
            info = os.stat(copy)
            with open(copy, "r+b") as damaged:
                damaged.seek(24)  # the log position it holds
                damaged.write(np.int64(12345).tobytes())
            os.utime(copy, ns=(info.st_atime_ns, info.st_mtime_ns))
        else:  # another index's copy of the same size put in its place
            with written(tmp_path / "other.db", clustered_vectors(1500, seed=99)):
                pass
            os.replace(rows_file(tmp_path / "other.db"), copy)
        with SQLiteStore.open(path) as reader:
            assert [reader.nearest(query, 10) for query in queries] == expected
            assert reader.graph._search is not None
            assert reader.graph._search.rows is None  # graph used, copy not
            assert reader.vector_search_status()["rows_file_bytes"] == 0
        store.update_vector_graph()  # a build's end: no changes, but the copy is written again
    with SQLiteStore.open(path) as reader:
        assert [reader.nearest(query, 10) for query in queries] == expected
        assert reader.graph._search.rows is not None
        assert len(reader.graph._search.rows) == 1500
        assert reader.vector_search_status()["rows_file_bytes"] > 1500 * 64 * 4


def test_a_long_lived_reader_follows_builds_that_add_and_remove_files_with_the_copy_folded_each_time(
    tmp_path,
):
    vectors = clustered_vectors(1000)
    path = str(tmp_path / "index.db")
    with written(path, vectors) as writer, SQLiteStore.open(path) as reader:
        reader.expect_many_searches()
        assert reader.nearest(vectors[0], 1)[0][0] == 1
        newcomers = clustered_vectors(2 * CHUNKS_PER_FILE, seed=12)
        with writer.transaction():
            writer.write_files(new_files(newcomers, first_file=500))
            writer.remove_file(writer._value("SELECT id FROM files WHERE path = 'part-1/file-1.txt'"))
        pending = {chunk_id for chunk_id, _ in reader.nearest(newcomers[5], 1)}
        assert pending == {1006}
        assert reader.graph._search.pending > 0  # scored beside the graph
        writer.update_vector_graph(min_changes=1)  # the build's end folds them: graph and copy
        for query, chunk_id in ((newcomers[5], 1006), (newcomers[30], 1031)):
            hits = reader.nearest(query, 5)
            assert hits[0][0] == chunk_id
            assert hits[0][1] == pytest.approx(0.0, abs=1e-6)
        search = reader.graph._search
        assert search.pending == 0
        assert search.rows is not None
        assert len(search.rows) == 1000 + 20
        # rows found by an exact scan of the graph on both sides, not by a walk, which a process
        # expecting many searches takes up once its audit shows walks right: a walk may find a row
        # one time and miss it the next, and this compares where the rows are read from
        reader.many_searches, search.audit = False, None
        folded = [reader.nearest(query, 10) for query in newcomers]
        search.rows = None  # the folded copy gives what sqlite-vec's rows give, bit for bit
        assert [reader.nearest(query, 10) for query in newcomers] == folded
        search.rows = reader.graph._rows_file(
            sqlite_vectors.GraphRecord.from_json(writer.get_meta(GRAPH_RECORD)),
            writer.get_meta(ROWS_RECORD),
        )
        assert not set(range(21, 41)) & {
            c for q in queries_near(vectors, 20) for c, _ in reader.nearest(q, 50)
        }
        with writer.transaction():  # and removed again: gone from the next search, then from the copy
            writer.remove_file(writer._value("SELECT id FROM files WHERE path = 'part-0/file-500.txt'"))
        assert reader.nearest(newcomers[5], 1)[0][0] != 1006
        writer.update_vector_graph(min_changes=1)
        assert reader.nearest(newcomers[5], 1)[0][0] != 1006
        assert len(reader.graph._search.rows) == 1000
        assert reader.graph._search.rows.lookup(np.array([1006]))[0].size == 0


def test_a_long_lived_index_finds_files_a_build_adds_and_loses_those_it_removes(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_vectors, "FOLD_AT_END", 50)
    corpus = write_corpus(tmp_path / "docs", files=20)
    backend = HashBackend()
    with Index.open(tmp_path / "index.db", backend=backend) as builder:
        builder.build(corpus, warn=lambda message: None)
    with (
        Index.open(tmp_path / "index.db", backend=backend) as builder,
        Index.open(tmp_path / "index.db", backend=backend) as reader,
    ):
        reader.search("word3x2x4", k=3, mode="vector")
        graph = reader.store.graph._search.graph
        (corpus / "new.md").write_text("# New\n\nA new page about glaciers and moraines.\n", encoding="utf-8")
        builder.build(corpus, warn=lambda message: None)  # fewer changes than a fold
        new_ids = {
            row[0]
            for row in reader.store.query(
                "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = 'new.md'"
            )
        }
        (blob,) = reader.store.query("SELECT embedding FROM chunk_vectors WHERE rowid = ?", (min(new_ids),))[
            0
        ]
        vector = np.frombuffer(blob, dtype=np.float32)
        assert reader.store.nearest(vector, 1)[0][0] == min(new_ids)
        assert reader.store.graph._search.graph is graph
        assert reader.search("glaciers", k=1, mode="keyword")[0].path == "new.md"
        (corpus / "new.md").unlink()
        builder.build(corpus, warn=lambda message: None)
        assert not new_ids & {chunk_id for chunk_id, _ in reader.store.nearest(vector, 10)}


@pytest.mark.heavy
def test_the_graph_library_loaded_before_onnxruntime_does_not_crash_the_process():
    """usearch's wheels carry their own C++ runtime; loaded first, they crashed onnxruntime's import
    (segmentation fault) until the system's runtime is loaded before them."""
    script = (
        "from indexer.store.sqlite import vectors; vectors.new_graph(8); "
        "import onnxruntime; print(onnxruntime.get_device())"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "CPU", result.stderr[-500:]


def test_a_folder_filter_reads_the_chunks_of_its_files_only_not_every_chunk(tmp_path):
    """At a million chunks a filter on paths must not test every chunk: the files are picked first
    and their chunks looked up by file, so more chunks elsewhere in the index cost it nothing."""

    def steps_and_ids(chunks_per_file: int) -> tuple[int, list[int]]:
        vectors = clustered_vectors(100 * chunks_per_file, dimension=8)
        rows = [vectors[i * chunks_per_file : (i + 1) * chunks_per_file] for i in range(100)]
        files = [file for i, block in enumerate(rows) for file in new_files(block, first_file=i)]
        path = tmp_path / f"index-{chunks_per_file}.db"
        with SQLiteStore.open(path, writable=True, create=True) as store:
            with store.transaction():
                store.create_vector_table(8)
                store.write_files(files)
            steps = [0]

            def count() -> bool:
                steps[0] += 1
                return False

            store.db.set_progress_handler(count, 1)
            allowed = store.chunk_filter(ChunkFilter(path_globs=("part-3/file-3.txt",)))
            store.db.set_progress_handler(None)
        return steps[0], sorted(allowed)

    few_steps, few_ids = steps_and_ids(1)
    many_steps, many_ids = steps_and_ids(CHUNKS_PER_FILE)
    assert len(few_ids) == 1
    assert len(many_ids) == CHUNKS_PER_FILE
    # 1,900 more chunks in the index, 19 more of them allowed
    assert many_steps - few_steps < 19 * 50


def word_sums(count: int, dimension: int = 64, words: int = 2000, seed: int = 5) -> np.ndarray:
    """Vectors of high intrinsic dimension, as a general model gives unrelated short notes: each
    word a random direction, each text the sum of a few words plus an offset all texts share."""
    rng = np.random.default_rng(seed)
    directions = rng.standard_normal((words, dimension))
    picked = rng.integers(0, words, (count, 8))
    vectors = directions[picked].sum(axis=1) + 2.0 * rng.standard_normal(dimension)
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def test_below_the_size_a_walk_pays_off_the_float32_copy_is_scored_whole_and_exactly(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_vectors, "WALK_ROW_COST", 1)  # a walk of 512 * 16 rows: 3,000 below it
    vectors = word_sums(3000)
    queries = queries_near(vectors, 20)
    with written(tmp_path / "index.db", vectors), SQLiteStore.open(tmp_path / "index.db") as reader:
        for query in queries:
            hits = reader.nearest(query, 10)
            assert [chunk_id for chunk_id, _ in hits] == exact_ids(vectors, query)
            unit = query / np.linalg.norm(query)
            assert [d for _, d in hits] == pytest.approx(
                [1 - vectors[i - 1] @ unit for i, _ in hits], abs=1e-6
            )
        assert reader.graph._search.exact is not None and reader.graph._search.graph is None
        allowed = reader.chunk_filter(ChunkFilter(path_globs=("part-3/",)))
        assert recall_at_10(reader, vectors, queries, allowed) == 1.0
        status = reader.vector_search_status()
        assert status["structure"].startswith("float32 copy of the vectors, scored exactly")


def test_an_index_searched_exactly_follows_changes_and_its_build_still_folds_them_into_the_graph(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(sqlite_vectors, "WALK_ROW_COST", 1)
    vectors = word_sums(2000)
    with written(tmp_path / "index.db", vectors) as writer, SQLiteStore.open(tmp_path / "index.db") as reader:
        assert reader.nearest(vectors[5], 1)[0][0] == 6
        assert reader.graph._search.exact is not None
        added = word_sums(100, seed=11)
        with writer.transaction():
            writer.write_files(new_files(added, first_file=500, version="v2"))
            writer.remove_file(1)  # chunks 1..20
        assert reader.nearest(vectors[5], 1)[0][0] != 6  # its file is gone
        assert reader.nearest(added[7], 1)[0][0] == 2008  # the new file's eighth chunk
        assert writer.nearest(vectors[30], 1)[0][0] == 31  # the writer searched exactly too
        writer.update_vector_graph(min_changes=1)
        record = sqlite_vectors.GraphRecord.from_json(writer.get_meta(GRAPH_RECORD))
        assert record.vectors == 2000 - 20 + 100
        assert reader.nearest(added[7], 1)[0][0] == 2008
        assert reader.graph._search.exact is not None and reader.graph._search.pending == 0
        monkeypatch.setattr(sqlite_vectors, "WALK_ROW_COST", 0)  # the graph the build saved, walked
    with SQLiteStore.open(tmp_path / "index.db") as walker:
        assert walker.nearest(added[7], 1)[0][0] == 2008
        assert walker.nearest(vectors[30], 1)[0][0] == 31
        assert walker.graph._search.graph is not None and len(walker.graph._search.graph) == 2080


@pytest.mark.heavy  # a process of its own
def test_an_index_searched_exactly_never_imports_the_graph_library(tmp_path):
    with written(tmp_path / "index.db", word_sums(500)):
        pass
    probe = (
        "import sys\nimport numpy as np\nfrom indexer.store.sqlite import SQLiteStore\n"
        f"with SQLiteStore.open({str(tmp_path / 'index.db')!r}) as store:\n"
        "    hits = store.nearest(np.ones(64, dtype=np.float32), 3)\n"
        "print(len(hits), 'usearch' in sys.modules, store.graph._search.exact is not None)"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.stdout.split() == ["3", "False", "True"], result.stderr[-2000:]


def test_a_one_off_search_scans_the_int8_rows_and_finds_what_exact_search_finds_where_walks_miss(
    tmp_path, monkeypatch
):
    """Vectors of high intrinsic dimension, and walks made to miss (a queue of 12): a search that
    audits nothing scans every int8 row of the graph, and re-scores the best on float32."""
    monkeypatch.setattr(sqlite_vectors, "EXPANSION_SEARCH", 12)
    vectors = word_sums(6000)
    queries = word_sums(30, seed=12)  # texts of other words: far from every row, as questions are
    with written(tmp_path / "index.db", vectors), SQLiteStore.open(tmp_path / "index.db") as reader:
        reader.nearest(queries[0], 10)
        search = reader.graph._search
        asked = []
        monkeypatch.setattr(search.graph, "search", _recording(search.graph.search, asked))
        assert recall_at_10(reader, vectors, queries) >= 0.99
        assert asked and all(call[-1].get("exact") for call in asked)
        search.graph.expansion_search = 12
        walked = [
            {int(key) for key in search.graph.search(sqlite_vectors.quantize(q), 30).keys} for q in queries
        ]
        truth = [set(exact_ids(vectors, q)) for q in queries]
        assert np.mean([len(w & t) / 10 for w, t in zip(walked, truth, strict=True)]) < 0.97  # the walk alone


@pytest.mark.parametrize(("vectors", "queue", "walks"), [("words", 12, False), ("clustered", 512, True)])
def test_a_server_walks_the_graph_only_once_its_audited_walks_find_what_scans_find(
    tmp_path, monkeypatch, vectors, queue, walks
):
    monkeypatch.setattr(sqlite_vectors, "EXPANSION_SEARCH", queue)
    rows = word_sums(6000) if vectors == "words" else clustered_vectors(6000)
    queries = word_sums(80, seed=12) if vectors == "words" else queries_near(rows, 80)
    with written(tmp_path / "index.db", rows), SQLiteStore.open(tmp_path / "index.db") as server:
        server.expect_many_searches()
        server.nearest(queries[0], 10)
        search = server.graph._search
        asked = []
        monkeypatch.setattr(search.graph, "search", _recording(search.graph.search, asked))
        assert recall_at_10(server, rows, queries[1:]) >= 0.97
        audit = search.audit
        assert audit.searches == 80 and audit.audited == sqlite_vectors.AUDIT_SEARCHES + 3
        assert audit.walks_right is walks
        # after the audit: one search in AUDIT_EVERY both scans and walks, the others one or the other
        late = asked[2 * (sqlite_vectors.AUDIT_SEARCHES - 1) :]
        scans = sum(bool(call[-1].get("exact")) for call in late)
        assert scans == (3 if walks else len(late) - 3)
        wide = [i for i in range(1, 6001) if i % 4]  # a filter's search is never audited: one way
        asked.clear()
        hits = server.nearest(queries[1], 10, wide)
        assert [chunk_id for chunk_id, _ in hits] == exact_ids(rows, queries[1], among=wide)
        assert all(bool(call[-1].get("exact")) is not walks for call in asked)  # if asked at all


def test_a_scan_of_a_graph_saved_after_removals_never_returns_the_removed_chunks(tmp_path, monkeypatch):
    """A saved graph keeps the rows of removed keys in their slots: the scan asks for as many more
    neighbours and drops them, so k live hits come back, the nearest of them."""
    vectors = clustered_vectors(2000)
    with written(tmp_path / "index.db", vectors) as writer:
        with writer.transaction():
            for file_id in range(1, 11):  # chunks 1..200
                writer.remove_file(file_id)
        writer.update_vector_graph(min_changes=1)
    with SQLiteStore.open(tmp_path / "index.db") as reader:
        reader.nearest(vectors[0], 10)
        search = reader.graph._search
        assert search.viewed and search.graph.capacity - len(search.graph) == 200
        asked = []
        monkeypatch.setattr(search.graph, "search", _recording(search.graph.search, asked))
        for row in range(0, 200, 20):
            hits = reader.nearest(vectors[row], 10)
            live = np.arange(201, 2001)
            assert [chunk_id for chunk_id, _ in hits] == exact_ids(vectors, vectors[row], among=live)
        assert len(asked) == 10  # one scan each: never asked again for want of live neighbours
