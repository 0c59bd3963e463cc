"""indexer: index a folder of documents into SQLite (sqlite-vec + FTS5) and search it by meaning.

from indexer import Index
with Index.open("index.db") as index:
    index.build("docs")
    for hit in index.search("how do I rotate keys"):
        print(hit.score, hit.citation, hit.heading)
"""

from indexer.errors import (
    BackendError,
    BackendUnreachableError,
    ConfigError,
    IndexerError,
    IndexLockedError,
    NotInIndexError,
    StorageError,
    VectorCheckError,
)

#: Public names imported on first use (PEP 562): ``import indexer`` stays cheap, so a command that
#: needs none of them (``index query`` answered by a running server) does not pay for numpy.
_LAZY = {
    "Index": "indexer.api",
    "EmbeddingBackend": "indexer.backends.base",
    "Hit": "indexer.search.hit",
    "Passage": "indexer.passages",
    "BuildReport": "indexer.pipeline.report",
}


#: The name the package is installed under (PyPI's "indexer" is another project); its metadata holds
#: the version, which ``__version__`` and ``index --version`` read.
DISTRIBUTION = "indexer-search"


def __getattr__(name: str) -> object:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version(DISTRIBUTION)
        except PackageNotFoundError:  # the source tree imported without being installed
            return "0+unknown"
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'indexer' has no attribute {name!r}")


__all__ = [
    "DISTRIBUTION",
    "BackendError",
    "BackendUnreachableError",
    "BuildReport",
    "ConfigError",
    "EmbeddingBackend",
    "Hit",
    "Index",
    "IndexLockedError",
    "IndexerError",
    "NotInIndexError",
    "Passage",
    "StorageError",
    "VectorCheckError",
]
