"""An index's settings: what built it (the fingerprint of everything that changes a vector), and
whether a build or a backend matches them. The one place that decides; light enough for a query."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from indexer.backends.base import EmbeddingBackend
from indexer.errors import ConfigError

if TYPE_CHECKING:
    from indexer.chunking import ChunkSettings

#: The settings keys that decide how a question must be embedded to match the stored vectors.
QUERY_SETTINGS = ("embedding", "query_prefix", "document_prefix")
#: The meta key of the build options an index records for later builds (``chunk_tokens``).
BUILD_OPTIONS_KEY = "build_options"


def walk_rules_key(root: str) -> str:
    """The meta key of the walk rules recorded for one root (each root of an index has its own:
    patterns are relative to it, and builders of different roots never write the same key)."""
    return f"walk_rules:{root}"


def build_fingerprint(backend: EmbeddingBackend, chunking: ChunkSettings) -> dict[str, Any]:
    """Everything that changes a stored vector: the one place that decides whether two builds match.
    (The dimension, which some backends learn only from their first answer, is compared apart.)"""
    return {
        "embedding": backend.describe(),
        "document_prefix": backend.document_prefix,
        "query_prefix": backend.query_prefix,
        "chunking": chunking.describe(),
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


def given_differences(recorded: dict[str, Any], given: dict[str, Any], prefix: str) -> list[str]:
    """``prefix + name: x -> y`` for each setting ``given`` explicitly that differs from the record."""
    return _differences({name: recorded.get(name) for name in given}, given, prefix)


def only_chunker_changed(differences: list[str]) -> bool:
    """The chunker's version, or the redaction rules', alone changed: files are read and cut anew,
    and unchanged texts keep their vectors."""
    versions = ("chunking.version", "chunking.redaction")
    return bool(differences) and all(change.startswith(versions) for change in differences)


def chunker_changed_message(differences: list[str]) -> str:
    """Why a build reads every file again once, although none changed: the chunker did (or the
    redaction rules, which decide the chunks' text: ``chunking.redaction``)."""
    return (
        f"the chunker changed ({_joined(differences)}): every file is read and cut again once; "
        "chunks whose text did not change keep their vectors"
    )


def settings_differ_message(differences: list[str]) -> str:
    return (
        f"this build's settings differ from the index's: {_joined(differences)}; "
        "rebuild the index with them (--rebuild)"
    )


def check_backend_matches(backend: EmbeddingBackend, recorded: str | None, location: str) -> None:
    """Raise unless ``backend`` embeds questions as the index's recorded settings (JSON) say."""
    if recorded is None:
        return
    settings = json.loads(recorded)
    ours = {
        "embedding": backend.describe(),
        "query_prefix": backend.query_prefix,
        "document_prefix": backend.document_prefix,
    }
    wanted = {key: settings.get(key) for key in QUERY_SETTINGS}
    if ours != wanted:
        raise ConfigError(
            f"index {location} holds vectors made with other settings than this backend's "
            f"(the index's -> this backend's: {describe_difference(wanted, ours)}): it was built or "
            "rebuilt with another model; open it without a backend to use its own"
        )


def describe_difference(old: dict[str, Any], new: dict[str, Any]) -> str:
    """The settings that differ between two fingerprints, on one line."""
    return _joined(settings_differences(old, new))


def fingerprint_id(fingerprint: dict[str, Any]) -> str:
    """A short stable name for a fingerprint, shown by `index status`."""
    return hashlib.sha256(json.dumps(fingerprint, sort_keys=True).encode()).hexdigest()[:16]


def _joined(changes: list[str], shown: int = 4) -> str:
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
