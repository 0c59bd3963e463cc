"""The last step of a build: files whose vectors are all in hand are committed, in walk order, in
groups, on a writer thread with a connection of its own.

A commit per file would cost more than the writing itself, so files go in groups (each file whole in
its group's transaction): a group commits when it holds 64 files or 2,048 chunks, or when
``commit_seconds`` have passed since the last commit, so that a build against a slow model, whose
groups fill slowly, loses at most that much work when it is killed. SQLite and PostgreSQL work without
Python's interpreter lock, so the main thread reads, chunks and sends the next batches while a group
commits. The build's record is updated in the same transaction as each group, so it always says what
is committed, even after a crash, and when the build was last seen alive: a timed commit with no file
ready still records that, so a killed build's record says when it died.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field

from indexer import formats
from indexer.errors import BackendError
from indexer.pipeline.dimensions import Dimensions
from indexer.pipeline.embed_queue import EmbedQueue
from indexer.pipeline.options import COMMIT_SECONDS
from indexer.pipeline.planner import PendingFile, StageClock
from indexer.pipeline.report import FileFailure
from indexer.store.contract import IndexStore
from indexer.store.records import BuildCounts, NewFile

WRITE_GROUP_FILES = 64
WRITE_GROUP_CHUNKS = 2048


@dataclass
class Group:
    """One transaction's worth of files, and what it adds to the build's record."""

    new_files: list[NewFile] = field(default_factory=list)
    touched: list[tuple[int, int, int]] = field(default_factory=list)  # (file id, size, mtime_ns)
    counts: BuildCounts = field(default_factory=BuildCounts)
    settings: dict[str, str] | None = None  # recorded with the first commit of a new index
    dimension: int | None = None  # fixes the vector table's dimension with the first vectors stored


class GroupWriter:
    """Holds the files waiting for vectors, in walk order; commits complete ones in groups.

    ``settings`` are the index's settings to record with the first commit (None when the index has
    them already): an index gets its settings, and its dimension, only when something is stored.
    ``commit_seconds`` bounds the time between two commits (see the module's docstring).
    ``confirm_model`` runs on the writer thread before each group with vectors is committed: it
    raises when the backend can no longer vouch for the model of the vectors it gave since the last
    one, and returns what to record with the group. Such a group is not committed, and nor is any
    file with vectors after it: they fail with the reason, kept in ``refused`` for the build to stop.
    """

    def __init__(
        self,
        store: IndexStore,
        executor: Executor,
        queue: EmbedQueue,
        build_id: int,
        clock: StageClock,
        root_key: str,
        settings: dict[str, str] | None,
        dimensions: Dimensions,
        commit_seconds: float = COMMIT_SECONDS,
        confirm_model: Callable[[], dict[str, str]] = dict,
    ) -> None:
        self.store = store
        self.root_key = root_key
        self.executor = executor
        self.queue = queue
        self.build_id = build_id
        self.clock = clock
        self.settings = settings
        self.dimensions = dimensions
        self.waiting: deque[PendingFile] = deque()
        self.counts = BuildCounts()  # committed so far
        self.files_unchanged = 0  # touched files committed so far
        self.failures: list[FileFailure] = []
        self._ready: list[PendingFile] = []
        self._writing: tuple[Future, Group] | None = None
        self.commit_seconds = commit_seconds
        self._commit_due = time.monotonic() + commit_seconds
        self.confirm_model = confirm_model
        #: Why the backend could not vouch for a group's vectors (None while it could).
        self.refused: str | None = None

    def add(self, pending: PendingFile) -> None:
        self.waiting.append(pending)

    @property
    def files_pending(self) -> int:
        """Files handed to the writer and not committed yet (waiting for vectors, or being written)."""
        writing = len(self._writing[1].new_files) + len(self._writing[1].touched) if self._writing else 0
        return len(self.waiting) + len(self._ready) + writing

    def fail(self, path: str, reason: str) -> None:
        self.counts.files_failed += 1
        self.failures.append(FileFailure(path, reason))

    def write_ready(self, stopped: str | None, flush: bool = False) -> None:
        """Move complete files from the front of the queue to the next group; start committing the
        group once it is big enough (or at once when ``flush``). A file with a failed text fails."""
        while self.waiting:
            pending = self.waiting[0]
            reason = pending.failure or self._failure_of(pending)
            if reason is None and self._missing(pending):
                if not (stopped and not self.queue.in_flight):
                    break
                reason = stopped
            self.waiting.popleft()
            if reason is None and self.refused and pending.touch_only is None:
                reason = self.refused  # its vectors may be of the model refused: never stored
            if reason is not None:
                self.fail(pending.source.path, reason)
            else:
                self._ready.append(pending)
        chunks = sum(len(pending.text_hashes) for pending in self._ready)
        full = len(self._ready) >= WRITE_GROUP_FILES or chunks >= WRITE_GROUP_CHUNKS
        if (self._ready and (flush or full)) or self.seconds_to_commit() == 0:
            self.await_write()
            group = self._group(self._ready)
            self._writing = (self.executor.submit(self._commit, group), group)
            self._ready = []
            self._commit_due = time.monotonic() + self.commit_seconds

    def seconds_to_commit(self) -> float:
        """How long until the next timed commit is due (0: it is): a build waiting for its backend
        wakes by then, to commit what is ready."""
        return max(0.0, self._commit_due - time.monotonic())

    def finish(self) -> None:
        """Commit what is left and wait for it."""
        self.write_ready(stopped=None, flush=True)
        self.await_write()

    def await_write(self) -> None:
        """Wait for the group being committed (its error, if any, is raised here), count it, and drop
        the vectors only it needed: they are in the index now, where re-use finds them."""
        if self._writing is None:
            return
        writing, group = self._writing
        try:
            self.clock.add("write", writing.result())  # an interruption here leaves the group to settle()
        except BackendError as error:  # confirm_model refused: the group was not committed
            self._writing = None
            self.refused = self.refused or str(error)
            for new_file in group.new_files:
                self.fail(new_file.path, self.refused)
            return
        self._writing = None
        self.counts = self.counts.plus(group.counts)
        self.files_unchanged += len(group.touched)
        if group.settings is not None:
            self.settings = None
        needed = {h for pending in (*self.waiting, *self._ready) for h in pending.text_hashes}
        self.queue.forget(needed)

    def settle(self) -> None:
        """Count the group the writer thread committed after the build was interrupted (it finishes a
        commit it began), so the build's last record says all that is committed; a commit that failed
        is left uncounted, its error being the writer's, not the interruption's."""
        if self._writing is not None and self._writing[0].done() and self._writing[0].exception() is None:
            self.await_write()

    def _failure_of(self, pending: PendingFile) -> str | None:
        return next((reason for h in pending.text_hashes if (reason := self.queue.failure(h))), None)

    def _missing(self, pending: PendingFile) -> bool:
        return any(self.queue.vector(h) is None for h in pending.text_hashes)

    def _group(self, ready: list[PendingFile]) -> Group:
        group = Group(settings=self.settings, dimension=self.dimensions.found)
        for pending in ready:
            source = pending.source
            if pending.touch_only is not None:
                group.touched.append((pending.touch_only, source.size, source.mtime_ns))
                continue
            vectors = [vector for h in pending.text_hashes if (vector := self.queue.vector(h)) is not None]
            if len(vectors) != len(pending.text_hashes):  # a file is ready once all its vectors are in
                raise RuntimeError(f"{source.path} was grouped for writing before all its vectors came")
            group.new_files.append(
                NewFile(
                    root=self.root_key,
                    path=source.path,
                    size=source.size,
                    mtime_ns=source.mtime_ns,
                    content_hash=pending.content_hash,
                    status=pending.status,
                    encoding=pending.encoding,
                    chunks=pending.chunks,
                    text_hashes=pending.text_hashes,
                    vectors=vectors,
                    source_code=formats.is_source_code(source.path),
                )
            )
            self._count(group.counts, pending)
        return group

    def _count(self, counts: BuildCounts, pending: PendingFile) -> None:
        for text_hash in pending.text_hashes:
            if self.queue.claim(text_hash):
                counts.chunks_embedded += 1
            else:
                counts.chunks_reused += 1
        if pending.status != "indexed":
            counts.files_skipped += 1
        elif pending.is_new:
            counts.files_added += 1
        else:
            counts.files_changed += 1

    def _commit(self, group: Group) -> float:
        """On the writer thread: one transaction for the group (and the build record's counts)."""
        started = time.perf_counter()
        store = self.store
        model = self.confirm_model() if group.new_files else {}
        with store.transaction():
            if group.settings is not None:
                store.set_meta(group.settings)
            if model:
                store.set_meta(model)
            if group.new_files and group.dimension is not None and not store.has_vector_table():
                store.create_vector_table(group.dimension)
            for file_id, size, mtime_ns in group.touched:
                store.touch_file(file_id, size, mtime_ns)
            if group.new_files:
                store.write_files(group.new_files)
            store.add_build_counts(self.build_id, group.counts, time.time())
        return time.perf_counter() - started
