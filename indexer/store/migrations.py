"""The numbered SQL files that make an index's schema, and the one way both engines apply them.

Each engine keeps its own SQL (``migrations/sqlite``, ``migrations/postgres``); what they share is
the decision: which files, in which order, each applied once in its own transaction together with its
record in ``schema_migrations``, re-checked under the engine's lock so two processes opening a new
index at once apply each file once.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from indexer.errors import ConfigError

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


def refuse_newer(engine: str, applied: set[int], where: str) -> None:
    """Refuse the index at ``where`` when it has migrations this version does not know: a newer
    version of indexer made it, and this one would read a schema it does not know, or write rows
    the newer one no longer reads.

    Raises:
        ConfigError: ``applied`` holds a version newer than every migration of ``engine``.
    """
    known = {migration.version for migration in all_migrations(engine)}
    newer = sorted(applied - known)
    if newer:
        raise ConfigError(
            f"index {where} was made by a newer version of indexer (schema {newer[-1]}; this version "
            f"knows up to {max(known)}): left unchanged; upgrade indexer (pip install -U indexer-search)"
        )


class MigrationTarget(Protocol):
    """What an engine offers :func:`migrate`: a statement runner with its parameter placeholder and
    its type for a timestamp, and one transaction at a time under the engine's lock."""

    placeholder: str
    timestamp_type: str

    def execute(self, sql: str, params: Sequence[object] = ()) -> list[tuple]: ...

    def locked_transaction(self) -> AbstractContextManager[None]: ...


def migrate(engine: str, target: MigrationTarget) -> list[str]:
    """Apply ``engine``'s migrations that ``target`` lacks; the names of those applied."""
    mark = target.placeholder
    with target.locked_transaction():
        target.execute(
            f"CREATE TABLE IF NOT EXISTS {RECORD_TABLE} "
            f"(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at {target.timestamp_type} NOT NULL)"
        )
    done = []
    for migration in pending(engine, applied_versions(target)):
        with target.locked_transaction():
            if migration.version in applied_versions(target):
                continue  # another process applied it while this one waited for the lock
            target.execute(migration.sql)
            target.execute(
                f"INSERT INTO {RECORD_TABLE} (version, name, applied_at) VALUES ({mark}, {mark}, {mark})",
                (migration.version, migration.name, time.time()),
            )
        done.append(migration.name)
    return done


def applied_versions(target: MigrationTarget) -> set[int]:
    return {row[0] for row in target.execute(f"SELECT version FROM {RECORD_TABLE}")}
