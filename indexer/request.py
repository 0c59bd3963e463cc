"""One search request, the record every front end takes: ``Index.search``, ``index query``, the HTTP
``/search``, the MCP ``search`` tool and both retrievers. A parameter is added here once, with its
default and its help text, and each front end reads both from :data:`HELP` and the fields, so they
cannot drift; the request checks its values once, whoever made it.

Light on purpose (no numpy, no store): ``index query`` builds one before it knows whether a running
server or this process will answer.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, fields

from indexer.errors import ConfigError, InvalidRequestError

MODES = ("hybrid", "vector", "keyword")
#: The most hits one search returns: enough to read a whole manual, small enough to answer quickly.
MAX_K = 10_000
#: How many of the fused best candidates the re-ranker reads by default: a cross-encoder reads each
#: (question, passage) pair anew, so its cost grows with this number (bench/RESULTS.md), and the
#: answer of a question is nearly always among the fused first twenty.
RERANK_TOP = 20
#: The most candidates one search may have re-read: past this a search takes tens of seconds here.
MAX_RERANK_TOP = 200
#: The longest question a search takes, in characters: about a page, four times what the models read
#: of it (their first 256 tokens), so a pasted paragraph is taken whole, while the keyword search, whose
#: cost grows with the words it looks for, stays quick whatever is sent.
MAX_QUESTION_CHARS = 4_000

#: One help text per parameter, read by every front end.
HELP = {
    "text": (
        'The question. "exact phrase" keeps chunks holding it, -word (or -"a phrase") leaves out chunks '
        f"holding it, word* finds any word it begins. At most {MAX_QUESTION_CHARS:,} characters."
    ),
    "k": "How many hits at most.",
    "mode": "hybrid (vector and keyword lists fused), vector or keyword.",
    "paths": (
        "Only files whose path relative to its folder matches one of these globs (`*` also crosses "
        "folders), or lies under it taken as a folder."
    ),
    "types": "Only files of one of these types (extensions, e.g. md; compressed ones too).",
    "roots": "Only these folders of the index, as they were built.",
    "min_score": (
        "Drop hits scoring lower; scores run 0..1 and fall in rank order. Default: the index's "
        "threshold (`status` says it), under which a hit is more likely noise than an answer; "
        "0 keeps every hit."
    ),
    "rerank": (
        "Re-read the best fused candidates with a cross-encoder and rank them by its probability "
        "that each answers the question. Off by default: it costs seconds per search on a small CPU."
    ),
    "rerank_top": f"How many fused candidates the re-ranker reads (at least k; 1 to {MAX_RERANK_TOP}).",
}


@dataclass(frozen=True)
class SearchRequest:
    """What one search asks for. See :data:`HELP` for each field; ``min_score=None`` means the
    index's default threshold (:meth:`indexer.Index.default_min_score`)."""

    text: str
    k: int = 5
    mode: str = "hybrid"
    paths: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    min_score: float | None = None
    roots: tuple[str, ...] = ()  # after min_score: the order Index.search took them in
    rerank: bool = False
    rerank_top: int = RERANK_TOP

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise ConfigError(f"the question must be a string, not {self.text!r}")
        if len(self.text) > MAX_QUESTION_CHARS:
            raise ConfigError(
                f"the question is {len(self.text):,} characters long: a search takes at most "
                f"{MAX_QUESTION_CHARS:,} (the models read its first 256 tokens); shorten it"
            )
        if self.mode not in MODES:
            raise ConfigError(f"unknown search mode {self.mode!r} (choose one of: {', '.join(MODES)})")
        if not _whole(self.k) or not 1 <= self.k <= MAX_K:
            raise ConfigError(f"k must be a whole number from 1 to {MAX_K}, not {self.k!r}")
        if not _whole(self.rerank_top) or not 1 <= self.rerank_top <= MAX_RERANK_TOP:
            raise ConfigError(
                f"rerank_top must be a whole number from 1 to {MAX_RERANK_TOP}, not {self.rerank_top!r}"
            )
        if not isinstance(self.rerank, bool):
            raise ConfigError(f"rerank must be true or false, not {self.rerank!r}")
        if self.min_score is not None and (
            isinstance(self.min_score, bool)
            or not isinstance(self.min_score, (int, float))
            or math.isnan(self.min_score)
        ):
            raise ConfigError(f"min_score must be a number (scores run 0..1), not {self.min_score!r}")
        for name in ("paths", "types", "roots"):
            object.__setattr__(self, name, as_tuple(getattr(self, name), name))
        refuse_nul({"the question": [self.text], "path": self.paths, "type": self.types, "root": self.roots})

    @property
    def candidates(self) -> int:
        """How many fused candidates the re-ranker reads: ``rerank_top``, and never fewer than ``k``,
        so every hit shown has the re-ranker's score."""
        return max(self.rerank_top, self.k)

    @classmethod
    def options(cls) -> tuple[str, ...]:
        """The names of everything a request holds besides its text."""
        return tuple(field.name for field in fields(cls) if field.name != "text")


def as_tuple(
    values: Sequence[str | os.PathLike[str]] | str | os.PathLike[str] | None, name: str
) -> tuple[str, ...]:
    """One value or a sequence of them (a lone string is one value, not its characters)."""
    if values is None:
        return ()
    if isinstance(values, (str, os.PathLike)):
        return (os.fspath(values),) if os.fspath(values) else ()
    strings = [os.fspath(value) if isinstance(value, os.PathLike) else value for value in values]
    if not all(isinstance(value, str) for value in strings):
        raise ConfigError(f"{name} must be a string or a sequence of strings, not {strings!r}")
    return tuple(str(value) for value in strings)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def refuse_nul(values: dict[str, Sequence[str]]) -> None:
    """A NUL byte is in no indexed text or path (a file holding one is binary, and left out), and
    stores choke on it (PostgreSQL refuses it in any text): asking with one is told so."""
    for name, texts in values.items():
        for text in texts:
            if "\0" in text:
                raise InvalidRequestError(f"{name} {text!r} holds a NUL byte, which no indexed text holds")
