"""The first step of a build, file by file: decide from ``stat`` whether a file changed, read and hash
it when it may have, chunk it when it did, and find which of its chunks already have a vector.

Reading and chunking (:func:`plan_file`) needs only a :class:`PlanRecipe`, so that it runs the same in
the build's process or in a worker process (:mod:`indexer.pipeline.workers`)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from indexer import corpus, formats
from indexer.backends.base import EmbeddingBackend, TokenCounter
from indexer.chunking import ChunkSettings, chunk_document, split_chunk
from indexer.errors import UnreadableFile
from indexer.pipeline.options import Warn
from indexer.pipeline.report import Notice
from indexer.records import Chunk
from indexer.redaction import Finding, redact_document
from indexer.sizes import DEFAULT_MAX_FILE_SIZE
from indexer.store.contract import FileWrites
from indexer.store.records import FileState

#: A build's stages, each timed apart: "read" is the file's bytes and hash, "parse" its format's
#: reader, "redact" the search for secrets in its text, "tokenize" the chunker's token counts,
#: "chunk" the chunker's own work without them.
STAGES = ("walk", "read", "parse", "redact", "tokenize", "chunk", "embed", "check", "write")
#: Texts whose tokens are counted in one call of the backend (see :class:`_Counter`).
COUNT_BATCH = 4096


def text_hash(text: str) -> str:
    """The key under which a chunk's vector is kept and re-used: a hash of exactly what the model read."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


class StageClock:
    """Seconds spent in each stage of a build, for the report (``--json``'s ``stage_seconds``)."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(STAGES, 0.0)

    @contextmanager
    def timing(self, stage: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[stage] += time.perf_counter() - started

    def add(self, stage: str, seconds: float) -> None:
        self.seconds[stage] += seconds


@dataclass
class PendingFile:
    """A file that changed, waiting for its vectors; written when none is missing, dropped when one
    failed. ``touch_only`` is the id of a file whose content did not change (only its stat facts)."""

    source: corpus.SourceFile
    content_hash: str
    is_new: bool
    status: str = "indexed"
    skip_reason: str = ""  # why a file whose status is not 'indexed' was left out
    encoding: str = ""  # the text encoding it was read with, for the file's record
    chunks: list[Chunk] = field(default_factory=list)
    text_hashes: list[str] = field(default_factory=list)
    embed_texts: list[str] = field(default_factory=list)
    touch_only: int | None = None
    failure: str | None = None
    read_failure: str | None = None  # why its reader failed on it: recorded as 'damaged', and it fails
    secrets: list[Finding] = field(default_factory=list)  # the secrets redacted from its text

    def set_chunks(
        self, chunks: list[Chunk], prefix: str, position: int = 0, replaced: int | None = None
    ) -> None:
        """Put ``chunks`` in place of ``replaced`` chunks from ``position`` (all of them by default),
        with the texts the model reads (``prefix`` + heading + text) and their hashes."""
        end = len(self.chunks) if replaced is None else position + replaced
        texts = [prefix + chunk.embed_text for chunk in chunks]
        self.chunks[position:end] = chunks
        self.embed_texts[position:end] = texts
        self.text_hashes[position:end] = [text_hash(text) for text in texts]


def unchanged(source: corpus.SourceFile, state: FileState | None) -> bool:
    """Size and mtime as recorded: the file is taken as unchanged without being read. A record the
    walk made of a file it left out unread (a secret, a link, a file over the size cap: no content
    hash) does not count: once the walk takes the file, it is read."""
    return (
        state is not None
        and bool(state.content_hash)
        and (state.size, state.mtime_ns) == (source.size, source.mtime_ns)
    )


@dataclass(frozen=True)
class PlanRecipe:
    """What reading and chunking a file takes, and nothing of the build's state, so that a worker
    process can be sent it (pickled) and plan files exactly as the build's own process does."""

    settings: ChunkSettings
    count_tokens: TokenCounter
    document_prefix: str
    reread: bool
    max_file_size: int


@dataclass
class Planned:
    """What planning one file gave: ``pending`` (None when it could not be read: ``unreadable``, the
    reader's status and message, or ``cannot_read``, the system's error), the notices to warn of,
    and the seconds each stage took."""

    pending: PendingFile | None = None
    unreadable: tuple[str, str] | None = None
    cannot_read: str | None = None
    notices: list[Notice] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


def plan_file(recipe: PlanRecipe, source: corpus.SourceFile, state: FileState | None) -> Planned:
    """Read, hash and chunk a file that may have changed (in the build's process or a worker's)."""
    clock = StageClock()
    planned = Planned(seconds=clock.seconds)
    try:
        planned.pending = _read(recipe, source, state, clock, planned.notices)
    except UnreadableFile as error:
        planned.unreadable = (error.status, str(error))
    except OSError as error:
        planned.cannot_read = error.strerror or str(error)
    return planned


def _read(
    recipe: PlanRecipe,
    source: corpus.SourceFile,
    state: FileState | None,
    clock: StageClock,
    notices: list[Notice],
) -> PendingFile:
    with clock.timing("read"):
        data = corpus.read_bytes(source, recipe.max_file_size, formats.head_check(source.path))
        content_hash = hashlib.blake2b(data, digest_size=16).hexdigest()
    pending = PendingFile(source=source, content_hash=content_hash, is_new=state is None)
    if state is not None and state.content_hash == content_hash and not recipe.reread:
        pending.touch_only = state.id  # touched, not changed: nothing to embed
        return pending
    try:
        with clock.timing("parse"):
            neighbours = corpus.RootFiles(source.root, recipe.max_file_size)
            document = formats.read_document(source.path, data, neighbours)
    except formats.UnreadableFile as error:
        if error.status == "damaged":  # its reader failed on it: the file fails, and is recorded
            pending.status, pending.read_failure = "damaged", str(error)
        else:
            _skip(pending, error.status, str(error), notices)
        return pending
    if not source.secrets_allowed:
        with clock.timing("redact"):
            document, pending.secrets = redact_document(document)
    pending.encoding = document.encoding
    if not any(line.strip() for line in document.lines):
        _skip(pending, "empty", "empty file", notices)
        return pending
    started = time.perf_counter()
    chunks = chunk_document(document, _Counter(recipe.count_tokens, clock), recipe.settings)
    pending.set_chunks(chunks, recipe.document_prefix)
    clock.add("chunk", time.perf_counter() - started - clock.seconds["tokenize"])
    return pending


def _skip(pending: PendingFile, status: str, reason: str, notices: list[Notice]) -> None:
    pending.status, pending.skip_reason = status, reason
    notices.append(Notice(f"skipped, {reason}", pending.source.path))


class _Counter:
    """The backend's token counts (timed as "tokenize"), asked :data:`COUNT_BATCH` texts at a time:
    a tokenizer holds every text's encoding until it returns (the embedded model's, about a
    kilobyte each), so a file of millions of short lines asked at once took gigabytes."""

    def __init__(self, count_tokens: TokenCounter, clock: StageClock) -> None:
        self.count_tokens = count_tokens
        self.clock = clock

    def __call__(self, texts: list[str]) -> list[int]:
        with self.clock.timing("tokenize"):
            if len(texts) <= COUNT_BATCH:
                return self.count_tokens(texts)
            counts: list[int] = []
            for start in range(0, len(texts), COUNT_BATCH):
                counts.extend(self.count_tokens(texts[start : start + COUNT_BATCH]))
            return counts


class Planner:
    """Turns each file found by the walk into what the build must do with it.

    ``reread`` makes every file count as possibly changed (after the chunker itself changed): each is
    read and chunked again, and chunks whose text did not change keep their vectors.
    """

    def __init__(
        self,
        store: FileWrites,
        backend: EmbeddingBackend,
        settings: ChunkSettings,
        warn: Warn,
        clock: StageClock,
        reread: bool = False,
        max_file_size: int = DEFAULT_MAX_FILE_SIZE,
    ) -> None:
        self.store = store
        self.backend = backend
        self.warn = warn
        self.clock = clock
        self.reread = reread
        self.recipe = PlanRecipe(
            settings, backend.count_tokens, backend.document_prefix, reread, max_file_size
        )

    def is_unchanged(self, source: corpus.SourceFile, state: FileState | None) -> bool:
        return not self.reread and unchanged(source, state)

    def plan(self, source: corpus.SourceFile, state: FileState | None) -> Planned:
        """Read, hash and chunk a file that may have changed, in this process."""
        return plan_file(self.recipe, source, state)

    def recipe_for_workers(self) -> PlanRecipe | None:
        """The recipe with the backend's token counter that can travel to a worker process; None
        when it has none (its files are then read and chunked in this process)."""
        count_tokens = self.backend.token_counter()
        if count_tokens is None:
            return None
        return PlanRecipe(
            self.recipe.settings,
            count_tokens,
            self.recipe.document_prefix,
            self.reread,
            self.recipe.max_file_size,
        )

    def take(self, planned: Planned) -> None:
        """Count a planned file's stage seconds in the build's clock, and warn of its notices."""
        for stage, seconds in planned.seconds.items():
            self.clock.add(stage, seconds)
        for notice in planned.notices:
            self.warn(notice)

    def recut(self, pending: PendingFile, position: int, reason: str) -> bool:
        """Cut a chunk the backend refused as too long in two (by lines, else words); False when it
        cannot be cut (one word): its file then fails."""
        chunk = pending.chunks[position]
        pieces = split_chunk(chunk)
        if len(pieces) < 2:
            pending.failure = (
                f"a chunk at lines {chunk.start_line}-{chunk.end_line} is too long "
                f"for the backend and cannot be cut smaller: {reason}"
            )
            return False
        lines = f"{chunk.start_line}-{chunk.end_line}"
        what = f"too long for the backend, cut into {len(pieces)} smaller chunks"
        path = pending.source.path
        self.warn(Notice(f"lines {lines} {what}", path, line=f"{path}:{lines}: {what}"))
        pending.set_chunks(pieces, self.backend.document_prefix, position, replaced=1)
        return True

    def stored_vectors(self, text_hashes: list[str]) -> dict[str, bytes]:
        """Vectors the index already holds for these texts (any file, any root): re-used, not embedded."""
        return self.store.vectors_for_hashes(text_hashes) if text_hashes else {}
