"""Word documents (.docx): paragraphs and table rows in order, headings from paragraph styles.

Read with the standard library (``zipfile`` and ``ElementTree``): a .docx is a zip of XML files, and
the two this reader needs (``word/document.xml``, ``word/styles.xml``) take a few dozen lines to read.
python-docx would bring lxml (about 5 MB of compiled code) for the same paragraphs and style names.

A paragraph is a heading when its style is one of Word's built-in "Title" or "heading N" styles
(found by the style's name, which stays English whatever the language of Word that wrote it) or
carries an outline level, directly or through the style it is based on. Each paragraph (or table
row) is a :class:`Part`, so a hit is cited as ``report.docx:paragraphs 12-15``.
"""

from __future__ import annotations

import re
import zipfile
from io import BytesIO
from xml.etree import ElementTree

from indexer.formats.document import Document, Heading, Part, UnreadableFile, check_expanded_size

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_HEADING_NAME = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)


def read_docx(data: bytes) -> Document:
    """Every non-empty paragraph and table row, one part each, with headings from styles."""
    try:
        with zipfile.ZipFile(BytesIO(data)) as archive:
            body = _xml(archive, "word/document.xml")
            styles = _xml(archive, "word/styles.xml") if "word/styles.xml" in archive.namelist() else None
    except (zipfile.BadZipFile, KeyError, ElementTree.ParseError) as error:
        raise UnreadableFile(f"cannot be read as a Word document: {error}", status="damaged") from error
    levels = _style_levels(styles)
    lines: list[str] = []
    headings: list[Heading] = []
    parts: list[Part] = []
    for block, level in _blocks(body, levels):
        text_lines = [line for line in block.split("\n") if line.strip()] if block.strip() else []
        if not text_lines:
            continue
        first = len(lines) + 1
        lines.extend(text_lines)
        parts.append(Part("paragraph", len(parts) + 1, first, len(lines)))
        if level is not None:
            headings.append(Heading(first, level, " ".join(block.split())))
    return Document(lines=lines, headings=headings, parts=parts)


def _xml(archive: zipfile.ZipFile, name: str) -> ElementTree.Element:
    # zipfile never inflates an entry past the size its directory declares, so this bounds the work
    check_expanded_size(name, archive.getinfo(name).file_size)
    return ElementTree.fromstring(archive.read(name))


def _style_levels(styles: ElementTree.Element | None) -> dict[str, int]:
    """Heading level of each paragraph style id: Title 0, heading N (or outline level N-1) N."""
    if styles is None:
        return {}
    own: dict[str, int] = {}
    based_on: dict[str, str] = {}
    for style in styles.iter(f"{W}style"):
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


def _blocks(element: ElementTree.Element, levels: dict[str, int]):  # noqa: ANN202 (iterator)
    """(text, heading level or None) of each paragraph, and of each table row as 'cell | cell', in
    document order; content controls and other wrappers are looked into."""
    for child in element:
        if child.tag == f"{W}p":
            yield _paragraph_text(child), _paragraph_level(child, levels)
        elif child.tag == f"{W}tbl":
            for row in child.iter(f"{W}tr"):
                cells = [
                    " ".join(_paragraph_text(paragraph) for paragraph in cell.iter(f"{W}p"))
                    for cell in row.findall(f"{W}tc")
                ]
                yield " | ".join(" ".join(cell.split()) for cell in cells), None
        else:
            yield from _blocks(child, levels)


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
    outline = paragraph.find(f"{W}pPr/{W}outlineLvl")
    if outline is not None and (outline.get(f"{W}val") or "").isdigit():
        level = int(outline.get(f"{W}val") or 0) + 1
        return level if level <= 9 else None
    style = paragraph.find(f"{W}pPr/{W}pStyle")
    return levels.get(style.get(f"{W}val") or "") if style is not None else None
