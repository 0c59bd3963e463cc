"""The `index` command: a thin click shell over :class:`indexer.Index`, one module per family of
commands and one for printing what they return.

Each command's ``--help`` lists the exit codes it can return, with the meanings the error classes
of :mod:`indexer.errors` carry.
"""

from __future__ import annotations

from indexer.cli.app import main
from indexer.cli.build import build, remove, watch
from indexer.cli.query import query
from indexer.cli.serve import mcp_command, serve
from indexer.cli.status import evaluate, status

for command in (build, query, status, remove, watch, evaluate, serve, mcp_command):
    main.add_command(command)

__all__ = ["main"]
