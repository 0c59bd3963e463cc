"""Stage 3: the build. Where corpus, chunking, backend, validation and store meet.

Files are walked in a stable order. A file whose size and mtime match the index is not read. A file
that changed is read, hashed, chunked; chunks whose text already has a vector in the index re-use it,
the others are queued and sent to the backend in fixed-size batches, several in flight at once while
the main thread goes on reading and chunking. Every batch passes the vector check before anything of
it is kept. A file is written (new rows first, old rows dropped, one transaction) only when all its
vectors are in hand; a file with any refused chunk keeps its previous version and is reported.
"""

from __future__ import annotations

import hashlib
import sys
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from indexer import corpus
from indexer.backends.base import EmbeddingBackend
from indexer.chunking import Chunk, ChunkSettings, chunk_text, split_chunk
from indexer.errors import BackendError, BackendUnreachableError, IndexerError, InputTooLongError
from indexer.store import FileState, NewFile
from indexer.store_interface import IndexStore
from indexer.validation import check_vectors

Warn = Callable[[str], None]
WRITE_GROUP_FILES = 64
WRITE_GROUP_CHUNKS = 2048


@dataclass(frozen=True)
class FileFailure:
    path: str
    reason: str


@dataclass(frozen=True)
class BuildReport:
    """What a build did. ``exit_code`` follows the CLI's documented codes."""

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
    warnings: list[str] = field(default_factory=list)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    stopped: str | None = None  # why the build stopped early (backend unreachable), if it did

    @property
    def ok(self) -> bool:
        return self.files_failed == 0 and self.stopped is None

    @property
    def exit_code(self) -> int:
        if self.stopped is not None:
            return BackendUnreachableError.exit_code
        return 0 if self.ok else 1

    def summary(self) -> str:
        indexed = self.files_added + self.files_changed
        return (
            f"{indexed} files indexed ({self.files_added} new, {self.files_changed} changed, "
            f"{self.files_unchanged} unchanged, {self.files_removed} removed), {self.files_skipped} skipped, "
            f"{self.files_failed} failed; {self.chunks_embedded} chunks embedded, "
            f"{self.chunks_reused} re-used; "
            f"{self.seconds:.2f} s"
        )


@dataclass
class _PendingFile:
    """A file waiting for its vectors; written when none is missing, dropped when one failed."""

    source: corpus.SourceFile
    content_hash: str
    is_new: bool
    status: str = "indexed"
    chunks: list[Chunk] = field(default_factory=list)
    text_hashes: list[str] = field(default_factory=list)
    embed_texts: list[str] = field(default_factory=list)
    touch_only: int | None = None  # file id whose stat facts change but whose content did not
    failure: str | None = None

    def missing(self, vectors: dict[str, bytes]) -> list[str]:
        return [text_hash for text_hash in self.text_hashes if text_hash not in vectors]


@dataclass
class _Batch:
    number: int
    hashes: list[str]
    texts: list[str]


def _unchanged(source: corpus.SourceFile, state: FileState | None) -> bool:
    """Size and mtime as recorded: the file is taken as unchanged without being read."""
    return state is not None and (state.size, state.mtime_ns) == (source.size, source.mtime_ns)


def text_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


class Build:
    """One run of ``index build`` over one root. Call :meth:`run` once."""

    def __init__(
        self,
        store: IndexStore,
        root: Path,
        backend: EmbeddingBackend,
        settings: ChunkSettings,
        batch_size: int = 32,
        concurrency: int | None = None,
        warn: Warn | None = None,
        progress: bool = False,
    ) -> None:
        self.store = store
        self.root = root
        self.root_key = str(root.resolve())
        self.backend = backend
        self.settings = settings
        self.batch_size = batch_size
        self.concurrency = max(1, concurrency or backend.default_concurrency)
        self.warn = warn or (lambda message: print(f"warning: {message}", file=sys.stderr))
        self.progress = progress
        self.vectors: dict[str, bytes] = {}  # text hash -> float32 blob, for files not yet written
        self.failed_hashes: dict[str, str] = {}  # text hash -> why its batch failed
        self.queued: dict[str, str] = {}  # text hash -> text, waiting for a batch
        self.in_queue_or_flight: set[str] = set()
        self.unclaimed: set[str] = set()  # embedded by this build, not yet written by any file
        self.pending: deque[_PendingFile] = deque()
        self.unlistable: list[str] = []  # folders that could not be listed: their files are not deleted
        self.states: dict[str, FileState] = {}  # what the index held for this root when the build began
        self.ready: list[_PendingFile] = []  # complete, waiting to be written with the next group
        self.in_flight: dict[Future, _Batch] = {}
        self.writing: Future | None = None  # the group of files the writer thread is committing
        self.write_store: IndexStore | None = None  # the writer thread's, from its first group
        self.batches_sent = 0
        self.counts = dict.fromkeys(
            [
                "files_added",
                "files_changed",
                "files_unchanged",
                "files_removed",
                "files_skipped",
                "files_failed",
                "chunks_embedded",
                "chunks_reused",
            ],
            0,
        )
        self.failures: list[FileFailure] = []
        self.warnings: list[str] = []
        self.stage = dict.fromkeys(["walk", "read", "chunk", "embed", "check", "write"], 0.0)
        self.stopped: str | None = None
        self.dimension = store.dimension
        self.usage_before = backend.usage()

    # -- the run ------------------------------------------------------------------------------

    def run(self) -> BuildReport:
        started = time.perf_counter()
        build_id = self.store.start_build(self.root_key, self.backend.model_name)
        try:
            # exits in reverse order: embedding threads end, then the last write, then its connection
            try:
                with (
                    ThreadPoolExecutor(max_workers=1, thread_name_prefix="write") as self.writer,
                    ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="embed") as self.pool,
                ):
                    seen = self._plan_and_embed()
                    self._drain()
            finally:  # after the writer thread is done with it
                if self.write_store is not None:
                    self.write_store.close()
            self._remove_deleted(seen)
        except BaseException as error:
            self.store.finish_build(build_id, "error", self._build_counts(), str(error))
            raise
        report = self._report(time.perf_counter() - started, len(seen))
        outcome = "stopped" if self.stopped else ("ok" if report.ok else "partial")
        self.store.finish_build(build_id, outcome, self._build_counts(), self.stopped)
        return report

    def _plan_and_embed(self) -> set[str]:
        clock = time.perf_counter()
        if not self.root.is_dir():
            raise IndexerError(f"folder {self.root} does not exist or is not a folder")
        found = corpus.walk(self.root)
        self.stage["walk"] += time.perf_counter() - clock
        self.unlistable = [path for path, reason in found.ignored if reason.startswith("cannot list")]
        for path, reason in found.ignored:
            if reason != "not a text file type":
                self._warn(f"{path}: skipped, {reason}")
        self.states = states = self.store.file_states(self.root_key)
        bar = self._progress_bar(len(found.files))
        for position, source in enumerate(found.files):
            if self.stopped:
                self._fail_unplanned(found.files[position:], states)
                break
            self._plan_file(source, states.get(source.path))
            if self.pending or self.in_flight:  # not for an unchanged file: most files of a rerun
                self._send_batches()
                self._collect(block=False)
                self._write_ready()
            if bar is not None:
                bar.update(1)
        if bar is not None:
            bar.close()
        return {source.path for source in found.files}

    def _fail_unplanned(self, sources: list[corpus.SourceFile], states: dict[str, FileState]) -> None:
        """After a stop: files that did not change are unchanged, the others failed (old version kept)."""
        for source in sources:
            if _unchanged(source, states.get(source.path)):
                self.counts["files_unchanged"] += 1
            else:
                self._fail_now(source.path, f"not indexed, the build stopped: {self.stopped}")

    def _plan_file(self, source: corpus.SourceFile, state: FileState | None) -> None:
        if _unchanged(source, state):
            self.counts["files_unchanged"] += 1
            return
        clock = time.perf_counter()
        try:
            data = corpus.read_bytes(source)
        except OSError as error:
            self.stage["read"] += time.perf_counter() - clock
            self._fail_now(source.path, f"cannot read: {error.strerror or error}")
            return
        content_hash = hashlib.blake2b(data, digest_size=16).hexdigest()
        self.stage["read"] += time.perf_counter() - clock
        pending = _PendingFile(source=source, content_hash=content_hash, is_new=state is None)
        if state is not None and state.content_hash == content_hash:
            pending.touch_only = state.id  # touched, not changed: nothing to embed
            self.pending.append(pending)
            return
        clock = time.perf_counter()
        try:
            text = corpus.text_of(source, data)
        except corpus.UnreadableFile as error:
            pending.status = "binary" if "binary" in str(error) else "encoding"
            self._warn(f"{source.path}: skipped, {error}")
        else:
            if not text.strip():
                pending.status = "empty"
                self._warn(f"{source.path}: skipped, empty file")
            else:
                self._chunk(pending, text)
        self.stage["chunk"] += time.perf_counter() - clock
        self.pending.append(pending)

    def _chunk(self, pending: _PendingFile, text: str) -> None:
        structured = corpus.is_markdown(pending.source.path) or pending.source.extension in (
            "rst",
            "txt",
            "text",
        )
        pending.chunks = chunk_text(text, self.backend.count_tokens, self.settings, structured=structured)
        prefix = self.backend.document_prefix
        pending.embed_texts = [prefix + chunk.embed_text for chunk in pending.chunks]
        pending.text_hashes = [text_hash(text) for text in pending.embed_texts]
        self._find_or_queue(pending)

    def _find_or_queue(self, pending: _PendingFile) -> None:
        unknown = [
            h for h in pending.text_hashes if h not in self.vectors and h not in self.in_queue_or_flight
        ]
        stored = self.store.vectors_for_hashes(unknown) if unknown else {}
        self.vectors.update(stored)
        for hash_, embed_text in zip(pending.text_hashes, pending.embed_texts, strict=False):
            if hash_ in self.vectors or hash_ in self.in_queue_or_flight:
                continue
            self.queued[hash_] = embed_text
            self.in_queue_or_flight.add(hash_)

    # -- batches ------------------------------------------------------------------------------

    def _send_batches(self, final: bool = False) -> None:
        """Send queued texts in batches of ``batch_size`` (a last, shorter one when ``final``),
        never more than ``concurrency`` in flight: when the window is full, wait for one to finish."""
        while self.queued and not self.stopped and (final or len(self.queued) >= self.batch_size):
            while len(self.in_flight) >= self.concurrency:
                self._collect(block=True)
            if self.stopped:
                return
            hashes = list(islice(self.queued, self.batch_size))
            texts = [self.queued.pop(hash_) for hash_ in hashes]
            self._submit(_Batch(self.batches_sent + 1, hashes, texts))

    def _submit(self, batch: _Batch) -> None:
        self.batches_sent += 1
        self.in_flight[self.pool.submit(self._embed, batch.texts)] = batch

    def _embed(self, texts: list[str]) -> tuple[object, float]:
        clock = time.perf_counter()
        try:
            vectors = self.backend.embed(texts)
        except NotImplementedError as error:
            raise BackendUnreachableError(f"backend {self.backend.kind!r} cannot embed: {error}") from error
        return vectors, time.perf_counter() - clock

    def _collect(self, block: bool) -> None:
        """Take finished batches: check their vectors, hand them to the files that wait for them."""
        if not self.in_flight:
            return
        done, _ = wait(list(self.in_flight), timeout=None if block else 0, return_when=FIRST_COMPLETED)
        for future in done:
            batch = self.in_flight.pop(future)
            self._finish_batch(batch, future)

    def _finish_batch(self, batch: _Batch, future: Future) -> None:
        try:
            vectors, seconds = future.result()
            self.stage["embed"] += seconds
            clock = time.perf_counter()
            matrix = check_vectors(vectors, len(batch.texts), self.dimension)
            self.stage["check"] += time.perf_counter() - clock
        except InputTooLongError as error:
            self._split_too_long(batch, error)
            return
        except BackendUnreachableError as error:
            self._stop(str(error))
            self._fail_batch(batch, str(error))
            return
        except BackendError as error:
            self._fail_batch(batch, f"batch {batch.number} refused: {error}")
            return
        except Exception as error:  # a user backend's own exception: that batch fails, the build goes on
            self._fail_batch(batch, f"batch {batch.number} failed: {type(error).__name__}: {error}")
            return
        if self.dimension is None:
            self._fix_dimension(matrix.shape[1])
        for hash_, row in zip(batch.hashes, matrix, strict=False):
            self.vectors[hash_] = row.tobytes()
            self.in_queue_or_flight.discard(hash_)
            self.unclaimed.add(hash_)
        self.counts["chunks_embedded"] += len(batch.hashes)

    def _split_too_long(self, batch: _Batch, error: InputTooLongError) -> None:
        """The server said an input is too long: retry the halves; a lone chunk is cut in two."""
        if len(batch.texts) > 1:
            middle = len(batch.texts) // 2
            for hashes, texts in (
                (batch.hashes[:middle], batch.texts[:middle]),
                (batch.hashes[middle:], batch.texts[middle:]),
            ):
                self._submit(_Batch(batch.number, hashes, texts))
            return
        self._recut_chunk(batch.hashes[0], error)

    def _recut_chunk(self, too_long_hash: str, error: InputTooLongError) -> None:
        self.in_queue_or_flight.discard(too_long_hash)
        for pending in self.pending:
            if too_long_hash not in pending.text_hashes:
                continue
            position = pending.text_hashes.index(too_long_hash)
            chunk = pending.chunks[position]
            pieces = split_chunk(chunk)
            if len(pieces) < 2:
                pending.failure = (
                    f"a chunk at lines {chunk.start_line}-{chunk.end_line} is too long "
                    f"for the backend and cannot be cut smaller: {error}"
                )
                continue
            self._warn(
                f"{pending.source.path}:{chunk.start_line}-{chunk.end_line}: too long for the backend, "
                f"cut into {len(pieces)} smaller chunks"
            )
            prefix = self.backend.document_prefix
            texts = [prefix + piece.embed_text for piece in pieces]
            pending.chunks[position : position + 1] = pieces
            pending.embed_texts[position : position + 1] = texts
            pending.text_hashes[position : position + 1] = [text_hash(text) for text in texts]
            self._find_or_queue(pending)

    def _fix_dimension(self, dimension: int) -> None:
        self._await_write()  # both connections write: one at a time
        with self.store.transaction():
            self.store.create_vector_table(dimension)
        self.dimension = dimension

    def _fail_batch(self, batch: _Batch, reason: str) -> None:
        for hash_ in batch.hashes:
            self.failed_hashes[hash_] = reason
            self.in_queue_or_flight.discard(hash_)

    def _stop(self, reason: str) -> None:
        if self.stopped is None:
            self.stopped = reason
            for hash_ in list(self.queued):
                self.failed_hashes[hash_] = reason
                self.in_queue_or_flight.discard(hash_)
            self.queued.clear()

    def _drain(self) -> None:
        """Send what is still queued and wait for every batch in flight, writing files as they complete."""
        while True:
            self._send_batches(final=True)
            if not self.in_flight:
                break
            self._collect(block=True)
            self._write_ready()
        self._write_ready(flush=True)
        self._await_write()

    # -- writing ------------------------------------------------------------------------------

    def _write_ready(self, flush: bool = False) -> None:
        """Write, in walk order, the files at the front of the queue whose vectors are all known.

        Ready files are written in groups (one transaction each, every file whole in it): a commit
        per file would cost more than the writing itself."""
        ready = self.ready
        while self.pending:
            pending = self.pending[0]
            failed = [self.failed_hashes[h] for h in pending.text_hashes if h in self.failed_hashes]
            if failed or pending.failure:
                self.pending.popleft()
                self._fail_now(pending.source.path, pending.failure or failed[0])
                continue
            if pending.missing(self.vectors):
                if self.stopped and not self.in_flight:
                    self.pending.popleft()
                    self._fail_now(pending.source.path, self.stopped)
                    continue
                break
            ready.append(self.pending.popleft())
        chunks = sum(len(pending.text_hashes) for pending in ready)
        if ready and (flush or len(ready) >= WRITE_GROUP_FILES or chunks >= WRITE_GROUP_CHUNKS):
            self._await_write()
            if self.write_store is None:
                self.write_store = self.store.reopen()
            self.writing = self.writer.submit(self._commit, self.write_store, *self._rows_of(ready))
            self.ready = []

    def _rows_of(
        self, ready: list[_PendingFile]
    ) -> tuple[list[NewFile], list[tuple[int, corpus.SourceFile]]]:
        """What the writer commits for a group: new versions of files, and stat facts of touched files."""
        new_files: list[NewFile] = []
        touched: list[tuple[int, corpus.SourceFile]] = []
        for pending in ready:
            source = pending.source
            if pending.touch_only is not None:
                touched.append((pending.touch_only, source))
                self.counts["files_unchanged"] += 1
                continue
            new_files.append(
                NewFile(
                    root=self.root_key,
                    path=source.path,
                    size=source.size,
                    mtime_ns=source.mtime_ns,
                    content_hash=pending.content_hash,
                    status=pending.status,
                    chunks=pending.chunks,
                    text_hashes=pending.text_hashes,
                    vectors=[self.vectors[h] for h in pending.text_hashes],
                )
            )
            self._count_written(pending)
        return new_files, touched

    @staticmethod
    def _commit(
        store: IndexStore, new_files: list[NewFile], touched: list[tuple[int, corpus.SourceFile]]
    ) -> float:
        """On the writer thread, with its own connection: one transaction for the group. SQLite works
        without the interpreter lock, so the main thread reads and chunks the next files meanwhile."""
        clock = time.perf_counter()
        with store.transaction():
            for file_id, source in touched:
                store.touch_file(file_id, source.size, source.mtime_ns)
            store.write_files(new_files)
        return time.perf_counter() - clock

    def _await_write(self) -> None:
        """Wait for the group being committed (its error, if any, is raised here), then drop the
        vectors only it needed: they are in the index now, where re-use finds them."""
        if self.writing is None:
            return
        writing, self.writing = self.writing, None
        self.stage["write"] += writing.result()
        self._forget_written_vectors()

    def _count_written(self, pending: _PendingFile) -> None:
        for hash_ in pending.text_hashes:
            if hash_ in self.unclaimed:
                self.unclaimed.discard(hash_)  # the first file to use a fresh vector is its embedding
            else:
                self.counts["chunks_reused"] += 1
        if pending.status != "indexed":
            self.counts["files_skipped"] += 1
        elif pending.is_new:
            self.counts["files_added"] += 1
        else:
            self.counts["files_changed"] += 1

    def _forget_written_vectors(self) -> None:
        """Keep in memory only the vectors a waiting file still needs (the rest are in the index)."""
        needed = {h for pending in (*self.pending, *self.ready) for h in pending.text_hashes}
        self.vectors = {h: blob for h, blob in self.vectors.items() if h in needed}

    def _fail_now(self, path: str, reason: str) -> None:
        self.counts["files_failed"] += 1
        self.failures.append(FileFailure(path, reason))

    def _remove_deleted(self, seen: set[str]) -> None:
        """Drop the files of this root that are gone from the folder (after every write, so a renamed
        file's new name could re-use the old name's vectors first)."""
        states = self.states  # as the build found them: files it did not see were not touched since
        gone = [
            (path, state)
            for path, state in states.items()
            if path not in seen and not any(path.startswith(folder + "/") for folder in self.unlistable)
        ]
        if not gone:
            return
        clock = time.perf_counter()
        with self.store.transaction():
            for _, state in gone:
                self.store.remove_file(state.id)
                if state.status == "indexed":
                    self.counts["files_removed"] += 1
        self.stage["write"] += time.perf_counter() - clock

    # -- reporting ----------------------------------------------------------------------------

    def _warn(self, message: str) -> None:
        self.warnings.append(message)
        self.warn(message)

    def _progress_bar(self, total: int):  # noqa: ANN202 (tqdm or None)
        if not self.progress:
            return None
        from tqdm import tqdm

        return tqdm(total=total, unit="file", file=sys.stderr, leave=False, desc="indexing")

    def _usage(self) -> dict[str, int]:
        after = self.backend.usage()
        return {key: after.get(key, 0) - self.usage_before.get(key, 0) for key in ("requests", "tokens")}

    def _build_counts(self) -> dict[str, int]:
        return {**self.counts, **self._usage()}

    def _report(self, seconds: float, files_seen: int) -> BuildReport:
        usage = self._usage()
        return BuildReport(
            root=self.root_key,
            files_seen=files_seen,
            seconds=seconds,
            batches=self.batches_sent,
            requests=usage["requests"],
            tokens=usage["tokens"],
            failures=self.failures,
            warnings=self.warnings,
            stage_seconds=dict(self.stage),
            stopped=self.stopped,
            **self.counts,
        )
