"""Stage 3: the build, along the data path: a planner (stat, hash, re-use), an embed queue (text
hashes and the batches in flight), a group writer (the writer thread and its commits), and a thin
:class:`Build` over them.

Its names load on first use, so that the CLI can read :class:`BuildOptions` (for its help) without
paying for the build machinery on every ``index query``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names a type checker sees; at run time they load on first use, below
    from indexer.pipeline.build import Build as Build
    from indexer.pipeline.options import BuildOptions as BuildOptions
    from indexer.pipeline.report import BuildReport as BuildReport
    from indexer.pipeline.report import FileFailure as FileFailure

_HOMES = {
    "Build": "indexer.pipeline.build",
    "BuildOptions": "indexer.pipeline.options",
    "BuildReport": "indexer.pipeline.report",
    "FileFailure": "indexer.pipeline.report",
}


def __getattr__(name: str) -> object:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'indexer.pipeline' has no attribute {name!r}")


__all__ = sorted(_HOMES)
