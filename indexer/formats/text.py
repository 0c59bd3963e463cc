"""Plain text: decoding bytes, whatever the encoding, and text files read as lines with no structure.

UTF-8 (with or without BOM) and UTF-16 with a BOM are taken as such. Anything else is handed to
charset-normalizer, which tries every codec Python has and keeps those whose result reads least like
noise. On short Western European text several single-byte codecs tie (a French note decodes the same
in cp1250 and cp1252 except for its 'è'), and charset-normalizer's first pick is then often wrong;
cp1252, the most common legacy encoding of Western text (HTML5 reads 'latin-1' as cp1252 too), wins
such a tie.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import replace

from indexer.formats.changes import changelog_headings
from indexer.formats.definitions import man_page_names
from indexer.formats.document import Document, UnreadableFile, split_lines

BINARY_SNIFF_BYTES = 8192
PREFERRED_LEGACY = "cp1252"
#: how much more "noise" (charset-normalizer's chaos, 0..1) cp1252 may show than the best candidate and
#: still win: on a 150-byte French note cp1252 scored 0.0 like cp1250, on a repeated German/French
#: line 0.036 against mac_latin2's 0.028, where mac_latin2 turned every 'é' into 'Ú'
TIE_MARGIN = 0.01
#: What a terminal acts on and never prints, as ECMA-48 defines it: a control sequence (``ESC [``,
#: its parameters, intermediates and final byte: colours, cursor moves), an operating system command
#: (``ESC ]`` up to its terminator: a window title, a hyperlink's address), a two-byte escape
#: (``ESC (`` and a character set, ``ESC 7``), and the other C0 controls but the tab. A captured
#: terminal session or a log written in colour holds them between its words.
_TERMINAL_CONTROL = re.compile(
    r"\x1b\[[0-?]{0,64}[ -/]{0,16}[@-~]?"
    r"|\x1b\][^\x07\x1b]{0,512}(?:\x07|\x1b\\)?"
    r"|\x1b[ -/]{0,4}[0-~]?"
    r"|[\x00-\x08\x0b-\x1f\x7f]"
)
#: A character every one of those holds: an escape or another C0 control, but the tab.
_CONTROL_CHARACTER = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def decode(data: bytes) -> tuple[str, str]:
    """The text of a file's bytes and the encoding it was read with, or :class:`UnreadableFile`."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16"), "utf-16"
        except UnicodeDecodeError as error:
            raise UnreadableFile(
                f"cannot be decoded as UTF-16 (byte {error.start})", status="encoding"
            ) from error
    if looks_binary(data):
        raise UnreadableFile("binary file (contains NUL bytes)", status="binary")
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        return _decode_legacy(data)


def looks_binary(head: bytes) -> bool:
    """Whether a file's first bytes hold a NUL, as no text does (UTF-16 with its BOM aside)."""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    return b"\x00" in head[:BINARY_SNIFF_BYTES]


def _decode_legacy(data: bytes) -> tuple[str, str]:
    # imported here: most files are UTF-8, and `index query` never decodes a file
    from charset_normalizer import from_bytes

    matches = from_bytes(data)
    best = matches.best()
    if best is None:
        raise UnreadableFile("not UTF-8, and no known text encoding fits it", status="encoding")
    for match in matches:
        if match.chaos <= best.chaos + TIE_MARGIN and PREFERRED_LEGACY in match.could_be_from_charset:
            return data.decode(PREFERRED_LEGACY), PREFERRED_LEGACY
    return str(best), best.encoding


def read_plain(text: str, encoding: str) -> Document:
    """Plain notes and data: lines, with no headings but those a changelog's format declares for its
    entries (:mod:`indexer.formats.changes`: a Debian changelog, a GNU ChangeLog or NEWS, systemd's
    NEWS; a ``#`` line is no heading); the names of a man page saved as text (``ls.1``), from its
    NAME line."""
    lines = split_lines(text)
    headings, read_as = changelog_headings(lines)
    return Document(
        lines=lines,
        headings=headings,
        read_as=read_as,
        encoding=encoding,
        definitions=man_page_names(lines),
    )


def without_terminal_controls(document: Document) -> Document:
    """``document`` with what the model reads of each line leaving out what a terminal would act on
    and never print (:data:`_TERMINAL_CONTROL`), whatever the format; a line of that alone is markup.
    The chunk keeps the line as written."""
    if not _CONTROL_CHARACTER.search("\n".join(document.lines)):  # one quick pass: most files hold none
        return document
    read_as = dict(document.read_as)
    shown_nothing = set()
    for number, line in enumerate(document.lines, 1):
        if _TERMINAL_CONTROL.search(line):
            shown = _TERMINAL_CONTROL.sub("", read_as.get(number, line))
            if shown.strip():
                read_as[number] = shown
            else:
                read_as.pop(number, None)
                shown_nothing.add(number)
    return replace(document, read_as=read_as, markup=document.markup | shown_nothing)
