"""The public Python API: open an index, build it from a folder, search it. The CLI is a thin shell
over this module."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from indexer.backends import default_backend, make_backend, with_connection
from indexer.backends.base import EmbeddingBackend
from indexer.errors import (
    ConfigError,
    IndexNotFoundError,
    IndexOutdatedError,
    NotInIndexError,
)
from indexer.fingerprint import (
    BUILD_OPTIONS_KEY,
    check_backend_matches,
    fingerprint_id,
    walk_rules_key,
)
from indexer.formats import file_type, type_globs
from indexer.progress import Progress
from indexer.request import SearchRequest, as_tuple, refuse_nul
from indexer.search.calibration import calibration_for, default_min_score
from indexer.search.hit import Hit
from indexer.search.run import search
from indexer.store import IndexStore, is_postgres_url, open_store
from indexer.store.records import ChunkFilter

if TYPE_CHECKING:
    from indexer.backends.reranker import Reranker
    from indexer.passages import Passage
    from indexer.pipeline import BuildReport
    from indexer.records import StoredChunk

DEFAULT_INDEX = "index.db"


def default_index_path() -> str:
    """``$INDEX_DB`` when set, else ``index.db`` in the current folder."""
    return os.environ.get("INDEX_DB") or DEFAULT_INDEX


class QueryBackend:
    """The backend that embeds an index's questions, kept in step with the settings the index holds.

    A backend the caller gave is checked against the index's settings and refused, rather than mix
    models, when they differ; otherwise the backend is made from the index's record, and made again
    when another process rebuilds the index with other settings. Safe to share between threads.
    """

    def __init__(self, location: str, given: EmbeddingBackend | None, one_shot: bool) -> None:
        self.location = location
        self.given = given
        self.one_shot = one_shot
        self.connection: tuple[str | Sequence[str] | None, str | None] = (None, None)
        self._backend = given
        self._settings: str | None = None  # the recorded settings it was checked against
        self._lock = threading.Lock()

    def for_index(self, store: IndexStore) -> EmbeddingBackend | None:
        """The backend for the settings ``store`` holds now (None for an index with none yet)."""
        recorded = store.get_meta("fingerprint")
        with self._lock:
            if self._backend is not None and recorded == self._settings:
                return self._backend
            if self.given is not None:
                check_backend_matches(self.given, recorded, self.location)
                self._backend, self._settings = self.given, recorded
                return self._backend
            self._drop()
            config = store.get_json("backend")
            if config is not None:
                self._backend = make_backend(with_connection(config, *self.connection), self.one_shot)
                self._settings = recorded
            return self._backend

    def for_build(self, store: IndexStore) -> EmbeddingBackend:
        """The backend a build uses when it is given none: this one, else the index's, else the default."""
        with self._lock:
            backend = self._backend
        config = store.get_json("backend")
        if backend is None and config is not None:
            backend = make_backend(config)
        return backend or default_backend()

    def built_with(self, backend: EmbeddingBackend, recorded: str | None, chosen: bool) -> None:
        """After a build: its backend embeds the questions while the index keeps the settings it had
        after the build (``recorded``); a backend the caller ``chosen`` stays the caller's."""
        with self._lock:
            if backend is not self._backend:
                self._drop()
                self._backend = backend
            self._settings = recorded
            if chosen:
                self.given = backend

    def reach(self, base_url: str | Sequence[str] | None, api_key: str | None) -> None:
        """Use the recorded backend at another address or with a key (see :meth:`Index.connect`)."""
        with self._lock:
            self.connection = (base_url, api_key)
            self.given = None
            self._drop()

    def close(self) -> None:
        with self._lock:
            if self._backend is not None:
                self._backend.close()
            self._backend = self.given = None

    def _drop(self) -> None:
        if self._backend is not None and self._backend is not self.given:
            self._backend.close()
        self._backend = None
        self._settings = None


class Index:
    """An index. Open with :meth:`open`; use as a context manager to close it.

    One ``Index`` may be shared by threads (a web server's): each thread searches on its own
    connection. Searches and ``status`` read through a read-only handle; ``build`` opens the index
    for writing. A long-lived ``Index`` follows the index it reads: when another process rebuilds it
    with other settings, the next search embeds with the new model (or, for a backend you passed,
    raises :class:`ConfigError` rather than mix models). It is the whole public surface a program
    uses (open, build, search, get, status, remove a root), which is why it is this long; each method
    hands its work to the stage that does it.

    >>> with Index.open("index.db") as index:          # doctest: +SKIP
    ...     index.build("docs")
    ...     hits = index.search("how do I rotate keys", k=3)
    """

    def __init__(
        self, location: str, backend: EmbeddingBackend | None = None, one_shot: bool = False
    ) -> None:
        self.location = location
        self._query_backend = QueryBackend(location, backend, one_shot)
        self._reader: IndexStore | None = None
        self._searches = 0
        self._one_shot = one_shot
        self._reranker: Reranker | None = None
        self._reranker_lock = threading.Lock()

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
        self._query_backend.close()
        with self._reranker_lock:
            if self._reranker is not None:
                self._reranker.close()
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def store(self) -> IndexStore:
        """The index opened for reading: it never creates or writes anything."""
        if self._reader is None:
            raise ConfigError(f"index {self.location} is closed")
        return self._reader

    # -- building ---------------------------------------------------------------------------------

    def build(
        self,
        folder: str | os.PathLike[str],
        *,
        backend: EmbeddingBackend | None = None,
        rebuild: bool = False,
        progress: bool | Progress = False,
        **settings: Any,
    ) -> BuildReport:
        """Index ``folder``: new and changed files are embedded, deleted ones removed.

        Args:
            folder: the root to index; paths are stored relative to it.
            backend: the embedding backend; None means the one this index was built with, or the
                embedded default model for a new index.
            rebuild: build a fresh index when the settings differ from the index's, and swap it in
                at the end (queries keep answering from the old one meanwhile).
            progress: True for a bar on a terminal (else a line every 30 s), or a
                :class:`indexer.progress.Progress` of your own.
            settings: fields of :class:`indexer.pipeline.BuildOptions` by name (``batch_size``,
                ``concurrency``, ``workers``, ``chunk_tokens``, ``ignore_files``, ``include``,
                ``exclude``, ``allow_secrets``, ``max_file_size``, ``allow_empty``, ``wait``,
                ``commit_seconds``, ``warn``, ``option_name``), which says what each does and
                holds its default; None for a field whose default is not None means that
                default. chunk_tokens and the walk's settings are recorded: None re-uses what the
                index holds for them. ``workers`` (processes that read and chunk files beside this
                one) is 0 unless given here: a worker process imports the script that started it
                again, so a script asking for workers runs its build under
                ``if __name__ == "__main__":`` (None: as :class:`BuildOptions` decides, as
                ``index build`` does).
        Returns:
            a :class:`BuildReport`; ``report.exit_code`` is non-zero when any file failed.
        Raises:
            IndexLockedError: another build holds the index.
            ConfigError: unknown or bad options, settings that differ from the index's without ``rebuild``, or
                a folder with no files at all where the index holds some (unless ``allow_empty``).
            StorageError: the index's disk or file failed; it keeps what it had before.
        """
        # the build machinery is imported here: a query does not pay for it
        from indexer.pipeline.options import build_options
        from indexer.pipeline.run import build_root

        settings.setdefault("workers", 0)
        options = build_options(**settings, progress=Progress() if progress is True else (progress or None))
        root = Path(folder)
        if not root.is_dir():
            raise ConfigError(f"folder {folder} does not exist or is not a folder")
        chosen = backend is not None or self._query_backend.given is not None
        with open_store(self.location, writable=True, create=True) as store:
            backend = backend or self._query_backend.for_build(store)
            with store.writer_lock(str(root.resolve())) as lock:
                lock.acquire(options.wait)
                store.mark_interrupted_builds()
                store.discard_scratch()  # what a killed rebuild left
                report = build_root(store, root, backend, options, rebuild)
                recorded = store.get_meta("fingerprint")
        self._query_backend.built_with(backend, recorded, chosen)
        return report

    def remove_root(self, root: str | os.PathLike[str], wait: float = 0) -> int:
        """Drop a folder this index holds (as given to ``build``), with its files, chunks, vectors and
        keyword entries, in one transaction under the writer lock; returns how many indexed files it
        held. Raises :class:`ConfigError` when the index holds no such folder."""
        with open_store(self.location, writable=True) as store:
            held = store.roots()
            key = next((candidate for candidate in _root_keys(root) if candidate in held), None)
            if key is None:
                known = ", ".join(held) or "none"
                raise ConfigError(
                    f"index {self.location} holds no folder {os.fspath(root)} (its folders: {known})"
                )
            with store.writer_lock(key) as lock:
                lock.acquire(wait)
                with store.transaction():
                    return store.remove_root(key)

    # -- searching --------------------------------------------------------------------------------

    def connect(self, base_url: str | Sequence[str] | None = None, api_key: str | None = None) -> None:
        """Reach the index's recorded backend at another address (or a list of servers of its model, the
        first that answers embedding each question), or with an API key (never stored).

        The model and prefixes stay the recorded ones, so queries still match the stored vectors.
        """
        if self.store.get_json("backend") is None:
            raise ConfigError(f"index {self.location} has no recorded backend yet: build it first")
        self._query_backend.reach(base_url, api_key)

    @property
    def backend(self) -> EmbeddingBackend | None:
        """The backend that embeds this index's questions (made on first use from the index's
        record), or None for an index that has none yet."""
        return self._query_backend.for_index(self.store)

    def search(
        self,
        request: SearchRequest | str,
        /,
        k: int = SearchRequest.k,
        mode: str = SearchRequest.mode,
        paths: Sequence[str] | str = SearchRequest.paths,
        types: Sequence[str] | str = SearchRequest.types,
        min_score: float | None = SearchRequest.min_score,
        roots: Sequence[str | os.PathLike[str]] | str | os.PathLike[str] = SearchRequest.roots,
        rerank: bool = SearchRequest.rerank,
        rerank_top: int = SearchRequest.rerank_top,
    ) -> list[Hit]:
        """The chunks that best match a question, best first, scored in rank order.

        Pass a :class:`indexer.request.SearchRequest`, or the question and its fields, in its order or
        by name, with its defaults (:data:`indexer.request.HELP` says what each does).
        ``min_score=None`` (the default) applies :meth:`default_min_score`, as every front end
        does: a question the index cannot answer gets nothing rather than its least bad chunks;
        ``min_score=0`` keeps every hit.

        >>> index.search("how do I rotate keys", k=3, rerank=True)     # doctest: +SKIP
        """
        given = {
            "k": k,
            "mode": mode,
            "paths": paths,
            "types": types,
            "min_score": min_score,
            "roots": roots,
            "rerank": rerank,
            "rerank_top": rerank_top,
        }
        if isinstance(request, SearchRequest):
            if any(value != getattr(SearchRequest, name) for name, value in given.items()):
                raise ConfigError("pass a SearchRequest or the question with options, not both")
        else:
            request = SearchRequest(
                request,
                k=k,
                mode=mode,
                paths=as_tuple(paths, "paths"),
                types=as_tuple(types, "types"),
                min_score=min_score,
                roots=as_tuple(roots, "roots"),
                rerank=rerank,
                rerank_top=rerank_top,
            )
        store = self.store
        self._searches += 1
        if self._searches == 2:
            # A process that searches again will likely go on: from now on, search in memory
            store.expect_many_searches()
        with store.snapshot():
            if store.is_empty():
                return []
            if request.min_score is None:
                request = replace(request, min_score=self._default_min_score(store, request))
            kinds = tuple(glob for kind in request.types for glob in type_globs(kind))
            chunk_filter = ChunkFilter(request.paths, kinds, self._held_roots(store, request.roots))
            reread = self._rerank if request.rerank else None
            calibration = calibration_for(store.get_meta("model"))
            backend_for = partial(self._query_backend.for_index, store)
            return search(store, backend_for, request, chunk_filter, reread, calibration)

    def reranker(self) -> Reranker:
        """The cross-encoder this index's searches re-rank with, loaded on first use and kept: a
        server (one ``Index``) loads it once."""
        with self._reranker_lock:
            if self._reranker is None:
                # imported here: numpy and onnxruntime, which a search without re-ranking never needs
                from indexer.backends.reranker import Reranker

                self._reranker = Reranker(one_shot=self._one_shot)
            return self._reranker

    def _rerank(self, question: str, chunks: Sequence[StoredChunk]) -> list[float]:
        from indexer.backends.reranker import passage_text

        passages = [passage_text(chunk.heading, chunk.text) for chunk in chunks]
        return self.reranker().scores(question, passages).tolist()

    def _held_roots(self, store: IndexStore, roots: Sequence[str]) -> tuple[str, ...]:
        """The index's names of ``roots``; a folder it does not hold is an error naming those it
        does (a mistyped folder would otherwise find nothing, and say only that)."""
        if not roots:
            return ()
        held = store.roots()
        found = {root: next((key for key in _root_keys(root) if key in held), None) for root in roots}
        unknown = [root for root, key in found.items() if key is None]
        if unknown:
            raise NotInIndexError(
                f"index {store.path} holds no folder {', '.join(unknown)} "
                f"(its folders: {', '.join(held) or 'none'})"
            )
        return tuple(key for key in found.values() if key is not None)

    def default_min_score(self, mode: str = "hybrid", rerank: bool = False) -> float | None:
        """The score under which a hit is more likely noise than an answer, where this index's scores
        are calibrated: the re-ranker's threshold with ``rerank``; else
        :data:`indexer.search.calibration.DEFAULT_MIN_SCORE` in keyword mode, and in the other modes
        for a model with a calibration (:data:`indexer.search.calibration.CALIBRATIONS`); None
        otherwise."""
        return default_min_score(mode, self.store.get_meta("model"), rerank)

    def _default_min_score(self, store: IndexStore, request: SearchRequest) -> float:
        threshold = default_min_score(request.mode, store.get_meta("model"), request.rerank)
        return 0.0 if threshold is None else threshold

    def get(self, citation: str, root: str | None = None) -> Passage:
        """The text of a file as indexed, by a hit's citation: ``path:12-30`` (those lines),
        ``guide.pdf:page 3`` or ``nb.ipynb:cells 4-6`` (those parts), or ``path`` (the whole file).

        Read from the stored chunks, so it is what the searches saw, with no line repeated where
        chunks overlap. ``root`` picks the folder when the index holds the path under several.

        Raises:
            NotInIndexError: the file, or those lines or parts, are not in the index.
        """
        # imported here: a search does not pay for the format readers it names parts with
        from indexer.passages import read_passage

        refuse_nul({"the citation": [citation], "root": [root] if root is not None else []})
        store = self.store
        with store.snapshot():
            return read_passage(store, citation, root)

    # -- status -----------------------------------------------------------------------------------

    def status(self, builds: int = 5) -> dict[str, Any]:
        """Files, chunks, model, dimension, fingerprint and the last builds, as a JSON-safe dict."""
        store = self.store
        with store.snapshot():
            fingerprint = store.get_json("fingerprint")
            status: dict[str, Any] = {
                "index": store.path if is_postgres_url(self.location) else os.path.abspath(self.location),
                **store.counts(),
                "size_bytes": store.size_bytes(),
                "vector_search": store.vector_search_status(),
                "roots": store.root_counts(),
                "types": file_types(store),
                "backend": store.get_json("backend"),
                "model": store.get_meta("model"),
                "dimension": store.dimension,
                "fingerprint": fingerprint_id(fingerprint) if fingerprint else None,
                "settings": fingerprint,
                "build_options": store.get_json(BUILD_OPTIONS_KEY),
                "walk_rules": {root: store.get_json(walk_rules_key(root)) for root in store.roots()},
                "migrations": store.applied_migrations(),
                "builds": store.recent_builds(builds),
                "scores": score_status(store.get_meta("model")),
                "reranker": self.reranker().describe(),
            }
        status["builds"] = [_build_status(store, build) for build in status["builds"]]
        return status


def score_status(model: str | None) -> dict[str, Any]:
    """How this index's scores are judged: the maps fitted for its model (none: said so) and the
    threshold each mode applies by default."""
    calibration = calibration_for(model)
    thresholds = {mode: default_min_score(mode, model) for mode in ("hybrid", "vector", "keyword")}
    return {
        "calibrated": calibration is not None,
        "calibration": None if calibration is None else calibration.describe(),
        "default_min_score": {**thresholds, "rerank": default_min_score("hybrid", model, rerank=True)},
        "note": (
            f"scores calibrated for {model}"
            if calibration is not None
            else f"no calibration for {model}: vector and hybrid scores are in rank order but not "
            "calibrated, and no default threshold applies to them (re-ranked scores are)"
        ),
    }


def file_types(store: IndexStore) -> list[dict[str, Any]]:
    """The types of the indexed files (what ``types`` filters on: :func:`file_type`), most files
    first."""
    counts: dict[str, int] = {}
    for root in store.roots():
        for path, state in store.file_states(root).items():
            kind = file_type(path)
            if state.status == "indexed" and kind:
                counts[kind] = counts.get(kind, 0) + 1
    return [
        {"type": kind, "files": files}
        for kind, files in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]


def _build_status(store: IndexStore, build: dict[str, Any]) -> dict[str, Any]:
    """A build's record for people: ISO 8601 local times, its duration, and ``interrupted`` for a
    build still marked running whose process is gone (killed, or stopped by SIGTERM). A build that
    runs has lasted until now; one that ended without saying so, until it was last seen alive."""
    started, finished, seen = build["started_at"], build["finished_at"], build["seen_at"]
    outcome = build["outcome"]
    if outcome == "running" and not _still_running(store, build):
        outcome = "interrupted"
    ended = finished if finished is not None else (time.time() if outcome == "running" else seen)
    return {
        **build,
        "outcome": outcome,
        "started_at": iso_time(started),
        "finished_at": iso_time(finished) if finished is not None else None,
        "seen_at": iso_time(seen),
        "seconds": round(ended - started, 3),
    }


def _still_running(store: IndexStore, build: dict[str, Any]) -> bool:
    """The writer lock of its root is held, and (on this host) its process is alive."""
    if not store.writer_active(build["root"]):
        return False
    if build["host"] != socket.gethostname() or build["pid"] is None or os.name != "posix":
        return True  # os.kill(pid, 0) on Windows would end the process, not probe it
    try:
        os.kill(build["pid"], 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, under another user
    return True


def iso_time(seconds: float) -> str:
    """``2026-11-30T16:20:01+01:00``: local time, with its offset."""
    return datetime.fromtimestamp(seconds).astimezone().isoformat(timespec="seconds")


def _root_keys(root: str | os.PathLike[str]) -> list[str]:
    """How an index may have recorded a folder: as builds do (resolved), or as the user wrote it."""
    return [str(Path(root).resolve()), os.path.abspath(root), os.fspath(root)]
