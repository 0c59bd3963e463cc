"""Running the ``index`` command and builds as the tests do, and checking what they left."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from helpers import HashBackend

from indexer import Index
from indexer.cli import main

#: This folder: a subprocess that puts it on ``sys.path`` can import the tests' helpers.
SUPPORT = Path(__file__).resolve().parent


def cli(*args: str, env: dict[str, str] | None = None):
    """``index ARGS`` in this process, as click's test runner runs it."""
    return CliRunner().invoke(main, list(args), env=env)


def run_python(code: str, *args: str, limit: tuple[int, int] | None = None, **options):
    """Python code in a subprocess with the tests' helpers importable, optionally under an rlimit."""

    def apply_limit() -> None:
        if limit is not None:
            resource.setrlimit(limit[0], (limit[1], limit[1]))

    return subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(SUPPORT)!r})\n{code}", *args],
        capture_output=True,
        text=True,
        preexec_fn=apply_limit,
        timeout=120,
        **options,
    )


def build(index_path, folder, backend=None, **options):
    """A build of ``folder`` into ``index_path``, with the hash backend unless told otherwise."""
    with Index.open(index_path) as index:
        return index.build(folder, backend=backend or HashBackend(), warn=lambda message: None, **options)


def integrity(index_path) -> list[str]:
    """What SQLite's and the store's own checks find wrong with the index (nothing, if all is well)."""
    with Index.open(index_path, create=False) as index:
        return index.store.integrity_problems()
