"""The index in one SQLite file: the store's SQL apart from the vector graph searched beside it.

- :mod:`~indexer.store.sqlite.store`: :class:`SQLiteStore`, the engine's SQL (sqlite-vec for
  vectors, FTS5 for keywords), one short method per question of the store contract;
- :mod:`~indexer.store.sqlite.connections`: how the file is reached (a connection per thread,
  read-only or immutable readers, one-line storage errors);
- :mod:`~indexer.store.sqlite.layout`: the tables, records and files an index is made of, by name;
- :mod:`~indexer.store.sqlite.graph`: the vector graph's lifecycle (open, catch up, fold, save,
  swap, the rows file) in :class:`~indexer.store.sqlite.graph.VectorGraph`, which the store holds
  and makes on first use; over :mod:`~indexer.store.sqlite.vectors` (the graph itself),
  :mod:`~indexer.store.sqlite.vector_rows` (its float32 copy) and
  :mod:`~indexer.store.sqlite.side_files` (how both are written without following links,
  recognised, and read without mapping).

Importing this package loads neither numpy nor usearch: the graph's modules are loaded when a
search or a write first needs vectors.
"""

from indexer.store.sqlite.layout import (
    COMPANION_SUFFIXES,
    GRAPH_RECORD,
    REBUILD_SUFFIX,
    ROWS_RECORD,
    VECTOR_TABLE,
    remove_database,
)
from indexer.store.sqlite.store import ENGINE, HEADING_WEIGHT, SQLiteStore, fts_phrase

__all__ = [
    "COMPANION_SUFFIXES",
    "ENGINE",
    "GRAPH_RECORD",
    "HEADING_WEIGHT",
    "REBUILD_SUFFIX",
    "ROWS_RECORD",
    "VECTOR_TABLE",
    "SQLiteStore",
    "fts_phrase",
    "remove_database",
]
