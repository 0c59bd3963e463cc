"""PDF: the text layer, page by page, through pypdfium2 (PDFium, the PDF engine of Chromium).

Why pypdfium2 rather than pypdf: on two real manuals found on this machine (libtasn1's, 36 pages, and
the shared-mime-info spec, 17 pages) both gave the same text, line for line, but pypdf took 1.12 s
and 0.32 s where PDFium took 0.06 s and 0.03 s: at pypdf's speed a folder of PDFs would make the
build's reading stage the slowest part of it. pypdfium2 ships PDFium inside its wheels (no system
library, no compiler).

The text is cleaned as a reader sees it (:func:`clean_page_text`): a word PDFium marks as hyphenated
at a line's end (it reports the soft hyphen as U+FFFE or U+0002) is joined back into one word,
noncharacters and replacement characters go, and running headers and footers (the same line at the
top or bottom of most pages, page numbers aside) are left out (:func:`without_running_lines`).

Each page is a :class:`Part`, so a hit is cited as ``manual.pdf:page 3``. Headings come from the
PDF's outline (bookmarks) when it has one: each entry starts a section at the line of its page that
carries its title, else at the top of its page. A PDF without any text (a scan with no OCR layer) is
skipped with a message saying so.
"""

from __future__ import annotations

import re
from collections import Counter

from indexer.formats.document import Document, Heading, Part, UnreadableFile, check_expanded_size

TITLE_SLACK = 12  # a line may carry this many characters beyond an outline title (numbers, dots)
#: How PDFium reports a hyphen it takes for a soft one (a word broken across lines), by version.
SOFT_HYPHENS = "\ufffe\u0002\u00ad"
#: Characters no reader sees: the replacement character, noncharacters, C0 and C1 controls but tab
#: and newline.
UNSEEN = dict.fromkeys(
    [
        0xFFFD,
        *range(0xFDD0, 0xFDF0),
        *(plane + end for plane in range(0, 0x110000, 0x10000) for end in (0xFFFE, 0xFFFF)),
    ]
    + [code for code in [*range(0x20), *range(0x7F, 0xA0)] if chr(code) not in "\t\n"]
)
_SOFT_BREAK = re.compile("[" + SOFT_HYPHENS + "][ \t]*\n[ \t]*")
#: A running header or footer is a line at the top or bottom of this share of the pages, or more.
RUNNING_SHARE = 0.5
RUNNING_DEPTH = 2  # lines from the top and from the bottom of a page where they are looked for
_DIGITS = re.compile(r"\d+")


def read_pdf(data: bytes) -> Document:
    """The text of every page with a text layer, each page a part, headings from the outline."""
    # imported here: only a build that meets a PDF loads PDFium
    import pypdfium2

    try:
        pdf = pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError as error:
        raise UnreadableFile(f"cannot be opened as a PDF: {error}", status="damaged") from error
    try:
        pages = []
        characters = 0
        for index in range(len(pdf)):
            pages.append(_page_lines(pdf[index]))
            characters += sum(len(line) + 1 for line in pages[-1])
            check_expanded_size(f"the text of its first {index + 1} pages", characters)
        outline = [_outline_entry(bookmark) for bookmark in pdf.get_toc()]
    finally:
        pdf.close()
    pages = without_running_lines(pages)
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
    return [line.rstrip() for line in clean_page_text(text).split("\n")]


def clean_page_text(text: str) -> str:
    """A page's text as a reader sees it: one kind of line break, a word broken by a soft hyphen at
    a line's end joined into one word on one line, other soft hyphens and every character no reader
    sees removed."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _SOFT_BREAK.sub("", text)
    return text.translate({**UNSEEN, **dict.fromkeys(map(ord, SOFT_HYPHENS))})


def without_running_lines(pages: list[list[str]]) -> list[list[str]]:
    """Pages without their running headers and footers: a line among the first or last
    RUNNING_DEPTH non-blank lines of at least RUNNING_SHARE of the pages (digits ignored, so
    'Page 3 of 40' is one line), on documents of three pages or more."""
    if len(pages) < 3:
        return pages
    counts: Counter[str] = Counter()
    for page in pages:
        counts.update({_running_key(line) for line in _edges(page)})
    running = {key for key, count in counts.items() if key and count >= RUNNING_SHARE * len(pages)}
    if not running:
        return pages
    return [
        ["" if line in edges and _running_key(line) in running else line for line in page]
        for page, edges in ((page, set(_edges(page))) for page in pages)
    ]


def _edges(page: list[str]) -> list[str]:
    """The first and last RUNNING_DEPTH lines of a page with text, on a page with a body between them
    (else its first and last line)."""
    filled = [line for line in page if line.strip()]
    depth = RUNNING_DEPTH if len(filled) > 3 * RUNNING_DEPTH else 1
    return filled[:depth] + filled[-depth:]


def _running_key(line: str) -> str:
    return " ".join(_DIGITS.sub("#", line).split()).casefold()


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
