"""Migrations: numbered SQL files per engine, applied once each, in order, by one runner."""

from __future__ import annotations

import subprocess
import sys

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
