"""`index watch`: a change under the folder triggers an incremental build; the index's own writes do not."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from conftest import write
from helpers import HashBackend

from indexer import Index
from indexer.store import open_store
from indexer.watch import watch


@contextmanager
def watching(index: Index, folder, backend) -> Iterator[queue.Queue]:
    """``watch`` on a thread of its own, for the ``with`` block: yields the queue its reports go to;
    then stops it (it must end) and closes the index."""
    reports: queue.Queue = queue.Queue()
    stop = threading.Event()
    thread = threading.Thread(
        target=watch,
        args=(index, folder, reports.put),
        kwargs={"debounce_ms": 100, "stop_event": stop, "backend": backend, "warn": lambda message: None},
    )
    thread.start()
    try:
        yield reports
    finally:
        stop.set()
        thread.join(timeout=30)
        index.close()
    assert not thread.is_alive()


def test_watch_rebuilds_after_a_change_and_ignores_its_own_index(tmp_path):
    folder = tmp_path / "docs"
    write(folder / "a.md", "# A\n\nfirst version about herons\n")
    index = Index.open(folder / "index.db")  # inside the watched folder on purpose
    with watching(index, folder, HashBackend()) as reports:
        first = reports.get(timeout=30)
        assert first.files_added == 1
        time.sleep(0.5)
        write(folder / "b.md", "# B\n\na new file about kingfishers\n")
        second = reports.get(timeout=30)
        assert second.files_added == 1
        assert second.files_unchanged == 1
        time.sleep(1.5)
        assert reports.empty(), "the watcher woke up for its own index writes"
        (folder / "a.md").unlink()
        third = reports.get(timeout=30)
        assert third.files_removed == 1


def test_watch_reuses_the_recorded_rules_and_sleeps_through_changes_they_pass_over(tmp_path):
    folder = tmp_path / "repo"
    write(folder / ".gitignore", "build/\n*.log.md\n")
    write(folder / "a.md", "# A\n\nAbout herons.\n")
    backend = HashBackend()
    index = Index.open(tmp_path / "index.db")
    index.build(folder, backend=backend, exclude=["drafts/"], chunk_tokens=24, warn=lambda message: None)
    with watching(index, folder, backend) as reports:
        first = reports.get(timeout=30)  # no rules given: the recorded ones, so nothing differs
        assert first.exit_code == 0
        assert first.files_unchanged == 1
        time.sleep(0.5)
        write(folder / "drafts" / "b.md", "# B\n\nA draft.\n")
        write(folder / "build" / "c.md", "# C\n\nGenerated.\n")
        write(folder / "run.log.md", "# Log\n")
        write(folder / ".env", "TOKEN=x\n")
        (folder / "photo.png").write_bytes(b"\x89PNG")
        time.sleep(1.5)
        assert reports.empty(), "the watcher woke up for changes the walk passes over"
        write(folder / "d.md", "# D\n\nAbout kingfishers.\n")
        second = reports.get(timeout=30)
        assert second.files_added == 1
        assert second.files_unchanged == 1
        write(folder / ".gitignore", "build/\n*.log.md\nd.md\n")  # the rules themselves changed
        third = reports.get(timeout=30)
        assert third.files_removed == 1


def test_watch_goes_on_after_a_file_its_reader_fails_on(tmp_path):
    folder = tmp_path / "docs"
    write(folder / "a.md", "# A\n\nAbout herons.\n")
    index = Index.open(tmp_path / "index.db")
    with watching(index, folder, HashBackend()) as reports:
        assert reports.get(timeout=30).files_added == 1
        time.sleep(0.5)
        (folder / "deep.ipynb").write_text('{"cells": ' + "[" * 100_000 + "]" * 100_000 + "}")
        failed = reports.get(timeout=30)
        assert failed.exit_code == 1
        assert [failure.path for failure in failed.failures] == ["deep.ipynb"]
        write(folder / "b.md", "# B\n\nAbout kingfishers.\n")
        after = reports.get(timeout=30)
        assert after.files_added == 1
        assert after.exit_code == 0  # the damaged file is not read again


def test_watch_waits_for_another_build_holding_the_index_then_builds(tmp_path):
    folder = tmp_path / "docs"
    write(folder / "a.md", "# A\n\nAbout herons.\n")
    index_path = tmp_path / "index.db"
    index = Index.open(index_path)
    warnings: queue.Queue = queue.Queue()
    reports: queue.Queue = queue.Queue()
    stop = threading.Event()
    with open_store(str(index_path), writable=True) as store, store.writer_lock(str(folder)) as lock:
        lock.acquire()  # another build holds the index
        thread = threading.Thread(
            target=watch,
            args=(index, folder, reports.put),
            kwargs={"debounce_ms": 100, "stop_event": stop, "backend": HashBackend(), "warn": warnings.put},
        )
        thread.start()
        waiting = warnings.get(timeout=30)
        time.sleep(0.3)
        assert reports.empty()
        assert thread.is_alive()  # neither built nor given up
    first = reports.get(timeout=30)  # the other build is done: this one runs
    stop.set()
    thread.join(timeout=30)
    index.close()
    assert waiting == f"index {index_path} is being built by another process: waiting for it"
    assert first.files_added == 1
    assert not thread.is_alive()
