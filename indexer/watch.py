"""`index watch`: build once, then build again whenever files under the folder change.

File events come from watchfiles (Rust's notify underneath: inotify, FSEvents, ReadDirectoryChangesW)
with a debounce, so a burst of saves makes one build. Each build is the ordinary incremental build,
so only what changed is read and embedded. A build that finds the index held by another build (a
scheduled ``index build``, a second watcher) waits for it, saying so once, instead of giving up: a
watcher has nowhere else to be.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from indexer.api import Index
from indexer.corpus import WalkFilter
from indexer.errors import IndexLockedError
from indexer.fingerprint import walk_rules_key
from indexer.ignore import WalkRules
from indexer.pipeline import BuildReport
from indexer.pipeline.options import print_warning


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

    ``build_options`` go to :meth:`Index.build`; what they leave out is what the index recorded, and
    a change the walk would pass over (an ignored file, a file no reader takes) wakes no build.
    Changes to the index's own files are ignored too, so an index kept inside the watched folder
    does not wake the watcher with its own writes.
    """
    import watchfiles

    root = Path(folder).resolve()
    walk_filter = [build_and_filter(index, root, on_report, build_options)]
    own_files = set(index.store.own_files())

    def relevant(change: Any, path: str) -> bool:
        if os.path.realpath(path) in own_files or not path.startswith(str(root) + os.sep):
            return False
        return walk_filter[0].takes(os.path.relpath(path, root).replace(os.sep, "/"))

    for _changes in watchfiles.watch(
        root, watch_filter=relevant, debounce=debounce_ms, stop_event=stop_event, raise_interrupt=True
    ):
        walk_filter[0] = build_and_filter(index, root, on_report, build_options)


def build_and_filter(
    index: Index, root: Path, on_report: Callable[[BuildReport], None], build_options: dict[str, Any]
) -> WalkFilter:
    """Build ``root``, then the filter of the walk rules the index now holds for it."""
    on_report(build_when_free(index, root, build_options))
    return WalkFilter(root, WalkRules.from_record(index.store.get_json(walk_rules_key(str(root))) or {}))


def build_when_free(index: Index, root: Path, build_options: dict[str, Any]) -> BuildReport:
    """Build ``root``; when another build holds the index, warn once and wait for it to finish."""
    try:
        return index.build(root, **build_options)
    except IndexLockedError as error:
        warn = build_options.get("warn") or print_warning
        warn(f"index {index.location} is being built by {error.holder or 'another process'}: waiting for it")
        return index.build(root, **{**build_options, "wait": math.inf})
