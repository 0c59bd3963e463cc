"""How the SQLite store talks to its file: one connection per thread, read-only or for writing, and
one-line errors when the storage itself fails.

- **One connection per thread.** An apsw connection serves one thread at a time and a transaction
  belongs to its connection, so each thread gets its own: a web server's threads search at once,
  and a build writes on its writer thread while its main thread reads.
- **A reader never writes.** It opens the file read-only; in a folder where SQLite cannot make the
  WAL's shared-memory file (a shipped, read-only index) it reads the file as immutable.
- **A reader follows its file.** An index deleted and built anew at the same path, or replaced by
  a move, is another file: a thread's connection remembers which file (device and inode) it opened,
  and a long-lived reader (a server) reopens it on the file now at the path, once that file is a
  complete index. One ``stat`` per read transaction tells.
- **Errors of the storage itself** (disk full, file size limit, read-only, damaged file, too few
  descriptors) become one :class:`indexer.errors.StorageError` naming the index and what to do.
"""

from __future__ import annotations

import errno
import functools
import importlib.util
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any
from urllib.parse import quote

import apsw

from indexer.errors import IndexerError, IndexLockedError, StorageError

BUSY_TIMEOUT_MS = 10_000

_DAMAGED_ADVICE = "the file is damaged: delete it (with its -wal and -shm files) and build again"
#: How SQLite says a statement names a table or column the index's schema should hold and does not.
_MISSING_SCHEMA = ("no such table:", "no such column:")

#: apsw errors that mean the storage failed (not a bug in a query), and what the user can do.
_STORAGE_FAILURES: tuple[tuple[type[apsw.Error], str], ...] = (
    (apsw.FullError, "the disk is full (or the file size limit was reached): free space and build again"),
    (apsw.ReadOnlyError, "the index is read-only here: build it where its file and folder are writable"),
    (apsw.PermissionsError, "permission denied: check the index's file and folder permissions"),
    (apsw.CorruptError, _DAMAGED_ADVICE),
    (apsw.NotADBError, "the file is not a SQLite database"),
    (apsw.CantOpenError, "cannot open the file (missing folder, permissions, or too many open files)"),
    (apsw.IOError, "a disk read or write failed (full disk, file size limit, or hardware)"),
    (apsw.BusyError, "another process kept the database locked too long: try again"),
    (apsw.NoMemError, "out of memory"),
)


def storage_error(path: str, error: apsw.Error) -> IndexerError | None:
    """The one-line error for a failure of the storage itself, or None for any other apsw error."""
    if isinstance(error, apsw.BusyError):
        return IndexLockedError(f"index {path}: {_advice(error)} ({error})")
    if isinstance(error, apsw.SQLError) and "sqlite-vec error" in str(error):
        # sqlite-vec reports a failed write of its own pages as a plain error, without the cause
        return StorageError(f"index {path}: writing vectors failed ({error}); {space_hint(path)}")
    if isinstance(error, apsw.SQLError) and str(error).startswith(_MISSING_SCHEMA):
        # every migration is applied before a statement runs, so the schema lost a part of it
        return StorageError(f"index {path}: {_DAMAGED_ADVICE} ({error})")
    advice = _advice(error)
    if advice is None:
        return None
    if isinstance(error, (apsw.FullError, apsw.IOError)):
        advice = f"{advice}; {space_hint(path)}"
    return StorageError(f"index {path}: {advice} ({error})")


def space_hint(path: str) -> str:
    """What the system says now about room for the index: free space, and the file size limit."""
    folder = os.path.dirname(os.path.abspath(path))
    import shutil  # here, for a failure's message only: it loads the compression modules

    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return "check the free space on its disk"
    hint = f"{free / 2**20:.0f} MB free on its disk"
    if sys.platform != "win32":
        import resource  # POSIX only, and here only: a failure's message is its one use

        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        if limit != resource.RLIM_INFINITY:
            hint += f", files limited to {limit / 2**20:.1f} MB (ulimit -f)"
    return f"{hint}; make room and build again"


def describe_failure(error: OSError, path: str) -> str:
    """An error of the file system in a few words, with where there is room for the index when it
    is about room (disk full, file size limit, quota)."""
    reason = error.strerror or str(error)
    if error.filename:
        reason = f"{reason}: {error.filename}"
    if error.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
        reason = f"{reason}; {space_hint(path)}"
    return reason


def _advice(error: apsw.Error) -> str | None:
    for kind, advice in _STORAGE_FAILURES:
        if isinstance(error, kind):
            return advice
    return None


class Connections:
    """This thread's connection to the index file at ``path`` (``writable`` or read-only), and the
    statements run on it. Close when no thread uses it any more."""

    def __init__(self, path: str, writable: bool) -> None:
        self.path = path
        self.writable = writable
        self._uri = _uri(path, writable, immutable=False)
        self._local = threading.local()
        self._opened: list[apsw.Connection] = []
        self._opened_lock = threading.Lock()

    @property
    def db(self) -> apsw.Connection:
        """This thread's connection, opened on first use."""
        connection = getattr(self._local, "connection", None)
        if connection is None:
            identity = self._file_identity()  # before opening: a file replaced in between is seen next time
            connection = self._connect()
            self._keep(connection, identity)
        return connection

    def reopen_if_replaced(self, usable: Callable[[apsw.Connection], bool]) -> bool:
        """When the file at ``path`` is no longer the one this thread's connection reads (deleted and
        made anew, or replaced by a move), open it, and use it from now on if ``usable`` says it is
        a complete index; True when the connection changed. A missing file, or one that cannot be
        opened or used yet, leaves the connection on the file it reads. Not inside a transaction."""
        current = getattr(self._local, "connection", None)
        if current is None or current.in_transaction:
            return False
        identity = self._file_identity()
        if identity is None or identity == self._local.identity:
            return False
        try:
            fresh = self._connect()
        except (IndexerError, apsw.Error):
            return False
        if not usable(fresh):
            fresh.close()
            return False
        with self._opened_lock:
            self._opened.remove(current)
        current.close()
        self._keep(fresh, identity)
        return True

    def _keep(self, connection: apsw.Connection, identity: tuple[int, int] | None) -> None:
        """Make ``connection`` this thread's, opened on the file ``identity`` names."""
        self._local.connection = connection
        self._local.identity = identity
        with self._opened_lock:
            self._opened.append(connection)

    def _file_identity(self) -> tuple[int, int] | None:
        """Which file is at ``path`` now (device, inode); None when there is none."""
        try:
            info = os.stat(self.path)
        except OSError:
            return None
        return info.st_dev, info.st_ino

    def close(self) -> None:
        with self._opened_lock:
            opened, self._opened = self._opened, []
        for connection in opened:
            connection.close()
        self._local = threading.local()

    def _connect(self) -> apsw.Connection:
        flags = apsw.SQLITE_OPEN_URI
        if self.writable:
            flags |= apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
        else:
            flags |= apsw.SQLITE_OPEN_READONLY
        try:
            connection = apsw.Connection(self._uri, flags=flags)
            connection.set_busy_timeout(BUSY_TIMEOUT_MS)
            connection.enable_load_extension(True)
            connection.load_extension(sqlite_vec_path())
            connection.enable_load_extension(False)
            if self.writable:
                connection.execute("PRAGMA synchronous = NORMAL")
            elif not self._uri.endswith("immutable=1"):
                connection = self._readable(connection)
        except apsw.ExtensionLoadingError as error:
            raise StorageError(f"index {self.path}: cannot load sqlite-vec ({error})") from error
        except apsw.Error as error:
            raise self.failure(error) from error
        return connection

    def _readable(self, connection: apsw.Connection) -> apsw.Connection:
        """The connection if it can read; else, in a folder where SQLite cannot make the WAL's
        shared-memory file, the file opened as immutable (nobody can write there anyway)."""
        try:
            connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
            return connection
        except (apsw.ReadOnlyError, apsw.CantOpenError):
            connection.close()
        self._uri = _uri(self.path, writable=False, immutable=True)
        return self._connect()

    def failure(self, error: apsw.Error) -> Exception:
        """The error to raise for an apsw error: a storage failure in one line, else the error."""
        return storage_error(self.path, error) or error

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        """Run one statement on this thread's connection and return its rows."""
        try:
            return self.db.execute(sql, params).fetchall()
        except apsw.Error as error:
            raise self.failure(error) from error

    def many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement once per row of parameters."""
        try:
            self.db.executemany(sql, rows)
        except apsw.Error as error:
            raise self.failure(error) from error

    def value(self, sql: str, params: Sequence[Any] = ()) -> Any:
        rows = self.rows(sql, params)
        return rows[0][0] if rows else None

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction (BEGIN IMMEDIATE: take the write lock now, not halfway through)."""
        self.rows("BEGIN IMMEDIATE")
        try:
            yield
            self.rows("COMMIT")
        except BaseException:
            self._roll_back()
            raise

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """A read transaction: every query inside sees the same committed state, even while a build
        commits files (WAL lets readers keep their snapshot without blocking the writer)."""
        self.rows("BEGIN")
        try:
            yield
        except BaseException:
            self._roll_back()
            raise
        self.rows("COMMIT")

    def _roll_back(self) -> None:
        """End a failed transaction. Called while its error propagates: a rollback that fails too (a
        damaged or vanished file) must not replace that error, which says what went wrong first."""
        db = self.db
        if db.in_transaction:
            with suppress(apsw.Error):
                db.execute("ROLLBACK")


def _uri(path: str, writable: bool, immutable: bool) -> str:
    """A ``file:`` URI for ``path`` (any character in the name is escaped)."""
    absolute = quote(str(Path(path).resolve()) if os.path.exists(path) else os.path.abspath(path))
    if writable:
        return f"file:{absolute}"
    return f"file:{absolute}?immutable=1" if immutable else f"file:{absolute}?mode=ro"


@functools.cache
def sqlite_vec_path() -> str:
    """The sqlite-vec extension the ``sqlite_vec`` package ships (what its ``loadable_path()`` gives),
    found without importing the package: its ``__init__`` imports the standard ``sqlite3`` module
    and numpy, which a keyword search, or any search answered from the index, does not need."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise StorageError("the sqlite-vec package is not installed (pip install sqlite-vec)")
    return os.path.join(spec.submodule_search_locations[0], "vec0")
