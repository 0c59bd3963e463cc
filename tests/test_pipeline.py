"""The build: batching, the vector check, incremental re-indexing, deletion, failure isolation.

Every test here runs on both stores (SQLite and PostgreSQL): ``index_path`` is a SQLite file or the
URL of a fresh PostgreSQL database."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import rows, snapshot, write
from documents import make_notebook
from helpers import FaultyBackend, HashBackend, write_corpus

from indexer import ConfigError, Index
from indexer.errors import VectorCheckError
from indexer.pipeline.vector_check import check_vectors
from indexer.store import is_postgres_url, open_store
from indexer.store.migrations import all_migrations
from indexer.store.sqlite import SQLiteStore

WORKER = Path(__file__).parent / "support" / "build_worker.py"


@pytest.fixture
def index_path(any_index: Path | str) -> Path | str:
    return any_index


def build(index_path: Path, folder: Path, backend, **options):
    options.setdefault("warn", lambda message: None)
    with Index.open(index_path) as index:
        return index.build(folder, backend=backend, **options)


def many_chunk_file(path: Path, sections: int = 1, paragraphs: int = 100) -> Path:
    """A Markdown file whose paragraphs are each about one chunk long for HashBackend (max 64 words)."""
    parts = []
    for section in range(sections):
        parts.append(f"# Section {section}\n")
        for number in range(paragraphs // sections):
            words = " ".join(f"w{section}x{number}y{k}" for k in range(20 + (number * 7) % 25))
            parts.append(f"Paragraph {number} of section {section}: {words}.\n")
    return write(path, "\n".join(parts))


def test_build_sends_fixed_size_batches_and_stores_every_chunk(index_path, docs, backend):
    report = build(index_path, docs, backend, batch_size=2)
    assert report.exit_code == 0
    assert report.files_added == 3
    with Index.open(index_path) as index:
        assert index.store.counts() == {"files": 3, "chunks": report.chunks_embedded}
        assert index.store.integrity_problems() == []
    sizes = [len(batch) for batch in _batches(backend, 2)]
    assert all(size <= 2 for size in sizes)
    assert backend.calls == report.batches == -(-report.chunks_embedded // 2)


def _batches(backend: HashBackend, size: int) -> list[list[str]]:
    return [backend.embedded[i : i + size] for i in range(0, len(backend.embedded), size)]


@pytest.mark.parametrize(
    "fault",
    [
        "too_few",
        "too_many",
        "empty",
        "empty_list",
        "nan",
        "inf",
        "zero",
        "ragged",
        "not_numbers",
        "raise",
    ],
)
def test_a_refused_batch_leaves_the_index_exactly_as_it_was(index_path, docs, fault):
    build(index_path, docs, HashBackend())
    before = snapshot(index_path)
    for path in docs.rglob("*.*"):
        path.write_text(path.read_text() + "\nAn added line that changes every file.\n")
    report = build(index_path, docs, FaultyBackend(fault, fail_on=1), batch_size=100)
    assert report.exit_code == 1
    assert report.files_failed == 3
    assert {failure.path for failure in report.failures} == {"guide.md", "notes.txt", "sub/deep.md"}
    assert all("batch 1" in failure.reason for failure in report.failures)
    assert snapshot(index_path) == before


def test_vectors_of_another_dimension_are_a_settings_change_and_leave_the_index_as_it_was(index_path, docs):
    build(index_path, docs, HashBackend())
    before = snapshot(index_path)
    for path in docs.rglob("*.*"):
        path.write_text(path.read_text() + "\nAn added line that changes every file.\n")
    with pytest.raises(ConfigError, match=r"settings differ.*dimension: 32 -> 33.*--rebuild"):
        build(index_path, docs, FaultyBackend("wrong_dimension", fail_on=1), batch_size=100)
    assert snapshot(index_path) == before


def test_a_refused_batch_on_a_new_index_stores_nothing(index_path, docs):
    report = build(index_path, docs, FaultyBackend("nan", fail_on=1), batch_size=100)
    assert report.exit_code == 1
    with Index.open(index_path) as index:
        assert index.store.counts() == {"files": 0, "chunks": 0}


def test_backend_failing_on_third_batch_keeps_earlier_files_and_next_run_embeds_only_the_failed(
    index_path, tmp_path
):
    folder = tmp_path / "many"
    for number in range(6):
        write(folder / f"f{number}.md", f"# File {number}\n\nunique words for file number {number}.\n")
    report = build(index_path, folder, FaultyBackend("raise", fail_on=3), batch_size=1)
    assert report.exit_code == 1
    assert [failure.path for failure in report.failures] == ["f2.md"]
    assert report.files_added == 5
    retry = HashBackend()
    second = build(index_path, folder, retry, batch_size=1)
    assert second.exit_code == 0
    assert second.files_added == 1
    assert second.files_unchanged == 5
    assert retry.embedded == ["File 2\n# File 2\n\nunique words for file number 2."]


def test_failed_file_keeps_its_previous_version(index_path, tmp_path):
    folder = tmp_path / "docs"
    write(folder / "a.md", "old text of a\n")
    write(folder / "b.md", "old text of b\n")
    build(index_path, folder, HashBackend(), batch_size=1)
    write(folder / "a.md", "new text of a\n")
    write(folder / "b.md", "new text of b\n")
    report = build(index_path, folder, FaultyBackend("empty", fail_on=2), batch_size=1)
    assert report.exit_code == 1
    with Index.open(index_path) as index:
        texts = dict(
            rows(index.store, "SELECT f.path, c.text FROM chunks c JOIN files f ON f.id = c.file_id")
        )
    assert texts == {"a.md": "new text of a", "b.md": "old text of b"}


def test_unchanged_rerun_calls_the_backend_zero_times_and_reads_no_file(index_path, docs, monkeypatch):
    build(index_path, docs, HashBackend())
    counting = HashBackend()
    opened: list[str] = []
    real_read_bytes = Path.read_bytes

    def spy(self: Path) -> bytes:
        opened.append(str(self))
        return real_read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", spy)
    report = build(index_path, docs, counting)
    assert counting.calls == 0
    assert opened == []
    assert report.files_unchanged == 3
    assert report.chunks_embedded == 0


def test_a_file_with_no_text_is_counted_once_as_left_out_never_as_indexed(index_path, docs):
    write(docs / "blank.ipynb", make_notebook([("markdown", ""), ("code", "")], image_output=False))
    for run in ("first", "again"):
        report = build(index_path, docs, HashBackend())
        assert [(skipped.path, skipped.kind) for skipped in report.skipped] == [("blank.ipynb", "empty")], run
        assert report.files_added + report.files_changed + report.files_unchanged == 3, run
        assert report.files_skipped == 1 and report.files_seen == 4, run
    assert "3 unchanged" in report.summary()
    assert "1 skipped: 1 empty" in report.summary()


def test_touching_a_file_reembeds_nothing(index_path, docs):
    build(index_path, docs, HashBackend())
    stat = (docs / "guide.md").stat()
    os.utime(docs / "guide.md", ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))
    counting = HashBackend()
    report = build(index_path, docs, counting)
    assert counting.calls == 0
    assert report.files_unchanged == 3
    again = HashBackend()
    build(index_path, docs, again)  # the new mtime was recorded: not even read this time
    assert again.calls == 0


def test_one_line_edit_in_a_100_chunk_file_reembeds_at_most_three_chunks(index_path, tmp_path):
    folder = tmp_path / "big"
    path = many_chunk_file(folder / "big.md", paragraphs=110)
    first = build(index_path, folder, HashBackend())
    assert first.chunks_embedded >= 90
    lines = path.read_text().split("\n")
    middle = len(lines) // 2
    while not lines[middle].startswith("Paragraph"):
        middle += 1
    lines[middle] = lines[middle].replace("Paragraph", "Edited paragraph", 1)
    path.write_text("\n".join(lines))
    counting = HashBackend()
    report = build(index_path, folder, counting)
    assert 1 <= report.chunks_embedded <= 3
    assert report.files_changed == 1


def test_edit_at_the_top_keeps_the_vectors_of_later_sections(index_path, tmp_path):
    folder = tmp_path / "big"
    path = many_chunk_file(folder / "big.md", sections=5)
    build(index_path, folder, HashBackend())
    path.write_text("A new first line that shifts every line number.\n\n" + path.read_text())
    counting = HashBackend()
    report = build(index_path, folder, counting)
    assert report.chunks_embedded <= 2
    with Index.open(index_path) as index:
        assert report.chunks_reused == index.store.counts()["chunks"] - report.chunks_embedded >= 80
        first_line = rows(index.store, "SELECT min(start_line) FROM chunks WHERE heading = 'Section 4'")
        assert first_line[0][0] > 3  # line numbers moved with the text


def test_renamed_and_copied_files_reuse_vectors(index_path, docs):
    build(index_path, docs, HashBackend())
    (docs / "guide.md").rename(docs / "renamed.md")
    (docs / "copy.txt").write_text((docs / "notes.txt").read_text())
    counting = HashBackend()
    report = build(index_path, docs, counting)
    assert counting.calls == 0
    assert report.files_added == 2
    assert report.files_removed == 1
    with Index.open(index_path) as index:
        paths = {row[0] for row in rows(index.store, "SELECT path FROM files")}
        assert index.store.integrity_problems() == []
    assert paths == {"renamed.md", "notes.txt", "copy.txt", "sub/deep.md"}


def test_deleted_file_disappears_from_index_and_results(index_path, docs):
    build(index_path, docs, HashBackend())
    (docs / "notes.txt").unlink()
    report = build(index_path, docs, HashBackend())
    assert report.files_removed == 1
    with Index.open(index_path, backend=HashBackend()) as index:
        assert index.search("cats", mode="keyword", min_score=0) == []
        assert all(
            hit.path != "notes.txt"
            for hit in index.search("Plain notes about cats", k=10, mode="vector", min_score=0)
        )
        assert index.store.integrity_problems() == []


def test_deletion_only_touches_the_folder_being_built(index_path, tmp_path):
    first, second = tmp_path / "one", tmp_path / "two"
    write(first / "a.md", "alpha file\n")
    write(second / "b.md", "beta file\n")
    build(index_path, first, HashBackend())
    report = build(index_path, second, HashBackend())
    assert report.files_removed == 0
    with Index.open(index_path) as index:
        assert {hit.path for hit in index.search("file", k=5, mode="keyword", min_score=0)} == {
            "a.md",
            "b.md",
        }


def test_file_that_becomes_binary_is_removed_with_a_warning_and_a_latin1_one_is_read(index_path, docs):
    build(index_path, docs, HashBackend())
    (docs / "guide.md").write_bytes(b"\x89PNG\x00\x00binary")
    (docs / "notes.txt").write_bytes("Café au lait, crème brûlée\n".encode("latin-1"))
    warnings: list[str] = []
    with Index.open(index_path) as index:
        report = index.build(docs, backend=HashBackend(), warn=warnings.append)
        assert index.search("Install", mode="keyword", min_score=0) == []
        assert index.search("cats", mode="keyword", min_score=0) == []
        assert [hit.path for hit in index.search("crème", mode="keyword", min_score=0)] == ["notes.txt"]
    assert report.exit_code == 0
    assert report.files_skipped == 1
    assert report.files_changed == 1
    assert [w for w in warnings if w.startswith("guide.md: skipped, binary")] == warnings


def test_fingerprint_change_is_refused_without_rebuild(index_path, docs):
    build(index_path, docs, HashBackend(model_name="hash-v1"))
    with pytest.raises(ConfigError, match="embedding.model: 'hash-v1' -> 'hash-v2'.*--rebuild"):
        build(index_path, docs, HashBackend(model_name="hash-v2"))


def test_rebuild_swaps_in_the_new_index(index_path, docs):
    build(index_path, docs, HashBackend(dimension=32, model_name="hash-v1"))
    if is_postgres_url(index_path):
        with pytest.raises(ConfigError, match="a rebuild is not available on PostgreSQL"):
            build(index_path, docs, HashBackend(dimension=48, model_name="hash-v2"), rebuild=True)
        return
    report = build(index_path, docs, HashBackend(dimension=48, model_name="hash-v2"), rebuild=True)
    assert report.exit_code == 0
    with Index.open(index_path) as index:
        assert index.store.dimension == 48
        assert index.store.get_meta("model") == "hash-v2"
        assert index.store.counts()["files"] == 3
        assert index.store.integrity_problems() == []
    assert not Path(str(index_path) + ".rebuild").exists()


def test_missing_folder_is_a_config_error(index_path, tmp_path):
    with pytest.raises(ConfigError, match="does-not-exist"):
        build(index_path, tmp_path / "does-not-exist", HashBackend())


def test_store_reopens_with_migrations_applied_once(index_path, docs):
    build(index_path, docs, HashBackend())
    with open_store(index_path, writable=True) as store:
        assert store.applied_migrations() == [migration.name for migration in all_migrations(store.engine)]
        assert store.migrate() == []
        if isinstance(store, SQLiteStore):
            assert store.db.execute("PRAGMA journal_mode").fetchall()[0][0] == "wal"


def test_a_rebuild_with_a_failed_file_is_not_swapped_in(index_path, docs):
    if is_postgres_url(index_path):
        pytest.skip("--rebuild is refused on PostgreSQL (test_rebuild_swaps_in_the_new_index)")
    build(index_path, docs, HashBackend(model_name="hash-v1"))
    before = snapshot(index_path)
    failing = FaultyBackend("nan", fail_on=1, model_name="hash-v2")
    report = build(index_path, docs, failing, rebuild=True, batch_size=2)
    assert report.exit_code == 1
    assert "rebuild not swapped in: the index keeps its previous version" in report.warnings
    assert snapshot(index_path) == before
    assert not Path(str(index_path) + ".rebuild").exists()


def test_a_settings_mismatch_names_backend_and_model_first_and_counts_the_rest():
    from indexer.fingerprint import describe_difference

    old = {
        "embedding": {"backend": "a", "model": "m1", "x": 1},
        "chunking": {"max_tokens": 1, "overlap": 1},
        "p": 1,
    }
    new = {
        "embedding": {"backend": "b", "model": "m2", "x": 2},
        "chunking": {"max_tokens": 2, "overlap": 2},
        "p": 2,
    }
    assert describe_difference(old, new) == (
        "embedding.backend: 'a' -> 'b', embedding.model: 'm1' -> 'm2', "
        "chunking.max_tokens: 1 -> 2, chunking.overlap: 1 -> 2 (+2 more)"
    )


def test_a_new_chunker_recuts_every_file_without_a_rebuild_and_keeps_unchanged_vectors(
    index_path, docs, monkeypatch
):
    from indexer import chunking

    monkeypatch.setattr(chunking, "CHUNKER_VERSION", chunking.CHUNKER_VERSION - 1)
    build(index_path, docs, HashBackend())
    monkeypatch.setattr(chunking, "CHUNKER_VERSION", chunking.CHUNKER_VERSION + 1)
    backend = HashBackend()
    warnings: list[str] = []
    report = build(index_path, docs, backend, warn=warnings.append)  # no --rebuild: only the chunker changed
    assert report.exit_code == 0
    assert report.files_changed == 3
    version = chunking.CHUNKER_VERSION
    assert warnings[0] == (
        f"the chunker changed (chunking.version: {version - 1} -> {version}): every file is read and cut "
        "again once; chunks whose text did not change keep their vectors"
    )
    assert report.chunks_embedded == 0
    assert backend.calls == 0  # the same texts keep their vectors
    with Index.open(index_path) as index:
        assert f'"version": {chunking.CHUNKER_VERSION}' in index.store.get_meta("fingerprint")
    assert build(index_path, docs, HashBackend()).files_unchanged == 3  # and then the rerun is cheap


def test_a_file_left_out_is_warned_of_once_not_on_every_run(index_path, tmp_path):
    folder = tmp_path / "docs"
    write(folder / "guide.md", "# Guide\n\nAbout herons.\n")
    write(folder / ".env", "API_KEY=x\n")
    write(folder / "big.log.txt", "A line of a long log.\n" * 100)
    write(tmp_path / "elsewhere.md", "# Elsewhere\n")
    os.symlink(tmp_path / "elsewhere.md", folder / "away.md")
    (folder / "photo.md").write_bytes(b"\x89PNG\x00\x00")

    def build_warnings(**options) -> tuple[list[str], object]:
        warnings: list[str] = []
        with Index.open(index_path) as index:
            report = index.build(folder, backend=HashBackend(), warn=warnings.append, **options)
        return sorted(warning.split(":")[0] for warning in warnings), report

    first, report = build_warnings(max_file_size=1024)
    assert first == [".env", "away.md", "big.log.txt", "photo.md"]
    again, report = build_warnings()
    assert again == []
    assert report.exit_code == 0
    assert report.skipped_by_kind() == {"secret": 1, "link": 1, "too-large": 1, "binary": 1}
    write(folder / ".env", "API_KEY=y\nKINGFISHER=z\n")  # changed: warned of again
    changed, _ = build_warnings()
    assert changed == [".env"]
    # a file left out unread is read once the rules let it in
    allowed, report = build_warnings(allow_secrets=[".env"], rebuild=True)
    assert allowed == []
    assert report.files_changed == 1
    with Index.open(index_path) as index:
        assert [hit.path for hit in index.search("kingfisher", mode="keyword")] == [".env"]


@pytest.mark.heavy
def test_a_build_stopped_by_sigterm_keeps_what_it_embedded_and_the_next_run_resumes(index_path, tmp_path):
    folder = write_corpus(tmp_path / "docs", 60, paragraphs=12)  # under a group of 64 files or 2,048 chunks
    command = [sys.executable, str(WORKER), str(index_path), str(folder), "--delay", "0.05"]
    command += ["--commit-seconds", "0.2", "--tell-embedded"]
    worker = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert worker.stdout.readline().strip() == "started"
    embedded = 0
    while embedded < 60:
        embedded = int(worker.stdout.readline().split()[1])
    time.sleep(1.0)  # five of the time bounds: every file embedded before now is committed
    worker.send_signal(signal.SIGTERM)
    assert worker.wait(timeout=60) == -signal.SIGTERM
    with Index.open(index_path, create=False) as index:
        kept, record = index.store.counts(), index.status()["builds"][0]
    assert kept["chunks"] >= embedded
    assert record["outcome"] == "interrupted"
    assert record["files_added"] == kept["files"] < 60
    report = build(index_path, folder, HashBackend())
    assert report.files_unchanged == kept["files"]
    assert report.files_added == 60 - kept["files"]
    with Index.open(index_path, create=False) as index:
        assert report.chunks_embedded == index.store.counts()["chunks"] - kept["chunks"]


class InterruptedBackend(HashBackend):
    """Ctrl-C while batch ``at`` is being embedded, the others a little slow."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.at = at

    def embed(self, texts: list[str]):
        time.sleep(0.01)
        if self.calls + 1 == self.at:
            raise KeyboardInterrupt
        return super().embed(texts)


def test_an_interrupted_builds_record_counts_every_file_it_committed(index_path, tmp_path):
    folder = write_corpus(tmp_path / "docs", 30, paragraphs=4)
    with Index.open(index_path) as index, pytest.raises(KeyboardInterrupt):
        index.build(folder, backend=InterruptedBackend(at=20), batch_size=2, commit_seconds=0.05)
    with Index.open(index_path, create=False) as index:
        kept, record = index.store.counts(), index.status()["builds"][0]
    assert record["outcome"] == "interrupted"
    assert 0 < kept["files"] < 30
    assert (record["files_added"], record["chunks_embedded"]) == (kept["files"], kept["chunks"])


# The vector check, as every batch meets it.


@pytest.mark.parametrize(
    "rows",
    [
        [[1e30, 0.0], [0.0, -1e30]],  # finite, though their squares overflow float32
        [np.array([1e-3, 0.0], dtype=np.float32), np.array([3.0, 4.0], dtype=np.float32)],
        np.array([[0.6, 0.8], [1.0, 0.0]], dtype=np.float64),
    ],
    ids=["huge floats", "float32 arrays", "a float64 matrix"],
)
def test_the_vector_check_accepts_every_finite_nonzero_batch_as_float32(rows):
    matrix = check_vectors(rows, 2, 2)
    assert matrix.dtype == np.float32
    assert matrix.shape == (2, 2)
    assert np.array_equal(matrix, np.asarray(rows, dtype=np.float32))


@pytest.mark.parametrize(
    ("rows", "complaint"),
    [
        ([[0.1, 0.2], [float("nan"), 0.2]], "NaN or infinity for input 1"),
        ([np.ones(2, np.float32), np.array([np.inf, 0], np.float32)], "NaN or infinity for input 1"),
        ([[0.1, 0.2], [0.0, 0.0]], "zero vector for input 1"),
        ([[0.1, 0.2], [0.1, 0.2, 0.3]], "different lengths"),
        ([[0.1, 0.2], ["a", 0.2]], "not numbers"),
        ([[0.1, 0.2, 0.3], [0.1, 0.2, 0.3]], "dimension 3, the index has 2"),
    ],
)
def test_the_vector_check_names_what_is_wrong_in_a_batch(rows, complaint):
    with pytest.raises(VectorCheckError, match=re.escape(complaint)):
        check_vectors(rows, 2, 2)
