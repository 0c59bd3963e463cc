"""The embedded model with every vector it makes kept on disk, keyed by the text it embedded.

The ranking benchmarks embed the same chunks again and again: another checkout's chunker cuts most of a
folder the same way, and a re-run embeds exactly what the last one did. On a shared 2-core machine the
model embeds a few thousand tokens a second, so each text is embedded once, whoever asks.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path

import numpy as np

from indexer import EmbeddingBackend
from indexer.backends.embedded import EmbeddedBackend

VECTOR_CACHE = Path(__file__).resolve().parent.parent / ".cache" / "real-folder" / "vectors.sqlite"


class CachedModelBackend(EmbeddingBackend):
    """The embedded model; its :meth:`describe` is the model's, so an index it builds opens with the
    plain embedded backend too. ``model``: a packaged model's name; None, the default model. The cache
    key holds the model's description, so each model's vectors are its own."""

    kind = "bench-cached-model"

    def __init__(self, cache: Path, model: str | None = None) -> None:
        self.model = EmbeddedBackend(model)
        self.model_name = self.model.model_name
        self.max_tokens = self.model.max_tokens
        self.query_prefix = self.model.query_prefix
        self.document_prefix = self.model.document_prefix
        self.key = json.dumps(self.model.describe(), sort_keys=True)
        cache.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(cache, check_same_thread=False, timeout=120)  # shared by concurrent runs
        self.db.execute("CREATE TABLE IF NOT EXISTS vectors (hash TEXT PRIMARY KEY, vector BLOB)")
        self.lock = threading.Lock()
        self.embedded = 0

    @property
    def dimension(self) -> int | None:
        return self.model.dimension

    def count_tokens(self, texts: list[str]) -> list[int]:
        return self.model.count_tokens(texts)

    def describe(self) -> dict[str, object]:
        return self.model.describe()

    def config(self) -> dict[str, object]:
        return self.model.config()

    def embed(self, texts: list[str]) -> np.ndarray:
        hashes = [hashlib.sha256((self.key + text).encode()).hexdigest() for text in texts]
        with self.lock:
            found = dict(
                self.db.execute(
                    f"SELECT hash, vector FROM vectors WHERE hash IN ({','.join('?' * len(hashes))})", hashes
                ).fetchall()
            )
        missing = list(dict.fromkeys(h for h in hashes if h not in found))
        if missing:
            text_of = dict(zip(hashes, texts, strict=True))
            vectors = self.model.embed([text_of[h] for h in missing])
            made = {
                h: np.asarray(v, dtype=np.float32).tobytes() for h, v in zip(missing, vectors, strict=True)
            }
            with self.lock:
                self.db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", made.items())
                self.db.commit()
                self.embedded += len(made)
            found.update(made)
        return np.stack([np.frombuffer(found[h], dtype=np.float32) for h in hashes])
