"""The public Python API: open an index, build it from a folder, search it. The CLI is a thin shell
over this module."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from indexer.backends import make_backend, with_connection
from indexer.backends.base import EmbeddingBackend
from indexer.errors import ConfigError, IndexNotFoundError, IndexOutdatedError, SettingsChangedError
from indexer.search import MAX_K, MODES, Hit, search
from indexer.store import IndexStore, is_postgres_url, open_store
from indexer.store.records import ChunkFilter

if TYPE_CHECKING:
    from indexer.chunking import ChunkSettings
    from indexer.pipeline import BuildOptions, BuildReport

DEFAULT_INDEX = "index.db"
#: The settings keys that decide how a question must be embedded to match the stored vectors.
QUERY_SETTINGS = ("embedding", "query_prefix", "document_prefix")


def default_index_path() -> str:
    """``$INDEX_DB`` when set, else ``index.db`` in the current folder."""
    return os.environ.get("INDEX_DB") or DEFAULT_INDEX


class Index:
    """An index. Open with :meth:`open`; use as a context manager to close it.

    One ``Index`` may be shared by threads (a web server's): each thread searches on its own
    connection. Searches and ``status`` read through a read-only handle; ``build`` opens the index
    for writing. A long-lived ``Index`` follows the index it reads: when another process rebuilds it with
    other settings, the next search embeds with the new model (or, for a backend you passed, raises
    :class:`ConfigError` rather than mix models).

    >>> with Index.open("index.db") as index:          # doctest: +SKIP
    ...     index.build("docs")
    ...     hits = index.search("how do I rotate keys", k=3)
    """

    def __init__(
        self, location: str, backend: EmbeddingBackend | None = None, one_shot: bool = False
    ) -> None:
        self.location = location
        self._one_shot = one_shot
        self.path = location  # kept for callers of older versions
        self._given_backend = backend
        self._backend = backend
        self._backend_settings: str | None = None  # the recorded settings the backend was checked against
        self._connection: tuple[str | None, str | None] = (None, None)
        self._reader: IndexStore | None = None
        self._lock = threading.Lock()
        self._searches = 0

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] | None = None,
        create: bool = True,
        backend: EmbeddingBackend | None = None,
        one_shot: bool = False,
    ) -> Index:
        """Open the index at ``path`` (default: ``$INDEX_DB`` or ``index.db``).

        ``backend`` embeds queries (and builds, unless one is passed there); None means the backend
        recorded in the index. With ``create`` (the default) a missing index is created and an older
        one migrated; with ``create=False`` nothing is ever created or written, and a missing index
        raises :class:`indexer.errors.IndexNotFoundError`. A database that is not an index is
        refused (:class:`ConfigError`) and left unchanged. ``one_shot`` says this process asks a
        question or two (a one-off ``index query``): the recorded backend then starts faster.
        """
        index = cls(os.fspath(path) if path is not None else default_index_path(), backend, one_shot)
        try:
            index._reader = open_store(index.location, writable=False)
        except (IndexNotFoundError, IndexOutdatedError):
            if not create:
                raise
            open_store(index.location, writable=True, create=True).close()
            index._reader = open_store(index.location, writable=False)
        return index

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()
            self._backend = None
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def store(self) -> IndexStore:
        """The index opened for reading (on first use): it never creates or writes anything."""
        with self._lock:
            if self._reader is None:
                self._reader = open_store(self.location, writable=False)
            return self._reader

    # -- building ---------------------------------------------------------------------------------

    def build(
        self,
        folder: str | os.PathLike[str],
        *,
        backend: EmbeddingBackend | None = None,
        rebuild: bool = False,
        batch_size: int = 32,
        concurrency: int | None = None,
        chunk_tokens: int | None = None,
        wait: float = 0,
        progress: bool = False,
        warn: Callable[[str], None] | None = None,
    ) -> BuildReport:
        """Index ``folder``: new and changed files are embedded, deleted ones removed.

        Args:
            folder: the root to index; paths are stored relative to it.
            backend: the embedding backend; None means the one this index was built with, or the
                embedded default model for a new index.
            rebuild: build a fresh index when the settings differ from the index's, and swap it in
                at the end (queries keep answering from the old one meanwhile).
            batch_size, concurrency, chunk_tokens, wait, progress, warn: see
                :class:`indexer.pipeline.BuildOptions`.
        Returns:
            a :class:`BuildReport`; ``report.exit_code`` is non-zero when any file failed.
        Raises:
            IndexLockedError: another build holds the index.
            ConfigError: bad options, or settings that differ from the index's without ``rebuild``.
            StorageError: the index's disk or file failed; it keeps what it had before.
        """
        from indexer.pipeline import BuildOptions  # the build machinery is not paid for by a query

        options = BuildOptions(
            batch_size=batch_size,
            concurrency=concurrency,
            chunk_tokens=chunk_tokens,
            wait=wait,
            progress=progress,
            **({"warn": warn} if warn is not None else {}),
        )
        root = Path(folder)
        if not root.is_dir():
            raise ConfigError(f"folder {folder} does not exist or is not a folder")
        explicit = backend is not None or self._given_backend is not None
        with open_store(self.location, writable=True, create=True) as store:
            backend = (
                backend or self._backend or _recorded_backend(store) or make_backend({"backend": "embedded"})
            )
            with store.writer_lock(str(root.resolve())) as lock:
                lock.acquire(options.wait)
                store.mark_interrupted_builds()
                store.discard_scratch()  # what a killed rebuild left
                report = self._build_locked(store, root, backend, options, rebuild)
                recorded = store.get_meta("fingerprint")
        self._use_backend(backend, recorded, explicit)
        return report

    def _build_locked(
        self, store: IndexStore, root: Path, backend: EmbeddingBackend, options: BuildOptions, rebuild: bool
    ) -> BuildReport:
        """The build itself, with the writer lock held: compare settings, then build or rebuild."""
        chunk_settings = _chunk_settings(backend, options.chunk_tokens)
        fingerprint = build_fingerprint(backend, chunk_settings)
        recorded = store.get_json("fingerprint")
        differences = settings_differences(recorded, fingerprint)
        # only the chunker changed: re-chunk every file; texts that did not change keep their vectors
        reread = bool(differences) and all(change.startswith("chunking.version") for change in differences)
        if differences and not reread:
            if not rebuild:
                raise ConfigError(settings_differ_message(differences))
            return self._rebuild(store, root, backend, chunk_settings, fingerprint, options)
        settings = settings_meta(backend, fingerprint) if recorded is None else None
        try:
            report = _run_build(store, root, backend, chunk_settings, options, settings, reread)
        except SettingsChangedError as error:
            if not rebuild:
                raise ConfigError(settings_differ_message([error.difference])) from error
            return self._rebuild(store, root, backend, chunk_settings, fingerprint, options)
        changed_address = store.get_json("backend") != backend.config()
        if recorded is not None and report.stopped is None and (changed_address or (reread and report.ok)):
            # same vectors, another address or timeout (or a re-chunked index): queries follow
            with store.transaction():
                store.set_meta(settings_meta(backend, fingerprint))
        return report

    def _rebuild(
        self,
        store: IndexStore,
        root: Path,
        backend: EmbeddingBackend,
        chunk_settings: ChunkSettings,
        fingerprint: dict[str, Any],
        options: BuildOptions,
    ) -> BuildReport:
        """Build every root of this index afresh beside it, then copy the result over it in one step.

        The old index stays in place (and keeps answering queries) until the new one is complete;
        a rebuild in which any file failed is not swapped in, so nothing is lost.
        """
        root_key = str(root.resolve())
        roots = [Path(r) for r in store.roots() if Path(r).is_dir() and r != root_key]
        with store.open_scratch() as scratch:
            for each_root in [*roots, root]:
                settings = (
                    settings_meta(backend, fingerprint) if scratch.get_meta("fingerprint") is None else None
                )
                report = _run_build(scratch, each_root, backend, chunk_settings, options, settings, False)
                if not report.ok:
                    break
            if report.ok:
                store.replace_with(scratch)
        store.discard_scratch()
        if report.ok:
            return report
        message = "rebuild not swapped in: the index keeps its previous version"
        options.warn(message)
        return dataclasses.replace(report, warnings=[*report.warnings, message])

    # -- searching --------------------------------------------------------------------------------

    def connect(self, base_url: str | None = None, api_key: str | None = None) -> None:
        """Reach the index's recorded backend at another address, or with an API key (never stored).

        The model and prefixes stay the recorded ones, so queries still match the stored vectors.
        """
        if self.store.get_json("backend") is None:
            raise ConfigError(f"index {self.location} has no recorded backend yet: build it first")
        with self._lock:
            self._connection = (base_url, api_key)
            self._given_backend = None
            self._drop_backend()

    @property
    def backend(self) -> EmbeddingBackend | None:
        """The backend that embeds this index's questions (made on first use from the index's
        record), or None for an index that has none yet."""
        return self._query_backend(self.store)

    def _query_backend(self, store: IndexStore) -> EmbeddingBackend | None:
        """The backend matching the settings the index holds now; made again from the record when
        another process rebuilt the index with other settings since."""
        recorded = store.get_meta("fingerprint")
        with self._lock:
            if self._backend is not None and recorded == self._backend_settings:
                return self._backend
            if self._given_backend is not None:
                _check_matches(self._given_backend, recorded, self.location)
                self._backend, self._backend_settings = self._given_backend, recorded
                return self._backend
            self._drop_backend()
            config = store.get_json("backend")
            if config is not None:
                self._backend = make_backend(with_connection(config, *self._connection), self._one_shot)
                self._backend_settings = recorded
            return self._backend

    def _use_backend(self, backend: EmbeddingBackend, recorded: str | None, explicit: bool) -> None:
        """After a build: its backend embeds the questions, as long as the index keeps the settings
        it had after the build (``recorded``); a backend the caller chose stays the caller's."""
        with self._lock:
            if backend is not self._backend:
                self._drop_backend()
                self._backend = backend
            self._backend_settings = recorded
            if explicit:
                self._given_backend = backend

    def _drop_backend(self) -> None:
        if self._backend is not None and self._backend is not self._given_backend:
            self._backend.close()
        self._backend = None
        self._backend_settings = None

    def search(
        self,
        text: str,
        k: int = 5,
        mode: str = "hybrid",
        paths: Sequence[str] | str = (),
        types: Sequence[str] | str = (),
        min_score: float | None = None,
    ) -> list[Hit]:
        """The ``k`` chunks that best match ``text``, best first.

        Args:
            text: the question.
            k: how many hits at most (1 to :data:`indexer.search.MAX_K`).
            mode: "hybrid" (vector and keyword lists fused), "vector" or "keyword".
            paths: glob patterns (or one) on the path relative to its root (``*`` also crosses folders).
            types: file extensions (or one) to keep, e.g. ``["md", "txt"]``.
            min_score: drop hits whose score (in the mode's own scale) is lower.
        """
        if mode not in MODES:
            raise ConfigError(f"unknown search mode {mode!r} (choose one of: {', '.join(MODES)})")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise ConfigError(f"k must be a whole number from 1 to {MAX_K}, not {k!r}")
        chunk_filter = ChunkFilter(_as_tuple(paths, "paths"), _as_tuple(types, "types"))
        store = self.store
        self._searches += 1
        if self._searches == 2:
            # A process that searches again will likely go on: from now on, search in memory
            store.expect_many_searches()
        with store.snapshot():
            if store.is_empty():
                return []
            backend = self._query_backend(store) if mode != "keyword" else None
            return search(store, backend, text, k, mode, chunk_filter, min_score)

    # -- status -----------------------------------------------------------------------------------

    def status(self, builds: int = 5) -> dict[str, Any]:
        """Files, chunks, model, dimension, fingerprint and the last builds, as a JSON-safe dict."""
        store = self.store
        with store.snapshot():
            fingerprint = store.get_json("fingerprint")
            return {
                "index": store.path if is_postgres_url(self.location) else os.path.abspath(self.location),
                **store.counts(),
                "roots": store.roots(),
                "backend": store.get_json("backend"),
                "model": store.get_meta("model"),
                "dimension": store.dimension,
                "fingerprint": fingerprint_id(fingerprint) if fingerprint else None,
                "settings": fingerprint,
                "migrations": store.applied_migrations(),
                "builds": store.recent_builds(builds),
            }


def _run_build(
    store: IndexStore,
    root: Path,
    backend: EmbeddingBackend,
    chunk_settings: ChunkSettings,
    options: BuildOptions,
    settings: dict[str, str] | None,
    reread: bool,
) -> BuildReport:
    from indexer.pipeline import Build

    return Build(store, root, backend, chunk_settings, options, settings=settings, reread=reread).run()


def _recorded_backend(store: IndexStore) -> EmbeddingBackend | None:
    config = store.get_json("backend")
    return make_backend(config) if config is not None else None


def _check_matches(backend: EmbeddingBackend, recorded: str | None, location: str) -> None:
    """Raise unless ``backend`` embeds questions as the index's recorded settings say."""
    if recorded is None:
        return
    settings = json.loads(recorded)
    ours = {"embedding": backend.describe(), "query_prefix": backend.query_prefix}
    ours["document_prefix"] = backend.document_prefix
    wanted = {key: settings.get(key) for key in QUERY_SETTINGS}
    if ours != wanted:
        raise ConfigError(
            f"index {location} holds vectors made with other settings than this backend's "
            f"(the index's -> this backend's: {describe_difference(wanted, ours)}): it was built or "
            "rebuilt with another model; open it without a backend to use its own"
        )


def _as_tuple(values: Sequence[str] | str, name: str) -> tuple[str, ...]:
    """One pattern or a sequence of them (a lone string is one pattern, not its characters)."""
    if isinstance(values, str):
        return (values,) if values else ()
    if not all(isinstance(value, str) for value in values):
        raise ConfigError(f"{name} must be a string or a sequence of strings, not {values!r}")
    return tuple(values)


def _chunk_settings(backend: EmbeddingBackend, chunk_tokens: int | None) -> ChunkSettings:
    from indexer.chunking import ChunkSettings

    limit = backend.max_tokens if chunk_tokens is None else min(backend.max_tokens, chunk_tokens)
    return ChunkSettings.for_limit(limit)


def build_fingerprint(backend: EmbeddingBackend, settings: ChunkSettings) -> dict[str, Any]:
    """Everything that changes a stored vector: the one place that decides whether two builds match.
    (The dimension, which some backends learn only from their first answer, is compared apart.)"""
    return {
        "embedding": backend.describe(),
        "document_prefix": backend.document_prefix,
        "query_prefix": backend.query_prefix,
        "chunking": settings.describe(),
    }


def settings_meta(backend: EmbeddingBackend, fingerprint: dict[str, Any]) -> dict[str, str]:
    """What an index records of the settings that built it."""
    return {
        "backend": json.dumps(backend.config(), sort_keys=True),
        "model": backend.model_name,
        "fingerprint": json.dumps(fingerprint, sort_keys=True),
    }


def settings_differences(recorded: dict[str, Any] | None, fingerprint: dict[str, Any]) -> list[str]:
    """``a.b: x -> y`` for each setting that differs from the index's, the backend and model first
    (they usually explain the rest). The dimension is compared when the first batch comes back."""
    if recorded is None:
        return []
    changes = _differences(recorded, fingerprint)
    changes.sort(key=lambda change: (not change.startswith(("embedding.backend", "embedding.model")), change))
    return changes


def settings_differ_message(differences: list[str]) -> str:
    return (
        f"this build's settings differ from the index's: {_joined(differences)}; "
        "rebuild the index with them (--rebuild)"
    )


def describe_difference(old: dict[str, Any], new: dict[str, Any]) -> str:
    """The settings that differ between two fingerprints, on one line."""
    return _joined(settings_differences(old, new))


def _joined(changes: list[str], shown: int = 4) -> str:
    more = f" (+{len(changes) - shown} more)" if len(changes) > shown else ""
    return ", ".join(changes[:shown]) + more


def fingerprint_id(fingerprint: dict[str, Any]) -> str:
    """A short stable name for a fingerprint, shown by `index status`."""
    return hashlib.sha256(json.dumps(fingerprint, sort_keys=True).encode()).hexdigest()[:16]


def _differences(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    changes = []
    for key in sorted(set(old) | set(new)):
        before, after = old.get(key), new.get(key)
        if isinstance(before, dict) and isinstance(after, dict):
            changes.extend(_differences(before, after, f"{prefix}{key}."))
        elif before != after:
            changes.append(f"{prefix}{key}: {before!r} -> {after!r}")
    return changes
