"""What a build did: the report the API returns and the CLI prints."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from indexer.errors import BackendUnreachableError

if TYPE_CHECKING:  # the CLI reads Notice on every command; the walk loads only with a build
    from indexer.corpus import SkippedFile


class Notice(str):
    """A build's warning as one line (``guide.md: skipped, empty file``), with the file it concerns
    in ``path`` (None when it concerns no one file) and its text without the path in ``message``, for
    logs that keep them apart (``--json``)."""

    path: str | None
    message: str

    def __new__(cls, message: str, path: str | None = None, line: str | None = None) -> Notice:
        """``line`` is the one-line text when it is not ``path: message``."""
        notice = super().__new__(cls, line or (f"{path}: {message}" if path else message))
        notice.path, notice.message = path, message
        return notice

    @classmethod
    def of(cls, line: str) -> Notice:
        """``line`` as a notice: itself when it is one, else a notice that concerns no one file."""
        return line if isinstance(line, Notice) else cls(line)


@dataclass(frozen=True)
class FileFailure:
    path: str
    reason: str


@dataclass(frozen=True)
class BuildReport:
    """What a build did. ``exit_code`` follows the CLI's documented codes.

    ``skipped`` names every file left out and why (``files_skipped`` of them: types no reader takes,
    files named like credentials, links out of the folder, unreadable, binary or empty files);
    ``files_ignored`` counts the paths the ignore files and the build's include and exclude patterns
    passed over (a folder once: it is not even listed).
    """

    root: str
    files_seen: int
    files_added: int
    files_changed: int
    files_unchanged: int
    files_removed: int
    files_skipped: int
    files_failed: int
    chunks_embedded: int
    chunks_reused: int
    batches: int
    requests: int
    tokens: int
    seconds: float
    failures: list[FileFailure] = field(default_factory=list)
    warnings: list[Notice] = field(default_factory=list)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    stopped: str | None = None  # why the build stopped early (backend unreachable), if it did
    started_at: float = 0.0  # seconds since the epoch
    finished_at: float = 0.0
    files_ignored: int = 0
    skipped: list[SkippedFile] = field(default_factory=list)
    secrets_redacted: int = 0  # secrets replaced by [redacted] in the files this build read
    #: how many of them each file held, by path (files without any are not listed)
    secrets_by_file: dict[str, int] = field(default_factory=dict)
    #: requests sent to each server, by URL (an HTTP backend's; empty for the embedded model)
    requests_by_server: dict[str, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.files_failed == 0 and self.stopped is None

    @property
    def exit_code(self) -> int:
        if self.stopped is not None:
            return BackendUnreachableError.exit_code
        return 0 if self.ok else 1

    def skipped_by_kind(self) -> dict[str, int]:
        """How many files were left out of each kind, the commonest first: ``{".xlsx": 2, ".png": 1}``."""
        return dict(Counter(skipped.kind for skipped in self.skipped).most_common())

    def summary(self) -> str:
        indexed = self.files_added + self.files_changed
        return (
            f"{indexed} files indexed ({self.files_added} new, {self.files_changed} changed, "
            f"{self.files_unchanged} unchanged, {self.files_removed} removed), {self.files_failed} failed; "
            f"{self.skipped_summary()}; {self.files_ignored} ignored; "
            f"{self.chunks_embedded} chunks embedded, {self.chunks_reused} re-used; "
            f"{self.secrets_summary()}{self.seconds:.2f} s"
        )

    def secrets_summary(self) -> str:
        """``3 secrets redacted; `` (nothing when none were)."""
        count = self.secrets_redacted
        return f"{count} secret{'s' * (count != 1)} redacted; " if count else ""

    def skipped_summary(self) -> str:
        """``3 skipped: 2 .xlsx, 1 .png`` (the five commonest kinds, then the rest together)."""
        kinds = list(self.skipped_by_kind().items())
        if not kinds:
            return f"{self.files_skipped} skipped"
        shown = [f"{count} {kind}" for kind, count in kinds[:5]]
        rest = sum(count for _, count in kinds[5:])
        if rest:
            shown.append(f"{rest} other")
        return f"{self.files_skipped} skipped: {', '.join(shown)}"
