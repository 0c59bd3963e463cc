"""One run of ``index build`` over one root: where corpus, chunking, backend, validation and store meet.

Files are walked in a stable order. The :class:`Planner` decides from ``stat`` which files may have
changed, reads and chunks them, and finds chunks whose text already has a vector. The others wait in
the :class:`EmbedQueue`, which sends them in fixed-size batches, several in flight at once, while the
main thread goes on reading and chunking. Every batch passes the vector check before anything of it
is kept. The :class:`GroupWriter` commits a file (new rows first, old rows dropped, one transaction)
only when all its vectors are in hand; a file with any refused chunk keeps its previous version.
"""

from __future__ import annotations

import os
import socket
import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from indexer import corpus
from indexer.backends.base import EmbeddingBackend
from indexer.chunking import ChunkSettings
from indexer.errors import (
    BackendError,
    BackendUnreachableError,
    ConfigError,
    InputTooLongError,
    SettingsChangedError,
)
from indexer.ignore import WalkRules
from indexer.pipeline.dimensions import Dimensions
from indexer.pipeline.embed_queue import Batch, EmbedQueue
from indexer.pipeline.options import BuildOptions
from indexer.pipeline.planner import PendingFile, Planned, Planner, StageClock
from indexer.pipeline.report import BuildReport, Notice
from indexer.pipeline.vector_check import probe_meta, recorded_probe
from indexer.pipeline.workers import PlanWorkers, default_workers, usable_cores
from indexer.pipeline.writer import GroupWriter
from indexer.progress import ChunkEstimate
from indexer.store.contract import IndexStore
from indexer.store.records import BuildCounts, FileState, files_indexed


class Build:
    """One run over one root. Call :meth:`run` once.

    The run's steps in the order they happen (plan, embed, drain, remove, report), twenty methods
    of 2-40 lines; what keeps state between them lives in the planner, the embed queue and the group
    writer, each tested on its own.

    ``rules`` say what the walk passes over; ``settings`` are what the index records with its first
    commit when it has none yet (backend, model, fingerprint); ``reread`` re-chunks every file (the
    chunker changed, the model did not); ``files_held`` is how many files of the root the index a
    rebuild replaces holds (``store`` is then the empty scratch index, which cannot tell an emptied
    folder from a new one by itself).
    """

    #: Files left out with a warning: the others (types no reader takes) are only counted. Those of
    #: :data:`indexer.corpus.RECORDED_KINDS` are recorded, and warned of once per new or changed file.
    WARNED = frozenset({"secret", "link", "too-large", "unreadable"})
    #: What a warning advises for a kind of file left out: (the setting, how), the setting named as
    #: the front end names it (``BuildOptions.option_name``).
    ADVICE = {
        "secret": ("allow_secrets", "let it in by name with {option}"),
        "too-large": ("max_file_size", "raise the cap with {option}"),
    }

    def __init__(
        self,
        store: IndexStore,
        root: Path,
        backend: EmbeddingBackend,
        chunk_settings: ChunkSettings,
        options: BuildOptions,
        rules: WalkRules | None = None,
        settings: dict[str, str] | None = None,
        reread: bool = False,
        files_held: int | None = None,
    ) -> None:
        self.store = store
        self.root = root
        self.root_key = str(root.resolve())
        self.backend = backend
        self.options = options
        self.rules = rules or WalkRules()
        self.skipped: list[corpus.SkippedFile] = []
        self.ignored = 0
        self.settings = settings
        self.files_held = files_held
        self.clock = StageClock()
        self.warnings: list[Notice] = []
        self.planner = Planner(
            store, backend, chunk_settings, self._warn, self.clock, reread, self.rules.max_file_size
        )
        self.secrets_by_file: dict[str, int] = {}
        self.stopped: str | None = None
        self.files_found = self.files_visited = 0  # for progress
        self.workers: PlanWorkers | None = None  # while files are read by worker processes
        self.estimate = ChunkEstimate(())  # of the chunks to embed: for progress
        self.dimensions = Dimensions(store.dimension)
        self.usage_before = backend.usage()
        self.server_requests_before = backend.requests_by_server()

    # -- the run ----------------------------------------------------------------------------------

    def run(self) -> BuildReport:
        started = time.perf_counter()
        self.started_at = time.time()
        build_id = self.store.start_build(
            self.root_key, self.backend.model_name, os.getpid(), socket.gethostname(), self.started_at
        )
        self.model_probe = recorded_probe(self.store)
        self.backend.hold_to_model(self.model_probe)
        concurrency = max(1, self.options.concurrency or self.backend.default_concurrency)
        write_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="write")
        embed_pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="embed")
        self.queue = EmbedQueue(embed_pool, self._embed, self.options.batch_size, concurrency)
        self.writer = GroupWriter(
            self.store,
            write_pool,
            self.queue,
            build_id,
            self.clock,
            self.root_key,
            self.settings,
            self.dimensions,
            self.options.commit_seconds,
            self._confirm_model,
        )
        try:
            try:
                seen, unlistable, states = self._plan_and_embed()
                self._drain()
            finally:  # the embedding threads end first (batches not started are dropped), then the writes
                embed_pool.shutdown(wait=True, cancel_futures=True)
                write_pool.shutdown(wait=True)
                self.writer.settle()
                if self.options.progress is not None:
                    self.options.progress.finish()
            self._remove_deleted(build_id, seen, unlistable, states)
        except BaseException as error:
            # Ctrl-C, or SIGTERM as `kill`, `timeout` and `systemctl stop` send it (the CLI raises
            # KeyboardInterrupt for it): the build was interrupted, and what it committed stays
            outcome = "interrupted" if isinstance(error, KeyboardInterrupt) else "error"
            self._finish(build_id, outcome, str(error) or type(error).__name__, failing=True)
            raise
        report = self._report(time.perf_counter() - started, len(seen))
        outcome = "stopped" if self.stopped else ("ok" if report.ok else "partial")
        self._finish(build_id, outcome, self.stopped)
        return report

    def _plan_and_embed(self) -> tuple[set[str], list[str], dict[str, FileState]]:
        with self.clock.timing("walk"):
            found = corpus.walk(self.root, self.rules)
        states = self.store.file_states(self.root_key)
        held = files_indexed(states) if self.files_held is None else self.files_held
        if not found.files and held and not self.options.allow_empty:
            raise ConfigError(
                f"folder {self.root} has no files to index, but the index holds {held} from it: "
                "nothing is removed (is it unmounted, or emptied?); build with "
                f"{self.options.option_name('allow_empty')} to remove them"
            )
        recorded = self._note_left_out(found, states)
        self.files_found = len(found.files)
        unchanged = self.planner.is_unchanged
        to_read = [source for source in found.files if not unchanged(source, states.get(source.path))]
        self.estimate = ChunkEstimate((source.path, source.size) for source in to_read)
        if self.options.progress is not None:
            self.options.progress.start("indexing", "chunks embedded")
        with self._start_workers(len(to_read)) as workers:
            self.workers = workers
            for number, source in enumerate(found.files, 1):
                state = states.get(source.path)
                if workers is None or self.stopped or self.planner.is_unchanged(source, state):
                    self._plan_file(source, state)
                else:
                    workers.submit(source, state)
                    self._take_planned(workers, final=False)
                self._embed_more()
                self.files_visited = number
                self._show_progress()
            if workers is not None:
                self._take_planned(workers, final=True)
            self.workers = None
        return {source.path for source in found.files} | recorded, found.unlistable, states

    def _start_workers(self, files_to_read: int) -> PlanWorkers | nullcontext[None]:
        """The worker processes that read and chunk this build's files (see
        :mod:`indexer.pipeline.workers`), or none: the files are then read in this process."""
        count = self.options.workers
        if count is None:
            count = default_workers(usable_cores(), self.backend.embeds_remotely, files_to_read)
        recipe = self.planner.recipe_for_workers() if count else None
        if recipe is None:
            if count and self.options.workers:
                self._warn(
                    f"files are read in the build's process: backend {self.backend.kind!r} counts "
                    "tokens in a way that cannot be sent to worker processes"
                )
            return nullcontext()
        return PlanWorkers(recipe, count)

    def _embed_more(self) -> None:
        """Send the batches that filled, take those finished in (not for an unchanged file: most of
        a rerun)."""
        if self.writer.waiting or self.queue.in_flight:
            self._send_batches()
            self._take_finished(block=False)

    def _take_planned(self, workers: PlanWorkers, final: bool) -> None:
        """Use the files the workers have read, in walk order: those done; and when the window of
        files in flight is full (or ``final``), wait for the first, taking batches in meanwhile so
        that the backend does not wait for it."""
        while (head := workers.head()) is not None:
            if not head.done():
                if not (final or workers.full()):
                    return
                self._wait_for_head(workers, head)
                continue
            taken = workers.take()
            if taken is not None:
                self._take_file(*taken)
                self._embed_more()

    def _wait_for_head(self, workers: PlanWorkers, head: Future) -> None:
        """Wait for the first file in the workers' window, a batch's answer, or the next timed commit."""
        if self.queue.in_flight:
            workers.when_head_done(self.queue.wake)
            self._take_finished(block=True)
        else:
            futures_wait([head], timeout=self.writer.seconds_to_commit())
            self.writer.write_ready(self.stopped)

    def _note_left_out(self, found: corpus.WalkResult, states: dict[str, FileState]) -> set[str]:
        """Keep what the walk left out for the report (the index's own files aside), with a warning
        for each file that is not just of a type no reader takes; record those the walk can know
        again by their ``stat`` (the paths returned), so each is warned of once, not on every run."""
        for path, reason in found.problems:
            self._warn(Notice(reason, path))
        own = self._own_paths()
        self.skipped = [skipped for skipped in found.skipped if skipped.path not in own]
        self.ignored = found.ignored
        recorded: set[str] = set()
        for skipped in self.skipped:
            if skipped.kind not in self.WARNED:
                continue
            if skipped.kind in corpus.RECORDED_KINDS and skipped.size is not None:
                recorded.add(skipped.path)
                if self._known(skipped, states.get(skipped.path)):
                    continue
                self._record_left_out(skipped, states.get(skipped.path))
            self._warn(Notice(f"skipped, {self._advised(skipped.kind, skipped.reason)}", skipped.path))
        return recorded

    @staticmethod
    def _known(skipped: corpus.SkippedFile, state: FileState | None) -> bool:
        """Left out as the index records it, and unchanged since."""
        return state is not None and (state.status, state.size, state.mtime_ns) == (
            skipped.kind,
            skipped.size,
            skipped.mtime_ns,
        )

    def _record_left_out(self, skipped: corpus.SkippedFile, state: FileState | None) -> None:
        """A record of a file the walk left out unread: its stat facts, no content hash, no chunks."""
        source = corpus.SourceFile(self.root, skipped.path, skipped.size or 0, skipped.mtime_ns or 0)
        pending = PendingFile(source=source, content_hash="", is_new=state is None, status=skipped.kind)
        pending.skip_reason = skipped.reason
        self.writer.add(pending)

    def _advised(self, kind: str, reason: str) -> str:
        """``reason``, and what the user may do about it, in the front end's names for settings."""
        if kind not in self.ADVICE:
            return reason
        setting, advice = self.ADVICE[kind]
        return f"{reason} ({advice.format(option=self.options.option_name(setting))})"

    def _own_paths(self) -> set[str]:
        """The index's own files (its database, journal, lock) that lie under the root, as walked."""
        real_root = os.path.realpath(self.root)
        return {
            os.path.relpath(path, real_root)
            for path in self.store.own_files()
            if path.startswith(real_root.rstrip(os.sep) + os.sep)
        }

    def _plan_file(self, source: corpus.SourceFile, state: FileState | None) -> None:
        if self.planner.is_unchanged(source, state):
            if state is not None and state.status != "indexed":  # counted as left out, not as indexed
                self._left_out(source.path, state.status, f"left out when last read ({state.status})")
            else:
                self.writer.files_unchanged += 1
            return
        # a changed file after the stop is not read: it keeps its previous version
        self._take_file(source, state, None if self.stopped else self.planner.plan(source, state))

    def _take_file(self, source: corpus.SourceFile, state: FileState | None, planned: Planned | None) -> None:
        """Hand a planned file on (to the embed queue and the writer); None: the build stopped first."""
        queued = self.queue.texts_wanted
        try:
            self._read_file(source, state, planned)
        finally:
            self.estimate.read(source.path, source.size, self.queue.texts_wanted - queued)

    def _read_file(self, source: corpus.SourceFile, state: FileState | None, planned: Planned | None) -> None:
        if self.stopped or planned is None:  # a changed file after the stop keeps its previous version
            self.writer.fail(source.path, f"not indexed, the build stopped: {self.stopped}")
            return
        self.planner.take(planned)
        if planned.unreadable is not None:
            status, reason = planned.unreadable
            self._warn(Notice(f"skipped, {self._advised(status, reason)}", source.path))
            self._left_out(source.path, status, reason)
            return
        if planned.cannot_read is not None or planned.pending is None:
            self.writer.fail(source.path, f"cannot read: {planned.cannot_read}")
            return
        pending = planned.pending
        if pending.read_failure is not None:  # recorded as damaged (not read again until it changes)
            self.writer.fail(source.path, pending.read_failure)
        elif pending.status != "indexed":
            self._left_out(source.path, pending.status, pending.skip_reason)
        elif pending.touch_only is not None and state is not None and state.status != "indexed":
            self._left_out(source.path, state.status, f"left out when last read ({state.status})")
        if pending.secrets:
            self._note_secrets(pending)
        self._find_or_queue(pending)
        self.writer.add(pending)

    def _left_out(self, path: str, kind: str, reason: str) -> None:
        self.skipped.append(corpus.SkippedFile(path, kind, reason))

    def _note_secrets(self, pending: PendingFile) -> None:
        """Count the secrets redacted from a file, and say where (never what)."""
        self.secrets_by_file[pending.source.path] = len(pending.secrets)
        lines = ", ".join(str(line) for line in sorted({finding.line for finding in pending.secrets}))
        kinds = ", ".join(sorted({finding.kind for finding in pending.secrets}))
        count = len(pending.secrets)
        what = f"{count} secret{'s' * (count > 1)} redacted ({kinds}) at line{'s' * (',' in lines)} {lines}"
        advice = f"index it as it is with {self.options.option_name('allow_secrets')}"
        self._warn(Notice(f"{what}; {advice}", pending.source.path))

    def _confirm_model(self) -> dict[str, str]:
        """On the writer thread, before a group is committed: the backend vouches for the model of
        every vector it gave since (or raises); its probe is recorded with the first group."""
        probe = self.backend.confirm_model()
        if probe is None or probe == self.model_probe:
            return {}
        self.model_probe = probe
        return probe_meta(probe)

    def _find_or_queue(self, pending: PendingFile) -> None:
        self.queue.remember(self.planner.stored_vectors(self.queue.unknown(pending.text_hashes)))
        self.queue.want(pending.text_hashes, pending.embed_texts)

    # -- batches ----------------------------------------------------------------------------------

    def _send_batches(self, final: bool = False) -> None:
        """Send full batches (a last, shorter one when ``final``), never more than the window allows
        in flight: when it is full, wait for one to finish."""
        while not self.stopped and self.queue.waiting:
            while not self.queue.has_room():
                self._take_finished(block=True)
            if self.stopped:
                return
            batch = self.queue.next_batch(final)
            if batch is None:
                return
            self.queue.send(batch)

    def _embed(self, texts: list[str]) -> tuple[Any, float]:
        started = time.perf_counter()
        try:
            vectors = self.backend.embed(texts)
        except NotImplementedError as error:
            raise BackendUnreachableError(f"backend {self.backend.kind!r} cannot embed: {error}") from error
        return vectors, time.perf_counter() - started

    def _take_finished(self, block: bool) -> None:
        """Check the batches whose answer is in (when ``block``, waiting for one, but no longer than
        the writer's next timed commit), then commit what is ready."""
        for batch, future in self.queue.finished(block, self.writer.seconds_to_commit()):
            self._finish_batch(batch, future)
            self._show_progress()
        self.writer.write_ready(self.stopped)
        self._stop_if_refused()

    def _finish_batch(self, batch: Batch, future: Future) -> None:
        """Check a batch's answer: keep its vectors, or fail its texts (their files keep their old
        version), or split it when the server found it too long, or stop the build."""
        try:
            vectors, seconds = future.result()
            self.clock.add("embed", seconds)
            with self.clock.timing("check"):
                rows = self.dimensions.check(vectors, len(batch.texts))
        except InputTooLongError as error:
            self._split_too_long(batch, error)
        except BackendUnreachableError as error:
            self._stop(str(error))
            self.queue.refuse(batch.hashes, str(error))
        except BackendError as error:
            self.queue.refuse(batch.hashes, f"batch {batch.number} refused: {error}")
        except SettingsChangedError:
            raise
        except Exception as error:  # a user backend's own exception: that batch fails, the build goes on
            self.queue.refuse(batch.hashes, f"batch {batch.number} failed: {type(error).__name__}: {error}")
        else:
            self.queue.accept(batch, rows)

    def _split_too_long(self, batch: Batch, error: InputTooLongError) -> None:
        """The server said an input is too long: retry the halves; a lone chunk is cut in two."""
        if len(batch.texts) > 1:
            for half in batch.halves():
                self.queue.send(half)
            return
        too_long = batch.hashes[0]
        for pending in self.writer.waiting:
            if too_long in pending.text_hashes:
                if self.planner.recut(pending, pending.text_hashes.index(too_long), str(error)):
                    self._find_or_queue(pending)

    def _stop_if_refused(self) -> None:
        """Stop once the backend could not vouch for the model of a group's vectors (a server
        switched models): that group and every file after it fail."""
        if self.writer.refused is not None:
            self._stop(self.writer.refused)

    def _stop(self, reason: str) -> None:
        if self.stopped is None:
            self.stopped = reason
            self.queue.stop(reason)

    def _drain(self) -> None:
        """Send what is still queued and wait for every batch in flight, writing files as they complete."""
        while True:
            self._send_batches(final=True)
            if not self.queue.in_flight:
                break
            self._take_finished(block=True)
        self.writer.write_ready(self.stopped, flush=True)
        self._stop_if_refused()
        self.writer.finish()
        self._stop_if_refused()
        self._show_progress()  # every file is done now

    # -- after the writes -------------------------------------------------------------------------

    def _remove_deleted(
        self, build_id: int, seen: set[str], unlistable: list[str], states: dict[str, FileState]
    ) -> None:
        """Drop the files of this root that are gone from the folder (after every write, so a renamed
        file's new name could re-use the old name's vectors first). Files under a folder that could
        not be listed are kept: they may well still be there."""
        gone = [
            state
            for path, state in states.items()
            if path not in seen and not any(path.startswith(folder + "/") for folder in unlistable)
        ]
        if not gone:
            return
        removed = BuildCounts(files_removed=sum(state.status == "indexed" for state in gone))
        with self.clock.timing("write"), self.store.transaction():
            for state in gone:
                self.store.remove_file(state.id)
            self.store.add_build_counts(build_id, removed, time.time())
        self.writer.counts = self.writer.counts.plus(removed)

    # -- reporting --------------------------------------------------------------------------------

    def _warn(self, notice: str) -> None:
        """Keep a warning for the report and pass it on (a :class:`Notice`, or a plain line)."""
        self.warnings.append(Notice.of(notice))
        self.options.warn(self.warnings[-1])

    def _show_progress(self) -> None:
        """Chunks embedded of those to embed (:class:`ChunkEstimate`), and files done (unchanged,
        or committed, failed or left out) of those found."""
        progress = self.options.progress
        if progress is None:
            return
        reading = len(self.workers.window) if self.workers is not None else 0
        done = self.files_visited - self.writer.files_pending - reading
        detail = f"{done:,} of {self.files_found:,} files done"
        progress.update(self.queue.texts_embedded, self.estimate.total() or None, detail)

    def _counts(self) -> BuildCounts:
        """What is committed, with the files that failed and what the backend spent."""
        after = self.backend.usage()
        counts = self.writer.counts
        counts.requests = after.get("requests", 0) - self.usage_before.get("requests", 0)
        counts.tokens = after.get("tokens", 0) - self.usage_before.get("tokens", 0)
        return counts

    def _requests_by_server(self) -> dict[str, int]:
        """This build's requests to each of the backend's servers (how evenly the pool spread them)."""
        before = self.server_requests_before
        return {url: count - before.get(url, 0) for url, count in self.backend.requests_by_server().items()}

    def _finish(self, build_id: int, outcome: str, error: str | None, failing: bool = False) -> None:
        """Record how the build ended. When it ends by an error, a failure to record that (the disk
        that failed the build may fail this too) must not hide the error itself: the record then
        keeps its counts of what was committed, and the next build marks it interrupted."""
        try:
            self.store.finish_build(build_id, outcome, self._counts(), error, time.time())
        except Exception as record_error:
            if not failing:
                raise
            self._warn(f"the build's record could not be updated: {record_error}")

    def _report(self, seconds: float, files_seen: int) -> BuildReport:
        counts = self._counts()
        return BuildReport(
            root=self.root_key,
            files_seen=files_seen,
            files_added=counts.files_added,
            files_changed=counts.files_changed,
            files_unchanged=self.writer.files_unchanged,
            files_removed=counts.files_removed,
            files_skipped=len(self.skipped),
            files_failed=counts.files_failed,
            chunks_embedded=counts.chunks_embedded,
            chunks_reused=counts.chunks_reused,
            batches=self.queue.batches_sent,
            requests=counts.requests,
            tokens=counts.tokens,
            requests_by_server=self._requests_by_server(),
            seconds=seconds,
            files_ignored=self.ignored,
            skipped=self.skipped,
            failures=self.writer.failures,
            warnings=self.warnings,
            stage_seconds=dict(self.clock.seconds),
            stopped=self.stopped,
            started_at=self.started_at,
            finished_at=time.time(),
            secrets_redacted=sum(self.secrets_by_file.values()),
            secrets_by_file=dict(self.secrets_by_file),
        )
