"""HTML: the words a reader of the page reads, at the lines where they are in the source file.

Parsed by libxml2's HTML parser (through lxml), whose tokenizer follows HTML5's and runs in time
linear in the page's size whatever the markup: a page of 60,000 unclosed ``<!--`` takes milliseconds,
where the standard library's ``html.parser`` took minutes on a quarter of that, and raised on
``<![`` with nothing after it. Every element carries the source line where its start tag ends, so a
hit still cites the page's own line numbers: text is placed from there, counting the newlines it
holds. (selectolax and html5-parser parse as fast, but selectolax gives no source positions and
html5-parser needs an lxml built from source.)

Before any text is kept, what is not the page's content is dropped:

- when the page marks its content (``<main>``, or ``role="main"``), only that is kept: menus, theme
  pickers and help pop-ups outside it (an mdBook page's "Keyboard shortcuts ... Light Rust Coal Navy
  Ayu") go;
- everywhere, ``nav``, ``aside``, page-level ``header`` and ``footer`` (inside an ``article`` or
  ``section`` they introduce that content, and stay, as in ARIA), the ARIA roles of the same meaning
  (navigation, banner, contentinfo, complementary, search, menu, menubar, toolbar), breadcrumb
  trails, DocBook's navigation header and footer (the "Prev Up Home Next" tables of every page of a
  DocBook manual), hidden elements, buttons, forms' selects, scripts, styles, and a heading's link
  to a fragment shown as one mark after its title (Sphinx's and Apache's ``¶``, a ``§`` or ``#``).

``h1``-``h6`` are headings and ``pre`` blocks are literal, as the page's markup says, from the
line of ``<pre>`` to its last line of code: a highlighter that closes the block at the start of the
next line has the next heading follow on it (Hugo's ``</code></pre></div><h3>``), and that line is
the heading's. A page is named by its one ``h1``, or by the one of several that begins its
``<title>`` (a site's logo may be an ``h1`` too); otherwise by its ``<title>``: the first heading
when it says the same (DocBook's reference pages give their name as an ``h2``), else a heading of
its own at the top, so a page's name is always the head of its chunks' heading paths. A page of
several ``h1`` none of which names it has them as its sections (SQLite's ``1. Overview``,
``2. Syntax`` on the page titled ``CREATE TRIGGER``).

A list's entries (``li``, ``dt``) that link another page (not a fragment of this one) and hold two
words at most beside their links are its linked entries (:attr:`Document.linked_entries`): a term
and where to find it, as a generated keyword index, a cross-reference or a contents page lists
them. They name what other pages are about, and a chunk made mostly of them is stored as a
contents list. A page javadoc made (:data:`JAVADOC_META`, :data:`JAVADOC_COMMENT`) that declares
itself a list of other pages' names by its body's or its content container's class
(:data:`LIST_PAGE_CLASSES`: the uses of a class, hierarchy and all-classes pages, whose entries
each say a sentence of what they link) is one whole (:attr:`Document.is_contents`).

The names a page defines (:attr:`Document.definitions`) are those its anchors spell: an element's
``id`` (or an ``<a name>``) whose letters and digits, case aside, are those of a name in the text
that starts at it, up to the end of its first block with text. Documentation generators anchor each
definition so that their indexes and links reach it: gtk-doc and DocBook's
``<a name="cairo-create"></a><h3>cairo_create ()</h3>`` and
``<a name="CAIRO-FORMAT-A1:CAPS"></a>CAIRO_FORMAT_A1`` (the part of an id before a ``:`` or ``(``
is compared too; where the name is code, the part after a namespace, PostgreSQL's
``<dt id="GUC-WORK-MEM"><code>work_mem</code>``), javadoc's ``id="toString()"``,
Sphinx's ``<dt id="os.path.join">``. A page that uses a name links to that anchor; it does not
carry it, and the text of a link is not read for it (gtk-doc's ``<table id="top">`` begins with a
link ``Top``). An id that spells none of the words after it (``content``, ``id-1.3.2``) defines
nothing. rustdoc's ids spell an item's kind and its name (``<section id="method.freeze">``), and
the section links to itself, by the name (``pub fn <a href="#method.freeze">freeze</a>``) or by a
mark before it (``<a href="#variant.Off">§</a><h3>Off</h3>``): in such a section, the name after
the kind is read in that link or outside any link (a trait's method on a type that implements it
links to the trait's, and declares nothing there).
A table row whose first cell starts with a call in code declares the function it is keyed by
(PostgreSQL's ``<code class="function">btrim</code> ( string text ... )``).
Sphinx's signatures of a manual's own options, settings and environment variables also name what
they define in their own markup, whatever the id: the ``sig-name descname`` of a
``<dt class="sig sig-object std">`` (a command's option ``--strict`` under
``id="cmdoption-mypy-strict"``, a setting under ``id="confval-disallow_untyped_defs"``).
A description javadoc copied from the method a method overrides or implements, after its label
(``Description copied from class: Node``), is not read: the original's page says it, and answers
first (:data:`COPIED_LABEL_CLASSES`).
A heading whose title is code alone declares the names it spells, as in Markdown, whose pages site
generators render so (Hugo's ``<h3 id="dispatcherstreamoptions-factory-callback"><code>
Dispatcher.stream(options, factory[, callback])</code></h3>``, an id spelling the parameters too).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol

from indexer.formats.definitions import cell_call_names, known_names, title_names
from indexer.formats.document import (
    Document,
    Heading,
    UnreadableFile,
    placed_lines,
    shown_characters,
    split_lines,
)

DROPPED_TAGS = frozenset(
    "head nav aside script style template noscript button select svg dialog iframe object canvas".split()
)
DROPPED_ROLES = frozenset(
    "navigation banner contentinfo complementary search menu menubar toolbar dialog tooltip".split()
)
#: Sphinx's "¶" link in every heading; DocBook's navigation above and below every page.
DROPPED_CLASSES = frozenset({"headerlink", "navheader", "navfooter"})
BREADCRUMBS = "breadcrumb"  # in a class name (breadcrumb, breadcrumbs, wy-breadcrumbs) or an aria-label
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
#: The level of a page's title made a heading of its own: above every ``h1``-``h6``.
TITLE_LEVEL = 0
#: How much of the text after an anchor is read for the name it spells: a definition's heading, a
#: table cell or a signature's first line is shorter.
ANCHORED_TEXT = 200
#: A name as it is written in text: a word starting with a letter or ``_``, maybe dotted or ``::``.
_WRITTEN_NAME = re.compile(r"[^\W\d]\w*(?:(?:\.|::)[^\W\d]\w*)*")
#: Sphinx's markup of an object's signature (``<dt class="sig sig-object std">``) and of the name in it
#: (``<span class="sig-name descname">``), from which Sphinx's own index is made.
SIGNATURE_CLASS = "sig-object"
SIGNATURE_NAME_CLASS = "descname"
#: The classes of a signature of Sphinx's standard domain (``std``: options, settings, environment
#: variables) or of none.
MANUAL_SIGNATURE_CLASSES = frozenset({"sig", SIGNATURE_CLASS, "std"})
#: Where the part of an id that names the thing ends (``CAIRO-FORMAT-A1:CAPS``, ``append(char[])``).
_ID_QUALIFIER = re.compile(r"[:(]")
#: The emoji and text presentation selectors after a mark (``⚓️``), deleted before it is read.
_VARIATION_SELECTORS = str.maketrans("", "", "\ufe0e\ufe0f")
#: The elements that mark code in a page.
CODE_TAGS = frozenset({"code", "tt", "samp", "kbd"})
#: A table's cells, the first of a row keying it.
CELL_TAGS = frozenset({"td", "th"})
#: The elements that are a list's entries: an index, a cross-reference or a contents page lists other
#: pages as the links of its entries.
LIST_ENTRY_TAGS = frozenset({"li", "dt"})
#: How javadoc names itself in its pages' head: a generator that declares a page's kind by its
#: classes (a site's theme may give its home page the class ``index-page``). Since JDK 16
#: ``<meta name="generator" content="javadoc/ClassUseWriter">``; before, a comment,
#: ``<!-- Generated by javadoc -->``.
JAVADOC_META = "javadoc/"
JAVADOC_COMMENT = "Generated by javadoc"
#: The classes by which javadoc declares a page a list of other pages' names: on its ``<body>``
#: (since JDK 16) uses of a class or package, class hierarchies, all classes or packages, constants,
#: deprecated (all, or in a release), new, preview or restricted APIs, serialized forms, system
#: properties, external specifications, and its index (JDK 16's ``single-index-page`` and
#: ``split-index-page``, one page a letter with ``-splitindex``, each titled ``A-Index``; one
#: ``index-page`` since); before, on the container of the page's content as JDK 8 and 11 name it,
#: the uses of a class, all classes or packages, constants and serialized forms. Not its class,
#: package, overview, help or search pages.
LIST_PAGE_CLASSES = frozenset(
    """class-use-page package-use-page tree-page package-tree-page all-classes-index-page
    all-packages-index-page constants-summary-page deprecated-list-page new-api-list-page
    preview-list-page restricted-list-page serialized-form-page system-properties-page
    external-specs-page deprecated-in-release-page index-page single-index-page split-index-page
    classUseContainer allClassesContainer allPackagesContainer constantValuesContainer
    serializedFormContainer indexContainer""".split()
)
#: The classes of the label by which javadoc says that a method's description is copied from the
#: method it overrides or implements (``Description copied from class: Node``): JDK 11's, 17's, 25's.
#: The copy says what the original says, on the page of the method that defines it, which comes
#: first for a question that its words answer only when the copy is not read.
COPIED_LABEL_CLASSES = frozenset({"descfrmTypeLabel", "descfrm-type-label", "description-from-type-label"})
#: The most words a list's entry may hold beside its links and still point to other pages: an index
#: lists a term and where to find it (``SDL_Init :``, ``database connection →``, ``, function in``),
#: where a sentence about the link says more (``CHECK constraints`` work the same).
ENTRY_TERM_WORDS = 2
#: How many characters (spaces aside) of an entry's text beside its links are read to count those
#: words: far more than a term takes, so that an entry of any length is read in bounded work.
ENTRY_TERM_CHARS = 200


def read_html(text: str, encoding: str = "utf-8") -> Document:
    """A page's visible content, line by line where it is in the source, with its headings and
    ``pre`` blocks."""
    # imported here: only a build that meets an HTML page loads lxml
    from lxml import etree

    line_count = len(split_lines(text))
    parser = etree.HTMLParser(recover=True, no_network=True, encoding="utf-8")
    try:  # bytes, so that a declared encoding (<?xml ... encoding=?>) is no error: the text is decoded
        root = etree.fromstring(text.encode("utf-8", errors="replace"), parser)
    except etree.XMLSyntaxError:  # nothing to parse: an empty or whitespace-only page
        root = None
    fatal = [error for error in parser.error_log if error.level == etree.ErrorLevels.FATAL]
    if root is not None and fatal:  # libxml2 stopped (elements nested over 256 deep): the rest is lost
        raise UnreadableFile(
            f"cannot be read as HTML: {fatal[0].message.strip()} (line {fatal[0].line})", status="damaged"
        )
    reader = _PageReader()
    if root is not None:
        reader.read(root)
    return reader.document(line_count, encoding)


def _as_spans(texts: list[tuple[int, str]]) -> list[tuple[bool, str]]:
    """A heading's texts as a Markdown title's pieces (:func:`title_names`): the texts of one
    code element joined as one code span, whatever elements lie inside it (a link, a highlighter's
    spans: ``<code><a>Widget</a>.make()</code>`` is ``Widget.make()``), each other text alone."""
    runs: list[tuple[int, list[str]]] = []
    for element, text in texts:
        if element and runs and runs[-1][0] == element:
            runs[-1][1].append(text)
        else:
            runs.append((element, [text]))
    return [(element > 0, "".join(parts)) for element, parts in runs]


def _declares_list(root: _Element) -> bool:
    """Whether a page javadoc made declares itself a list of other pages' names
    (:data:`LIST_PAGE_CLASSES`) on its body, or on a container at the top of its body or of its
    ``<main>``."""
    body = root.find("body")
    if body is None:
        return False
    main = body.find("main")
    tops = [body, *body, *(main if main is not None else ())]
    return any(not LIST_PAGE_CLASSES.isdisjoint((top.get("class") or "").split()) for top in tops)


def _copied_description(block: _Element) -> bool:
    """Whether ``block`` is a description javadoc copied from the method a method overrides or
    implements: a ``block`` right after one that opens with the label saying so
    (:data:`COPIED_LABEL_CLASSES`)."""
    if "block" not in (block.get("class") or "").split():
        return False
    label = block.getprevious()
    if label is None or not isinstance(label.tag, str) or "block" not in (label.get("class") or "").split():
        return False
    first = next(iter(label), None)
    return first is not None and not COPIED_LABEL_CLASSES.isdisjoint((first.get("class") or "").split())


def _made_by_javadoc(head: _Element) -> bool:
    """Whether javadoc made the page whose head is ``head`` (:data:`JAVADOC_META`,
    :data:`JAVADOC_COMMENT`)."""
    for child in head:
        if isinstance(child.tag, str):
            if child.tag == "meta" and child.get("name") == "generator":
                return (child.get("content") or "").startswith(JAVADOC_META)
        elif (child.text or "").strip().startswith(JAVADOC_COMMENT):
            return True
    return False


class _Element(Protocol):
    """What the reader uses of an lxml element (lxml ships no types): a comment's or a processing
    instruction's ``tag`` is not a string, and ``text``, ``tail`` and a missing attribute are None."""

    tag: object
    text: str | None
    tail: str | None
    sourceline: int | None

    def get(self, key: str) -> str | None: ...
    def find(self, path: str) -> _Element | None: ...
    def itertext(self) -> Iterator[str]: ...
    def __iter__(self) -> Iterator[_Element]: ...
    def getprevious(self) -> _Element | None: ...
    def __reversed__(self) -> Iterator[_Element]: ...


class _PageReader:
    """Collects text, headings and ``pre`` ranges, each marked with whether it lies in ``<main>``."""

    def __init__(self) -> None:
        self.pieces: list[tuple[int, str, bool]] = []  # (line, text, in main)
        self.headings: list[tuple[Heading, bool]] = []
        self.literal: list[tuple[int, int, bool]] = []
        self.block_starts: list[tuple[int, bool]] = []
        self.line = 1  # where the text being read starts
        self.sectioning = 0  # open article, section and main elements around the current position
        self.main_depth = 0  # open <main> (or role="main") elements around the current position
        self.found_main = False
        # (line, level, texts) of the open heading, each text with the code element it lies in (0: none)
        self.heading: tuple[int, int, list[tuple[int, str]]] | None = None
        self.heading_worded = False  # whether the open heading's text so far holds more than spaces
        self.pre: tuple[int, int] | None = None  # (first line, nesting) of the open <pre>
        self.pre_line_written = False  # whether the open <pre> has text on the line being read
        self.title = ""
        self.lists_pages = False  # the page declares itself a list of other pages' names
        self.by_javadoc = False  # javadoc made the page
        self.waiting: list[_Anchor] = []  # ids whose text has not started (those taken passed over)
        self.row_keys: list[_Anchor] = []  # the row keys among them, until their cell ends
        self.reading: list[_Anchor] = []  # ids whose text is being read, up to their block's end
        self.links = 0  # open <a href> elements around the current position
        self.open_ids: Counter[str] = Counter()  # ids of the open elements around it
        self.link_targets: list[str] = []  # of each open link, the id around it it leads to, or ""
        self.bare_links = 0  # open <a> elements without href (rustdoc's unresolved names)
        self.anchors: dict[str, _Anchor] = {}  # each id's anchor, the last one where ids repeat
        self.page_links = 0  # those of them that lead to another page (not to a fragment of this one)
        self.entries: list[_Entry] = []  # open list entries (``li``, ``dt``), the innermost last
        self.linked_entries: list[tuple[dict[int, int], bool]] = []  # (characters by line, in main)
        self.definitions: list[tuple[int, tuple[str, ...], bool]] = []  # (line, names, in main)
        self.signatures = 0  # open Sphinx signatures (``<dt class="sig sig-object">``) around here
        self.signature_names = 0  # open elements of a signature that hold its name
        self.row_opened = False  # a table row started whose first cell has not
        self.code = 0  # open code elements around the current position
        self.code_elements = 0  # outermost code elements opened so far: which one a text lies in

    def read(self, root: _Element) -> None:
        """Walk the tree in document order, without recursion: a page nested thousands deep is read
        like any other."""
        head = root.find("head")
        title = head.find("title") if head is not None else None
        if title is not None:
            self.title = " ".join("".join(title.itertext()).split())
        self.by_javadoc = head is not None and _made_by_javadoc(head)
        self.lists_pages = self.by_javadoc and _declares_list(root)
        # (element, its tag in lower case once its start was read and its end is to be read, else None)
        stack: list[tuple[_Element, str | None]] = [(root, None)]
        while stack:
            element, closing = stack.pop()
            if closing is not None:
                self._end(element, closing)
                self._text(element.tail)
                continue
            if not isinstance(element.tag, str):  # a comment or processing instruction: not shown
                self._skip(element.text)
                self._text(element.tail)
                continue
            tag = element.tag.lower()
            self._at(element)
            if self._dropped(element, tag):
                for text in element.itertext():
                    self._skip(text)
                self._text(element.tail)
                continue
            self._start(element, tag)
            self._text(element.text)
            stack.append((element, tag))
            stack.extend((child, None) for child in reversed(element))

    # -- elements -----------------------------------------------------------------------------

    def _at(self, element: _Element) -> None:
        """Text after a start tag starts on the line where the tag ends: lxml's ``sourceline``."""
        if element.sourceline:
            self.line = element.sourceline

    def _start(self, element: _Element, tag: str) -> None:
        line = self.line
        if tag not in INLINE and tag != "pre" and self.pre is None:  # words around a block tag are apart
            self._apart(line)
        if tag == "main" or element.get("role") == "main":
            self.main_depth += 1
            self.found_main = True
        if tag in SECTIONING:
            self.sectioning += 1
        if tag in HEADINGS and self.heading is None:
            self.heading = (line, HEADINGS[tag], [])
            self.heading_worded = False
        if tag in BLOCKS and self.pre is None:
            self.block_starts.append((line, self.in_main))
        if tag == "pre":
            if self.pre is None:
                self.pre_line_written = False
            self.pre = (self.pre[0], self.pre[1] + 1) if self.pre else (line, 1)
        own_id = element.get("id")
        anchor = own_id or (element.get("name") if tag == "a" else None)
        if tag == "a" and element.get("href") is not None:
            self.links += 1
            self.page_links += int(leads_away(element))
            self.link_targets.append(self._open_target(element))
            if self.link_targets[-1]:
                self._named_by_link("", self.link_targets[-1])
        elif tag == "a":
            self.bare_links += 1
        if own_id:
            self.open_ids[own_id] += 1
        if tag in LIST_ENTRY_TAGS:
            self.entries.append(_Entry(self.in_main))
        if anchor:
            self.anchors[anchor] = _Anchor(anchor, self.in_main)
            self.waiting.append(self.anchors[anchor])
        if tag in CODE_TAGS:
            if not self.code:
                self.code_elements += 1
            self.code += 1
        if tag == "tr":
            self.row_opened = True
        elif tag in CELL_TAGS and self.row_opened:
            self.row_opened = False
            self.row_keys.append(_Anchor("", self.in_main, row_key=True))
            self.waiting.append(self.row_keys[-1])
        self._signature_start(element, tag)

    def _signature_start(self, element: _Element, tag: str) -> None:
        """A Sphinx signature's name (its ``sig-name descname`` element, the outermost one) is a name
        its chunk declares: ``--strict`` of ``<dt class="sig sig-object std"
        id="cmdoption-mypy-strict">``, whose id spells the program's name with it."""
        classes = (element.get("class") or "").split()
        if tag == "dt" and is_manual_signature(classes):
            self.signatures += 1
        elif self.signatures and SIGNATURE_NAME_CLASS in classes:
            if not self.signature_names:
                name = " ".join("".join(element.itertext()).split())
                if name and " " not in name:  # known whole, as a setting's dotted key is
                    self.definitions.append((self.line, (name,), self.in_main))
            self.signature_names += 1

    def _signature_end(self, element: _Element, tag: str) -> None:
        classes = (element.get("class") or "").split()
        if tag == "dt" and is_manual_signature(classes):
            self.signatures = max(self.signatures - 1, 0)
        elif self.signatures and SIGNATURE_NAME_CLASS in classes:
            self.signature_names = max(self.signature_names - 1, 0)

    def _end(self, element: _Element, tag: str) -> None:
        line = self.line
        if tag == "main" or element.get("role") == "main":
            self.main_depth -= 1
        if tag in SECTIONING:
            self.sectioning = max(0, self.sectioning - 1)
        if tag in HEADINGS and self.heading is not None and HEADINGS[tag] == self.heading[1]:
            start, level, texts = self.heading
            title = " ".join("".join(text for _, text in texts).split())
            if title:
                self.headings.append((Heading(start, level, title, line), self.in_main))
            if declared := title_names(_as_spans(texts)):
                self.definitions.append((start, declared, self.in_main))
            self.heading = None
            self.heading_worded = False
        if tag == "pre" and self.pre is not None:
            first, depth = self.pre
            if depth == 1:  # a line the block's text left before </pre> is the next block's
                last = line if self.pre_line_written or line == first else line - 1
                self.literal.append((first, last, self.in_main))
                self.pre = None
            else:
                self.pre = (first, depth - 1)
        if tag not in INLINE and self.pre is None:
            self._apart(line)
        own_id = element.get("id")
        if own_id:
            self.open_ids[own_id] -= 1
        if tag == "a" and element.get("href") is not None:
            self.links -= 1
            self.page_links -= int(leads_away(element))
            self.link_targets.pop()
        elif tag == "a":
            self.bare_links -= 1
        if tag in LIST_ENTRY_TAGS and self.entries:
            entry = self.entries.pop()
            if entry.is_links:
                self.linked_entries.append((entry.lines, entry.in_main))
        if tag in CODE_TAGS:
            self.code = max(self.code - 1, 0)
        if tag in CELL_TAGS:  # an empty first cell keys its row by nothing, not by the next cell
            for key in self.row_keys:
                key.taken = True
            self.row_keys = []
        if tag not in INLINE:
            self._spelled(self.reading)
            self.reading = []
        self._signature_end(element, tag)

    def _open_target(self, link: _Element) -> str:
        """The id of an element ``link`` lies in that it leads to, else "": rustdoc's ``<section
        id="method.freeze">`` names its method by a link to itself, ``pub fn <a
        href="#method.freeze">freeze</a>``, where another link's text only uses a name."""
        href = link.get("href") or ""
        return href[1:] if href.startswith("#") and self.open_ids[href[1:]] > 0 else ""

    def _named_by_link(self, data: str, target: str) -> None:
        """``data``, in a link to the element of id ``target`` it lies in, read for that id: the id
        starts being read here if it had not, so that its names are read, and on this line, at the
        end of this block."""
        anchor = self.anchors[target]
        anchor.self_linked = True
        if not anchor.taken and data.strip():
            self.reading.append(anchor.starting(self.line, self.code > 0))
        anchor.linked += data[: ANCHORED_TEXT - len(anchor.linked)]

    def _anchored(self, data: str) -> None:
        """``data`` read for the ids before it: those waiting start at its first words; each reads
        up to :data:`ANCHORED_TEXT` characters, then is done, so that every id reads a bounded text
        however many a block holds."""
        if data.strip():
            line = self.line + data[: len(data) - len(data.lstrip())].count("\n")
            self.reading += [
                anchor.starting(line, self.code > 0) for anchor in self.waiting if not anchor.taken
            ]
            self.waiting = []
        for anchor in self.reading:
            anchor.text += data[: ANCHORED_TEXT - len(anchor.text)]
            if not self.bare_links:
                anchor.plain += data[: ANCHORED_TEXT - len(anchor.plain)]
        done = [anchor for anchor in self.reading if len(anchor.text) >= ANCHORED_TEXT]
        if done:
            self._spelled(done)
            self.reading = [anchor for anchor in self.reading if len(anchor.text) < ANCHORED_TEXT]

    def _spelled(self, anchors: list[_Anchor]) -> None:
        for anchor in anchors:
            names = called_names(anchor) if anchor.row_key else spelled_names(anchor)
            if names:
                self.definitions.append((anchor.line, names, anchor.in_main))

    @property
    def in_main(self) -> bool:
        return self.main_depth > 0

    def _dropped(self, element: _Element, tag: str) -> bool:
        if tag in DROPPED_TAGS or (tag in PAGE_LANDMARKS and not self.sectioning):
            return True
        if element.get("hidden") is not None or element.get("aria-hidden") == "true":
            return True
        if (element.get("role") or "") in DROPPED_ROLES:
            return True
        classes = (element.get("class") or "").split()
        if DROPPED_CLASSES.intersection(classes) or any(BREADCRUMBS in name.lower() for name in classes):
            return True
        if tag == "a" and self.heading_worded and is_permalink(element):
            return True
        if self.by_javadoc and tag == "div" and _copied_description(element):
            return True
        return BREADCRUMBS in (element.get("aria-label") or "").lower()

    # -- text -----------------------------------------------------------------------------------

    def _text(self, data: str | None) -> None:
        if not data:
            return
        if self.pre is not None:
            after_break = data.rsplit("\n", 1)[-1]
            self.pre_line_written = bool(after_break.strip()) or ("\n" not in data and self.pre_line_written)
        if self.heading is not None:
            self.heading[2].append((self.code_elements if self.code else 0, data))
            self.heading_worded = self.heading_worded or not data.isspace()
        if not self.links:
            self._anchored(data)
        elif self.link_targets[-1]:
            self._named_by_link(data, self.link_targets[-1])
        for offset, part in enumerate(data.split("\n")):
            self._add(self.line + offset, part)
            if self.entries:
                self.entries[-1].read(self.line + offset, part, self.page_links > 0)
        self.line += data.count("\n")

    def _skip(self, data: str | None) -> None:
        """Text not kept still takes up lines."""
        if data:
            self.line += data.count("\n")

    def _apart(self, line: int) -> None:
        """A space at a block tag's edge: in the text, and in the title of an open heading (rustdoc's
        ``<h3>impl Borrow for T<div class="where">where ...</div></h3>`` is ``T where``, not ``Twhere``)."""
        self._add(line, " ")
        if self.heading is not None:
            self.heading[2].append((0, " "))

    def _add(self, line: int, text: str) -> None:
        if text:
            self.pieces.append((line, text, self.in_main))

    def document(self, line_count: int, encoding: str) -> Document:
        """The text of every source line (blank where nothing is kept), with headings and literal."""

        def kept(in_main: bool) -> bool:
            return in_main or not self.found_main

        literal = [(first, last) for first, last, in_main in self.literal if kept(in_main)]
        in_literal = {number for first, last in literal for number in range(first, last + 1)}
        placed = ((line, text) for line, text, in_main in self.pieces if kept(in_main))
        lines = placed_lines(placed, line_count, in_literal)
        headings = self._named([heading for heading, in_main in self.headings if kept(in_main)], lines)
        starts = sorted({line for line, in_main in self.block_starts if kept(in_main)})
        by_line: dict[int, dict[str, None]] = {}  # each line's names once, in order, however many
        for line, names, in_main in self.definitions:
            if kept(in_main):
                by_line.setdefault(line, {}).update(dict.fromkeys(names))
        definitions = {line: tuple(names) for line, names in by_line.items()}
        linked: dict[int, int] = {}
        for shown, in_main in self.linked_entries:
            if not kept(in_main):
                continue
            for number, characters in shown.items():
                linked[number] = linked.get(number, 0) + characters
        return Document(
            lines,
            headings,
            literal,
            block_starts=starts,
            encoding=encoding,
            definitions=definitions,
            linked_entries=linked,
            is_contents=self.lists_pages,
        )

    def _named(self, headings: list[Heading], lines: list[str]) -> list[Heading]:
        """The headings, with the page's title as the head of every path unless an ``h1`` names the
        page: its only one, or one of several that begins its title (``Widgets`` of ``Widgets - Acme
        Docs``, beside the site's logo ``<h1>Acme Docs</h1>``). A page of several ``h1`` none of
        which does has them as its sections (SQLite's ``1. Overview``, ``2. Syntax`` on the page
        titled ``CREATE TRIGGER``), and its title names it."""
        level_one = [heading.title for heading in headings if heading.level == 1]
        if not self.title or len(level_one) == 1 or any(begins(self.title, title) for title in level_one):
            return headings
        if headings and headings[0].title.casefold() == self.title.casefold():
            first = headings[0]
            return [Heading(first.line, TITLE_LEVEL, first.title, first.last_line), *headings[1:]]
        first_text = next((number for number, line in enumerate(lines, 1) if line.strip()), 0)
        if not first_text:
            return headings
        return [Heading(first_text, TITLE_LEVEL, self.title), *headings]


@dataclass
class _Anchor:
    """An element's id and the start of the text after it, from ``line``; or (``row_key``) the
    start of a table row's first cell, and whether its text starts in code."""

    anchor: str
    in_main: bool
    row_key: bool = False
    line: int = 0
    text: str = ""
    in_code: bool = False
    self_linked: bool = False  # whether its element holds a link to it
    linked: str = ""  # the text of those links
    plain: str = ""  # its text outside any <a> element
    taken: bool = False  # whether it left the waiting: read, or a row key whose cell ended empty

    def starting(self, line: int, in_code: bool) -> _Anchor:
        self.line, self.in_code, self.taken = line, in_code, True
        return self


@dataclass
class _Entry:
    """A list's entry being read (an ``li`` or ``dt``): how many characters of its own text (not its
    nested entries') it holds on each line, spaces aside; whether any of it lies in a link to another
    page; and its text outside links, up to :data:`ENTRY_TERM_CHARS` characters, spaces aside."""

    in_main: bool
    points_away: bool = False
    lines: dict[int, int] = field(default_factory=dict)
    beside_links: list[str] = field(default_factory=list)
    beside_characters: int = 0

    def read(self, line: int, text: str, in_link: bool) -> None:
        shown = shown_characters(text)
        if shown:
            self.points_away = self.points_away or in_link
            self.lines[line] = self.lines.get(line, 0) + shown
        if not in_link and self.beside_characters < ENTRY_TERM_CHARS:
            self.beside_links.append(text if shown else " ")
            self.beside_characters += shown

    @property
    def is_links(self) -> bool:
        """Whether the entry points to other pages: it links one, and its text beside its links is
        a term of :data:`ENTRY_TERM_WORDS` words at most, what an index lists
        (``<li><a href="c3ref/open.html">sqlite3_open</a></li>``, a contents page's
        ``<a href="install.html">Installing</a>``, Doxygen's index of globals ``<li>SDL_Init :
        <a href="...">SDL.h</a></li>``, gtk-doc's ``<a>g_access</a>, function in <a>File
        Utilities</a>``, a cross-reference's ``database connection → backup.html wal.html``). Not an
        entry that says something of the page it links (``<a href="strict.html">CHECK
        constraints</a> work the same``)."""
        if not self.points_away or self.beside_characters >= ENTRY_TERM_CHARS:
            return False
        words = "".join(self.beside_links).split()
        return sum(any(char.isalnum() for char in word) for word in words) <= ENTRY_TERM_WORDS


def leads_away(link: _Element) -> bool:
    """Whether ``link`` (an ``<a href>``) leads to another page: not to a fragment of its own page
    (a page's summary of its own functions links to their sections and is no list of other pages),
    nor to itself (an empty ``href``), a script or a mail address."""
    href = (link.get("href") or "").strip().lower()
    return bool(href) and not href.startswith(("#", "javascript:", "mailto:"))


def begins(text: str, start: str) -> bool:
    """Whether ``text`` begins with the words of ``start``, case aside: ``Widgets - Acme Docs``
    with ``Widgets``, not ``Widgetsmith``."""
    text, start = text.casefold(), start.casefold()
    return text.startswith(start) and (len(text) == len(start) or not text[len(start)].isalnum())


def is_permalink(link: _Element) -> bool:
    """Whether ``link``, in a heading after its title's words, is the heading's link to itself
    shown as one mark (``<a href="#syntax" class="permalink">¶</a>``, ``§``, ``#``, ``⚓️``): a
    page's way of sharing a section, whatever its generator calls the class, and no word of the
    section's title. A heading that is only such a link (an operator's section, ``+``) keeps it."""
    text = "".join(link.itertext()).strip().translate(_VARIATION_SELECTORS)
    return (link.get("href") or "").startswith("#") and len(text) == 1 and not text.isalnum()


def is_manual_signature(classes: list[str]) -> bool:
    """Whether a ``dt`` of ``classes`` is a Sphinx signature of a manual's own option, setting or
    environment variable: of Sphinx's standard domain, or of none (Django's options). A programming
    language's objects (``py``, ``c``, ``cpp``, ``js``) are named in full by their ids
    (``id="multiprocessing.Process.join"``), which :func:`spelled_names` reads; their short names
    (``join``) are many objects' names, not what one of them is called."""
    return SIGNATURE_CLASS in classes and set(classes) <= MANUAL_SIGNATURE_CLASSES


def called_names(cell: _Anchor) -> tuple[str, ...]:
    """The name a table row's first cell declares when its text starts with a call in code
    (``<code class="function">btrim</code> ( string text ... )``, ``<code>len(s)</code>``), with
    the last part of a dotted one: a table keyed by signatures lists the functions it defines.
    A cell of prose (``Note (see below)``) declares nothing."""
    return cell_call_names(cell.text) if cell.in_code else ()


def spelled_names(anchor: _Anchor) -> tuple[str, ...]:
    """The names of the text after an id whose letters and digits, in lower case, are those of the
    id, or of its part before a ``:`` or ``(``; with the last part of a dotted one. Where the id's
    element holds a link to itself, as an item's section in rustdoc does, also the name, in that
    link or outside any link, that is the id's part after the item's kind before its first ``.``
    (``<section id="method.freeze">`` with ``pub fn <a href="#method.freeze">freeze</a>``,
    ``<section id="variant.Off"><a href="#variant.Off">§</a><h3>Off</h3>``; not a name that links
    elsewhere or nowhere: a trait's method on a type that implements it). Where that text
    starts in code, also those of the id's part after a namespace before its first ``-``:
    DocBook's ``<dt id="GUC-WORK-MEM"><code class="varname">work_mem</code>``. Not in prose: a
    chapter's ``id="chapter-gobject"`` before ``The GObject base class`` names no definition."""
    named = _ID_QUALIFIER.split(anchor.anchor, maxsplit=1)[0]
    keys = {_letters(anchor.anchor), _letters(named)}
    if anchor.in_code:
        keys.add(_letters(named.partition("-")[2]))
    keys.discard("")
    spelled = [name for name in _WRITTEN_NAME.findall(anchor.text) if _letters(name) in keys]
    item = _letters(named.partition(".")[2]) if anchor.self_linked else ""
    if item:
        shown = _WRITTEN_NAME.findall(anchor.linked) + _WRITTEN_NAME.findall(anchor.plain)
        spelled += [name for name in shown if _letters(name) == item]
    return known_names(spelled)


def _letters(text: str) -> str:
    return "".join(char for char in text.casefold() if char.isalnum())
