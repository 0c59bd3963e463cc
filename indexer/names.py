"""How a file's name is stored: one spelling per name, printable, and read back to the name itself.

The index keeps every name as text that any front end can print, quote in a URL, put in a CSV cell
or a Markdown table, and take back in a citation. Most names are that already and are kept as they
are. A name that is not, because it holds bytes that are not UTF-8 (``caf\\xe9.md`` from a Latin-1
archive), a control character (a newline, an escape) or a character that turns text around (the
BiDi overrides), is spelled with escapes:

- ``\\xHH`` is one byte: an ASCII control character, or a byte that is not UTF-8;
- ``\\uHHHH`` is one character: a C1 control, a BiDi control, a line or paragraph separator;
- ``\\\\`` is a backslash.

A name is escaped only when it needs to be, or when it holds ``\\x``, ``\\u`` or ``\\\\`` itself, so that
a name kept as it is never holds one of those and an escaped one always does: two names never share
a spelling (a file literally named ``caf\\xe9.md`` is stored as ``caf\\\\xe9.md``), and every stored
name reads back to the one name it came from (:func:`local_name`).

A leaf module: the walk writes names with it, and the commands that take a citation back read them.
"""

from __future__ import annotations

import re

#: Characters that move a terminal's cursor, change its title or colours, or turn text around:
#: C0 and C1 controls, DEL, the BiDi embeddings, overrides and isolates (and their marks), and the
#: line and paragraph separators.
UNSAFE_CHARACTERS = frozenset(
    [*range(0x00, 0x20), *range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F)]
    + [*range(0x2066, 0x206A), 0x2028, 0x2029]
)
#: What an escaped spelling always holds and a name kept as it is never does.
_ESCAPE_MARKS = ("\\x", "\\u", "\\\\")
#: One escape of a stored spelling, or a backslash that starts none (read as itself).
_ESCAPE = re.compile(r"\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|(\\))")
#: Python's spelling of a byte that is not UTF-8, in a name read with ``surrogateescape``.
_SURROGATE_BYTES = range(0xDC80, 0xDD00)


def stored_name(name: str) -> str:
    """The spelling the index keeps for a relative file name, as ``os`` gives it (undecodable bytes
    as ``surrogateescape`` characters): ``name`` itself, unless it needs escaping (see the module)."""
    if not needs_escaping(name):
        return name
    return "".join(_escaped(character) for character in name)


def needs_escaping(name: str) -> bool:
    """Whether ``name`` is stored escaped: it holds an undecodable byte, an unsafe character, or
    something an escape would be read from."""
    return any(
        ord(character) in UNSAFE_CHARACTERS or 0xD800 <= ord(character) < 0xE000 for character in name
    ) or any(mark in name for mark in _ESCAPE_MARKS)


def _escaped(character: str) -> str:
    code = ord(character)
    if character == "\\":
        return "\\\\"
    if code in _SURROGATE_BYTES:
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x80 and code in UNSAFE_CHARACTERS:
        return f"\\x{code:02x}"
    if code in UNSAFE_CHARACTERS or 0xD800 <= code < 0xE000:  # a lone surrogate of a Windows name
        return f"\\u{code:04x}"
    return character


def local_name(stored: str) -> str:
    """The name a stored spelling was made from, as ``os`` takes it (``surrogateescape``): the
    inverse of :func:`stored_name`. A spelling kept as it is is returned unchanged."""
    if not any(mark in stored for mark in _ESCAPE_MARKS):
        return stored
    return _ESCAPE.sub(_unescaped, stored)


def _unescaped(match: re.Match[str]) -> str:
    byte, character, backslash = match.groups()
    if backslash:
        return "\\"
    if character:
        return chr(int(character, 16))
    value = int(byte, 16)
    return chr(value) if value < 0x80 else chr(0xDC00 + value)


def spellings(asked: str) -> list[str]:
    """The stored spellings a name (or a citation) given back by a user may mean, most likely first:
    itself, as a hit showed it; then the stored spelling of it read as a raw name (a name pasted
    with its newline, or passed by a shell with its undecodable bytes). A text that cannot be
    stored as it is (undecodable bytes) has only the second."""
    found = [asked] if is_storable(asked) else []
    escaped = stored_name(asked)
    return found if escaped in found else [*found, escaped]


def is_storable(text: str) -> bool:
    """Whether ``text`` is valid UTF-8 text (no undecodable bytes kept as surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
