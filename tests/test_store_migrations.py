"""Migrations: numbered SQL files per engine, applied once each, in order, by one runner."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import HashBackend

from indexer import ConfigError, Index
from indexer.store import migrations
from indexer.store.sqlite import SQLiteStore


def test_both_engines_have_the_same_numbered_steps_in_order():
    for engine in ("sqlite", "postgres"):
        versions = [migration.version for migration in migrations.all_migrations(engine)]
        assert versions == sorted(versions)
        assert len(set(versions)) == len(versions)
    sqlite = [migration.version for migration in migrations.all_migrations("sqlite")]
    assert sqlite == [migration.version for migration in migrations.all_migrations("postgres")]


def test_pending_lists_what_an_index_lacks():
    every = migrations.all_migrations("sqlite")
    assert migrations.pending("sqlite", set()) == every
    assert migrations.pending("sqlite", {every[0].version}) == every[1:]
    assert migrations.pending("sqlite", {m.version for m in every}) == []


def test_a_new_index_gets_every_migration_once(tmp_path):
    with SQLiteStore.open(tmp_path / "index.db", writable=True, create=True) as store:
        names = [migration.name for migration in migrations.all_migrations("sqlite")]
        assert store.applied_migrations() == names
        assert store.migrate() == []
        rows = store.query(f"SELECT version FROM {migrations.RECORD_TABLE}")
        assert len(rows) == len(names)


def test_an_older_index_is_brought_up_to_date_by_a_writer(tmp_path):
    """An index from before 0002_build_process.sql gets the columns that migration adds."""
    path = tmp_path / "index.db"
    with SQLiteStore.open(path, writable=True, create=True) as store, store.transaction():
        store.db.execute(f"DELETE FROM {migrations.RECORD_TABLE} WHERE version = 2")
        store.db.execute("ALTER TABLE builds DROP COLUMN host")
        store.db.execute("ALTER TABLE builds DROP COLUMN pid")
    with SQLiteStore.open(path, writable=True) as store:
        assert "0002_build_process.sql" in store.applied_migrations()
        assert {"host", "pid"} <= {row[1] for row in store.query("PRAGMA table_info(builds)")}


@pytest.mark.heavy
def test_processes_creating_one_index_at_once_apply_each_migration_once(tmp_path):
    path = tmp_path / "index.db"
    script = (
        "import sys; from indexer.store.sqlite import SQLiteStore; "
        "SQLiteStore.open(sys.argv[1], writable=True, create=True).close()"
    )
    openers = [
        subprocess.Popen([sys.executable, "-c", script, str(path)], stderr=subprocess.PIPE) for _ in range(4)
    ]
    for opener in openers:
        assert opener.wait(timeout=60) == 0, opener.stderr.read()
    with SQLiteStore.open(path) as store:
        assert store.applied_migrations() == [m.name for m in migrations.all_migrations("sqlite")]


RAW_NAMES = {
    "new\nline.md": "new\\x0aline.md",
    "title\x1b]0;x\x07.md": "title\\x1b]0;x\\x07.md",
    "txt.\u202eexe.md": "txt.\\u202eexe.md",
    "caf\\xe9.md": "caf\\xe9.md",  # an earlier spelling of bytes that are not UTF-8: kept
    "plain.md": "plain.md",
    "taken\tname.md": "taken\tname.md",  # its new spelling is another file's: left to the next build
}


ESCAPED_NAMES = "0009_escaped_names.sql"


def respelled_paths(execute) -> dict[str, str]:
    """Files named as earlier versions stored them, then migration 0009 run; the paths after it."""
    for number, name in enumerate([*RAW_NAMES, "taken\\x09name.md"]):
        execute(
            "INSERT INTO files (root, path, size, mtime_ns, content_hash) VALUES ('/r', ?, 1, 1, ?)",
            (name, str(number)),
        )
    execute(next(m.sql for m in migrations.all_migrations(execute.engine) if m.name == ESCAPED_NAMES))
    return {row[1]: row[0] for row in execute("SELECT path, content_hash FROM files ORDER BY id")}


def expected_paths() -> dict[str, str]:
    expected = {str(number): spelled for number, spelled in enumerate(RAW_NAMES.values())}
    return {**expected, str(len(expected)): "taken\\x09name.md"}


def test_an_index_whose_names_held_control_characters_stores_them_escaped_as_the_walk_now_does(tmp_path):
    with SQLiteStore.open(tmp_path / "index.db", writable=True, create=True) as store, store.transaction():

        def execute(sql, params=()):
            return store.db.execute(sql, params).fetchall()

        execute.engine = "sqlite"
        assert respelled_paths(execute) == expected_paths()


@pytest.mark.heavy
def test_postgres_stores_the_same_names_escaped(postgres_url):
    import psycopg

    from indexer.store.postgres import PostgresStore

    PostgresStore.open(postgres_url, writable=True, create=True).close()
    with psycopg.connect(postgres_url) as connection, connection.transaction():

        def execute(sql, params=()):
            cursor = connection.execute(sql.replace("?", "%s") if params else sql, params or None)
            return cursor.fetchall() if cursor.description else []

        execute.engine = "postgres"
        assert respelled_paths(execute) == expected_paths()


def test_an_index_a_newer_version_made_is_refused_unchanged_by_readers_and_writers(any_index, tmp_path):
    """A build of this version would write into a schema it does not know, and a search read it:
    both stop at one line that says to upgrade, and the index is left as it was."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes.md").write_text("# Notes\n\nThe kettle boils water.\n", encoding="utf-8")
    with Index.open(any_index, backend=HashBackend()) as index:
        assert index.build(folder).exit_code == 0
    future = max(migration.version for migration in migrations.all_migrations("sqlite")) + 1
    columns = "(version, name, applied_at)"
    record = f"INSERT INTO {migrations.RECORD_TABLE} {columns} VALUES ({future}, 'future', 0)"
    if isinstance(any_index, Path):
        with SQLiteStore.open(any_index, writable=True) as store, store.transaction():
            store.db.execute(record)
        before = any_index.read_bytes()
    else:
        import psycopg

        with psycopg.connect(any_index) as connection:
            connection.execute(record)
    for attempt in (
        lambda: Index.open(any_index, backend=HashBackend()).search("kettle"),
        lambda: Index.open(any_index, create=False, backend=HashBackend()).search("kettle"),
        lambda: Index.open(any_index, backend=HashBackend()).build(folder),
    ):
        with pytest.raises(ConfigError, match=f"made by a newer version of indexer \\(schema {future};"):
            attempt()
            raise AssertionError("not refused")
    if isinstance(any_index, Path):
        assert any_index.read_bytes() == before
