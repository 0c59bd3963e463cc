"""`index watch`: build once, then build again whenever files under the folder change.

File events come from watchfiles (Rust's notify underneath: inotify, FSEvents, ReadDirectoryChangesW)
with a debounce, so a burst of saves makes one build. Each build is the ordinary incremental build,
so only what changed is read and embedded.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from indexer.api import Index
from indexer.corpus import is_skipped_folder
from indexer.pipeline import BuildReport


def watch(
    index: Index,
    folder: str | os.PathLike[str],
    on_report: Callable[[BuildReport], None],
    debounce_ms: int = 500,
    stop_event: threading.Event | None = None,
    **build_options: Any,
) -> None:
    """Build ``folder`` now and after every burst of changes, until ``stop_event`` is set; Ctrl-C (or
    SIGTERM, which the CLI raises as KeyboardInterrupt) raises out of the wait.

    ``build_options`` go to :meth:`Index.build`. Changes to the index's own files are ignored, so an
    index kept inside the watched folder does not wake the watcher with its own writes.
    """
    import watchfiles

    root = Path(folder).resolve()
    on_report(index.build(root, **build_options))
    own_files = set(index.store.own_files())

    def relevant(change: Any, path: str) -> bool:
        if os.path.realpath(path) in own_files:
            return False
        parts = Path(path).relative_to(root).parts if path.startswith(str(root)) else ()
        return not any(is_skipped_folder(part) for part in parts[:-1])

    for _changes in watchfiles.watch(
        root, watch_filter=relevant, debounce=debounce_ms, stop_event=stop_event, raise_interrupt=True
    ):
        on_report(index.build(root, **build_options))
