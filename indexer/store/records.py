"""The records both stores read and write, kept apart from the engines that hold them."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, NamedTuple

from indexer.errors import IndexerError
from indexer.records import StoredChunk

if TYPE_CHECKING:
    from indexer.records import Chunk


class FileState(NamedTuple):
    """What the index knows of a file, to decide whether it changed (a tuple: one per file per run)."""

    id: int
    size: int
    mtime_ns: int
    content_hash: str
    status: str


def files_indexed(states: dict[str, FileState]) -> int:
    """How many of ``states`` are files the index holds content of, not files the walk only noted
    (left out as secrets or too large, recorded so their warning is given once)."""
    return sum(bool(state.content_hash) for state in states.values())


@dataclass(frozen=True)
class NewFile:
    """A file's new version, ready to replace its old one in one transaction."""

    root: str
    path: str
    size: int
    mtime_ns: int
    content_hash: str
    status: str
    chunks: Sequence[Chunk]
    text_hashes: Sequence[str]
    vectors: Sequence[bytes]  # float32 blobs, one per chunk
    encoding: str = ""  # the text encoding the file was read with; '' for PDF and DOCX
    #: Whether the file is source code, whose chunks the keyword index reads with the parts of their
    #: names (:func:`indexer.store.keywords.index_text`).
    source_code: bool = False

    def chunk_rows(self, file_id: int) -> Iterator[tuple[tuple, bytes]]:
        """Each chunk as ``(row, vector)``: row is (file_id, seq, start_line, end_line, heading, text,
        text_hash, locator, names, is_test, is_code, code_lead, is_contents), the columns both stores write
        (:data:`CHUNK_COLUMNS`), in that order."""
        for seq, (chunk, text_hash, vector) in enumerate(
            zip(self.chunks, self.text_hashes, self.vectors, strict=True)
        ):
            row = (
                file_id,
                seq,
                chunk.start_line,
                chunk.end_line,
                chunk.heading,
                chunk.text,
                text_hash,
                chunk.locator,
                join_names(chunk.names),
                chunk.is_test,
                self.source_code,
                chunk.code_lead,
                chunk.is_contents,
            )
            yield row, vector


@dataclass(frozen=True)
class ChunkFilter:
    """Which chunks a search may return; an empty tuple restricts nothing. Each store turns it into
    its own SQL.

    - ``path_globs``: the path relative to its root matches one (``*`` also crosses folders), or lies
      under one taken as a folder (``api`` matches ``api/keys.md``);
    - ``type_globs``: the file's lower-cased path matches one of these GLOBs (those of the types
      asked for, :func:`indexer.formats.type_globs`: ``*.md``, ``*.md.gz``...);
    - ``roots``: the file lies in one of these folders of the index (as the index records them);
    - ``phrases``: the chunk holds each of them (its words in that order, as the keyword index reads
      words: ``"exact phrase"`` in a question);
    - ``excluded``: the chunk holds none of them (``-word`` in a question).
    """

    path_globs: tuple[str, ...] = ()
    type_globs: tuple[str, ...] = ()
    roots: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return any((self.path_globs, self.type_globs, self.roots, self.phrases, self.excluded))

    def folder_globs(self) -> list[str]:
        """Each path pattern as given, and as a folder whose files it means."""
        return [form for glob in self.path_globs for form in (glob, glob.rstrip("/") + "/*")]


@dataclass
class BuildCounts:
    """What a build did, as its record in the ``builds`` table holds it (one column per field)."""

    files_added: int = 0
    files_changed: int = 0
    files_removed: int = 0
    files_failed: int = 0
    files_skipped: int = 0
    chunks_embedded: int = 0
    chunks_reused: int = 0
    requests: int = 0
    tokens: int = 0

    @classmethod
    def columns(cls) -> tuple[str, ...]:
        return tuple(field.name for field in fields(cls))

    def values(self) -> tuple[int, ...]:
        return tuple(asdict(self).values())

    @classmethod
    def assignments(cls, placeholder: str, add: bool = False) -> str:
        """``files_added = ?, ...`` (or ``files_added = files_added + ?``) for an UPDATE of a build's
        record, with the engine's parameter ``placeholder``, in the order of :meth:`values`."""
        return ", ".join(f"{name} = {name + ' + ' if add else ''}{placeholder}" for name in cls.columns())

    def plus(self, other: BuildCounts) -> BuildCounts:
        return BuildCounts(
            *(mine + theirs for mine, theirs in zip(self.values(), other.values(), strict=True))
        )


#: The columns of a file's state, a chunk as searches read it back, and a build's record, in the
#: order the functions below read them.
FILE_STATE_COLUMNS = "path, id, size, mtime_ns, content_hash, status"
STORED_CHUNK_COLUMNS = (
    "c.id, f.root, f.path, c.start_line, c.end_line, c.heading, c.text, c.locator, c.names, c.is_test, "
    "c.code_lead, c.is_contents"
)
#: The columns of a chunk's row as :meth:`NewFile.chunk_rows` gives them, each with the type
#: PostgreSQL's binary COPY writes it as (it names every column's).
CHUNK_COLUMN_TYPES = {
    **{"file_id": "int8", "seq": "int4", "start_line": "int4", "end_line": "int4"},
    **dict.fromkeys(("heading", "text", "text_hash", "locator", "names"), "text"),
    **{"is_test": "bool", "is_code": "bool", "code_lead": "int4", "is_contents": "bool"},
}
CHUNK_COLUMNS = list(CHUNK_COLUMN_TYPES)
#: Between the names a chunk declares, as stored: no name holds a line break.
NAMES_SEPARATOR = "\n"
BUILD_FIELDS: tuple[str, ...] = ("id", "root", "started_at", "finished_at", "seen_at", "outcome")
BUILD_FIELDS += ("model", "pid", "host", "error")
BUILD_FIELDS += BuildCounts.columns()
#: The meta key of the chunk count (see migration 0004; kept by :data:`indexer.store.sql.ADD_CHUNK_COUNT`).
CHUNK_COUNT = "chunk_count"


def file_states(rows: Sequence[Sequence]) -> dict[str, FileState]:
    """Rows of :data:`FILE_STATE_COLUMNS`, by path."""
    return {row[0]: FileState._make(row[1:]) for row in rows}


def stored_chunks(rows: Sequence[Sequence]) -> dict[int, StoredChunk]:
    """Rows of :data:`STORED_CHUNK_COLUMNS`, by chunk id."""
    chunks = {}
    for (
        chunk_id,
        root,
        path,
        start_line,
        end_line,
        heading,
        text,
        locator,
        names,
        is_test,
        lead,
        contents,
    ) in rows:
        chunks[chunk_id] = StoredChunk(
            *(chunk_id, root, path, start_line, end_line, heading, text, locator),
            names=split_names(names),
            is_test=bool(is_test),
            code_lead=lead,
            is_contents=bool(contents),
        )
    return chunks


def join_names(names: Sequence[str]) -> str:
    """A chunk's declared names as one stored value."""
    return NAMES_SEPARATOR.join(names)


def split_names(stored: str) -> tuple[str, ...]:
    """The names :func:`join_names` stored."""
    return tuple(stored.split(NAMES_SEPARATOR)) if stored else ()


def build_records(rows: Sequence[Sequence]) -> list[dict[str, object]]:
    """Rows of :data:`BUILD_FIELDS`, as dicts (``index status --json``)."""
    return [dict(zip(BUILD_FIELDS, row, strict=True)) for row in rows]


def root_counts(rows: Sequence[Sequence]) -> list[dict[str, object]]:
    """Rows of :data:`indexer.store.sql.ROOT_COUNTS` as ``{"path", "files", "chunks"}``."""
    return [{"path": root, "files": files, "chunks": chunks} for root, files, chunks in rows]


def count_problems(kept: int, counted: int) -> list[str]:
    """The chunk count the index keeps against the rows it holds (they must agree)."""
    return [] if kept == counted else [f"the index counts {kept} chunks but holds {counted}"]


def check_dimension(dimension: object) -> None:
    """Refuse a vector dimension that cannot be a table's (it goes into SQL as a type modifier)."""
    if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension <= 0:
        raise IndexerError(f"invalid vector dimension {dimension!r}")
