"""Jupyter notebooks (.ipynb): the markdown and code cells, never their outputs.

Outputs are what the code printed or drew: base64 images, tables of numbers, tracebacks. Read as raw
JSON, one image output made 163 chunks of base64 in a trial; they are left out. Markdown cells are
read by the Markdown reader (their headings structure the notebook, their code titles declare names),
code cells are literal, read by the source reader of the notebook's language where there is one (so
the functions and classes a cell defines are names a one-word question finds), and each cell is a
:class:`Part`, cited as ``analysis.ipynb:cell 4`` (cells counted from 1 in the order Jupyter shows
them, empty ones included).

``json.loads`` builds every value of the file before a cell is looked at, and a value costs up to 25
times the bytes it takes in the file (``{},`` is 3 bytes, a dict 64): a notebook of more than
:data:`MAX_JSON_VALUES` values is refused before it is parsed. Its values are counted by the commas
and brackets that separate and open them (those inside strings too, so the count errs high); an
image output is one long string, so real notebooks stay far below the cap.
"""

from __future__ import annotations

import json
import re

from indexer.formats.code import GRAMMARS, language_of, read_code
from indexer.formats.document import Document, Heading, Part, UnreadableFile, split_lines
from indexer.formats.markdown import read_markdown

#: The most values (counted by commas and brackets) a notebook's JSON may hold: at 64 bytes apiece,
#: the worst a value costs once parsed, 128 MB.
MAX_JSON_VALUES = 2_000_000
#: An IPython line of its own syntax, not Python's: a magic (``%matplotlib inline``) or a shell
#: command (``!pip install``); not Python's ``% b`` or ``!= b`` that continue an expression.
_IPYTHON_LINE = re.compile(r"\s*(?:%%?[A-Za-z]|!(?!=))")
#: A cell magic (``%%bash``) makes its cell another language's, but for IPython's that time or
#: capture the Python after it.
_CELL_MAGIC = re.compile(r"\s*%%(\w+)")
_PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun"})


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
        language = _language(notebook)
    except (ValueError, TypeError, AttributeError) as error:
        raise UnreadableFile(f"cannot be read as a Jupyter notebook: {error}", status="damaged") from error
    lines: list[str] = []
    headings: list[Heading] = []
    literal: list[tuple[int, int]] = []
    parts: list[Part] = []
    definitions: dict[int, tuple[str, ...]] = {}
    read_as: dict[int, str] = {}
    markup: set[int] = set()
    for number, (kind, source) in enumerate(cells, 1):
        cell_lines = split_lines(source)
        if kind not in ("markdown", "code") or not any(line.strip() for line in cell_lines):
            continue
        offset = len(lines)
        parts.append(Part("cell", number, offset + 1, offset + len(cell_lines)))
        if kind == "code":
            lines.extend(cell_lines)
            literal.append((offset + 1, len(lines)))
            cell_definitions = _code_definitions(number, cell_lines, language)
        else:  # read as a Markdown file is: its HTML as the page shows it, its markup as nothing
            cell = read_markdown(source)
            lines.extend(cell.lines)
            headings.extend(Heading(h.line + offset, h.level, h.title) for h in cell.headings)
            literal.extend((first + offset, last + offset) for first, last in cell.literal)
            read_as.update((line + offset, text) for line, text in cell.read_as.items())
            markup.update(line + offset for line in cell.markup)
            cell_definitions = cell.definitions
        definitions.update((line + offset, names) for line, names in cell_definitions.items())
    return Document(
        lines,
        headings,
        literal,
        parts,
        encoding=encoding,
        markup=frozenset(markup),
        definitions=definitions,
        read_as=read_as,
    )


def _language(notebook: dict) -> str | None:
    """The language of a notebook's code cells, as its metadata names it (its kernel's file extension
    or language), where the source reader reads it (a key of :data:`GRAMMARS`); None otherwise."""
    metadata = _mapping(notebook.get("metadata"))
    info, kernel = _mapping(metadata.get("language_info")), _mapping(metadata.get("kernelspec"))
    extension = info.get("file_extension")
    if isinstance(extension, str) and (language := language_of(extension.lower().lstrip("."))):
        return language
    for name in (info.get("name"), kernel.get("language"), metadata.get("language")):
        if isinstance(name, str) and name.lower() in GRAMMARS:
            return name.lower()
    return None


def _mapping(value: object) -> dict:
    """``value`` if it is a JSON object, else an empty one: metadata a tool wrote otherwise says nothing."""
    return value if isinstance(value, dict) else {}


def _code_definitions(number: int, cell_lines: list[str], language: str | None) -> dict[int, tuple[str, ...]]:
    """The names a code cell defines (1-based line in the cell: names), read as a source file of the
    notebook's ``language`` with IPython's own lines blanked (:data:`_IPYTHON_LINE`); none where the
    language is not known or a cell magic makes the cell another's (:data:`_CELL_MAGIC`)."""
    if language is None or not cell_lines:
        return {}
    magic = _CELL_MAGIC.match(cell_lines[0])
    if magic is not None and (language != "python" or magic.group(1) not in _PYTHON_CELL_MAGICS):
        return {}
    if language == "python":
        cell_lines = ["" if _IPYTHON_LINE.match(line) else line for line in cell_lines]
    return read_code(f"cell {number}", "\n".join(cell_lines), "utf-8", language).definitions


def _cells(notebook: dict) -> list[tuple[str, str]]:
    """(cell type, source) of every cell: nbformat 4 (``cells``) or 3 (``worksheets``, ``input``)."""
    cells = notebook.get("cells")
    if cells is None:
        cells = [cell for sheet in notebook.get("worksheets", []) for cell in sheet.get("cells", [])]
    return [(cell.get("cell_type", ""), _joined(cell.get("source", cell.get("input", "")))) for cell in cells]


def _joined(source: str | list[str]) -> str:
    return "".join(source) if isinstance(source, list) else str(source)
