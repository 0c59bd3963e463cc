"""One exception hierarchy: each class is one thing a user can act on, with its exit code."""

from __future__ import annotations


class IndexerError(Exception):
    """Base of every error the library raises on purpose; the CLI prints it as one line."""

    exit_code = 2


class ConfigError(IndexerError):
    """A bad option, a missing index, or a build that does not match the index (usage or configuration)."""

    exit_code = 2


class IndexNotFoundError(ConfigError):
    """There is no index at that location yet: build one first."""


class IndexOutdatedError(ConfigError):
    """The index was made by an older version: a build (which migrates it) must upgrade it first."""


class NotInIndexError(ConfigError):
    """What was asked for by its citation (a file, its lines, a page) is not in the index."""


class InvalidRequestError(ConfigError):
    """A search or a citation that cannot be asked as written (a NUL byte, lines that run backwards):
    the HTTP server answers 422, as for any other bad parameter."""


class SettingsChangedError(ConfigError):
    """The backend no longer makes vectors like the index's (another dimension): a build must start
    afresh (``--rebuild``). ``difference`` says what changed, as the settings-differ message does."""

    def __init__(self, message: str, difference: str) -> None:
        super().__init__(message)
        self.difference = difference


class IndexLockedError(IndexerError):
    """Another build holds the index's writer lock; ``holder`` says who, when that is known."""

    exit_code = 3

    def __init__(self, message: str, holder: str | None = None) -> None:
        super().__init__(message)
        self.holder = holder


class BackendError(IndexerError):
    """The embedding backend failed for one batch (refused, bad answer, retries exhausted)."""

    exit_code = 1


class BackendUnreachableError(BackendError):
    """The backend cannot be used at all (connection refused, unknown model, bad credentials)."""

    exit_code = 4


class DatabaseUnreachableError(IndexerError):
    """The index's database server cannot be reached (PostgreSQL: refused, unknown host, bad login)."""

    exit_code = 4


class StorageError(IndexerError):
    """The index's own storage failed: disk full, file size limit, read-only file or folder, too few
    file descriptors, a damaged database. The index keeps what it had before the failed step."""

    exit_code = 5


class InputTooLongError(BackendError):
    """The backend said an input is longer than its context; the caller may split and retry."""


class VectorCheckError(BackendError):
    """The vectors a backend returned failed the check (count, order, shape, finiteness, norm)."""
