"""indexer: index a folder of documents into SQLite (sqlite-vec + FTS5) and search it by meaning.

from indexer import Index
with Index.open("index.db") as index:
    index.build("docs")
    for hit in index.search("how do I rotate keys"):
        print(hit.score, hit.citation, hit.heading)
"""

from indexer.api import Index
from indexer.backends.base import EmbeddingBackend
from indexer.errors import (
    BackendError,
    BackendUnreachableError,
    ConfigError,
    IndexerError,
    IndexLockedError,
    StorageError,
    VectorCheckError,
)
from indexer.search import Hit


def __getattr__(name: str) -> object:
    # BuildReport lives with the build machinery, which a query does not import
    if name == "BuildReport":
        from indexer.pipeline.report import BuildReport

        return BuildReport
    raise AttributeError(f"module 'indexer' has no attribute {name!r}")


__all__ = [
    "BackendError",
    "BackendUnreachableError",
    "BuildReport",
    "ConfigError",
    "EmbeddingBackend",
    "Hit",
    "Index",
    "IndexLockedError",
    "IndexerError",
    "StorageError",
    "VectorCheckError",
]
