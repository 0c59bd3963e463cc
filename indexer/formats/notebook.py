"""Jupyter notebooks (.ipynb): the markdown and code cells, never their outputs.

Outputs are what the code printed or drew: base64 images, tables of numbers, tracebacks. Read as raw
JSON, one image output made 163 chunks of base64 in a trial; they are left out. Markdown cells are
read by the Markdown reader (their headings structure the notebook), code cells are literal, and
each cell is a :class:`Part`, cited as ``analysis.ipynb:cell 4`` (cells counted from 1 in the order
Jupyter shows them, empty ones included).

``json.loads`` builds every value of the file before a cell is looked at, and a value costs up to 25
times the bytes it takes in the file (``{},`` is 3 bytes, a dict 64): a notebook of more than
:data:`MAX_JSON_VALUES` values is refused before it is parsed. Its values are counted by the commas
and brackets that separate and open them (those inside strings too, so the count errs high); an
image output is one long string, so real notebooks stay far below the cap.
"""

from __future__ import annotations

import json

from indexer.formats.document import Document, Heading, Part, UnreadableFile, split_lines
from indexer.formats.markdown import markdown_structure

#: The most values (counted by commas and brackets) a notebook's JSON may hold: at 64 bytes apiece,
#: the worst a value costs once parsed, 128 MB.
MAX_JSON_VALUES = 2_000_000


def read_notebook(text: str, encoding: str = "utf-8") -> Document:
    """The source of every markdown and code cell, in order, each cell a part."""
    values = text.count(",") + text.count("{") + text.count("[")
    if values > MAX_JSON_VALUES:
        raise UnreadableFile(
            f"its JSON holds more than {MAX_JSON_VALUES:,} values (about {values:,}: the cap on a notebook)",
            status="too-large",
        )
    try:
        notebook = json.loads(text)
        cells = _cells(notebook)
    except (ValueError, TypeError, AttributeError) as error:
        raise UnreadableFile(f"cannot be read as a Jupyter notebook: {error}", status="damaged") from error
    lines: list[str] = []
    headings: list[Heading] = []
    literal: list[tuple[int, int]] = []
    parts: list[Part] = []
    for number, (kind, source) in enumerate(cells, 1):
        cell_lines = split_lines(source)
        if kind not in ("markdown", "code") or not any(line.strip() for line in cell_lines):
            continue
        offset = len(lines)
        lines.extend(cell_lines)
        parts.append(Part("cell", number, offset + 1, len(lines)))
        if kind == "code":
            literal.append((offset + 1, len(lines)))
            continue
        cell_headings, cell_literal = markdown_structure(source)
        headings.extend(Heading(h.line + offset, h.level, h.title) for h in cell_headings)
        literal.extend((first + offset, last + offset) for first, last in cell_literal)
    return Document(lines=lines, headings=headings, literal=literal, parts=parts, encoding=encoding)


def _cells(notebook: dict) -> list[tuple[str, str]]:
    """(cell type, source) of every cell: nbformat 4 (``cells``) or 3 (``worksheets``, ``input``)."""
    cells = notebook.get("cells")
    if cells is None:
        cells = [cell for sheet in notebook.get("worksheets", []) for cell in sheet.get("cells", [])]
    return [(cell.get("cell_type", ""), _joined(cell.get("source", cell.get("input", "")))) for cell in cells]


def _joined(source: str | list[str]) -> str:
    return "".join(source) if isinstance(source, list) else str(source)
