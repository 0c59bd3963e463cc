"""The SQLite store itself: readers that write nothing, a connection per thread, the log that tells
every process's vector graph which chunks changed."""

from __future__ import annotations

import os
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import apsw
import pytest
from conftest import write
from helpers import HashBackend, write_corpus
from runs import build, cli

from indexer import Index
from indexer.errors import IndexNotFoundError, IndexOutdatedError
from indexer.store import migrations
from indexer.store.sqlite import SQLiteStore


def files_bytes(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file()}


@pytest.fixture
def built(tmp_path: Path, docs: Path) -> Path:
    path = tmp_path / "index.db"
    with Index.open(path) as index:
        index.build(docs, backend=HashBackend(), warn=lambda message: None)
    return path


def test_a_reader_reads_and_leaves_every_file_of_the_index_as_it_was(built: Path):
    before = files_bytes(built.parent)
    with SQLiteStore.open(built) as store:
        assert store.counts()["files"] == 3
        assert not store.writable
        with store.snapshot():
            assert store.recent_builds()[0]["outcome"] == "ok"
    after = files_bytes(built.parent)
    assert {name: data for name, data in after.items() if not name.endswith("-shm")} == {
        name: data for name, data in before.items() if not name.endswith("-shm")
    }


def test_a_reader_of_a_missing_index_creates_nothing(tmp_path: Path):
    with pytest.raises(IndexNotFoundError):
        SQLiteStore.open(tmp_path / "missing.db")
    assert list(tmp_path.iterdir()) == []


def test_a_reader_refuses_an_index_that_needs_a_migration_and_a_writer_upgrades_it(built: Path):
    with SQLiteStore.open(built, writable=True) as store, store.transaction():
        store.db.execute(f"DELETE FROM {migrations.RECORD_TABLE} WHERE version = 2")
        store.db.execute("ALTER TABLE builds DROP COLUMN host")
        store.db.execute("ALTER TABLE builds DROP COLUMN pid")
    before = built.read_bytes()
    with pytest.raises(IndexOutdatedError, match="run `index build` once to upgrade it"):
        SQLiteStore.open(built)
    assert built.read_bytes() == before
    with SQLiteStore.open(built, writable=True):
        pass
    with SQLiteStore.open(built) as store:
        assert store.counts()["files"] == 3


def test_each_thread_gets_its_own_connection(built: Path):
    seen: list[int] = []
    with SQLiteStore.open(built) as store:

        def look() -> None:
            with store.snapshot():
                seen.append(id(store.db))
                assert store.counts()["files"] == 3

        threads = [threading.Thread(target=look) for _ in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        look()
    assert len(set(seen)) == 4


def test_every_write_of_vectors_is_logged_and_a_touch_is_not(built: Path, docs: Path):
    with SQLiteStore.open(built) as reader:
        first = reader.graph._log_position()
        with Index.open(built) as index:
            (docs / "guide.md").touch()
            index.build(docs, backend=HashBackend(), warn=lambda message: None)
            assert reader.graph._log_position() == first
            write(docs / "new.md", "# New\n\nA new file about mountains.\n")
            index.build(docs, backend=HashBackend(), warn=lambda message: None)
            second = reader.graph._log_position()
            new_chunks = reader.query(
                "SELECT count(*) FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = 'new.md'"
            )[0][0]
            assert second == first + new_chunks > first
            (docs / "new.md").unlink()
            index.build(docs, backend=HashBackend(), warn=lambda message: None)
            assert reader.graph._log_position() == second + new_chunks


def remove_index_files(path: Path) -> None:
    """``rm index.db index.db-wal index.db-shm``, as the advice for a damaged index says."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def test_a_long_lived_index_follows_an_index_deleted_and_built_anew_on_every_thread(built: Path, tmp_path):
    notes = tmp_path / "notes"
    write(notes / "heron.md", "# Herons\n\nA heron waits by the river.\n")
    with Index.open(built, create=False) as reader, ThreadPoolExecutor(4) as pool:  # a server's threads
        together = threading.Barrier(4)

        def on_every_thread(ask) -> dict[int, object]:
            def one() -> tuple[int, object]:
                together.wait(timeout=30)  # four tasks at once: one on each thread
                return threading.get_ident(), ask()

            return dict(pool.map(lambda _: one(), range(4)))

        def answer() -> tuple[int, int]:
            return reader.status()["files"], len(reader.search("heron", mode="keyword", min_score=0))

        before = on_every_thread(answer)
        remove_index_files(built)
        with Index.open(built) as writer:
            writer.build(notes, backend=HashBackend(), warn=lambda message: None)
        after = on_every_thread(answer)
    assert len(before) == 4
    assert set(after) == set(before)  # the same four threads, each with its connection
    assert set(before.values()) == {(3, 0)}
    assert set(after.values()) == {(1, 1)}


def test_a_deleted_index_keeps_answering_until_a_complete_one_is_at_its_path(built: Path):
    with Index.open(built, create=False) as reader:
        assert reader.status()["files"] == 3
        remove_index_files(built)
        assert reader.status()["files"] == 3  # nothing at the path yet
        built.write_bytes(b"")  # a build has just created the file, with no table yet
        assert reader.status()["files"] == 3


@pytest.mark.parametrize("tables", ["CREATE TABLE notes (body TEXT)", "CREATE TABLE files (name TEXT)"])
def test_a_database_of_another_tool_is_refused_and_left_byte_for_byte(tmp_path, docs, tables):
    foreign = tmp_path / "other.db"
    with sqlite3.connect(foreign) as connection:
        connection.execute(tables)
        connection.execute("INSERT INTO " + tables.split()[2] + " VALUES ('keep me')")
    before = foreign.read_bytes()
    for args in (["query", "anything"], ["status"], ["build", str(docs)]):
        result = cli(*args, "--db", str(foreign))
        assert result.exit_code == 2, (args, result.output)
        assert result.stderr.count("\n") == 1
        assert "is not an index" in result.stderr
        assert foreign.read_bytes() == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["docs", "other.db"]


def test_a_file_that_is_not_a_database_is_refused_and_left_as_it_was(tmp_path, docs):
    notes = write(tmp_path / "notes.txt", "not a database\n" * 100)
    before = notes.read_bytes()
    for args in (["query", "anything"], ["status"], ["build", str(docs)]):
        result = cli(*args, "--db", str(notes))
        assert result.exit_code == 2 and "not a SQLite database" in result.stderr, result.output
    assert notes.read_bytes() == before


def test_a_query_on_a_missing_index_creates_nothing(tmp_path):
    for args in (["query", "anything"], ["status"]):
        result = cli(*args, "--db", str(tmp_path / "missing.db"))
        assert result.exit_code == 2
        assert "no index at" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_damaged_index_is_one_line_for_every_command(tmp_path, docs):
    index_path = tmp_path / "index.db"
    build(index_path, write_corpus(docs, 20, paragraphs=30))
    connection = apsw.Connection(str(index_path))
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    with open(index_path, "r+b") as stream:
        size = os.path.getsize(index_path)
        for offset in range(3 * 4096, size, 4096):
            stream.seek(offset)
            stream.write(b"\xde\xad\xbe\xef" * 16)
    for args in (["query", "word1x1x1", "--mode", "keyword"], ["status"], ["build", str(docs)]):
        result = cli(*args, "--db", str(index_path))
        assert result.exit_code == 5, (args, result.output)
        assert result.stderr.count("\n") == 1
        assert "damaged" in result.stderr
