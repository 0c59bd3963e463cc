"""HTML: the words a reader of the page reads, at the lines where they are in the source file.

Parsed with the standard library's ``html.parser`` (which reports the source line of every tag and
piece of text), so a hit still cites the page's own line numbers. Before any text is kept, what is
not the page's content is dropped:

- when the page marks its content (``<main>``, or ``role="main"``), only that is kept: menus, theme
  pickers and help pop-ups outside it (an mdBook page's "Keyboard shortcuts ... Light Rust Coal Navy
  Ayu") go;
- everywhere, ``nav``, ``aside``, page-level ``header`` and ``footer`` (inside an ``article`` or
  ``section`` they introduce that content, and stay, as in ARIA), the ARIA roles of the same meaning
  (navigation, banner, contentinfo, complementary, search, menu, menubar, toolbar), hidden elements,
  buttons, forms' selects, scripts, styles and Sphinx's ``¶`` heading links.

``h1``-``h6`` are headings and ``pre`` blocks are literal, as the page's markup says.
"""

from __future__ import annotations

from html.parser import HTMLParser

from indexer.formats.document import Document, Heading, split_lines

DROPPED_TAGS = frozenset(
    "head nav aside script style template noscript button select svg dialog iframe object canvas".split()
)
DROPPED_ROLES = frozenset(
    "navigation banner contentinfo complementary search menu menubar toolbar dialog tooltip".split()
)
DROPPED_CLASSES = frozenset({"headerlink"})  # Sphinx's "¶" link in every heading
PAGE_LANDMARKS = frozenset({"header", "footer"})  # dropped unless inside a sectioning element
SECTIONING = frozenset({"article", "section", "main"})
HEADINGS = {f"h{level}": level for level in range(1, 7)}
INLINE = frozenset(
    """a abbr b bdi bdo cite code data dfn em i kbd mark q s samp small span strong sub sup
    time u var wbr""".split()
)
BLOCKS = frozenset(
    "p li pre blockquote table tr dl dt dd div section article figure ul ol h1 h2 h3 h4 h5 h6".split()
)
VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())


def read_html(text: str, encoding: str = "utf-8") -> Document:
    """A page's visible content, line by line where it is in the source, with its headings and
    ``pre`` blocks."""
    reader = _PageReader()
    reader.feed(text)
    reader.close()
    return reader.document(len(split_lines(text)), encoding)


class _PageReader(HTMLParser):
    """Collects text, headings and ``pre`` ranges, each marked with whether it lies in ``<main>``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pieces: list[tuple[int, str, bool]] = []  # (line, text, in main)
        self.headings: list[tuple[Heading, bool]] = []
        self.literal: list[tuple[int, int, bool]] = []
        self.block_starts: list[tuple[int, bool]] = []
        self.skipping: tuple[str, int] | None = None  # (tag, nesting) of the element being dropped
        self.sectioning = 0  # open article, section and main elements around the current position
        self.main: tuple[str, int] | None = None  # (tag, nesting) of the open <main> or role="main"
        self.found_main = False
        self.heading: tuple[int, int, list[str]] | None = None  # (line, level, words) of the open heading
        self.pre: tuple[int, int] | None = None  # (first line, nesting) of the open <pre>

    # -- tags -----------------------------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.skipping is not None:
            if tag == self.skipping[0]:
                self.skipping = (tag, self.skipping[1] + 1)
            return
        attributes = dict(attrs)
        if self._dropped(tag, attributes):
            if tag not in VOID:
                self.skipping = (tag, 1)
            return
        line = self.getpos()[0]
        if tag not in INLINE and tag != "pre" and self.pre is None:  # words around a block tag are apart
            self._apart(line)
        if self.main is None and (tag == "main" or attributes.get("role") == "main"):
            self.main = (tag, 0)
            self.found_main = True
        if self.main is not None and tag == self.main[0]:
            self.main = (tag, self.main[1] + 1)
        if tag in SECTIONING:
            self.sectioning += 1
        if tag in HEADINGS and self.heading is None:
            self.heading = (line, HEADINGS[tag], [])
        if tag in BLOCKS and self.pre is None:
            self.block_starts.append((line, self.in_main))
        if tag == "pre":
            self.pre = (self.pre[0], self.pre[1] + 1) if self.pre else (line, 1)

    def handle_endtag(self, tag: str) -> None:
        if self.skipping is not None:
            if tag == self.skipping[0]:
                depth = self.skipping[1] - 1
                self.skipping = (tag, depth) if depth else None
            return
        line = self.getpos()[0]
        if self.main is not None and tag == self.main[0]:
            self.main = (tag, self.main[1] - 1) if self.main[1] > 1 else None
        if tag in SECTIONING:
            self.sectioning = max(0, self.sectioning - 1)
        if tag in HEADINGS and self.heading is not None and HEADINGS[tag] == self.heading[1]:
            start, level, words = self.heading
            title = " ".join("".join(words).split())
            if title:
                self.headings.append((Heading(start, level, title), self.in_main))
            self.heading = None
        if tag == "pre" and self.pre is not None:
            first, depth = self.pre
            if depth == 1:
                self.literal.append((first, line, self.in_main))
                self.pre = None
            else:
                self.pre = (first, depth - 1)
        if tag not in INLINE and self.pre is None:
            self._apart(line)

    @property
    def in_main(self) -> bool:
        return self.main is not None

    def _dropped(self, tag: str, attributes: dict[str, str | None]) -> bool:
        if tag in DROPPED_TAGS or (tag in PAGE_LANDMARKS and not self.sectioning):
            return True
        if "hidden" in attributes or attributes.get("aria-hidden") == "true":
            return True
        if (attributes.get("role") or "") in DROPPED_ROLES:
            return True
        return bool(DROPPED_CLASSES.intersection((attributes.get("class") or "").split()))

    # -- text -----------------------------------------------------------------------------------

    def handle_data(self, data: str) -> None:
        if self.skipping is not None:
            return
        line = self.getpos()[0]
        if self.heading is not None:
            self.heading[2].append(data)
        for offset, part in enumerate(data.split("\n")):
            self._add(line + offset, part)

    def _apart(self, line: int) -> None:
        """A space at a block tag's edge: in the text, and in the title of an open heading (rustdoc's
        ``<h3>impl Borrow for T<div class="where">where ...</div></h3>`` is ``T where``, not ``Twhere``)."""
        self._add(line, " ")
        if self.heading is not None:
            self.heading[2].append(" ")

    def _add(self, line: int, text: str) -> None:
        if text:
            self.pieces.append((line, text, self.in_main))

    def document(self, line_count: int, encoding: str) -> Document:
        """The text of every source line (blank where nothing is kept), with headings and literal."""

        def kept(in_main: bool) -> bool:
            return in_main or not self.found_main

        words: list[list[str]] = [[] for _ in range(line_count)]
        for line, text, in_main in self.pieces:
            if kept(in_main) and 1 <= line <= line_count:
                words[line - 1].append(text)
        literal = [(first, last) for first, last, in_main in self.literal if kept(in_main)]
        in_literal = {number for first, last in literal for number in range(first, last + 1)}
        lines = [
            "".join(parts).rstrip() if number in in_literal else " ".join("".join(parts).split())
            for number, parts in enumerate(words, 1)
        ]
        headings = [heading for heading, in_main in self.headings if kept(in_main)]
        starts = sorted({line for line, in_main in self.block_starts if kept(in_main)})
        return Document(lines, headings, literal, block_starts=starts, encoding=encoding)
