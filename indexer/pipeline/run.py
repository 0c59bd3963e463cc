"""What ``Index.build`` does with the writer lock held: compare this build's settings with the
index's, then build the root, or rebuild the whole index beside it and swap it in."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from indexer.backends.base import EmbeddingBackend
from indexer.chunking import ChunkSettings
from indexer.errors import ConfigError, SettingsChangedError
from indexer.pipeline.build import Build
from indexer.pipeline.options import BuildOptions
from indexer.pipeline.report import BuildReport
from indexer.settings import (
    build_fingerprint,
    only_chunker_changed,
    settings_differ_message,
    settings_differences,
    settings_meta,
)
from indexer.store.contract import IndexStore


def build_root(
    store: IndexStore, root: Path, backend: EmbeddingBackend, options: BuildOptions, rebuild: bool
) -> BuildReport:
    """Build ``root`` into ``store`` (whose writer lock the caller holds).

    Settings that differ from the index's are an error, unless ``rebuild``; a chunker that changed
    alone re-cuts every file of the root (texts that did not change keep their vectors). A new
    index records its settings, and its dimension, with its first commit.
    """
    chunking = chunk_settings(backend, options.chunk_tokens)
    fingerprint = build_fingerprint(backend, chunking)
    recorded = store.get_json("fingerprint")
    differences = settings_differences(recorded, fingerprint)
    reread = only_chunker_changed(differences)
    if differences and not reread:
        if not rebuild:
            raise ConfigError(settings_differ_message(differences))
        return rebuild_index(store, root, backend, chunking, options)
    settings = settings_meta(backend, fingerprint) if recorded is None else None
    try:
        report = Build(store, root, backend, chunking, options, settings=settings, reread=reread).run()
    except SettingsChangedError as error:
        if not rebuild:
            raise ConfigError(settings_differ_message([error.difference])) from error
        return rebuild_index(store, root, backend, chunking, options)
    moved = store.get_json("backend") != backend.config()
    if recorded is not None and report.stopped is None and (moved or (reread and report.ok)):
        # same vectors, another address or timeout (or the index re-cut): queries follow
        with store.transaction():
            store.set_meta(settings_meta(backend, fingerprint))
    return report


def rebuild_index(
    store: IndexStore, root: Path, backend: EmbeddingBackend, chunking: ChunkSettings, options: BuildOptions
) -> BuildReport:
    """Build every root of the index afresh beside it, then copy the result over it in one step.

    The old index stays in place (and keeps answering queries) until the new one is complete; a
    rebuild in which any file failed is not swapped in, so nothing is lost.
    """
    meta = settings_meta(backend, build_fingerprint(backend, chunking))
    root_key = str(root.resolve())
    roots = [Path(other) for other in store.roots() if Path(other).is_dir() and other != root_key]
    with store.open_scratch() as scratch:
        for each_root in [*roots, root]:
            settings = meta if scratch.get_meta("fingerprint") is None else None
            report = Build(scratch, each_root, backend, chunking, options, settings=settings).run()
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


def chunk_settings(backend: EmbeddingBackend, chunk_tokens: int | None) -> ChunkSettings:
    """The chunker's limits: the model's input limit, or a smaller one the build asks for."""
    limit = backend.max_tokens if chunk_tokens is None else min(backend.max_tokens, chunk_tokens)
    return ChunkSettings.for_limit(limit)
