"""PDF: the text layer, page by page, through pypdfium2 (PDFium, the PDF engine of Chromium).

Why pypdfium2 rather than pypdf: on two real manuals found on this machine (libtasn1's, 36 pages, and
the shared-mime-info spec, 17 pages) both gave the same text, line for line, but pypdf took 1.12 s
and 0.32 s where PDFium took 0.06 s and 0.03 s: at pypdf's speed a folder of PDFs would make the
build's reading stage the slowest part of it. pypdfium2 ships PDFium inside its wheels (no system
library, no compiler).

Each page is a :class:`Part`, so a hit is cited as ``manual.pdf:page 3``. Headings come from the
PDF's outline (bookmarks) when it has one: each entry starts a section at the line of its page that
carries its title, else at the top of its page. A PDF without any text (a scan with no OCR layer) is
skipped with a message saying so.
"""

from __future__ import annotations

from indexer.formats.document import Document, Heading, Part, UnreadableFile

TITLE_SLACK = 12  # a line may carry this many characters beyond an outline title (numbers, dots)


def read_pdf(data: bytes) -> Document:
    """The text of every page with a text layer, each page a part, headings from the outline."""
    # imported here: only a build that meets a PDF loads PDFium
    import pypdfium2

    try:
        pdf = pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError as error:
        raise UnreadableFile(f"cannot be opened as a PDF: {error}", status="damaged") from error
    try:
        pages = [_page_lines(pdf[index]) for index in range(len(pdf))]
        outline = [_outline_entry(bookmark) for bookmark in pdf.get_toc()]
    finally:
        pdf.close()
    lines: list[str] = []
    parts: list[Part] = []
    for number, page in enumerate(pages, 1):
        if any(line.strip() for line in page):
            parts.append(Part("page", number, len(lines) + 1, len(lines) + len(page)))
            lines.extend(page)
    if not lines:
        raise UnreadableFile("no text layer (a scanned PDF without OCR?)", status="no-text")
    return Document(lines=lines, headings=_outline_headings(outline, parts, lines), parts=parts)


def _page_lines(page) -> list[str]:  # noqa: ANN001 (a pypdfium2 PdfPage)
    text_page = page.get_textpage()
    try:
        text = text_page.get_text_range()
    finally:
        text_page.close()
        page.close()
    return [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]


def _outline_entry(bookmark) -> tuple[int, str, int | None]:  # noqa: ANN001 (a pypdfium2 PdfBookmark)
    """(level from 0, title, page index or None) of an outline entry."""
    destination = bookmark.get_dest()
    return bookmark.level, bookmark.get_title() or "", destination.get_index() if destination else None


def _outline_headings(
    outline: list[tuple[int, str, int | None]], parts: list[Part], lines: list[str]
) -> list[Heading]:
    """A heading for each outline entry that points at a page with text, in reading order."""
    by_page = {part.number: part for part in parts}
    headings: list[Heading] = []
    floor = 1
    for level, title, page_index in outline:
        part = by_page.get((page_index or 0) + 1) if page_index is not None else None
        title = " ".join(title.split())
        if part is None or not title or part.last_line < floor:
            continue
        line = _title_line(lines, title, max(floor, part.first_line), part.last_line) or max(
            floor, part.first_line
        )
        headings.append(Heading(line, level + 1, title))
        floor = line
    return headings


def _title_line(lines: list[str], title: str, first: int, last: int) -> int | None:
    wanted = "".join(title.lower().split())
    for number in range(first, last + 1):
        squeezed = "".join(lines[number - 1].lower().split())
        if wanted in squeezed and len(squeezed) <= len(wanted) + TITLE_SLACK:
            return number
    return None
