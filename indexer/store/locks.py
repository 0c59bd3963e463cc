"""One writer at a time: the wait loop both stores share, and the portable file lock of SQLite's.

A build holds its index's writer lock from start to end. Another build asking for it either waits
(``--wait SECONDS``) or is refused with :class:`indexer.errors.IndexLockedError` naming the holder.
Both kinds of lock are dropped by the operating system or the server when the holder dies, even by
SIGKILL, so a killed build never leaves a stale lock behind.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from indexer.errors import IndexLockedError, StorageError

POLL_SECONDS = 0.1

if TYPE_CHECKING:
    import filelock


class WriterLock(Protocol):
    """``acquire`` raises :class:`IndexLockedError` when another build holds the lock past
    ``wait_seconds``; ``release`` (or leaving the ``with`` block) drops it."""

    def acquire(self, wait_seconds: float = 0) -> None: ...

    def release(self) -> None: ...

    def __enter__(self) -> WriterLock: ...

    def __exit__(self, *exc_info: object) -> None: ...


def wait_for(try_acquire: Callable[[], bool], wait_seconds: float, refusal: Callable[[], Exception]) -> None:
    """Call ``try_acquire`` until it returns True; past ``wait_seconds``, raise what ``refusal`` makes."""
    deadline = time.monotonic() + max(0.0, wait_seconds)
    while not try_acquire():
        if time.monotonic() >= deadline:
            raise refusal()
        time.sleep(POLL_SECONDS)


def lock_path(index_path: str) -> str:
    """``<index>.lock`` beside the real file, so a symbolic link or a relative path to the same
    index finds the same lock."""
    return os.path.realpath(index_path) + ".lock"


class FileWriterLock:
    """One writer per index file: an OS file lock (``flock`` on POSIX, ``LockFileEx`` on Windows,
    through the filelock library) on ``<index>.lock``.

    ``holder`` says who holds the lock, for the refusal message (the index's running build record).
    """

    def __init__(self, index_path: str, holder: Callable[[], str]) -> None:
        self.index_path = index_path
        self.path = lock_path(index_path)
        self._holder = holder
        self._lock = file_lock(self.path)

    def acquire(self, wait_seconds: float = 0) -> None:
        wait_for(self._try_acquire, wait_seconds, self._refusal)

    def _try_acquire(self) -> bool:
        try:
            self._lock.acquire(timeout=0)
        except TimeoutError:  # filelock.Timeout: held by another process
            return False
        except OSError as error:
            if error.errno == errno.ELOOP:  # a link planted under the name: never followed
                raise StorageError(
                    f"the lock file {self.path} is a symbolic link, which a build does not follow: "
                    "remove it and build again"
                ) from error
            raise StorageError(
                f"cannot create the lock file {self.path}: {error.strerror or error}; "
                "the index's folder must be writable to build it"
            ) from error
        return True

    def _refusal(self) -> IndexLockedError:
        holder = self._holder()
        return IndexLockedError(
            f"index {self.index_path} is being built by {holder}; "
            "try again later, or wait for it (--wait SECONDS)",
            holder,
        )

    def release(self) -> None:
        if self._lock.is_locked:
            self._lock.release()

    def __enter__(self) -> FileWriterLock:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def is_locked_elsewhere(index_path: str) -> bool:
    """Whether some build holds the index's lock now (a lock file nobody can create is not held)."""
    path = lock_path(index_path)
    if not os.path.exists(path):
        return False
    probe = file_lock(path)
    try:
        probe.acquire(timeout=0)
    except TimeoutError:  # filelock.Timeout: held by another process
        return True
    except OSError:
        return False  # a read-only folder: no build can be running there
    probe.release()
    return False


def file_lock(path: str) -> filelock.FileLock:
    """An OS lock on ``path`` that any thread of this process may release. filelock opens the file
    without following a link and without truncating it (from the version pyproject.toml asks for:
    older ones truncated whatever a link planted under the name pointed to).

    filelock is imported here, when a lock is first wanted: only builds and status take one, and a
    one-off ``index query`` should not pay for it (and the logging module it loads)."""
    import filelock

    return filelock.FileLock(path, thread_local=False)
