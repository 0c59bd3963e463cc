"""Reading and chunking on worker processes, so that a build's own work is not all done under one
interpreter lock: the build's process keeps the HTTP requests, the vector check and the writer.

Files are handed to a pool of processes in walk order and taken back in that order, never more than a
few per worker in flight, so memory stays bounded by the window and not by the folder. A file whose
reader fails is that file's failure, as in the build's own process (:func:`planner.plan_file`
returns it as data); a worker that dies (killed, out of memory, a reader that crashed the
interpreter) takes down the pool's other files with it, so those are read again one at a time in a
new pool, and the one that kills its worker alone fails: the build goes on.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from indexer import corpus
from indexer.pipeline.planner import Planned, PlanRecipe, plan_file
from indexer.store.records import FileState

#: Files in flight per worker: enough that a worker never waits for the build to hand it the next
#: file, few enough that the files read ahead (each up to the size cap) stay a handful.
FILES_PER_WORKER = 4
#: Below this many files to read, a build reads them in its own process: starting the workers (each
#: a process that imports the readers) costs more than they would save.
FEW_FILES = 200

#: How often a worker checks that the build that started it is alive (seconds).
BUILD_CHECK_SECONDS = 1.0

_recipe: PlanRecipe | None = None  # a worker's recipe, set once when it starts


def usable_cores() -> int:
    """The cores this process may run on (its affinity, where the system says)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def default_workers(cores: int, embeds_remotely: bool, files_to_read: int) -> int:
    """Worker processes for a build when none are asked for: every core but one (the build's
    process needs it, for HTTP, the vector check and the writer) when the backend's vectors are
    computed elsewhere and there are enough files; 0 (read in the build's process) otherwise: an
    in-process model wants every core for itself."""
    if not embeds_remotely or cores < 2 or files_to_read < FEW_FILES:
        return 0
    return cores - 1


def _start_worker(recipe: PlanRecipe, build_pid: int) -> None:
    """A worker's first step: keep the recipe, leave Ctrl-C to the build, which stops the pool (a
    terminal sends SIGINT to every process of its group), and watch that the build is alive."""
    global _recipe
    _recipe = recipe
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with, args=(build_pid,), daemon=True).start()


def _exit_with(build_pid: int) -> None:
    """End this worker once the build's process is gone: a build killed outright (SIGKILL, or a
    SIGTERM with no handler) cannot stop its workers, and they would wait for files forever."""
    while True:
        time.sleep(BUILD_CHECK_SECONDS)
        try:
            os.kill(build_pid, 0)
        except ProcessLookupError:
            os._exit(1)
        except PermissionError:  # the pid was taken by another user's process: the build is gone
            os._exit(1)


def _plan_in_worker(source: corpus.SourceFile, state: FileState | None) -> Planned:
    assert _recipe is not None, "the worker was started without its recipe"
    return plan_file(_recipe, source, state)


def _context() -> multiprocessing.context.BaseContext:
    """Workers are started by a fork server where there is one (fast: forked from a process that
    has already imported the readers), else spawned; never forked from the build, whose threads
    (HTTP, writer) may hold locks a fork would copy held."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["indexer.pipeline.planner"])
        return context
    return multiprocessing.get_context("spawn")


@dataclass
class _File:
    """A file handed to the workers; ``future`` is None while it waits to be read alone (it was in
    flight when a worker died) or behind such a file."""

    source: corpus.SourceFile
    state: FileState | None
    future: Future[Planned] | None = None
    suspect: bool = False


class PlanWorkers:
    """A pool of ``workers`` processes planning files, whose results come back in the order the
    files were given. Use as a context manager: leaving it stops the workers."""

    def __init__(self, recipe: PlanRecipe, workers: int) -> None:
        self.recipe = recipe
        self.workers = workers
        self.limit = workers * FILES_PER_WORKER
        self.window: deque[_File] = deque()
        self.pool = self._new_pool()

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            self.workers,
            mp_context=_context(),
            initializer=_start_worker,
            initargs=(self.recipe, os.getpid()),
        )

    def __enter__(self) -> PlanWorkers:
        return self

    def __exit__(self, error_type: type[BaseException] | None, *rest: object) -> None:
        self.close(interrupted=error_type is not None)

    # -- in -------------------------------------------------------------------------------------

    def full(self) -> bool:
        return len(self.window) >= self.limit

    def submit(self, source: corpus.SourceFile, state: FileState | None) -> None:
        """Hand a file to the workers (held back while a file is being read alone)."""
        entry = _File(source, state)
        if not any(held.suspect for held in self.window):
            self._start(entry)
        self.window.append(entry)

    def _start(self, entry: _File) -> None:
        try:
            entry.future = self.pool.submit(_plan_in_worker, entry.source, entry.state)
        except BrokenProcessPool as error:  # a worker died since: taken as the file's own result
            entry.future = Future()
            entry.future.set_exception(error)

    # -- out ------------------------------------------------------------------------------------

    def head(self) -> Future[Planned] | None:
        """The first file's result to come (it is started now if it waited); None when none is left."""
        if not self.window:
            return None
        entry = self.window[0]
        if entry.future is None:
            self._start(entry)
        return entry.future

    def when_head_done(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (on another thread) once the first file's result is in."""
        future = self.head()
        if future is not None:
            future.add_done_callback(lambda _: callback())

    def take(self) -> tuple[corpus.SourceFile, FileState | None, Planned] | None:
        """The first file and what planning it gave, waiting for it; None when the pool broke under
        files that are then read again (call again)."""
        future = self.head()
        if future is None:
            return None
        entry = self.window[0]
        try:
            planned = future.result()
        except BrokenProcessPool:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = self._new_pool()
            if not entry.suspect:  # a worker died under several files: each is read again alone
                for held in self.window:
                    held.future, held.suspect = None, True
                return None
            planned = Planned(cannot_read="the worker process reading it died (killed, or out of memory)")
        self.window.popleft()
        if entry.suspect and not any(held.suspect for held in self.window):
            for held in self.window:  # the files held behind the suspects go to the workers again
                if held.future is None:
                    self._start(held)
        return entry.source, entry.state, planned

    def close(self, interrupted: bool = False) -> None:
        """Stop the workers: at once when ``interrupted`` (a file being parsed is dropped), else
        once they are idle."""
        self.window.clear()
        if interrupted:
            for process in list((getattr(self.pool, "_processes", None) or {}).values()):
                process.terminate()  # the executor has no public way before Python 3.14
        self.pool.shutdown(wait=True, cancel_futures=True)
