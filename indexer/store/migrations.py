"""The numbered SQL files that make an index's schema, and the one way both engines apply them.

Each engine keeps its own SQL (``migrations/sqlite``, ``migrations/postgres``); what they share is
the decision: which files, in which order, each applied once in its own transaction together with its
record in ``schema_migrations``, re-checked under the engine's lock so two processes opening a new
index at once apply each file once.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

#: The table that records which migrations an index has; its presence is what makes a database ours.
RECORD_TABLE = "schema_migrations"


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    path: Path

    @property
    def sql(self) -> str:
        return self.path.read_text(encoding="utf-8")


def migrations_folder(engine: str) -> Path:
    """``migrations/ENGINE``: inside the installed package, or at the top of a source checkout."""
    package = Path(__file__).resolve().parent.parent
    packaged = package / "migrations" / engine
    if packaged.is_dir():
        return packaged
    return package.parent / "migrations" / engine


def all_migrations(engine: str) -> list[Migration]:
    """Every migration of ``engine``, in the order they apply."""
    found = [
        Migration(int(path.name.split("_", 1)[0]), path.name, path)
        for path in migrations_folder(engine).glob("[0-9]*.sql")
    ]
    return sorted(found, key=lambda migration: migration.version)


def pending(engine: str, applied: set[int]) -> list[Migration]:
    """The migrations not yet applied to an index that has ``applied``."""
    return [migration for migration in all_migrations(engine) if migration.version not in applied]


class MigrationTarget(Protocol):
    """What an engine offers :func:`migrate`: its record table, one locked transaction per
    migration, and a way to run a migration's SQL and record it inside that transaction."""

    def create_record_table(self) -> None: ...

    def applied_versions(self) -> set[int]: ...

    def locked_transaction(self) -> AbstractContextManager[None]: ...

    def execute_script(self, sql: str) -> None: ...

    def record(self, migration: Migration, applied_at: float) -> None: ...


def migrate(engine: str, target: MigrationTarget) -> list[str]:
    """Apply ``engine``'s migrations that ``target`` lacks; the names of those applied."""
    target.create_record_table()
    done = []
    for migration in pending(engine, target.applied_versions()):
        with target.locked_transaction():
            if migration.version in target.applied_versions():
                continue  # another process applied it while this one waited for the lock
            target.execute_script(migration.sql)
            target.record(migration, time.time())
        done.append(migration.name)
    return done
