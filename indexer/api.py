"""The public Python API: open an index, build it from a folder, search it. The CLI is a thin shell
over this module."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from indexer.backends import make_backend, with_connection
from indexer.backends.base import EmbeddingBackend
from indexer.errors import ConfigError
from indexer.search import Hit, default_min_score, search
from indexer.store import Store
from indexer.store_interface import IndexStore, is_postgres_url, open_store

if TYPE_CHECKING:
    from indexer.chunking import ChunkSettings
    from indexer.pipeline import BuildReport

DEFAULT_INDEX = "index.db"
DEFAULT_BATCH_SIZE = 32


def default_index_path() -> str:
    """``$INDEX_DB`` when set, else ``index.db`` in the current folder."""
    return os.environ.get("INDEX_DB") or DEFAULT_INDEX


class Index:
    """An index on disk. Open with :meth:`open`; use as a context manager to close it.

    >>> with Index.open("index.db") as index:          # doctest: +SKIP
    ...     index.build("docs")
    ...     hits = index.search("how do I rotate keys", k=3)
    """

    def __init__(self, store: IndexStore, backend: EmbeddingBackend | None = None) -> None:
        self.store = store
        self.path = store.path
        self._backend = backend
        self._searches = 0

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] | None = None,
        create: bool = True,
        backend: EmbeddingBackend | None = None,
    ) -> Index:
        """Open the index at ``path`` (default: ``$INDEX_DB`` or ``index.db``), creating it if needed.

        ``backend`` embeds queries (and builds, unless one is passed there); None means the backend
        recorded in the index. With ``create=False`` a missing index raises
        :class:`indexer.errors.ConfigError`.
        """
        return cls(open_store(path if path is not None else default_index_path(), create=create), backend)

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()
            self._backend = None
        self.store.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- building -----------------------------------------------------------------------------

    def build(
        self,
        folder: str | os.PathLike[str],
        backend: EmbeddingBackend | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        concurrency: int | None = None,
        chunk_tokens: int | None = None,
        rebuild: bool = False,
        wait: float = 0,
        progress: bool = False,
        warn: Callable[[str], None] | None = None,
    ) -> BuildReport:
        """Index ``folder``: new and changed files are embedded, deleted ones removed.

        Args:
            folder: the root to index; paths are stored relative to it.
            backend: the embedding backend; None means the one this index was built with, or the
                embedded default model for a new index.
            batch_size: texts per ``embed`` call.
            concurrency: batches in flight at once (default: the backend's own default).
            chunk_tokens: a smaller chunk size limit than the model's input limit.
            rebuild: build a fresh index when the settings differ from the index's, and swap it in
                at the end (queries keep answering from the old one meanwhile).
            wait: seconds to wait for another build holding the index before giving up.
            progress: show a progress bar on stderr.
            warn: called with each one-line warning (default: print to stderr).
        Returns:
            a :class:`BuildReport`; ``report.exit_code`` is non-zero when any file failed.
        Raises:
            IndexLockedError: another build holds the index.
            ConfigError: bad options, or settings that differ from the index's without ``rebuild``.
        """
        if batch_size <= 0:
            raise ConfigError(f"--batch-size must be a positive number, not {batch_size}")
        root = Path(folder)
        if not root.is_dir():
            raise ConfigError(f"folder {folder} does not exist or is not a folder")
        backend = (
            backend or self._backend or self._recorded_backend() or make_backend({"backend": "embedded"})
        )
        settings = _chunk_settings(backend, chunk_tokens)
        with self.store.writer_lock(str(root.resolve())) as lock:
            lock.acquire(wait)
            self.store.mark_interrupted_builds()
            fingerprint = build_fingerprint(backend, settings)
            recorded = self.store.get_json("fingerprint")
            if recorded is not None and recorded != fingerprint:
                if not rebuild:
                    raise ConfigError(
                        "this build's settings differ from the index's: "
                        + describe_difference(recorded, fingerprint)
                        + "; pass --rebuild to build a new index with them"
                    )
                return self._rebuild(
                    root, backend, settings, fingerprint, batch_size, concurrency, progress, warn
                )
            if recorded is None:
                self._record_settings(self.store, backend, fingerprint)
            self._backend = backend
            report = _run_build(self.store, root, backend, settings, batch_size, concurrency, warn, progress)
            if report.stopped is None and self.store.get_json("backend") != backend.config():
                # same vectors (the fingerprint matched), another address or timeout: queries follow
                self._record_settings(self.store, backend, fingerprint)
            return report

    def _rebuild(
        self, root, backend, settings, fingerprint, batch_size, concurrency, progress, warn
    ) -> BuildReport:  # noqa: ANN001
        """Build every root of this index afresh beside it, then copy the result over it in one step.

        The old index stays in place (and keeps answering queries) until the new one is complete;
        a rebuild in which any file failed is not swapped in, so nothing is lost.
        """
        if not isinstance(self.store, Store):
            raise ConfigError(
                "--rebuild is not available on PostgreSQL: build into a new database (or schema) with "
                "the new settings, then point INDEX_DB at it"
            )
        scratch_path = self.path + ".rebuild"
        _remove_database(scratch_path)
        roots = [
            Path(r) for r in self.store.roots() if Path(r).is_dir() and Path(r).resolve() != root.resolve()
        ]
        with Store.open(scratch_path) as scratch:
            self._record_settings(scratch, backend, fingerprint)
            for each_root in [*roots, root]:
                report = _run_build(
                    scratch, each_root, backend, settings, batch_size, concurrency, warn, progress
                )
                if not report.ok:
                    break
            if report.ok:
                scratch.backup_into(self.store)
                self._backend = backend
        _remove_database(scratch_path)
        if not report.ok:
            message = "rebuild not swapped in: the index keeps its previous version"
            report.warnings.append(message)
            (warn or _print_warning)(message)
        return report

    @staticmethod
    def _record_settings(store: IndexStore, backend: EmbeddingBackend, fingerprint: dict[str, Any]) -> None:
        with store.transaction():
            store.set_meta(
                {
                    "backend": json.dumps(backend.config(), sort_keys=True),
                    "model": backend.model_name,
                    "fingerprint": json.dumps(fingerprint, sort_keys=True),
                }
            )

    # -- searching ----------------------------------------------------------------------------

    def connect(self, base_url: str | None = None, api_key: str | None = None) -> None:
        """Reach the index's recorded backend at another address, or with an API key (never stored).

        The model and prefixes stay the recorded ones, so queries still match the stored vectors.
        """
        config = self.store.get_json("backend")
        if config is None:
            raise ConfigError(f"index {self.path} has no recorded backend yet: build it first")
        if self._backend is not None:
            self._backend.close()
        self._backend = make_backend(with_connection(config, base_url, api_key))

    @property
    def backend(self) -> EmbeddingBackend | None:
        """The backend this index was built with (made on first use), or None for an empty index."""
        if self._backend is None:
            self._backend = self._recorded_backend()
        return self._backend

    def _recorded_backend(self) -> EmbeddingBackend | None:
        config = self.store.get_json("backend")
        return make_backend(config) if config is not None else None

    def search(
        self,
        text: str,
        k: int = 5,
        mode: str = "hybrid",
        paths: Sequence[str] = (),
        types: Sequence[str] = (),
        min_score: float | None = None,
    ) -> list[Hit]:
        """The ``k`` chunks that best match ``text``, best first.

        Args:
            text: the question.
            k: how many hits at most.
            mode: "hybrid" (vector and keyword lists fused), "vector" or "keyword".
            paths: glob patterns on the path relative to its root (``*`` also crosses folders).
            types: file extensions to keep, e.g. ``["md", "txt"]``.
            min_score: drop hits scoring lower (scores run 0..1 in every mode; see
                :meth:`default_min_score` for the threshold `index query` applies).
        """
        backend = self.backend if mode != "keyword" else None
        self._searches += 1
        # A process that searches again will likely go on: from the second search, vectors are
        # searched in memory (loaded once) rather than scanned in SQLite each time.
        self.store.vectors_in_memory = self._searches >= 2
        with self.store.snapshot():
            if self.store.is_empty():
                return []
            return search(self.store, backend, text, k, mode, paths, types, min_score)

    def default_min_score(self, mode: str = "hybrid") -> float | None:
        """The score under which a hit is more likely noise than an answer, where this index's scores
        are calibrated: :data:`indexer.search.DEFAULT_MIN_SCORE` in keyword mode, and in the other
        modes for the model the calibration was fitted for; None otherwise."""
        return default_min_score(mode, self.store.get_meta("model"))

    # -- status -------------------------------------------------------------------------------

    def status(self, builds: int = 5) -> dict[str, Any]:
        """Files, chunks, model, dimension, fingerprint and the last builds, as a JSON-safe dict."""
        fingerprint = self.store.get_json("fingerprint")
        return {
            "index": self.path if is_postgres_url(self.path) else os.path.abspath(self.path),
            **self.store.counts(),
            "roots": self.store.roots(),
            "backend": self.store.get_json("backend"),
            "model": self.store.get_meta("model"),
            "dimension": self.store.dimension,
            "fingerprint": fingerprint_id(fingerprint) if fingerprint else None,
            "settings": fingerprint,
            "migrations": self.store.applied_migrations(),
            "builds": self.store.recent_builds(builds),
        }


def _run_build(store: IndexStore, root: Path, backend: EmbeddingBackend, *options: Any) -> BuildReport:
    # imported here: the build machinery (walker, chunker, thread pool) is not paid for by a query
    from indexer.pipeline import Build

    return Build(store, root, backend, *options).run()


def _print_warning(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def _remove_database(path: str) -> None:
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)


def _chunk_settings(backend: EmbeddingBackend, chunk_tokens: int | None) -> ChunkSettings:
    from indexer.chunking import ChunkSettings

    limit = backend.max_tokens
    if chunk_tokens is not None:
        if chunk_tokens < 16:
            raise ConfigError(f"--chunk-tokens must be at least 16, not {chunk_tokens}")
        limit = min(limit, chunk_tokens)
    return ChunkSettings.for_limit(limit)


def build_fingerprint(backend: EmbeddingBackend, settings: ChunkSettings) -> dict[str, Any]:
    """Everything that changes a stored vector: the one place that decides whether two builds match."""
    return {
        "embedding": backend.describe(),
        "document_prefix": backend.document_prefix,
        "query_prefix": backend.query_prefix,
        "chunking": settings.describe(),
    }


def fingerprint_id(fingerprint: dict[str, Any]) -> str:
    """A short stable name for a fingerprint, shown by `index status`."""
    return hashlib.sha256(json.dumps(fingerprint, sort_keys=True).encode()).hexdigest()[:16]


def describe_difference(old: dict[str, Any], new: dict[str, Any], shown: int = 4) -> str:
    """``a.b: x -> y`` for the settings that differ between two fingerprints: the backend and model
    first (they usually explain the rest), at most ``shown`` of them, then how many more."""
    changes = _differences(old, new)
    changes.sort(key=lambda change: (not change.startswith(("embedding.backend", "embedding.model")), change))
    more = f" (+{len(changes) - shown} more)" if len(changes) > shown else ""
    return ", ".join(changes[:shown]) + more


def _differences(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    changes = []
    for key in sorted(set(old) | set(new)):
        before, after = old.get(key), new.get(key)
        if isinstance(before, dict) and isinstance(after, dict):
            changes.extend(_differences(before, after, f"{prefix}{key}."))
        elif before != after:
            changes.append(f"{prefix}{key}: {before!r} -> {after!r}")
    return changes
