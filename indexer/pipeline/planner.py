"""The first step of a build, file by file: decide from ``stat`` whether a file changed, read and hash
it when it may have, chunk it when it did, and find which of its chunks already have a vector."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from indexer import corpus, formats
from indexer.backends.base import EmbeddingBackend
from indexer.chunking import ChunkSettings, chunk_document, split_chunk
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
#: Texts whose tokens are counted in one call of the backend (see :meth:`Planner._count_tokens`).
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
        self.settings = settings
        self.warn = warn
        self.clock = clock
        self.reread = reread
        self.max_file_size = max_file_size

    def is_unchanged(self, source: corpus.SourceFile, state: FileState | None) -> bool:
        return not self.reread and unchanged(source, state)

    def plan(self, source: corpus.SourceFile, state: FileState | None) -> PendingFile:
        """Read, hash and chunk a file that may have changed. Raises ``OSError`` when it cannot be read."""
        with self.clock.timing("read"):
            data = corpus.read_bytes(source, self.max_file_size, formats.head_check(source.path))
            content_hash = hashlib.blake2b(data, digest_size=16).hexdigest()
        pending = PendingFile(source=source, content_hash=content_hash, is_new=state is None)
        if state is not None and state.content_hash == content_hash and not self.reread:
            pending.touch_only = state.id  # touched, not changed: nothing to embed
            return pending
        self._chunk(pending, data)
        return pending

    def _chunk(self, pending: PendingFile, data: bytes) -> None:
        source = pending.source
        try:
            with self.clock.timing("parse"):
                document = formats.read_document(source.path, data)
        except formats.UnreadableFile as error:
            if error.status == "damaged":  # its reader failed on it: the file fails, and is recorded
                pending.status, pending.read_failure = "damaged", str(error)
            else:
                self._skip(pending, error.status, str(error))
            return
        if not source.secrets_allowed:
            with self.clock.timing("redact"):
                document, pending.secrets = redact_document(document)
        pending.encoding = document.encoding
        if not any(line.strip() for line in document.lines):
            self._skip(pending, "empty", "empty file")
            return
        tokenizing = self.clock.seconds["tokenize"]
        started = time.perf_counter()
        chunks = chunk_document(document, self._count_tokens, self.settings)
        pending.set_chunks(chunks, self.backend.document_prefix)
        tokenized = self.clock.seconds["tokenize"] - tokenizing
        self.clock.add("chunk", time.perf_counter() - started - tokenized)

    def _count_tokens(self, texts: list[str]) -> list[int]:
        """The backend's token counts (timed as "tokenize"), asked :data:`COUNT_BATCH` texts at a
        time: a tokenizer holds every text's encoding until it returns (the embedded model's, about
        a kilobyte each), so a file of millions of short lines asked at once took gigabytes."""
        with self.clock.timing("tokenize"):
            if len(texts) <= COUNT_BATCH:
                return self.backend.count_tokens(texts)
            counts: list[int] = []
            for start in range(0, len(texts), COUNT_BATCH):
                counts.extend(self.backend.count_tokens(texts[start : start + COUNT_BATCH]))
            return counts

    def _skip(self, pending: PendingFile, status: str, reason: str) -> None:
        pending.status, pending.skip_reason = status, reason
        self.warn(Notice(f"skipped, {reason}", pending.source.path))

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
