"""Word documents (.docx): paragraphs and table rows in order, headings from paragraph styles.

Read with the standard library (``zipfile`` and ``ElementTree``): a .docx is a zip of XML files, and
the two this reader needs (``word/document.xml``, ``word/styles.xml``) take a few dozen lines to read.
python-docx would bring lxml (about 5 MB of compiled code) for the same paragraphs and style names.

A paragraph is a heading when its style is one of Word's built-in "Title" or "heading N" styles
(found by the style's name, which stays English whatever the language of Word that wrote it) or
carries an outline level, directly or through the style it is based on. Each paragraph (or table
row) is a :class:`Part`, so a hit is cited as ``report.docx:paragraphs 12-15``.

The XML is read as a stream (``iterparse``), each paragraph dropped once its text is taken, so memory
follows the text kept, not the XML, and a document nested thousands of elements deep costs no
recursion. A part that expands past :data:`MAX_XML_BYTES` (a zip bomb, 0.8 MB that inflates a
thousandfold) is refused by the size the archive gives it, before anything is inflated: zipfile
never gives more than that size (a part that inflates beyond it fails its CRC check).
"""

from __future__ import annotations

import re
import zipfile
import zlib
from collections.abc import Iterator
from io import BytesIO
from xml.etree import ElementTree

from indexer.formats.document import Document, Heading, Part, UnreadableFile, too_much_text
from indexer.sizes import format_size

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
PARAGRAPH_PROPERTIES, OUTLINE_LEVEL, PARAGRAPH_STYLE = f"{W}pPr", f"{W}outlineLvl", f"{W}pStyle"
#: The most an XML part may expand to: a larger one is more likely a zip bomb than a document (a
#: 500-page report's document.xml is a few MB).
MAX_XML_BYTES = 32 * 1024 * 1024
#: A password-protected Word file is no zip but an OLE compound file holding an encrypted package.
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_HEADING_NAME = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)
#: What a damaged or odd package raises: RuntimeError for an entry flagged encrypted,
#: NotImplementedError for one compressed by a method zipfile lacks (99 is WinZip's AES).
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    KeyError,
    ElementTree.ParseError,
    RuntimeError,
    NotImplementedError,
)


def read_docx(data: bytes) -> Document:
    """Every non-empty paragraph and table row, one part each, with headings from styles."""
    if data.startswith(OLE_MAGIC):
        raise UnreadableFile("encrypted (password-protected), or an old .doc file named .docx", "encrypted")
    lines: list[str] = []
    headings: list[Heading] = []
    parts: list[Part] = []
    characters = 0
    try:
        with zipfile.ZipFile(BytesIO(data)) as archive:
            levels = _style_levels(archive)
            for block, level in _blocks(archive, levels):
                text_lines = [line for line in block.split("\n") if line.strip()] if block.strip() else []
                if not text_lines:
                    continue
                first = len(lines) + 1
                lines.extend(text_lines)
                characters += len(block)
                if (refused := too_much_text(characters, len(lines))) is not None:
                    raise refused  # stop reading: the rest is not wanted
                parts.append(Part("paragraph", len(parts) + 1, first, len(lines)))
                if level is not None:
                    headings.append(Heading(first, level, " ".join(block.split())))
    except _ZIP_ERRORS as error:
        raise UnreadableFile(f"cannot be read as a Word document: {error}", status="damaged") from error
    return Document(lines=lines, headings=headings, parts=parts)


def _too_large(name: str) -> UnreadableFile:
    return UnreadableFile(
        f"{name} expands to more than {format_size(MAX_XML_BYTES)} (the cap on a Word part's XML)",
        status="too-large",
    )


def _events(archive: zipfile.ZipFile, name: str) -> Iterator[tuple[str, ElementTree.Element]]:
    """``start`` and ``end`` events of one XML part, refused early when its size passes the cap."""
    if archive.getinfo(name).file_size > MAX_XML_BYTES:
        raise _too_large(name)
    with archive.open(name) as stream:  # zipfile gives no more than the size the archive says
        yield from ElementTree.iterparse(stream, events=("start", "end"))


def _ended(
    archive: zipfile.ZipFile, name: str, kept: str, opened: tuple[str, ...] = ()
) -> Iterator[tuple[str, ElementTree.Element]]:
    """The outermost ``kept`` elements of a part once complete (as ``("end", element)``), and the
    start of each ``opened`` one (``("start", element)``), in document order. Every element ended
    outside a ``kept`` one is freed once the caller has seen it: memory follows what the caller
    keeps, not the XML, so a part of a million empty elements costs no more than an empty part."""
    open_elements: list[ElementTree.Element] = []
    inside = 0  # open `kept` elements around the current position
    for event, element in _events(archive, name):
        if event == "start":
            open_elements.append(element)
            inside += element.tag == kept
            if element.tag in opened and not inside:
                yield event, element
            continue
        open_elements.pop()
        inside -= element.tag == kept
        if inside:
            continue  # the `kept` element around it reads it
        yield event, element
        element.clear()
        if open_elements and len(open_elements[-1]) and open_elements[-1][-1] is element:
            del open_elements[-1][-1]


def _style_levels(archive: zipfile.ZipFile) -> dict[str, int]:
    """Heading level of each paragraph style id: Title 0, heading N (or outline level N-1) N."""
    if "word/styles.xml" not in archive.namelist():
        return {}
    own: dict[str, int] = {}
    based_on: dict[str, str] = {}
    for _, style in _ended(archive, "word/styles.xml", f"{W}style"):
        if style.tag != f"{W}style":
            continue
        style_id = style.get(f"{W}styleId") or ""
        name = style.find(f"{W}name")
        name_text = (name.get(f"{W}val") or "") if name is not None else ""
        outline = style.find(f"{W}pPr/{W}outlineLvl")
        heading = _HEADING_NAME.match(name_text.strip())
        if name_text.strip().lower() == "title":
            own[style_id] = 0
        elif heading:
            own[style_id] = int(heading.group(1))
        elif outline is not None and (outline.get(f"{W}val") or "").isdigit():
            own[style_id] = int(outline.get(f"{W}val") or 0) + 1
        parent = style.find(f"{W}basedOn")
        if parent is not None:
            based_on[style_id] = parent.get(f"{W}val") or ""
    levels = dict(own)
    for style_id in based_on:
        ancestor, seen = style_id, set()
        while ancestor not in own and ancestor in based_on and ancestor not in seen:
            seen.add(ancestor)
            ancestor = based_on[ancestor]
        if ancestor in own:
            levels[style_id] = own[ancestor]
    return {style_id: level for style_id, level in levels.items() if level <= 9}


def _blocks(archive: zipfile.ZipFile, levels: dict[str, int]) -> Iterator[tuple[str, int | None]]:
    """(text, heading level or None) of each paragraph, and of each table row as 'cell | cell', in
    document order; content controls and other wrappers are looked into. A paragraph inside another
    (a text box) is part of that one's text; a table inside a cell gives its own rows."""
    cells: list[list[str]] = []  # the paragraphs of each open table cell, innermost last
    rows: list[list[str]] = []  # the cells of each open table row, innermost last
    for event, element in _ended(archive, "word/document.xml", f"{W}p", opened=(f"{W}tr", f"{W}tc")):
        tag = element.tag
        if event == "start":
            (rows if tag == f"{W}tr" else cells).append([])
        elif tag == f"{W}p":
            if cells:
                cells[-1].append(_paragraph_text(element))
            else:
                yield _paragraph_text(element), _paragraph_level(element, levels)
        elif tag == f"{W}tc" and cells:
            cell = " ".join(cells.pop())
            if rows:
                rows[-1].append(" ".join(cell.split()))
        elif tag == f"{W}tr" and rows:
            yield " | ".join(rows.pop()), None


def _paragraph_text(paragraph: ElementTree.Element) -> str:
    pieces: list[str] = []
    for node in paragraph.iter():
        if node.tag == f"{W}t":
            pieces.append(node.text or "")
        elif node.tag == f"{W}tab":
            pieces.append("\t")
        elif node.tag in (f"{W}br", f"{W}cr"):
            pieces.append("\n")
    return "".join(pieces)


def _paragraph_level(paragraph: ElementTree.Element, levels: dict[str, int]) -> int | None:
    properties = paragraph.find(PARAGRAPH_PROPERTIES)  # a child lookup: no path to parse
    if properties is None:
        return None
    outline = properties.find(OUTLINE_LEVEL)
    if outline is not None and (outline.get(f"{W}val") or "").isdigit():
        level = int(outline.get(f"{W}val") or 0) + 1
        return level if level <= 9 else None
    style = properties.find(PARAGRAPH_STYLE)
    return levels.get(style.get(f"{W}val") or "") if style is not None else None
