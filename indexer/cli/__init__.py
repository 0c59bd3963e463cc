"""The `index` command: a thin click shell over :class:`indexer.Index`, one module per family of
commands and one for printing what they return; each module is imported when its command runs
(:data:`indexer.cli.app.COMMANDS`).

Each command's ``--help`` lists the exit codes it can return, with the meanings the error classes
of :mod:`indexer.errors` carry.
"""

from __future__ import annotations

from indexer.cli.app import main

__all__ = ["main"]
