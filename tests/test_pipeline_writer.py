"""The group writer on its own: complete files committed in walk order and in groups, the build's
record counted with each commit, failed files never written."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import write
from helpers import HashBackend

from indexer import Index, corpus
from indexer.chunking import ChunkSettings
from indexer.pipeline.dimensions import Dimensions
from indexer.pipeline.embed_queue import EmbedQueue
from indexer.pipeline.planner import Planner, StageClock
from indexer.pipeline.writer import WRITE_GROUP_FILES, GroupWriter
from indexer.store import open_store


@pytest.fixture
def setup(tmp_path):
    """A writable store, a planner, a queue whose vectors the test hands in, and a writer."""
    with (
        open_store(tmp_path / "index.db", writable=True, create=True) as store,
        ThreadPoolExecutor(1) as pool,
    ):
        backend = HashBackend(dimension=8)
        clock = StageClock()
        planner = Planner(store, backend, ChunkSettings.for_limit(64), lambda message: None, clock)
        queue = EmbedQueue(pool, backend.embed, batch_size=4, concurrency=1)
        build_id = store.start_build(str(tmp_path), "hash-v1", 1, "here", 0.0)
        dimensions = Dimensions(None)
        writer = GroupWriter(
            store, pool, queue, build_id, clock, str(tmp_path), {"model": "hash-v1"}, dimensions
        )
        yield store, planner, queue, writer, dimensions, build_id


def plan(planner, folder, names):
    for name in names:
        write(folder / name, f"# {name}\n\nThe text of {name}.\n")
    return [planner.plan(corpus.SourceFile(folder, name, 1, 1), None).pending for name in names]


def give_vectors(queue, dimensions, pending):
    hashes = [h for file in pending for h in file.text_hashes]
    vectors = HashBackend(dimension=8).embed([t for file in pending for t in file.embed_texts])
    queue.remember(dict(zip(hashes, dimensions.check(vectors, len(hashes)), strict=True)))


def test_files_wait_for_a_full_group_then_commit_with_the_settings_and_the_record(setup, tmp_path):
    store, planner, queue, writer, dimensions, build_id = setup
    files = plan(planner, tmp_path / "docs", [f"f{n:03}.md" for n in range(WRITE_GROUP_FILES + 5)])
    give_vectors(queue, dimensions, files)
    for pending in files:  # as the build does: one file planned, then what is ready goes on
        writer.add(pending)
        writer.write_ready(stopped=None)
    writer.await_write()
    assert store.counts()["files"] == WRITE_GROUP_FILES  # the rest waits for the next group
    assert store.get_meta("model") == "hash-v1"
    assert store.dimension == 8
    assert store.recent_builds()[0]["files_added"] == WRITE_GROUP_FILES
    writer.finish()
    assert store.counts()["files"] == WRITE_GROUP_FILES + 5 == writer.counts.files_added


def test_a_file_waits_for_its_vectors_in_walk_order(setup, tmp_path):
    store, planner, queue, writer, dimensions, _ = setup
    first, second = plan(planner, tmp_path / "docs", ["a.md", "b.md"])
    give_vectors(queue, dimensions, [second])
    writer.add(first)
    writer.add(second)
    writer.write_ready(stopped=None, flush=True)
    writer.await_write()
    assert store.counts()["files"] == 0
    assert len(writer.waiting) == 2  # b.md waits behind a.md
    give_vectors(queue, dimensions, [first])
    writer.finish()
    assert store.counts()["files"] == 2


def test_a_file_with_a_refused_text_fails_and_is_never_written(setup, tmp_path):
    store, planner, queue, writer, dimensions, build_id = setup
    good, bad = plan(planner, tmp_path / "docs", ["good.md", "bad.md"])
    give_vectors(queue, dimensions, [good])
    queue.refuse(bad.text_hashes, "batch 3 refused: NaN")
    writer.add(good)
    writer.add(bad)
    writer.finish()
    assert [failure.path for failure in writer.failures] == ["bad.md"]
    assert store.counts()["files"] == 1
    assert writer.counts.files_failed == 1
    assert store.recent_builds()[0]["files_added"] == 1


def test_a_failed_commit_is_raised_and_not_counted(setup, tmp_path):
    store, planner, queue, writer, dimensions, _ = setup
    files = plan(planner, tmp_path / "docs", ["a.md"])
    give_vectors(queue, dimensions, files)
    writer.add(files[0])
    store.db.execute("DROP TABLE chunks_fts")  # the commit's keyword insert now fails
    with pytest.raises(Exception, match="chunks_fts"):
        writer.finish()
    assert writer.counts.files_added == 0
    with Index.open(tmp_path / "index.db", create=False) as index:
        assert index.store.counts()["files"] == 0


def timed_writer(store, queue, build_id, tmp_path, seconds: float) -> GroupWriter:
    """A writer on its own thread that commits at least every ``seconds``."""
    pool = ThreadPoolExecutor(1)
    return GroupWriter(
        store, pool, queue, build_id, StageClock(), str(tmp_path), None, Dimensions(8), seconds
    )


def test_ready_files_commit_once_the_time_bound_passes_though_their_group_is_small(setup, tmp_path):
    store, planner, queue, _, dimensions, build_id = setup
    writer = timed_writer(store, queue, build_id, tmp_path, 0.2)
    files = plan(planner, tmp_path / "docs", ["a.md", "b.md"])
    give_vectors(queue, dimensions, files)
    for pending in files:
        writer.add(pending)
        writer.write_ready(stopped=None)
    writer.await_write()
    assert store.counts()["files"] == 0  # two files are far from a group: they wait for the time bound
    time.sleep(writer.seconds_to_commit())
    writer.write_ready(stopped=None)
    writer.await_write()
    assert store.counts()["files"] == 2
    assert store.recent_builds()[0]["files_added"] == 2


def test_a_timed_commit_with_nothing_ready_records_that_the_build_is_alive(setup, tmp_path):
    store, _, queue, _, _, build_id = setup
    writer = timed_writer(store, queue, build_id, tmp_path, 0.05)
    assert store.recent_builds()[0]["seen_at"] == 0.0  # as started
    time.sleep(0.06)
    before = time.time()
    writer.write_ready(stopped=None)
    writer.await_write()
    assert store.recent_builds()[0]["seen_at"] >= before
    assert store.counts()["files"] == 0
