"""What every front end does to indexed text before it shows it: the one place that makes a heading,
a passage, a file name or an error message safe for a terminal, a spreadsheet and a Markdown table.

Indexed text comes from files anyone may have written, and so do their names. Printed raw, an
``ESC ] 0 ; … BEL`` retitles the terminal, a CSI sequence repaints it, a carriage return or a
backspace hides what came before, a BiDi override shows ``txt.exe`` as ``exe.txt``; in a CSV file a
cell that starts with ``=`` runs as a formula; a ``|`` or a newline breaks a Markdown table.

- :func:`visible` shows each such character as an escape (``\\x1b``, ``\\u202e``), in the spelling
  the stored names use (:mod:`indexer.names`), so a name prints as the index stores it.
- :func:`json_safe` keeps JSON exact: those characters become JSON's own ``\\u`` escapes, which a
  JSON reader turns back into the same text.
- :func:`csv_cell` and :func:`markdown_cell` shape one cell of a table.

Everything here is one pass over the text (``str.translate``), whatever its length.
"""

from __future__ import annotations

from indexer.names import UNSAFE_CHARACTERS, stored_name

#: Each unsafe character and its escape (``\\x1b``), for :func:`visible`.
_ESCAPES = {code: stored_name(chr(code)) for code in UNSAFE_CHARACTERS}
#: The same, keeping the newlines and tabs that lay out a passage.
_ESCAPES_KEEPING_LINES = {code: escape for code, escape in _ESCAPES.items() if chr(code) not in "\n\t"}
#: Unsafe characters that JSON leaves as they are (it escapes the C0 controls itself).
_JSON_ESCAPES = {code: f"\\u{code:04x}" for code in UNSAFE_CHARACTERS if code >= 0x7F}
#: What a spreadsheet reads as the start of a formula (OWASP's list for CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def visible(text: str, lines: bool = False) -> str:
    """``text`` with every control character, BiDi control and line separator shown as an escape;
    with ``lines``, newlines and tabs are kept (a passage laid out on several lines)."""
    return text.translate(_ESCAPES_KEEPING_LINES if lines else _ESCAPES)


def json_safe(encoded: str) -> str:
    """JSON text (as ``json.dumps(..., ensure_ascii=False)`` writes it) with the unsafe characters
    JSON leaves raw (DEL, C1 controls, BiDi controls, line separators) written as ``\\uXXXX``: the
    same data once read, and nothing a terminal acts on when it is printed."""
    return encoded.translate(_JSON_ESCAPES)


def csv_cell(text: str) -> str:
    """A text cell of a CSV file: shown as :func:`visible` (its newlines and tabs kept, the CSV
    quoting holds them), and prefixed with ``'`` when a spreadsheet would read it as a formula, as
    OWASP recommends (the csv module doubles quotes and quotes the cell)."""
    shown = visible(text, lines=True)
    return "'" + shown if text.startswith(FORMULA_STARTS) else shown


def markdown_cell(text: str) -> str:
    """A cell of a Markdown table: on one line, its ``|`` escaped, its unsafe characters shown."""
    return " ".join(visible(text, lines=True).split()).replace("|", "\\|")
