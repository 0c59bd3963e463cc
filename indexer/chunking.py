"""Stage 2: cut a file's text into chunks that fit the model's input, and fill them.

The one place for the chunk size limit. Sizes are measured with the backend's own token counter.

How boundaries are chosen, and why:
- The units are blocks: paragraphs separated by blank lines (or started where the reader says, as at
  an HTML ``<p>``, a PDF page or a notebook cell), and whole code blocks, which the reader marks as
  literal. Each block knows the structure in front of it: the heading that starts it (from the
  format's parser: the chunker never guesses a heading from a ``#``), a part (page, cell) or a plain
  paragraph break.
- A heading never ends a chunk: a heading followed at once by another heading travels with the text
  after it (and one that ends a file with the text before it), so every chunk carries text to read.
  Its heading path still says where it is. A file whose text is nothing but its one title (and
  markup), where its markup includes other files' text (a DocBook guide's section that only
  XIncludes a module's man page, an AsciiDoc assembly of ``include::`` lines), stores no chunk: what
  it holds is the included files' text, which the build reads as those files, and a chunk of its
  title alone would come first for every question the included page answers, with nothing in it to
  read. A file of titles that includes nothing (a stub page) is stored as it is, and so is one of
  several titles (an FAQ's questions over the snippets that answer them): its titles say what each
  included part is about, which the included files need not.
- The document is cut at the strongest boundary inside it (a top-level heading first, then the next
  level, then parts, then paragraphs) until the pieces fit; a block too big on its own is cut by
  lines, and a line too long by words. Neighbouring pieces that fit are packed together into one
  chunk up to the limit, whole sections included, so a chunk holds as much context as the model
  reads. Under one heading, the lines of a block cut by lines are packed with the paragraphs around
  it, so a code block, table or list keeps its lead-in sentence. Where two sections cut apart meet,
  the chunk that ends one and the chunk that starts the next become one when they fit together.
  A piece that ends up small is joined to a neighbour when both fit together, and else takes the
  nearest blocks of a neighbour, so no chunk is a stub (a table's last row, a lone "See also").
- Packing ends a chunk after a block whose text hash marks it as a cut point once the chunk is two
  thirds full (content-defined chunking), or when the next piece would not fit. Because the cut points
  depend on the blocks' own text and not on where the chunk started, boundaries re-synchronise right
  after an edit: a one-line change re-embeds the chunk it is in and at most the next one or two.
- A chunk that starts inside a section begins with the last lines of the previous one (a small
  overlap), so a sentence at the boundary is found from either side.
- A chunk is headed by where most of its text lies (:func:`_chunk_path`): the end of a section a
  chunk before began, or what it opens, each by the heading path its blocks share. A chunk holding
  a long function's short tail and the next function is headed by the next, not by their file.
- Markup lines (a title's adornment, a code fence, a table's delimiter row) stay in a chunk's text
  but not in what the model reads: they count nothing toward the limit. A line the reader reads
  otherwise than it is written (``Document.read_as``: a link macro's visible text) stays in the text
  as written, and the model reads, and the limit counts, what the reader read.
- The model reads a run of one punctuation mark (a contents page's dot leaders, ``. . . .``; a rule
  of dashes) as three of them (:func:`without_leaders`); the text keeps it, and the limit counts it,
  as written.
"""

from __future__ import annotations

import bisect
import hashlib
import math
import re
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise

from indexer.formats.document import Document, Heading, shown_characters
from indexer.records import HEADING_SEPARATOR, Chunk, code_lead, lead_lines
from indexer.redaction import REDACTION_VERSION

TokenCounter = Callable[[list[str]], list[int]]

#: 2: structure from each format's parser (headings, literal blocks, parts) instead of guessed;
#: 3: the words of a block inside an HTML heading kept apart;
#: 4: sections packed toward the limit, no chunk of a heading alone, markup counting nothing, front
#: matter, link definitions and page navigation left out;
#: 5: a block cut by lines packed with its lead-in, sections cut apart joined at their seam, small
#: chunks filled from a neighbour; 6: the names a chunk's lines declare stored with it;
#: 7: source code cut at its definitions and statements (indexer/formats/code.py), headed by its outline;
#: 8: a chunk whose lines are tests, as their language declares them, stored as one;
#: 9: the names an HTML page's anchors spell stored as the names its chunks declare;
#: 10: a Markdown heading's attribute list (``{ #id }``) left out of its title;
#: 11: a chunk of a source code file stored as one (its keyword text gains its names' parts);
#: 12: code after a block that a definition ends (a ``try``, a test's callback) goes back under the
#: definition's container;
#: 13: how a chunk's first lines lie in a code block its file opened before it, stored with it (its
#: snippet shows them as code, what follows as text); nothing the model reads changes;
#: 14: a line too long for a chunk is cut into parts of about the same size, no stub at its end;
#: 15: the model reads a run of one punctuation mark as three of them (:func:`without_leaders`);
#: 16: a chunk whose lines are a contents list stored as one (:func:`contents_entries`);
#: 17: a Markdown heading whose title is code alone, and an AsciiDoc description list's term that is
#: names, declare the names they spell; 18: a Sphinx signature's name in HTML declares it;
#: 19: a block that opens a definition starts the next chunk rather than end one, and autodoc's
#: directives declare the names they document; 20: a Markdown table row keyed by options declares them,
#: and a reST directive with no content before a section's title defines that section; 21: a
#: section's title and its directive, or nested definitions, open their description together; 22: an
#: HTML id in a namespace before a name in code, and a table row keyed by a call, declare the name
#: 23: an HTML page of several ``h1`` has its title as the head of their paths; 24: a heading's
#: permalink mark (``¶``) is no part of its title; 25: an HTML list whose entries are links to other
#: pages stored as a contents list (:attr:`Document.linked_entries`); 26: an HTML section's link to
#: itself declares the name it shows (rustdoc's items); 27: only a name in that link or outside
#: any link, on the line the section's text starts; 28: an HTML page whose markup declares it a list
#: of other pages' names (javadoc's uses, hierarchy and all-classes pages) stored as a contents
#: list, an HTML heading whose title is code alone declares the names it spells, and an HTML code
#: block ends on its last line of code, not on the line of its ``</pre>``; 29: a description javadoc
#: copied from an overridden or implemented method is not read; 30: a plain-text changelog's entries,
#: as its format declares them (:mod:`indexer.formats.changes`), are its headings; 31: Org and LaTeX
#: files read by their headlines and sections, blocks and markup (:mod:`indexer.formats.org`,
#: :mod:`indexer.formats.latex`); 32: an Info manual's cross references read as "see" and the name
#: (:func:`indexer.formats.info.references_read`); 33: C in one configuration of its conditional
#: groups, a JavaScript project's ``test/`` files as tests (:mod:`indexer.formats.code`); 34: a
#: ``.h`` header that C cannot read, read as C++; 35: C and C++ read without the macros of their
#: declarations (:func:`indexer.formats.preprocessor.without_macros`); 36: Rust's doc comments
#: start the heading of the item they document, and a value a call builds around a function
#: (``memo(...)``, a factory) defines its name (:mod:`indexer.formats.code`); 37: a chunk is headed
#: by where most of its text lies (:func:`_chunk_path`), and a Markdown admonition's and content tab's
#: indented content is read as text, not as an indented code block, and an AsciiDoc attribute set
#: in a one-line ``ifndef`` is read where it is referred to, the line itself showing nothing; 38: a
#: container's members (properties, fields, constants, enum cases) declare their qualified names, a
#: namespace declares none, a Kotlin type alias and an extension function under its receiver's type
#: are definitions, a file of tests alone is tests whole, and a Kotlin class whose constructor starts
#: on the next line is read by its grammar (:mod:`indexer.formats.code`); a Markdown list item keyed
#: by options declares them, an HTML heading block is a heading, an ``.. only::`` block for another
#: builder is not read, and a file's untitled top lines do not head the definition after them
#: (:func:`_opened_path`); an AsciiDoc description list's term declares the names it shows, bold,
#: italic and monospace marks read as the page shows them, and an mdoc list item's tag the flag or
#: keyword its macros name, not its argument (``.It Fl J Ar destination``: ``-J``), and an AsciiDoc
#: list whose entries link to other pages (Antora's navigation files) stored as a contents list;
#: mdoc's ``Fl`` dashes each argument, ``Ux`` and the BSDs' macros print their names, ``Nm .`` the
#: page's name, an enclosure's trailing punctuation goes after it; 39: a constructor's parameter
#: that declares a property (PHP's promoted, Kotlin's ``val``) is its class's member, and a Markdown
#: list item of an option alone declares nothing; 40: so are a C# record's positional parameters and
#: TypeScript's parameter properties (``private readonly host``); 41: Ruby's tests declared by
#: minitest's and RSpec's blocks (``describe``, ``it "..." do``) and minitest's test classes, and a
#: Rust trait impl's members qualified by its type (``Json::from_request``), and a doc comment one
#: blank line above a definition starts its heading, and a JavaScript module's object of methods
#: holds them (``jsonHandler.parse``); reST titles read as a page shows them, a title that is one
#: config key's name declares it, a Markdown list of links alone is a contents list, a roff tag of
#: words joined by unbreakable spaces is one name, and an AsciiDoc macro's named attributes show nothing;
#: 42: DocBook XML read by its elements (sections and reference pages as headings, literal elements as
#: code, a page's names, a variable list's terms and a funcdef's function as names); 43: C's and C++'s
#: tests, by their files' names, their folders and their frameworks' macros (``TEST_CASE("name") {``),
#: and their macros' names (``#define NAME``) declared; a member whose name is compound
#: (``MaxHedgedAttempts``) declared alone too, and a definition's or member's doc comment one block
#: with it; a man page's tag in bold before a value in italic declares its bold words, a notebook's
#: code cells what they define, Markdown's front matter is at a file's top only, an AsciiDoc
#: paragraph ends at its block's closing line, and a heading path too long is shortened, not left out;
#: a Markdown line's HTML and template directives read as the page shows them, its anchored option
#: rows' names declared, and AsciiDoc's links from unset attributes read as their text and its
#: anchored list terms declared; 44: a terminal's control sequences read as nothing, in any format,
#: and a split Info manual's part heads its first nodes under the chapter an earlier part began;
#: Swift and Scala read by their grammars; 45: Lua and Elixir read by their grammars, and a Ruby
#: method whose name ends in ``?`` or ``!`` declared qualified by its class; 46: Dart, Zig, Haskell
#: and OCaml read by their grammars, an AsciiDoc title of code or of config keys declares them, as
#: a Markdown title does, a Markdown code fence's caption (``title="src/app.ts"``) is read as the
#: line above it, an MDX page's imports and exports as nothing, a JSX component as its title, and a
#: Sphinx Python object directive declares its name qualified by its module and class; a script
#: without an extension read in its interpreter's language; Go's package constants and variables
#: (each spec of ``const ( ... )``), a JavaScript module's exported variables whatever their value,
#: and a function declared in a function's body headed and declared; a file mostly in syntax errors
#: keeps the outline of the statements that parse and its path's heading; Cargo's ``tests/`` and a
#: test module's ``tests.rs`` are tests; a Markdown list item keyed by a name spelt as code, and a
#: title of one code span and a remark, declare it; LaTeX's short
#: verbatim (``|\frame|``) read as written where the document makes it so, a manual's entry head
#: read as its signature and declaring what it documents, a slide's ``\begin{frame}{Title}`` a
#: heading; a notebook's markdown cell read as a Markdown page is (its HTML as the page shows it);
#: 47: an MDX component's indented children read as Markdown, not as an indented code block;
#: 48: YAML, TOML, INI and JSON files headed by their path and the keys that open their parts;
#: a module's and a class's named values declared (Ruby's constants, Kotlin's top-level
#: properties, a Lua module table's fields), RSpec's and busted's test groups and tests headed by
#: their titles, YARD's ``@!method`` declaring, Ruby's setters and operators qualified; Python's
#: module constants and type aliases, and a class's attributes, declared;
#: a man page's setting tags (``xfer:clobber (boolean)``) and command synopses declare their
#: names; plain text's dated releases and underlined titles are headings, and its FAQ's
#: questions open blocks; Jinja templates read as the format they render;
#: a Sphinx object directive heads its
#: description as code's definitions do (a section cut before a definition's line, the
#: description kept with the chunk that declares it), and a reST grid table is read as its cells;
#: a DocBook file's entities read as its DTDs inside the indexed folder declare them, a Hugo
#: shortcode as its caption, a Markdown page's first heading that repeats its title as its title,
#: an AsciiDoc title of one sigil'd or capitalised token declaring it; 49: a Lua file's ``local``
#: constants declared, a changelog's release lines that give the date first open entries; 50: a
#: Python command's options declared by the parser calls that spell them; 51: Swift's globals and
#: Rust's constants and statics declared, Scala's ``test("name")`` heading its test, a reST
#: section's label and a labelled title of names, option lists and definition terms that are names
#: declared, an AsciiDoc id in single quotes and a table's own separator read, a ``.conf`` file
#: headed by its brace blocks, NEWS releases after a page break, an option taking a list declared,
#: a CSV or TSV file's rows headed by its columns, a Dockerfile or other code no grammar reads by its
#: path; 52: Go's, Rust's and JavaScript's command-line options declared, a page of one title over
#: the files it includes storing no chunk, configuration named without an extension read by the
#: format it declares, Ruby's DSL files read as Ruby, an Elixir function's clauses one heading,
#: ExUnit's tests, TypeScript's members and overloads, a man page's bold options with a value;
#: 53: OCaml's operators and Haskell's ``-- ^`` comments, a VitePress page's scripts, containers,
#: tab labels and Shiki notation, shell-variable and example-copy configuration read, Sphinx's
#: ``.rst.inc`` parts, AsciiDoc passthroughs and escapes, reST options in tables and nested terms
CHUNKER_VERSION = 53
#: A run of one punctuation mark, written together or a space apart, longer than three: a contents
#: page's dot leaders (``Introduction . . . . . 3``), a rule of dashes or equals signs.
LEADER_RUN = re.compile(r"([^\w\s])(?: ?\1){3,}")
#: Where a contents list's entry says its title is, at the end of its line: a page number (group 1),
#: a page in roman numerals as front matter numbers them (``xi``, ``XI``: a numeral, not any word
#: of their letters), or a reference between bars (Vim's help, ``|netrw-netrc|``).
ROMAN = r"(?=[ivxlcdm])m{0,4}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})"
ENTRY_PLACE = re.compile(rf"(?<!\w)(?:(\d{{1,5}})|{ROMAN}|{ROMAN.upper()}|\|[^|\s]{{1,80}}\|)$")
#: A word of a title or a line, for telling whether a line writes a title (:func:`_preamble_end`).
_WORD = re.compile(r"\w+")
#: The characters such a place ends with: a line that ends otherwise, most lines of any file, is no
#: entry, known without the search the pattern makes from each of its characters.
PLACE_ENDS = frozenset(string.digits + "ivxlcdm" + "ivxlcdm".upper() + "|")
#: The longest line read as a contents list's entry (a title, its leaders and a page fill a line),
#: and the most of its end where the place is looked for.
MAX_ENTRY_CHARS = 300
PLACE_CHARS = 100
#: A contents list is this many entries or more (:func:`contents_entry`) whose page numbers do not
#: fall, with no more than :data:`CONTENTS_SPAN` lines from the first to the last of any this many
#: in a row: a title may wrap onto a second line and a blank line may part two groups, while a line
#: or two ending in leaders and a number are a form's fields, and figures that rise and fall (a
#: price list, an account) are no contents.
CONTENTS_ENTRIES = 3
CONTENTS_SPAN = 6
CUT_POINT_MODULUS = 3  # about one block in three ends a chunk once the chunk is FILLED
#: How full a chunk is before a cut point may end it: fuller chunks than half, with one-line edits
#: as local (both measured on real doc folders, bench/RESULTS.md).
FILLED = 2 / 3
#: The strength of the boundary before a block: a heading's level (1 is the strongest), a part
#: (page, cell), a paragraph, a line of a block cut by lines.
PART, PARAGRAPH, LINE = 50, 100, 1000


@dataclass(frozen=True)
class ChunkSettings:
    """Everything that decides where chunks fall, and the redaction rules that decide their text;
    recorded in the index's fingerprint."""

    max_tokens: int
    overlap_tokens: int

    @classmethod
    def for_limit(cls, max_tokens: int) -> ChunkSettings:
        return cls(max_tokens=max_tokens, overlap_tokens=max(8, max_tokens // 10))

    def describe(self) -> dict[str, int]:
        return {
            "max_tokens": self.max_tokens,
            "overlap_tokens": self.overlap_tokens,
            "version": CHUNKER_VERSION,
            "redaction": REDACTION_VERSION,
        }


@dataclass
class _Piece:
    """One line, or part of an over-long line, with what the model reads of it and its tokens (0 for
    a markup line)."""

    line: int
    text: str
    read: str
    tokens: int
    markup: bool = False


@dataclass
class _Block:
    """A run of pieces read together, the heading path it lies under, and the strength of the
    boundary before it (see PART)."""

    pieces: list[_Piece]
    path: tuple[str, ...]
    boundary: int
    heading_only: bool = False  # nothing but a heading's own lines (and markup)
    opens_definition: bool = False  # its first line declares names, described in the block under it
    defines: bool = False  # a line of it declares names
    preamble: bool = False  # before a file's first definition, under a top heading no line writes
    titles: int = 0  # leading pieces that are headings carried to this block's text
    tokens: int = field(init=False)

    def __post_init__(self) -> None:
        self.tokens = sum(piece.tokens for piece in self.pieces)


class _Headings:
    """The text and token cost of each heading path as a chunk's prefix. A path may take a quarter
    of a chunk at most; a longer one is shortened (:meth:`_fit`), not left to starve the text."""

    def __init__(
        self, paths: list[tuple[str, ...]], tokens: list[int], max_tokens: int, count_tokens: TokenCounter
    ) -> None:
        self.budget = max_tokens // 4
        self.count_tokens = count_tokens
        self.fitted: dict[tuple[str, ...], tuple[str, int]] = {(): ("", 0)}
        for path, count in zip(paths, tokens, strict=True):
            self.fitted[path] = self._fit(path, count)

    def text(self, path: tuple[str, ...]) -> str:
        return self._fitted(path)[0]

    def cost(self, path: tuple[str, ...]) -> int:
        return self._fitted(path)[1]

    def _fitted(self, path: tuple[str, ...]) -> tuple[str, int]:
        if path not in self.fitted:  # a path not foreseen (a heading on a code block's last line)
            self.fitted[path] = self._fit(path, self.count_tokens([HEADING_SEPARATOR.join(path)])[0])
        return self.fitted[path]

    def _fit(self, path: tuple[str, ...], tokens: int) -> tuple[str, int]:
        """The heading ``path`` shows a chunk and its cost (its ``tokens`` and a separator): the whole
        path where it fits the budget; else, as a reader keeps what places the chunk nearest, the
        outermost title, where it is a file's path, by the file's name (a source file's deep path,
        ``src/main/java/.../Parser.java``), then the titles from the innermost outward, as many as
        fit; none where even the innermost alone does not (an absurd heading)."""
        if tokens + 1 <= self.budget:
            return HEADING_SEPARATOR.join(path), tokens + 1
        _, slash, name = path[0].rpartition("/")
        is_file = bool(slash) and "." in name and " " not in path[0]  # not a title (``CI/CD``)
        named = (name if is_file else path[0], *path[1:])
        shortened = [HEADING_SEPARATOR.join(named[first:]) for first in range(len(named))]
        for text, count in zip(shortened, self.count_tokens(shortened), strict=True):
            if count + 1 <= self.budget:
                return text, count + 1
        return "", 0


def _heading_paths(headings: list[Heading]) -> list[tuple[str, ...]]:
    """Every heading path a line of the document can lie under, and every prefix of one."""
    paths: set[tuple[str, ...]] = set()
    trail: list[tuple[int, str]] = []
    for heading in sorted(headings, key=lambda heading: heading.line):
        trail = [(level, name) for level, name in trail if level < heading.level]
        trail.append((heading.level, heading.title))
        paths.update(tuple(name for _, name in trail[:length]) for length in range(1, len(trail) + 1))
    return sorted(paths)


def chunk_document(document: Document, count_tokens: TokenCounter, settings: ChunkSettings) -> list[Chunk]:
    """Cut ``document`` into chunks whose :attr:`Chunk.embed_text` fits in ``settings.max_tokens``.

    Every line of the document lies in some chunk, but for a file whose own text is titles alone
    over the files it includes (:attr:`Document.includes`), which stores none; the same document
    always gives the same chunks.
    """
    lines = document.lines
    if not any(line.strip() for line in lines):
        return []
    paths = _heading_paths(document.headings)
    read = [document.read_as.get(number, line) for number, line in enumerate(lines, 1)]
    counted = count_tokens(read + [HEADING_SEPARATOR.join(path) for path in paths])  # one call: each costs
    line_tokens = counted[: len(lines)]
    headings = _Headings(paths, counted[len(lines) :], settings.max_tokens, count_tokens)
    pieces = [
        _Piece(number, line, read, 0 if number in document.markup else tokens, number in document.markup)
        for number, (line, read, tokens) in enumerate(zip(lines, read, line_tokens, strict=False), 1)
    ]
    blocks = _blocks(pieces, document)
    if document.includes and len(document.headings) <= 1 and all(_titles_alone(block) for block in blocks):
        return []  # its title over the files it includes: their text is theirs, read as those files
    blocks = _with_headings_carried(blocks)
    listed = contents_entries(lines)
    packer = _Packer(settings, headings, count_tokens)
    groups = packer.fill_small(packer.join_small(packer.split(blocks)))
    chunks = [
        _make_chunk(headings, group, pieces, document, listed)
        for group, pieces in zip(groups, packer.with_overlap(groups), strict=True)
    ]
    covered = _extend_to_cover(chunks, lines)
    if document.parts:
        covered = [
            replace(chunk, locator=document.locator(chunk.start_line, chunk.end_line)) for chunk in covered
        ]
    return covered


def _blocks(pieces: list[_Piece], document: Document) -> list[_Block]:
    """The document's blocks (at blank lines, headings, parts and block starts; a literal range is
    one block, whatever blank lines it holds), each with its heading path and boundary."""
    headings: dict[int, list[Heading]] = {}
    for heading in document.headings:
        headings.setdefault(heading.line, []).append(heading)
    inside_literal = {line for first, last in document.literal for line in range(first + 1, last + 1)}
    part_starts = {part.first_line for part in document.parts}
    breaks = set(document.block_starts) | part_starts
    blocks: list[_Block] = []
    trail: list[tuple[int, str]] = []  # (level, title) of the headings above the current line
    current: list[_Piece] = []
    boundary = PARAGRAPH
    for piece in pieces:
        starts = piece.line in headings or piece.line in breaks or not piece.text.strip()
        if piece.line in inside_literal or not starts:
            if not current:
                boundary = min(boundary, PART if piece.line in part_starts else PARAGRAPH)
            current.append(piece)
            continue
        if current:
            blocks.append(_Block(current, tuple(name for _, name in trail), boundary))
            current, boundary = [], PARAGRAPH
        if piece.line in headings:
            for heading in headings[piece.line]:
                trail = [(level, name) for level, name in trail if level < heading.level]
                trail.append((heading.level, heading.title))
            boundary = min(heading.level for heading in headings[piece.line])
        elif piece.line in part_starts:
            boundary = min(boundary, PART)
        if piece.text.strip():
            current.append(piece)
    if current:
        blocks.append(_Block(current, tuple(name for _, name in trail), boundary))
    title_words: dict[int, int] = {}  # words of the titles on each line a heading takes up
    for heading in document.headings:
        for number in heading.lines:
            title_words[number] = title_words.get(number, 0) + len(_words_of_title(heading.title))
    for block in blocks:
        block.heading_only = all(
            piece.markup or len(_words_of_title(piece.read)) <= title_words.get(piece.line, -1)
            for piece in block.pieces
        )
    for block in blocks:
        block.defines = any(piece.line in document.definitions for piece in block.pieces)
    for block, after in zip(blocks, blocks[1:], strict=False):
        declares = block.pieces[0].line in document.definitions
        block.opens_definition = declares and _indent(after.pieces[0].text) > _indent(block.pieces[0].text)
    preamble_end = _preamble_end(document)
    for block in blocks:
        block.preamble = block.pieces[-1].line < preamble_end
    return blocks


def _preamble_end(document: Document) -> int:
    """The line of a file's first definition when its top heading is one no line writes (source
    code's outline names the file itself): the lines before it (a licence, imports, ``using``
    lines) are the file's preamble, no text of a section. 0 for a page whose titles its text writes
    (``# Testing { #testing }``, an AsciiDoc ``= Title``, front matter's title)."""
    if not document.headings:
        return 0
    top = document.headings[0]
    words = set(_WORD.findall(top.title))
    shown = (document.lines[number - 1] for number in top.lines if number <= len(document.lines))
    written = any(words <= set(_WORD.findall(line)) for line in shown)
    later = [heading.line for heading in document.headings[1:]]
    return 0 if written else min(later, default=0)


def _titles_alone(block: _Block) -> bool:
    """Whether ``block`` holds no text but titles: a heading's lines and markup, or an empty literal
    block (a synopsis whose content an ``xi:include`` brings)."""
    return block.heading_only or not any(piece.read.strip() for piece in block.pieces)


def _indent(text: str) -> int:
    """How far ``text`` is indented, a tab to the next multiple of 8 columns as docutils reads it:
    what sets a directive's content under its line."""
    expanded = text.expandtabs()
    return len(expanded) - len(expanded.lstrip())


def _trailing_openers(group: list[_Block]) -> int:
    """How many blocks at the end of ``group`` open a definition described after them."""
    count = 0
    for block in reversed(group):
        if not block.opens_definition:
            break
        count += 1
    return count


def _words_of_title(text: str) -> list[str]:
    """The words of a title line, its Markdown ``#`` markers aside: a line holding more words than
    its titles (an HTML heading and its paragraph on one source line) carries text of its own."""
    return text.replace("#", " ").split()


def _with_headings_carried(blocks: list[_Block]) -> list[_Block]:
    """Blocks where a heading alone (a title followed at once by another title) is carried into the
    block after it, keeping the stronger boundary and the later path; a heading that ends the
    document joins the block before it. Titles in a row are joined once, with the block they head:
    a file of thousands of titles costs as many steps, not their square."""
    carried: list[_Block] = []
    waiting: list[_Block] = []  # titles in a row, each a block of a heading alone
    for block in blocks:
        if block.heading_only:
            waiting.append(block)
            continue
        carried.append(_carried_into(waiting, block) if waiting else block)
        waiting = []
    if waiting:
        titles = _carried_into(waiting[:-1], waiting[-1]) if len(waiting) > 1 else waiting[0]
        if carried:
            last = carried[-1]
            pieces = last.pieces + titles.pieces
            carried[-1] = _Block(pieces, last.path, last.boundary, preamble=last.preamble)
        else:
            carried.append(titles)
    return carried


def _carried_into(titles: list[_Block], block: _Block) -> _Block:
    """``block`` with the blocks of a heading alone before it, ``titles``, carried in: the stronger
    boundary, ``block``'s path, and its kind (a heading alone still, when it is one)."""
    pieces = [piece for title in titles for piece in title.pieces]
    return _Block(
        pieces + block.pieces,
        block.path,
        min(block.boundary, *(title.boundary for title in titles)),
        heading_only=block.heading_only,
        titles=len(pieces),
        opens_definition=block.opens_definition,  # a section's title, then its directive
        defines=block.defines or any(title.defines for title in titles),
        preamble=block.preamble and all(title.preamble for title in titles),
    )


class _Packer:
    """Splits blocks at the strongest boundary until the pieces fit, and packs neighbours."""

    def __init__(self, settings: ChunkSettings, headings: _Headings, count_tokens: TokenCounter) -> None:
        self.settings = settings
        self.headings = headings
        self.count_tokens = count_tokens

    def room(self, group: list[_Block]) -> int:
        """Tokens left for text in a chunk of ``group``, under its heading (:func:`_chunk_path`)."""
        return self.settings.max_tokens - self.headings.cost(_chunk_path(group))

    def fits(self, group: list[_Block]) -> bool:
        return sum(block.tokens for block in group) <= self.room(group)

    def split(self, blocks: list[_Block]) -> list[list[_Block]]:
        """Groups of blocks, each fitting, cut at the strongest boundaries that make them fit."""
        if not blocks:
            return []
        if self.fits(blocks):
            return [blocks]
        if len(blocks) == 1:
            return self.pack([[line] for line in self._by_lines(blocks[0])])
        strongest = min(block.boundary for block in blocks[1:])
        if strongest >= PARAGRAPH:  # paragraphs of one section and part: the lines of one too big
            return self.pack(self._units(blocks))
        at_heading = strongest < PART
        groups: list[list[_Block]] = []
        fitting: list[list[_Block]] = []
        segments: list[list[_Block]] = [[]]
        for block in blocks:
            if segments[-1] and block.boundary == strongest:
                segments.append([])
            segments[-1].append(block)
        for segment in segments:
            if self.fits(segment):
                fitting.append(segment)
                continue
            self._join(groups, self.pack(fitting), at_heading)
            self._join(groups, self.split(segment), at_heading)
            fitting = []
        self._join(groups, self.pack(fitting), at_heading)
        return groups

    def _units(self, blocks: list[_Block]) -> list[list[_Block]]:
        """Paragraphs as packing reads them: each whole when it fits, else line by line, so a code
        block, table or list that must be cut is cut where the chunk holding its lead-in sentence is
        full, not at its first line. A description too long to fit beside the blocks that open its
        definition is read line by line too (a line too long to fit beside them cut by words): its
        first lines start the chunk with them, which declares the definition's names, rather than
        leave them to end the chunk before."""
        units: list[list[_Block]] = []
        openers = 0  # how many blocks before this one open a definition, in a row
        for index, block in enumerate(blocks):
            opened = blocks[index - openers : index + 1]
            if self.fits([block]) and (not openers or self.fits(opened)):
                units.append([block])
            else:
                units.extend([line] for line in self._by_lines(block, _tokens(opened[:-1])))
            openers = openers + 1 if block.opens_definition else 0
        return units

    def _join(self, groups: list[list[_Block]], more: list[list[_Block]], at_heading: bool) -> None:
        """Append ``more`` to ``groups`` (in place); where they meet at a heading, the two groups
        there made one when they fit: a section's end and the next section's start (or a short
        section between two long ones) share a chunk. Each side was cut on its own, so an edit on
        one side moves only this seam. Not at a part (page, cell): a citation names those."""
        if at_heading and groups and more and self.fits(groups[-1] + more[0]):
            groups[-1] = groups[-1] + more[0]
            more = more[1:]
        groups.extend(more)

    def pack(self, segments: list[list[_Block]]) -> list[list[_Block]]:
        """Neighbouring segments (each fitting) packed into groups up to the limit; a group ends
        after a segment that is a cut point once it is FILLED, never after a block that opens a
        definition whose description is the next block, indented under it, which starts the next
        group where the two fit: a Sphinx directive's line and options are a block, its content
        another, and the chunk that declares the name must hold what it says of it (the name is
        stored with the chunk whose own lines declare it). An entry whose description is in its
        own block (an AsciiDoc term and the lines under it) is whole wherever the chunk ends."""
        groups: list[list[_Block]] = []
        current: list[_Block] = []
        for segment in segments:
            if current and not self.fits(current + segment):
                current = self._closed(groups, current, segment)
            current = current + segment
            filled = _tokens(current) >= self.room(current) * FILLED
            if filled and _is_cut_point(segment) and not segment[-1].opens_definition:
                groups.append(current)
                current = []
        if current:
            groups.append(current)
        return groups

    def _closed(
        self, groups: list[list[_Block]], current: list[_Block], following: list[_Block]
    ) -> list[_Block]:
        """Close ``current`` into ``groups`` (in place), less the blocks that open definitions at its
        end (a class's, then its first method's) when they fit with the ``following`` segment: what
        the next group starts with."""
        openers = _trailing_openers(current)
        if 0 < openers < len(current) and self.fits(current[-openers:] + following):
            groups.append(current[:-openers])
            return current[-openers:]
        groups.append(current)
        return []

    def join_small(self, groups: list[list[_Block]]) -> list[list[_Block]]:
        """Groups under a quarter of the limit joined to the group before (else after) them when
        both fit in one chunk: a short section between two long ones is no chunk of its own."""
        small = self.settings.max_tokens // 4
        joined: list[list[_Block]] = []
        for group in groups:
            if joined and (_tokens(group) < small or _tokens(joined[-1]) < small):
                if self.fits(joined[-1] + group):
                    joined[-1] = joined[-1] + group
                    continue
            joined.append(group)
        return joined

    def fill_small(self, groups: list[list[_Block]]) -> list[list[_Block]]:
        """A group under a quarter of the limit that no neighbour could take whole (a table's last
        row, a closing "See also", a page's lead before a long section) takes the nearest blocks of
        the group before it, else after it, while it is small, they fit, and the giver stays at
        least a quarter full: it becomes a chunk with text around it, and the two stay two chunks.
        Never across the start of a part (page, cell): a citation names those."""
        small = self.settings.max_tokens // 4
        filled = [list(group) for group in groups]
        for index, group in enumerate(filled):
            if index > 0 and _boundary(group) != PART:
                self._take(filled[index - 1], group, small, from_end=True)
            if index + 1 < len(filled) and _boundary(filled[index + 1]) != PART:
                self._take(filled[index + 1], group, small, from_end=False)
        return filled

    def _take(self, giver: list[_Block], taker: list[_Block], small: int, from_end: bool) -> None:
        """Move blocks from the near end of ``giver`` to ``taker`` (in place), as fill_small says; never
        so that a block opening a definition ends either group, away from its description (see
        pack): ``taker`` taking it last, or taking its description from ``giver``; nor the end of a
        definition's description that opens in ``giver`` (:func:`_ends_in_definition`)."""
        while _tokens(taker) < small and len(giver) > 1:
            block = giver[-1] if from_end else giver[0]
            grown = [block, *taker] if from_end else [*taker, block]
            if not self.fits(grown) or _tokens(giver) - block.tokens < small:
                return
            ending = giver[-2] if from_end else block  # the block that would end a group
            if ending.opens_definition or (from_end and _ends_in_definition(giver)):
                return
            taker[:] = grown
            giver.pop(-1 if from_end else 0)

    def with_overlap(self, groups: list[list[_Block]]) -> list[list[_Piece]]:
        """Each group's pieces, prefixed with whole trailing lines of the group before when the group
        starts inside a section (not at a heading) and they fit, never from a markup line."""
        result: list[list[_Piece]] = []
        for index, group in enumerate(groups):
            pieces = [piece for block in group for piece in block.pieces]
            if index == 0 or _boundary(group) < PART:
                result.append(pieces)
                continue
            room = min(self.settings.overlap_tokens, self.room(group) - _tokens(group))
            carried: list[_Piece] = []
            for piece in reversed([piece for block in groups[index - 1] for piece in block.pieces]):
                if piece.tokens > room or piece.line == pieces[0].line:
                    break
                carried.insert(0, piece)
                room -= piece.tokens
            while carried and carried[0].markup:  # a delimiter row without its header marks nothing
                carried.pop(0)
            result.append(carried + pieces)
        return result

    def _by_lines(self, block: _Block, beside: int = 0) -> list[_Block]:
        """A block too big for a chunk as blocks of one line each (a line too long cut by words, to
        fit beside ``beside`` tokens of blocks before it, unless they take half the room or more).
        A markup line stays with the line it marks: an opening fence with the line after it, a
        table's delimiter row or a closing fence with the line before, so no chunk starts with one."""
        budget = self.room([block])
        budget -= beside if 2 * beside < budget else 0
        titles = block.pieces[: block.titles]
        title_tokens = sum(piece.tokens for piece in titles)
        if not titles or title_tokens >= budget:  # titles too long to lead any text stand alone
            titles, title_tokens = [], 0
        lines: list[list[_Piece]] = [list(titles)] if titles else []
        leading = bool(titles)  # the titles' line still waits for the first line of text
        for piece in block.pieces[len(titles) :]:
            # the carried titles lead the first line of text, cut to fit beside them: no chunk of a
            # heading alone, none over the limit
            room = budget - title_tokens if leading else budget
            for part in _fit_line(piece, room, self.count_tokens):
                if lines and (leading or part.markup or all(piece.markup for piece in lines[-1])):
                    lines[-1].append(part)
                else:
                    lines.append([part])
                leading = leading and part.markup  # a markup line (a fence) joins and the text follows
        return [
            _Block(
                pieces,
                block.path,
                block.boundary if index == 0 else LINE,
                defines=block.defines and index == 0,  # its heading's line, where a definition starts
                preamble=block.preamble,
            )
            for index, pieces in enumerate(lines)
        ]


def _chunk_path(group: list[_Block]) -> tuple[str, ...]:
    """The heading path of a chunk of ``group``: where most of its text lies, of the end of a
    section a chunk before began (its blocks before the first that opens a section, at its heading)
    and what it opens (that block and those after it), each by the path its blocks share. The tail
    of a long function packed with the next function is headed by the next, not by their file; a
    section's long end packed with the next section's title and first lines, by its own."""
    opening = next((index for index, block in enumerate(group) if block.boundary < PART), 0)
    carried, opened = group[:opening], group[opening:]
    ended = _shared_path(carried)  # () for a page's text before its first heading: no section's end
    return ended if ended and _tokens(carried) > _tokens(opened) else _opened_path(opened)


def _opened_path(opened: list[_Block]) -> tuple[str, ...]:
    """The heading path of what a chunk opens: the path its blocks share, unless its first lines
    are a file's preamble (its licence and imports before its first definition, :func:`_preamble_end`)
    and the definitions after them hold more of its text: then theirs. A page's title and lead
    before its first subsection are what that page says first, and a class's own first lines (its
    fields before its constructor) are the class's: each keeps the chunk under the path it shares
    with the rest."""
    following = next((index for index, block in enumerate(opened) if index and block.boundary < PART), 0)
    lead, rest = opened[:following], opened[following:]
    if following and all(block.preamble for block in lead) and _tokens(rest) > _tokens(lead):
        return _shared_path(rest)
    return _shared_path(opened)


def _shared_path(group: list[_Block]) -> tuple[str, ...]:
    """The heading path every block of ``group`` lies under (the text before a page's first heading
    aside: the page's title names that too); for blocks under different top-level titles, the first
    one's title, where the chunk starts."""
    titled = [block.path for block in group if block.path]
    if not titled:
        return ()
    shared = titled[0]
    for path in titled[1:]:
        length = 0
        while length < min(len(shared), len(path)) and shared[length] == path[length]:
            length += 1
        shared = shared[:length]
    return shared or titled[0][:1]


def _ends_in_definition(group: list[_Block]) -> bool:
    """Whether the last block of ``group`` describes a definition whose heading is an earlier block
    of it (a Sphinx directive's, a function's): the chunk that declares its names holds its
    description, which a small chunk after it does not take from its end."""
    start = next((index for index in range(len(group) - 1, -1, -1) if group[index].boundary < PART), -1)
    return 0 <= start < len(group) - 1 and group[start].defines


def _tokens(group: list[_Block]) -> int:
    return sum(block.tokens for block in group)


def _boundary(group: list[_Block]) -> int:
    return group[0].boundary


def _fit_line(piece: _Piece, budget: int, count_tokens: TokenCounter) -> list[_Piece]:
    """A line as is when it fits, else cut between words (or inside a word that is too long alone)
    into parts of about the same size (:func:`_even_cuts`)."""
    if piece.tokens <= budget:
        return [piece]
    words = _split_long_words(piece.text.split(), budget, count_tokens)
    word_tokens = count_tokens(words)
    parts: list[_Piece] = []
    for start, end in pairwise([0, *_even_cuts(word_tokens, budget), len(words)]):
        text = " ".join(words[start:end])
        parts.append(_Piece(piece.line, text, text, sum(word_tokens[start:end])))
    return parts


def contents_entries(lines: Sequence[str]) -> set[int]:
    """The numbers (from 1) of ``lines`` that are entries of a contents list, as its leaders declare
    one (:func:`contents_entry`, :data:`CONTENTS_ENTRIES`). A chunk whose own lines are half or more
    of them is stored as a contents list, which the search ranks as it ranks other lists of names
    (:func:`indexer.search.name_rules.lists_names`)."""
    found = [(number, place) for number, line in enumerate(lines, 1) if (place := contents_entry(line))]
    listed: set[int] = set()
    for first in range(len(found) - CONTENTS_ENTRIES + 1):
        group = found[first : first + CONTENTS_ENTRIES]
        pages = [int(place.group(1)) for _, place in group if place.group(1)]
        if group[-1][0] - group[0][0] <= CONTENTS_SPAN and pages == sorted(pages):
            listed.update(number for number, _ in group)
    return listed


def contents_entry(line: str) -> re.Match[str] | None:
    """Where ``line`` says its title is (:data:`ENTRY_PLACE`), when it is a contents list's entry:
    words, then leaders (:data:`LEADER_RUN`), then that place: ``3.2. Strict TLS . . . . . 7``,
    ``Installation............12``. A line longer than :data:`MAX_ENTRY_CHARS` is none, so each line
    costs little whatever the file holds."""
    line = line.rstrip()
    if len(line) > MAX_ENTRY_CHARS or line[-1:] not in PLACE_ENDS:
        return None
    tail = line[-PLACE_CHARS:]
    place = ENTRY_PLACE.search(tail)
    if place is None:
        return None
    before = line[: len(line) - len(tail) + place.start()].rstrip(" \t:")
    runs = list(LEADER_RUN.finditer(before))
    if not runs or runs[-1].end() != len(before):
        return None
    return place if any(character.isalnum() for character in before[: runs[-1].start()]) else None


def without_leaders(text: str) -> str:
    """``text`` with each run of one punctuation mark (:data:`LEADER_RUN`) as three of that mark: the
    model reads no more in a hundred dots than in three, while each is a token of its input, so a
    chunk made mostly of them (a contents page's) would read as nothing in particular, near to any
    question on nothing. The limit still counts them, so the chunks stay where they were."""
    return LEADER_RUN.sub(lambda run: run.group(1) * 3, text)


def _even_cuts(tokens: list[int], budget: int) -> list[int]:
    """Where to cut a run of words (each word's ``tokens``) into parts of at most ``budget`` tokens
    each, as many as filling each to the budget takes, of about the same size: the index of the word
    each part after the first starts at. A word goes to the part its middle falls in, or to the next
    when it would overflow its own; one pass. Filling each part to the budget instead would leave the
    last words a part of their own, often a stub (a one-line abstract's last clause, `high as that in
    Japan.`) that no neighbour can take, and that a short question then matches by chance."""
    share = sum(tokens) / _greedy_parts(tokens, budget)
    cuts: list[int] = []
    filled = before = 0
    for index, count in enumerate(tokens):
        if index and (filled + count > budget or before + count / 2 > share * (len(cuts) + 1)):
            cuts.append(index)
            filled = 0
        filled += count
        before += count
    return cuts


def _greedy_parts(tokens: list[int], budget: int) -> int:
    """How many parts a run of words takes when each part is filled to ``budget``."""
    parts, filled = 1, 0
    for count in tokens:
        if filled and filled + count > budget:
            parts, filled = parts + 1, 0
        filled += count
    return parts


def _split_long_words(words: list[str], budget: int, count_tokens: TokenCounter) -> list[str]:
    """Cut any single word whose tokens exceed the budget into character slices that fit."""
    result: list[str] = []
    for word, tokens in zip(words, count_tokens(words), strict=False):
        if tokens <= budget:
            result.append(word)
            continue
        step = max(1, len(word) * budget // (tokens * 2))
        result.extend(word[start : start + step] for start in range(0, len(word), step))
    return result


def _is_cut_point(segment: list[_Block]) -> bool:
    text = "\n".join(piece.text for block in segment for piece in block.pieces).encode("utf-8")
    return hashlib.blake2b(text, digest_size=8).digest()[0] % CUT_POINT_MODULUS == 0


def _make_chunk(
    headings: _Headings, group: list[_Block], pieces: list[_Piece], document: Document, listed: set[int]
) -> Chunk:
    """A chunk over its pieces; whole lines keep the blank lines between them, as in the file. Its
    model text (see :func:`_model_text`) leaves its markup lines out, and reads each line as the
    reader read it. It declares the names its own lines define, not those of the overlap it repeats
    from the chunk before, is a test when its own lines all are, and a contents list when half or
    more of its own lines of text (markup aside) are entries of one (``listed``,
    :func:`contents_entries`), half or more of their characters are entries linking to other pages
    (:func:`_mostly_linked`), or its file declares itself one (:attr:`Document.is_contents`)."""
    lines = document.lines
    start, end = pieces[0].line, pieces[-1].line
    heading = headings.text(_chunk_path(group))
    if all(piece.text == lines[piece.line - 1] for piece in pieces):
        text_lines = lines[start - 1 : end]
        numbers: Sequence[int] = range(start, end + 1)
        markup = {piece.line for piece in pieces if piece.markup}
        read: list[str | None] = [
            None if number in markup else without_leaders(document.read_as.get(number, line))
            for number, line in enumerate(text_lines, start)
        ]
    else:  # a line cut by words: its parts are read as written, leaders aside
        text_lines = [piece.text for piece in pieces]
        numbers = [piece.line for piece in pieces]
        read = [None if piece.markup else without_leaders(piece.text) for piece in pieces]
    own_lines = dict.fromkeys(piece.line for block in group for piece in block.pieces)
    names = tuple(dict.fromkeys(name for line in own_lines for name in document.definitions.get(line, ())))
    is_test = bool(document.tests) and all(_inside(document.tests, line) for line in own_lines)
    text = "\n".join(text_lines)
    model_text = _model_text(text_lines, read)
    lead = _code_lead(document, numbers)
    written = [
        piece.line for block in group for piece in block.pieces if piece.text.strip() and not piece.markup
    ]
    is_contents = document.is_contents or (
        bool(written)
        and (2 * sum(line in listed for line in written) >= len(written) or _mostly_linked(document, written))
    )
    return Chunk(
        start,
        end,
        heading,
        text,
        model_text=model_text,
        names=names,
        is_test=is_test,
        code_lead=lead,
        is_contents=is_contents,
    )


def _mostly_linked(document: Document, written: Sequence[int]) -> bool:
    """Whether half or more of the characters of the ``written`` lines (their numbers) are a list's
    entries linking to other pages (:attr:`Document.linked_entries`): a generated index's or a
    contents page's chunk, not a page's text beside its site's menu."""
    if not document.linked_entries:
        return False
    own = dict.fromkeys(written)
    shown = sum(shown_characters(document.lines[number - 1]) for number in own)
    linked = sum(document.linked_entries.get(number, 0) for number in own)
    return shown > 0 and 2 * linked >= shown


def _code_lead(document: Document, numbers: Sequence[int]) -> int:
    """How the first of a chunk's lines (their numbers in the file) lie in a literal block the file
    opens before them (:func:`indexer.records.code_lead`): the block holds the first line, and that
    line is not its opening markup (a fence; a reStructuredText block's ``::`` is on a line before
    the block's first, so that line counts). Read alone, the chunk could not tell."""
    place = bisect.bisect_right(document.literal, (numbers[0], math.inf)) - 1
    if place < 0:
        return 0
    first, last = document.literal[place]
    if not first <= numbers[0] <= last or (numbers[0] == first and first in document.markup):
        return 0
    inside = next((index for index, number in enumerate(numbers) if number > last), len(numbers))
    return code_lead(inside, numbers[inside - 1] == last and last in document.markup)


def _inside(ranges: list[tuple[int, int]], line: int) -> bool:
    """Whether ``line`` lies in one of ``ranges`` (inclusive, in order, apart)."""
    place = bisect.bisect_right(ranges, (line, math.inf)) - 1
    return place >= 0 and ranges[place][0] <= line <= ranges[place][1]


def _extend_to_cover(chunks: list[Chunk], lines: list[str]) -> list[Chunk]:
    """Stretch line ranges over the blank lines between chunks, so every line is in some chunk."""
    covered: list[Chunk] = []
    for index, chunk in enumerate(chunks):
        start = 1 if index == 0 else chunk.start_line
        if index + 1 < len(chunks):
            end = max(chunk.end_line, chunks[index + 1].start_line - 1)
        else:
            end = len(lines)
        covered.append(replace(chunk, start_line=start, end_line=end))
    return covered


def split_chunk(chunk: Chunk) -> list[Chunk]:
    """Cut a chunk that a server refused as too long into two halves (by lines, else by words).

    Used when the server's tokenizer counts more tokens than ours estimated. Returns the chunk alone
    when it cannot be cut (a single word). The code a chunk starts in goes with its lines (a block
    the first half opens, the second half does not know of: its snippet reads it alone).
    """
    lines = chunk.text.split("\n")
    if len(lines) > 1:
        middle = len(lines) // 2
        split_line = min(chunk.end_line, chunk.start_line + middle)
        read = _lines_read(lines, chunk.model_text)
        lead, closed = lead_lines(chunk.code_lead)
        return [
            replace(
                chunk,
                end_line=max(chunk.start_line, split_line - 1),
                text="\n".join(lines[:middle]),
                model_text=_model_text(lines[:middle], read[:middle]),
                code_lead=code_lead(middle, False) if lead > middle else chunk.code_lead,
            ),
            replace(
                chunk,
                start_line=split_line,
                text="\n".join(lines[middle:]),
                model_text=_model_text(lines[middle:], read[middle:]),
                code_lead=code_lead(lead - middle, closed) if lead > middle else 0,
            ),
        ]
    words = chunk.text.split()
    if len(words) < 2:
        return [chunk]
    middle = len(words) // 2
    halves = [" ".join(words[:middle]), " ".join(words[middle:])]
    return [
        replace(chunk, text=half, model_text=_model_text([half], [without_leaders(half)])) for half in halves
    ]


def _model_text(lines: list[str], read: list[str | None]) -> str:
    """What the model reads of a chunk's text ``lines``, given what it reads of each (None: nothing,
    a markup line): '' when that is the text itself; the lines read, in order, when it only leaves
    markup out; else one line per text line (a markup line empty), so that the halves of a refused
    chunk (:func:`split_chunk`) are cut at the same line in its text and in what the model reads."""
    if all(seen == line for seen, line in zip(read, lines, strict=True)):
        return ""
    if all(seen is None or seen == line for seen, line in zip(read, lines, strict=True)):
        return "\n".join(seen for seen in read if seen is not None)
    return "\n".join(seen or "" for seen in read)


def _lines_read(lines: list[str], model_text: str) -> list[str | None]:
    """What the model reads of each of a chunk's text lines (None: nothing), from its model text as
    :func:`_model_text` made it: one line per text line, or the text's lines less markup lines."""
    if not model_text:
        return list(lines)
    model_lines = model_text.split("\n")
    if len(model_lines) == len(lines):
        return list(model_lines)
    read: list[str | None] = []
    next_read = 0  # the model line the next text line is, if the model reads it
    for line in lines:
        kept = next_read < len(model_lines) and line == model_lines[next_read]
        next_read += kept
        read.append(line if kept else None)
    return read
