"""Sizes as people write and read them (``64MB``, ``1.5 GB``), and the cap on a file's size: light,
so that the command line can parse ``--max-file-size`` without loading the walk's machinery."""

from __future__ import annotations

import re

from indexer.errors import ConfigError

#: Files larger than this are left out unless a build gives another ``max_file_size``: reading a file
#: costs memory in proportion to its size (its bytes, its text, its chunks), so the cap is what bounds
#: a build's memory; a text a person reads is rarely larger, a log or a data dump often is.
DEFAULT_MAX_FILE_SIZE = 64 * 1024 * 1024
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b)?\s*$", re.IGNORECASE)


def parse_size(text: str | int) -> int:
    """A size in bytes from ``64MB``, ``1.5G``, ``512k`` or a plain number of bytes (units count in
    1024s, as ``ls -h`` and ``du -h`` show them)."""
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    match = _SIZE.match(str(text))
    if match is None:
        raise ConfigError(f"{text!r} is not a size (say 64MB, 1.5G, 512k or a number of bytes)")
    number, unit = float(match.group(1)), match.group(2).lower()
    return int(number * 1024 ** " kmgt".index(unit or " "))


def format_size(size: int) -> str:
    """``64 MB``, ``1.5 GB``, ``512 kB``, ``300 bytes``: a size as a person reads it (in 1024s)."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("kB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} bytes"
