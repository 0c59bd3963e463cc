"""`index watch`: a change under the folder triggers an incremental build; the index's own writes do not."""

from __future__ import annotations

import queue
import threading
import time

from conftest import write
from helpers import HashBackend

from indexer import Index
from indexer.watch import watch


def test_watch_rebuilds_after_a_change_and_ignores_its_own_index(tmp_path):
    folder = tmp_path / "docs"
    write(folder / "a.md", "# A\n\nfirst version about herons\n")
    reports: queue.Queue = queue.Queue()
    stop = threading.Event()
    backend = HashBackend()
    index = Index.open(folder / "index.db")  # inside the watched folder on purpose
    thread = threading.Thread(
        target=watch,
        args=(index, folder, reports.put),
        kwargs={"debounce_ms": 100, "stop_event": stop, "backend": backend, "warn": lambda message: None},
    )
    thread.start()
    try:
        first = reports.get(timeout=30)
        assert first.files_added == 1
        time.sleep(0.5)
        write(folder / "b.md", "# B\n\na new file about kingfishers\n")
        second = reports.get(timeout=30)
        assert second.files_added == 1 and second.files_unchanged == 1
        time.sleep(1.5)
        assert reports.empty(), "the watcher woke up for its own index writes"
        (folder / "a.md").unlink()
        third = reports.get(timeout=30)
        assert third.files_removed == 1
    finally:
        stop.set()
        thread.join(timeout=30)
        index.close()
    assert not thread.is_alive()
