"""What ``Index.build`` does with the writer lock held: compare this build's settings with the
index's, then build the root, or rebuild the whole index beside it and swap it in."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from indexer.backends.base import EmbeddingBackend
from indexer.chunking import ChunkSettings
from indexer.errors import ConfigError, SettingsChangedError
from indexer.fingerprint import (
    BUILD_OPTIONS_KEY,
    build_fingerprint,
    chunker_changed_message,
    given_differences,
    only_chunker_changed,
    settings_differ_message,
    settings_differences,
    settings_meta,
    walk_rules_key,
)
from indexer.ignore import WalkRules
from indexer.pipeline.build import Build
from indexer.pipeline.options import BuildOptions
from indexer.pipeline.report import BuildReport, Notice
from indexer.store.contract import IndexStore
from indexer.store.records import files_indexed

#: The walk rules a build may give (the fields of :class:`WalkRules`, by the same names in options).
WALK_SETTINGS = ("ignore_files", "include", "exclude", "allow_secrets", "max_file_size")


def build_root(
    store: IndexStore, root: Path, backend: EmbeddingBackend, options: BuildOptions, rebuild: bool
) -> BuildReport:
    """Build ``root`` into ``store`` (whose writer lock the caller holds).

    Settings not given are the index's recorded ones (chunk_tokens), and the root's (walk rules).
    Settings that differ from the index's are an error, unless ``rebuild``; a chunker that changed
    alone re-cuts every file of the root (texts that did not change keep their vectors), and walk
    rules that changed alone are applied in place (files now left out are removed, others added). A
    new index records its settings, and its dimension, with its first commit.
    """
    root_key = str(root.resolve())
    chunk_tokens = options.chunk_tokens
    if chunk_tokens is None:
        chunk_tokens = (store.get_json(BUILD_OPTIONS_KEY) or {}).get("chunk_tokens")
    rules, walk_changes = walk_rules(store, root_key, options)
    chunking = chunk_settings(backend, chunk_tokens)
    fingerprint = build_fingerprint(backend, chunking)
    recorded = store.get_json("fingerprint")
    differences = settings_differences(recorded, fingerprint)
    reread = only_chunker_changed(differences)
    blocking = ([] if reread else differences) + walk_changes
    if blocking and not rebuild:
        raise ConfigError(settings_differ_message(blocking))
    recipe = Recipe(chunking, chunk_tokens, rules)
    if reread:
        options.warn(chunker_changed_message(differences))
    if differences and not reread:
        return rebuild_index(store, root, backend, options, recipe)
    settings = settings_meta(backend, fingerprint) if recorded is None else None
    try:
        report = Build(store, root, backend, chunking, options, rules, settings=settings, reread=reread).run()
    except SettingsChangedError as error:
        if not rebuild:
            raise ConfigError(settings_differ_message([error.difference])) from error
        return rebuild_index(store, root, backend, options, recipe)
    record_build_settings(store, root_key, recipe)
    moved = store.get_json("backend") != backend.config()
    if recorded is not None and report.stopped is None and (moved or (reread and report.ok)):
        # same vectors, another address or timeout (or the index re-cut): queries follow
        with store.transaction():
            store.set_meta(settings_meta(backend, fingerprint))
    return report


@dataclass(frozen=True)
class Recipe:
    """What a build of one root makes of its settings: the chunker's limits, the chunk_tokens that
    set them (None: the model's limit), and the walk rules."""

    chunking: ChunkSettings
    chunk_tokens: int | None
    rules: WalkRules


def walk_rules(store: IndexStore, root_key: str, options: BuildOptions) -> tuple[WalkRules, list[str]]:
    """The walk rules of this build: those ``options`` give, the root's recorded ones for the rest
    (the defaults for a root without a record); and the given ones that differ from the record. A
    root the index holds no file of (never built, or removed) starts afresh: its record is not used."""
    recorded = store.get_json(walk_rules_key(root_key)) if root_key in store.roots() else None
    base = WalkRules.from_record(recorded or {})
    given = {name: getattr(options, name) for name in WALK_SETTINGS if getattr(options, name) is not None}
    rules = dataclasses.replace(base, **given)
    if recorded is None:
        return rules, []
    described = rules.describe()
    return rules, given_differences(base.describe(), {name: described[name] for name in given}, "walk.")


def recorded_walk_rules(store: IndexStore, root_key: str) -> WalkRules:
    """The walk rules recorded for a root (the defaults for a root without a record)."""
    return WalkRules.from_record(store.get_json(walk_rules_key(root_key)) or {})


def record_build_settings(store: IndexStore, root_key: str, recipe: Recipe) -> None:
    """Record the settings a build of ``root_key`` used, for later builds and ``index watch``."""
    wanted = {
        BUILD_OPTIONS_KEY: json.dumps({"chunk_tokens": recipe.chunk_tokens}, sort_keys=True),
        walk_rules_key(root_key): json.dumps(recipe.rules.describe(), sort_keys=True),
    }
    if any(store.get_meta(key) != value for key, value in wanted.items()):
        with store.transaction():
            store.set_meta(wanted)


def rebuild_index(
    store: IndexStore, root: Path, backend: EmbeddingBackend, options: BuildOptions, recipe: Recipe
) -> BuildReport:
    """Build every root of the index afresh beside it, then copy the result over it in one step.

    Each other root is walked with its own recorded rules. The old index stays in place (and keeps
    answering queries) until the new one is complete; a rebuild in which any file failed is not
    swapped in, so nothing is lost. A root that is missing or has no files any more (unmounted,
    moved, emptied) is refused as a plain build refuses it, unless ``allow_empty``: a rebuild
    would otherwise drop it without a word.
    """
    meta = settings_meta(backend, build_fingerprint(backend, recipe.chunking))
    root_key = str(root.resolve())
    held = {other: files_indexed(store.file_states(other)) for other in store.roots()}
    roots = [
        Path(other) for other in held if other != root_key and kept_root(Path(other), held[other], options)
    ]
    try:
        with store.open_scratch() as scratch:
            for each_root in [*roots, root]:
                rules = recipe.rules if each_root is root else recorded_walk_rules(store, str(each_root))
                each = dataclasses.replace(recipe, rules=rules)
                settings = meta if scratch.get_meta("fingerprint") is None else None
                report = Build(
                    scratch,
                    each_root,
                    backend,
                    each.chunking,
                    options,
                    each.rules,
                    settings=settings,
                    files_held=held.get(str(each_root.resolve()), 0),
                ).run()
                if not report.ok:
                    break
                record_build_settings(scratch, str(each_root.resolve()), each)
            if report.ok:
                store.replace_with(scratch)
    finally:
        store.discard_scratch()
    if report.ok:
        return report
    message = Notice("rebuild not swapped in: the index keeps its previous version")
    options.warn(message)
    return dataclasses.replace(report, warnings=[*report.warnings, message])


def kept_root(root: Path, files_held: int, options: BuildOptions) -> bool:
    """Whether a rebuild builds this other root of the index again: yes when it is a folder; a missing
    one is dropped only when ``allow_empty`` says so, else the rebuild is refused."""
    if root.is_dir():
        return True
    if options.allow_empty:
        return False
    raise ConfigError(
        f"folder {root} is missing, but the index holds {files_held} files from it: the rebuild changes "
        f"nothing (is it unmounted, or moved?); rebuild with {options.option_name('allow_empty')} to drop it"
    )


def chunk_settings(backend: EmbeddingBackend, chunk_tokens: int | None) -> ChunkSettings:
    """The chunker's limits: the model's input limit, or a smaller one the build asks for."""
    limit = backend.max_tokens if chunk_tokens is None else min(backend.max_tokens, chunk_tokens)
    return ChunkSettings.for_limit(limit)
