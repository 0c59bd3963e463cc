"""One exception hierarchy: each class is one thing a user can act on, with its exit code.

What each exit code means is said once, here, on the class that owns the code (``exit_meaning`` for
each command's ``--help``, ``exit_details`` for the manual's table): :func:`exit_codes` collects them,
and the CLI's epilogs and ``docs/cli.md`` are made from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar


class IndexerError(Exception):
    """Base of every error the library raises on purpose; the CLI prints it as one line."""

    exit_code = 2
    #: On the class that owns ``exit_code``: what the code means, in one short line and in full.
    exit_meaning: ClassVar[str | None] = None
    exit_details: ClassVar[str | None] = None


class ConfigError(IndexerError):
    """A bad option, a missing index, or a build that does not match the index (usage or configuration)."""

    exit_code = 2
    exit_meaning = "usage or configuration error"
    exit_details = (
        "usage or configuration error: bad option, missing index or folder, a database that is not an"
        " index, an index a newer version of indexer made (left as it is), settings that differ from the"
        " index's"
    )


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
    exit_meaning = "the index is locked by another build"
    exit_details = "the index is locked by another build (see `--wait`)"

    def __init__(self, message: str, holder: str | None = None) -> None:
        super().__init__(message)
        self.holder = holder


class BackendError(IndexerError):
    """The embedding backend failed for one batch (refused, bad answer, retries exhausted)."""

    exit_code = 1
    exit_meaning = "some files failed (the others were indexed)"
    exit_details = (
        "some files failed (the others were indexed); their previous version stays in the index. For"
        " `index query`: nothing found, or the question could not be embedded"
    )


class BackendUnreachableError(BackendError):
    """The backend cannot be used at all (connection refused, unknown model, bad credentials)."""

    exit_code = 4
    exit_meaning = "embedding backend or database unreachable"
    exit_details = (
        "the embedding backend is unreachable: connection refused, unknown model, bad credentials, a server"
        " serving another model than the others or switching models during the build; or the PostgreSQL"
        " database is"
    )


class DatabaseUnreachableError(IndexerError):
    """The index's database server cannot be reached (PostgreSQL: refused, unknown host, bad login)."""

    exit_code = 4


class StorageError(IndexerError):
    """The index's own storage failed: disk full, file size limit, read-only file or folder, too few
    file descriptors, a damaged database. The index keeps what it had before the failed step."""

    exit_code = 5
    exit_meaning = "the index's storage failed (disk full, read-only, damaged)"
    exit_details = (
        "the index's storage failed: disk full, file size limit (`ulimit -f`), read-only file or folder,"
        " too few file descriptors, damaged file (a table missing is named). The index keeps what it had"
        " before the failed step"
    )


class InputTooLongError(BackendError):
    """The backend said an input is longer than its context; the caller may split and retry."""


class VectorCheckError(BackendError):
    """The vectors a backend returned failed the check (count, order, shape, finiteness, norm)."""


class UnreadableFile(Exception):
    """A file that cannot be read as a document; the message says why, for a one-line warning. Not
    an :class:`IndexerError`: the build records it on the file's row and goes on with the others.

    ``status`` is what the file's record says instead of 'indexed', so that an unchanged file is not
    read again on the next build: 'binary', 'encoding', 'no-text' (a PDF without a text layer, an
    OpenPGP key's ``.asc``), 'damaged' (a PDF, DOCX or notebook that its reader could not open) or
    'too-large' (one that expands past the size a document may expand to while it is read).
    """

    def __init__(self, message: str, status: str = "unreadable") -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class ExitCode:
    """One documented exit code: its short meaning (``--help``), its full one (the manual), and the
    errors that end a command with it."""

    code: int
    meaning: str
    details: str
    raised_by: tuple[str, ...] = ()


#: The codes no error carries: success, and the two signals that stop a command (128 + the signal's
#: number, as a shell reports it), after which a build records itself as ``interrupted``.
SUCCESS = ExitCode(0, "success", "success")
INTERRUPTED = ExitCode(
    130,
    "interrupted (130 Ctrl-C, 143 SIGTERM)",
    "interrupted: 130 by Ctrl-C, 143 by SIGTERM (`kill`, `timeout`, `systemctl stop`), with one line,"
    " `error: interrupted (Ctrl-C)` or `error: interrupted (SIGTERM)`; a build records itself as"
    " `interrupted`, and what it committed stays",
)


def exit_codes() -> dict[int, ExitCode]:
    """Every exit code an error carries, with what it means (from the class that owns it) and the
    errors that carry it, plus success; in the order of the codes."""
    errors = [error for error in _subclasses(IndexerError) if error.__module__ == __name__]
    table = {SUCCESS.code: SUCCESS}
    for owner in errors:
        meaning, details = vars(owner).get("exit_meaning"), vars(owner).get("exit_details")
        if meaning is not None:
            if details is None:
                raise TypeError(f"{owner.__name__} says what its exit code means but not its details")
            names = tuple(error.__name__ for error in errors if error.exit_code == owner.exit_code)
            table[owner.exit_code] = ExitCode(owner.exit_code, meaning, details, names)
    return dict(sorted(table.items()))


def _subclasses(cls: type[IndexerError]) -> list[type[IndexerError]]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found
