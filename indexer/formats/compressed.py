"""Compressed files, read as the file each holds: ``README.md.gz`` as ``README.md``.

Debian compresses every document of a package over a few kilobytes (``NEWS.gz``, ``README.gz``,
``*.txt.gz``, ``*.md.gz`` under ``/usr/share/doc``), and most systems their man pages: a folder of
them read as binary would be a manual with most of its pages missing. A file of one of
:data:`OPENERS`' suffixes is known by its name without it, in the walk and by every reader, and its
bytes are expanded before its reader sees them: the expanded text is what is chunked, cited by line
and shown. Only single files are expanded: an archive (``.tar.gz``) holds many, and its expanded
bytes are binary, which its reader refuses.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zlib
from collections.abc import Callable

from indexer.formats.document import MAX_TEXT_CHARS, UnreadableFile

#: How a compressed file of each suffix is opened as a stream of its expanded bytes.
OPENERS: dict[str, Callable[[io.BytesIO], io.BufferedIOBase]] = {
    ".gz": lambda raw: gzip.GzipFile(fileobj=raw),
    ".bz2": lambda raw: bz2.BZ2File(raw),
    ".xz": lambda raw: lzma.LZMAFile(raw),
}
#: The most bytes a compressed file is expanded to: what the cap on a document's text
#: (:data:`MAX_TEXT_CHARS`) takes at most in UTF-8. A small file can expand a thousandfold; past
#: this it is refused as too large, before its expansion fills the memory.
MAX_EXPANDED_BYTES = 4 * MAX_TEXT_CHARS
#: What the expanders raise on a damaged or truncated file.
_DAMAGED = (OSError, EOFError, zlib.error, lzma.LZMAError)


def compression_of(path: str) -> str:
    """The suffix of :data:`OPENERS` that ``path``'s name ends in, lower-cased; '' for none."""
    name = path.rsplit("/", 1)[-1].lower()
    for suffix in OPENERS:
        if name.endswith(suffix) and len(name) > len(suffix):
            return suffix
    return ""


def uncompressed_name(path: str) -> str:
    """``path`` as the file it holds is named: without its compression suffix, if it has one."""
    suffix = compression_of(path)
    return path[: -len(suffix)] if suffix else path


def expanded(path: str, data: bytes) -> bytes:
    """The bytes the compressed file at ``path`` holds (``data`` itself for a file that is not
    compressed). Raises :class:`UnreadableFile`: ``damaged`` for bytes its format cannot expand,
    ``too-large`` past :data:`MAX_EXPANDED_BYTES`."""
    suffix = compression_of(path)
    if not suffix:
        return data
    try:
        with OPENERS[suffix](io.BytesIO(data)) as stream:
            content = stream.read(MAX_EXPANDED_BYTES + 1)
    except _DAMAGED as error:
        reason = " ".join(str(error).split()) or type(error).__name__
        raise UnreadableFile(f"cannot be expanded as {suffix} ({reason})", status="damaged") from error
    if len(content) > MAX_EXPANDED_BYTES:
        raise UnreadableFile(
            f"expands past {MAX_EXPANDED_BYTES >> 20} MiB (the cap on a compressed file's content)",
            status="too-large",
        )
    return content
