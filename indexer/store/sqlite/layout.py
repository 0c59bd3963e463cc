"""What a SQLite index is made of, by name: the tables and records the store and its vector graph
both reach, and the files kept beside the index file (SQLite's own, the graph's two slots with
their float32 rows, a rebuild's scratch copy). Without numpy: a keyword query and ``index watch``
name these files too."""

from __future__ import annotations

import os

VECTOR_TABLE = "chunk_vectors"
#: Which log of chunk changes this index keeps (migrations/sqlite/0006_vector_log.sql), and the record
#: of the vector graph saved beside it (:class:`indexer.store.sqlite.vectors.GraphRecord`).
VECTOR_LOG_ID = "vector_log_id"
GRAPH_RECORD = "vector_graph"
#: The record of the float32 rows saved beside the graph
#: (:class:`indexer.store.sqlite.vector_rows.RowsRecord`); a key of its own, so a version that does
#: not write it leaves a record that no longer matches the graph, and the file goes unused.
ROWS_RECORD = "vector_rows"
#: The files SQLite keeps beside an index (the graph's are :func:`graph_suffixes`), and the scratch
#: copy a rebuild makes.
COMPANION_SUFFIXES = ("-wal", "-shm", "-journal")
REBUILD_SUFFIX = ".rebuild"
#: The two places a graph file is saved in: a new one goes where the record does not point.
SLOTS = ("a", "b")
#: What a file being written is called until it is renamed over its name.
SCRATCH_SUFFIX = ".tmp"


def graph_path(index_path: str, slot: str) -> str:
    return f"{index_path}.vectors-{slot}"


def rows_path(graph_path: str) -> str:
    return graph_path + ".f32"


def graph_suffixes() -> tuple[str, ...]:
    """The files of the vector graph beside an index: its two slots with their float32 rows, and
    their files being written."""
    return tuple(
        name + scratch
        for slot in SLOTS
        for name in (graph_path("", slot), rows_path(graph_path("", slot)))
        for scratch in ("", SCRATCH_SUFFIX)
    )


def remove_database(path: str) -> None:
    """Delete a SQLite file with the files SQLite and its vector graph keep beside it."""
    for suffix in ("", *COMPANION_SUFFIXES, *graph_suffixes()):
        try:
            os.remove(path + suffix)
        except FileNotFoundError:
            continue
