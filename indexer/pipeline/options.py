"""The settings of one build, in one frozen object: the API takes them by name, the CLI builds its
options' defaults and help from the same fields, so the two cannot drift apart."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field, fields

from indexer.errors import ConfigError
from indexer.progress import Progress
from indexer.sizes import DEFAULT_MAX_FILE_SIZE, format_size

#: Called with each warning: a :class:`indexer.pipeline.report.Notice`, which is a ``str``.
Warn = Callable[[str], None]
#: The smallest chunk size limit accepted: below it a heading alone fills a chunk.
MIN_CHUNK_TOKENS = 16
#: How often a build commits what it has embedded, whatever the size of the group (seconds): what a
#: kill or a power cut can cost, against a commit's own cost (a few milliseconds).
COMMIT_SECONDS = 15.0


def print_warning(message: str) -> None:
    """The default way a build reports a warning: one line on stderr."""
    print(f"warning: {message}", file=sys.stderr)


@dataclass(frozen=True)
class BuildOptions:
    """How a build runs. ``metadata["help"]`` is the help text of the CLI option of the same name.

    For the settings the index records (chunk_tokens for the index; ignore_files, include, exclude,
    allow_secrets and max_file_size for each root), None means "as recorded", or for an index or
    root that has no record yet, the default: the model's input limit, ignore files honoured, no
    patterns, :data:`indexer.sizes.DEFAULT_MAX_FILE_SIZE`. For concurrency, None means the
    backend's own default; for workers, :func:`indexer.pipeline.workers.default_workers`.
    """

    batch_size: int = field(default=32, metadata={"help": "Chunks per embed call."})
    concurrency: int | None = field(
        default=None,
        metadata={
            "help": "Batches in flight at once, over all servers (default: the backend's own, "
            "per server: {concurrency})."
        },
    )
    workers: int | None = field(
        default=None,
        metadata={
            "help": "Processes that read and chunk files beside the build's own (0: none, read in "
            "the build's process; default: every core but one for a backend on servers, when there "
            "are enough files to read, else none)."
        },
    )
    chunk_tokens: int | None = field(
        default=None,
        metadata={
            "help": f"Smaller chunks than the model's input limit (at least {MIN_CHUNK_TOKENS}); "
            "recorded, later builds re-use it."
        },
    )
    ignore_files: bool | None = field(
        default=None,
        metadata={
            "help": "Honour .gitignore, .ignore and .git/info/exclude (the default), or not; "
            "recorded for the folder."
        },
    )
    include: tuple[str, ...] | None = field(
        default=None,
        metadata={
            "help": "Only files matching this gitignore pattern, e.g. '*.md' or 'docs/' "
            "(repeatable; recorded for the folder)."
        },
    )
    exclude: tuple[str, ...] | None = field(
        default=None,
        metadata={
            "help": "Leave out files and folders matching this gitignore pattern, e.g. 'drafts/' "
            "(repeatable; recorded for the folder)."
        },
    )
    allow_secrets: tuple[str, ...] | None = field(
        default=None,
        metadata={
            "help": "Index files matching this pattern as they are: although named like credentials "
            "(.env, *.pem, id_rsa...), and without their secrets redacted, e.g. '.env.example' "
            "(repeatable; recorded for the folder)."
        },
    )
    max_file_size: int | None = field(
        default=None,
        metadata={
            "help": "Leave out files larger than this, e.g. 200MB or 1.5G "
            f"(default {format_size(DEFAULT_MAX_FILE_SIZE)}; recorded for the folder)."
        },
    )
    allow_empty: bool = field(
        default=False,
        metadata={"help": "Let a folder that has no files at all remove its files from the index."},
    )
    wait: float = field(default=0.0, metadata={"help": "Seconds to wait for another build to finish."})
    commit_seconds: float = field(
        default=COMMIT_SECONDS,
        metadata={
            "help": "Commit the files whose vectors are in at least this often (seconds), besides every "
            "64 files or 2,048 chunks, so an interrupted build keeps its work."
        },
    )
    progress: Progress | None = field(
        default=None, compare=False, metadata={"help": "Where to show how far the build is (None: nowhere)."}
    )
    warn: Warn = field(default=print_warning, compare=False, metadata={"help": "Called with each warning."})
    option_name: Callable[[str], str] = field(
        default=str,
        compare=False,
        metadata={
            "help": "How a warning names a setting it advises: as the Python argument by default; "
            "the CLI gives its options' names (allow_secrets is --allow-secret there)."
        },
    )

    def __post_init__(self) -> None:
        if not isinstance(self.batch_size, int) or self.batch_size < 1:
            raise ConfigError(f"batch_size must be a positive number, not {self.batch_size!r}")
        if self.concurrency is not None and self.concurrency < 1:
            raise ConfigError(f"concurrency must be a positive number, not {self.concurrency!r}")
        if self.workers is not None and (not isinstance(self.workers, int) or self.workers < 0):
            raise ConfigError(f"workers must be zero or a positive number, not {self.workers!r}")
        if self.chunk_tokens is not None and self.chunk_tokens < MIN_CHUNK_TOKENS:
            raise ConfigError(f"chunk_tokens must be at least {MIN_CHUNK_TOKENS}, not {self.chunk_tokens}")
        if self.wait < 0:
            raise ConfigError(f"wait must be zero or more seconds, not {self.wait}")
        if not self.commit_seconds > 0:
            raise ConfigError(
                f"commit_seconds must be a positive number of seconds, not {self.commit_seconds}"
            )


def option_help(name: str, **values: object) -> str:
    """The help text of a :class:`BuildOptions` field, with ``{placeholders}`` filled from ``values``."""
    text = next(item.metadata["help"] for item in fields(BuildOptions) if item.name == name)
    return text.format(**values)
