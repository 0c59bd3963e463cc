"""A folder of files whose names and text attack what shows them: terminal escapes, BiDi overrides,
spreadsheet formulas, Markdown table breakers, and names that are not UTF-8."""

from __future__ import annotations

import os
from pathlib import Path

#: Each file's name (bytes, as the file system keeps it) and text; every text holds "espresso".
FILES: dict[bytes, str] = {
    b"caf\xe9.md": "# Caf\u00e9\n\nespresso beans roasted dark.\n",
    b"caf\\xe9.md": "# Literal\n\nespresso machine descaling, a name spelled as an escape.\n",
    b"new\nline.md": (
        "# Title \x1b]0;pwned\x07 | piped\n\n"
        "espresso \x1b[2J cleared\rhidden\bx and txt.\u202eexe reversed \u2066isolated\u2069.\n"
    ),
    b"=HYPERLINK.md": "# @SUM(1+1)\n\n-espresso +2 =cmd|' /C calc'!A0\n",
    b"title\x1b]0;pwned\x07.md": "# Plain\n\nespresso in a file whose name retitles a terminal.\n",
}
#: Raw characters that no front end may print as they are.
RAW = ("\x1b", "\x07", "\r", "\b", "\u202e", "\u2066", "\u2069")


def make_hostile_folder(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in FILES.items():
        with open(os.path.join(os.fsencode(folder), name), "w", encoding="utf-8") as file:
            file.write(text)
    return folder


#: A copy of ``new\nline.md`` under a name that retitles a terminal: folded into the note it copies,
#: and cited as its copy (:func:`write_copy`).
COPY = b"~copy\x1b]0;t\x07.md"


def write_copy(folder: Path) -> str:
    """Write :data:`COPY` in ``folder``; its citation as a front end shows it."""
    with open(os.path.join(os.fsencode(folder), COPY), "w", encoding="utf-8") as copy:
        copy.write(FILES[b"new\nline.md"])
    return "~copy\\x1b]0;t\\x07.md:1-3"


def holds_raw(text: str) -> list[str]:
    """The raw characters of :data:`RAW` in ``text``."""
    return [character for character in RAW if character in text]
