"""The planner on its own: what a file's stat, bytes and chunks say the build must do."""

from __future__ import annotations

import os
import time

import pytest
from conftest import write
from helpers import HashBackend

from indexer import Index, corpus
from indexer.chunking import ChunkSettings
from indexer.pipeline.planner import COUNT_BATCH, STAGES, Planner, StageClock, text_hash, unchanged
from indexer.store.records import FileState


@pytest.fixture
def planner(tmp_path):
    index_path = tmp_path / "index.db"
    with Index.open(index_path) as index:
        yield Planner(
            index.store, HashBackend(), ChunkSettings.for_limit(64), lambda message: None, StageClock()
        )


def source_of(path, root):
    info = path.stat()
    return corpus.SourceFile(root, path.relative_to(root).as_posix(), info.st_size, info.st_mtime_ns)


def test_a_file_with_its_recorded_size_and_mtime_is_not_read(tmp_path, docs):
    source = source_of(docs / "guide.md", docs)
    state = FileState(1, source.size, source.mtime_ns, "whatever", "indexed")
    assert unchanged(source, state)
    assert not unchanged(source, state._replace(size=source.size + 1))


def test_a_touched_file_whose_bytes_did_not_change_is_only_touched(planner, docs):
    first = planner.plan(source_of(docs / "guide.md", docs), None).pending
    os.utime(docs / "guide.md", ns=(1, 1))
    state = FileState(7, first.source.size, first.source.mtime_ns, first.content_hash, "indexed")
    again = planner.plan(source_of(docs / "guide.md", docs), state).pending
    assert again.touch_only == 7
    assert again.chunks == []


def test_a_changed_file_is_chunked_and_each_chunk_keyed_by_what_the_model_reads(planner, docs):
    pending = planner.plan(source_of(docs / "guide.md", docs), None).pending
    assert pending.is_new
    assert pending.status == "indexed"
    assert pending.chunks
    assert pending.text_hashes == [text_hash(chunk.embed_text) for chunk in pending.chunks]
    assert pending.chunks[-1].heading.startswith("Guide")
    assert "Usage" in pending.chunks[-1].embed_text


def test_an_empty_file_is_recorded_as_skipped(planner, tmp_path):
    write(tmp_path / "d" / "empty.md", "   \n")
    pending = planner.plan(source_of(tmp_path / "d" / "empty.md", tmp_path / "d"), None).pending
    assert pending.status == "empty"
    assert pending.chunks == []


def test_a_chunk_too_long_for_the_backend_is_cut_in_two_and_a_single_word_is_not(planner, tmp_path):
    write(tmp_path / "d" / "a.md", "# A\n\n" + "\n".join(f"line {n} of text" for n in range(6)) + "\n")
    pending = planner.plan(source_of(tmp_path / "d" / "a.md", tmp_path / "d"), None).pending
    count = len(pending.chunks)
    assert planner.recut(pending, 0, "too long")
    assert len(pending.chunks) == count + 1
    assert len(pending.text_hashes) == count + 1
    write(tmp_path / "d" / "b.md", "Supercalifragilistic\n")
    single = planner.plan(source_of(tmp_path / "d" / "b.md", tmp_path / "d"), None).pending
    assert not planner.recut(single, 0, "too long")
    assert "cannot be cut smaller" in single.failure


class SlowCounter(HashBackend):
    """Counts tokens slowly enough that the time shows against the chunker's own."""

    calls = 0

    def count_tokens(self, texts):
        self.calls += 1
        time.sleep(0.01)
        return super().count_tokens(texts)


def test_a_files_parse_and_token_counts_are_timed_apart_from_the_chunker_itself(tmp_path, docs):
    clock, counter = StageClock(), SlowCounter()
    with Index.open(tmp_path / "index.db") as index:
        planner = Planner(index.store, counter, ChunkSettings.for_limit(64), lambda message: None, clock)
        planned = planner.plan(source_of(docs / "guide.md", docs), None)
        planner.take(planned)
    assert planned.pending.chunks
    assert set(clock.seconds) == set(STAGES)
    assert clock.seconds["read"] > 0
    assert clock.seconds["parse"] > 0
    assert clock.seconds["chunk"] > 0
    assert clock.seconds["tokenize"] >= 0.01 * counter.calls > clock.seconds["chunk"]


class CountingBackend(HashBackend):
    """Records how many texts each call of ``count_tokens`` was given."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[int] = []

    def count_tokens(self, texts: list[str]) -> list[int]:
        self.asked.append(len(texts))
        return super().count_tokens(texts)


def test_a_file_of_many_lines_has_its_tokens_counted_a_batch_at_a_time(tmp_path):
    write(tmp_path / "d" / "log.txt", "".join(f"line {number}\n" for number in range(3 * COUNT_BATCH)))
    backend = CountingBackend()
    with Index.open(tmp_path / "index.db") as index:
        planner = Planner(
            index.store, backend, ChunkSettings.for_limit(64), lambda message: None, StageClock()
        )
        pending = planner.plan(source_of(tmp_path / "d" / "log.txt", tmp_path / "d"), None).pending
    assert pending.chunks
    assert max(backend.asked) == COUNT_BATCH
    assert sum(backend.asked) >= 3 * COUNT_BATCH
    assert pending.chunks[-1].end_line == 3 * COUNT_BATCH  # counts in order: every line placed
