"""Org mode, as Emacs' Org reads it: ``notes.org``, ``README.org``, ``org-manual.org``.

What decides structure follows the Org syntax (orgmode.org/worg/org-syntax.html):

- **Headlines**: a line of stars at its start and a space (``** Install``), a star a level. A
  headline's TODO keyword, priority (``[#A]``), ``COMMENT`` and tags (``:work:urgent:``) are no part
  of its title. The document's ``#+TITLE:`` heads the whole file, above its headlines.
- **Code**: source, example and export blocks (``#+BEGIN_SRC python`` ... ``#+END_SRC``, any case)
  and fixed-width lines (``: output``) are literal; quote, centre, verse and other blocks are text,
  read as such (a source block inside a note is code). A headline ends a block or a drawer left
  open, as in Org (a headline inside a block is written ``,*``).
- **Markup, shown nothing** (:attr:`Document.markup`): keyword lines (``#+OPTIONS:``,
  ``#+STARTUP:``, ``#+NAME:``; the title and a caption are text), comments (``# note``), blocks'
  delimiter lines, drawers (``:PROPERTIES:`` ... ``:END:``), planning lines (``SCHEDULED: <...>``)
  and a table's rules (``|---+---|``).
- **What the model reads** (:attr:`Document.read_as`): a headline's title; links as their
  description (``[[https://orgmode.org][the site]]``: ``the site``), or their target alone; text in
  emphasis (``*bold*``, ``/italic/``, ``=verbatim=``, ``~code~``) without its marks.
- **Names** (:attr:`Document.definitions`): a description list's term that is names, as a manual
  lists options and settings (``- =org-startup-folded= :: ...``, ``- ~--batch~ :: ...``), read as
  :func:`indexer.formats.definitions.item_names` reads a term.

Why not a parser from PyPI: orgparse, the one kept up, gives a tree of headlines and their bodies
as text, without line numbers for blocks, and does not read blocks at all. Every rule here reads a
line at a time, with patterns of bounded parts: linear in the file's length whatever it holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from indexer.formats.definitions import item_names
from indexer.formats.document import Document, Heading, Layout, split_lines

_HEADLINE = re.compile(r"(?P<stars>\*{1,64})[ \t]+(?P<title>.*)")
#: What may open a headline before its title: a TODO keyword (the defaults, and any word in capitals
#: the file declares with ``#+TODO:``), a priority, the word COMMENT.
DEFAULT_TODO_KEYWORDS = frozenset({"TODO", "DONE"})
_PRIORITY = re.compile(r"\[#[A-Z0-9]{1,3}\][ \t]*")
_TAGS = re.compile(r"[ \t]+:(?:[\w@#%]{1,64}:){1,32}[ \t]*$")
_KEYWORD = re.compile(r"#\+(?P<key>[A-Za-z_][\w-]{0,63})(?:\[[^\]\n]{0,256}\])?:[ \t]*(?P<value>.*)")
_BLOCK_START = re.compile(r"#\+begin_(?P<kind>\w{1,32})", re.IGNORECASE)
_BLOCK_END = re.compile(r"#\+end_(?P<kind>\w{1,32})[ \t]*$", re.IGNORECASE)
#: Blocks whose lines are code or output, as written; any other block's lines are text.
LITERAL_BLOCKS = frozenset({"src", "example", "export"})
#: Keywords whose value is the document's text: read, not markup.
TEXT_KEYWORDS = frozenset({"title", "subtitle", "caption", "description"})
_DRAWER = re.compile(r"[ \t]*:(?P<name>[\w-]{1,64}):[ \t]*$")
_PLANNING = re.compile(r"[ \t]*(?:SCHEDULED|DEADLINE|CLOSED):[ \t]")
_TABLE_RULE = re.compile(r"[ \t]*\|-[-+|]*[ \t]*$")
_FIXED_WIDTH = re.compile(r"[ \t]*:(?:[ \t]|$)")
_DESCRIPTION_ITEM = re.compile(
    r"[ \t]*(?:[-+]|\d{1,9}[.)])[ \t]+(?:\[.\][ \t]+)?(?P<term>.{1,512}?)[ \t]+::(?:[ \t]|$)"
)
#: A link: ``[[target][description]]`` or ``[[target]]``.
_LINK = re.compile(r"\[\[(?P<target>[^\[\]\n]{1,2048})\](?:\[(?P<description>[^\[\]\n]{0,2048})\])?\]")
#: A macro's call (``{{{kbd(C-c C-r)}}}``, ``{{{version}}}``): the Org manual writes keys so.
_MACRO = re.compile(r"\{\{\{[\w-]{1,64}(?:\((?P<arguments>[^(){}\n]{0,256})\))?\}\}\}")
#: The marks of emphasis: bold, italic, underline, strike-through, verbatim, code.
EMPHASIS_MARKS = "*/_+=~"
#: Emphasis marks that make code (``=verbatim=``, ``~code~``).
CODE_MARKS = frozenset("=~")


def _emphasis_pattern() -> re.Pattern[str]:
    """Emphasis: a mark after no word, text neither starting nor ending with a space and without
    that mark, the same mark before no word. Text without its own mark ends each try at the next
    one, so a line is read in time linear in its length."""
    branches = []
    for mark in EMPHASIS_MARKS:
        own = re.escape(mark)
        branches.append(rf"{own}[^\s{own}](?:[^{own}\n]{{0,510}}[^\s{own}])?{own}")
    return re.compile(rf"(?<![\w{re.escape(EMPHASIS_MARKS)}])(?:{'|'.join(branches)})(?!\w)")


_EMPHASIS = _emphasis_pattern()


def read_org(text: str, encoding: str = "utf-8") -> Document:
    """An Org file's lines with its headlines, blocks and markup as Org's syntax says, each line read
    as Org's export shows it."""
    reader = _Reader(split_lines(text))
    reader.read()
    return reader.layout.document(reader.lines, encoding)


def inline_text(text: str) -> str:
    """Org text as an export shows it: links as their description, emphasis without its marks, a
    macro's call as its arguments (a key, as ``{{{kbd(TAB)}}}`` shows it)."""
    text = _LINK.sub(lambda link: link["description"] or link["target"], text) if "[[" in text else text
    text = _MACRO.sub(lambda macro: macro["arguments"] or "", text) if "{{{" in text else text
    return _EMPHASIS.sub(lambda found: found.group()[1:-1], text)


@dataclass
class _Reader:
    """One pass over the lines: the block or drawer open, the TODO keywords the file declares."""

    lines: list[str]
    layout: Layout = field(default_factory=Layout)
    todo_keywords: set[str] = field(default_factory=lambda: set(DEFAULT_TODO_KEYWORDS))
    blocks: list[tuple[str, int]] = field(default_factory=list)  # the blocks open: kind, first line
    in_drawer = False
    drawers: set[int] = field(default_factory=set)  # the lines that open a drawer its ``:END:`` closes

    def read(self) -> None:
        self.drawers = _closed_drawers(self.lines)
        for number, line in enumerate(self.lines, 1):
            self._line(number, line)
        self._close_blocks(len(self.lines))

    def _line(self, number: int, line: str) -> None:
        headline = _HEADLINE.fullmatch(line) if line.startswith("*") else None
        if headline:  # a headline ends whatever block or drawer was left open, as in Org
            self._close_blocks(number - 1)
            self.in_drawer = False
            self._headline(number, headline)
            return
        if self.blocks and self.blocks[-1][0] in LITERAL_BLOCKS:
            self._in_literal_block(number, line)
            return
        if self.in_drawer:
            self.layout.markup.add(number)
            self.in_drawer = line.strip().upper() != ":END:"
            return
        if line.lstrip().startswith("#"):
            self._hash_line(number, line)
        elif number in self.drawers:
            self.layout.markup.add(number)
            self.in_drawer = True
        elif _PLANNING.match(line) or _TABLE_RULE.fullmatch(line):
            self.layout.markup.add(number)
        elif _FIXED_WIDTH.match(line):
            self.layout.literal.append((number, number))
        else:
            self._text(number, line)

    def _in_literal_block(self, number: int, line: str) -> None:
        end = _BLOCK_END.match(line.strip())
        if end and end["kind"].lower() == self.blocks[-1][0]:
            self._close_blocks(number - 1, count=1)
            self.layout.markup.add(number)

    def _close_blocks(self, last: int, count: int = 0) -> None:
        """Close the innermost ``count`` blocks open (all of them: 0) before line ``last + 1``; a
        literal one's lines are code."""
        for _ in range(count or len(self.blocks)):
            kind, first = self.blocks.pop()
            if kind in LITERAL_BLOCKS and last > first:
                self.layout.literal.append((first + 1, last))

    def _headline(self, number: int, headline: re.Match[str]) -> None:
        title = _TAGS.sub("", headline["title"]).strip()
        first, _, rest = title.partition(" ")
        if first in self.todo_keywords or first == "COMMENT":
            title = rest.lstrip()
        title = inline_text(_PRIORITY.sub("", title, count=1).strip())
        if not title:
            self.layout.markup.add(number)
            return
        self.layout.headings.append(Heading(line=number, level=len(headline["stars"]), title=title))
        self.layout.read_as[number] = title

    def _hash_line(self, number: int, line: str) -> None:
        stripped = line.strip()
        block = _BLOCK_START.match(stripped)
        keyword = _KEYWORD.fullmatch(stripped)
        self.layout.markup.add(number)
        if block:
            self.blocks.append((block["kind"].lower(), number))
        elif (end := _BLOCK_END.match(stripped)) is not None:  # or a stray one a chunk starts with
            if self.blocks and end["kind"].lower() == self.blocks[-1][0]:
                self.blocks.pop()
        elif keyword and keyword["key"].lower() in TEXT_KEYWORDS and keyword["value"].strip():
            self.layout.markup.discard(number)
            value = inline_text(keyword["value"].strip())
            self.layout.read_as[number] = value
            if keyword["key"].lower() == "title" and not self.layout.headings:
                self.layout.headings.append(Heading(line=number, level=0, title=value))
        elif keyword and keyword["key"].lower() in ("todo", "seq_todo", "typ_todo"):
            self.todo_keywords.update(word for word in keyword["value"].split() if word.isupper())
        elif not (stripped == "#" or stripped.startswith("# ") or keyword):
            self.layout.markup.discard(number)  # ``#hashtag`` or ``#+`` text: Org reads it as a paragraph's

    def _text(self, number: int, line: str) -> None:
        item = _DESCRIPTION_ITEM.match(line) if "::" in line else None
        if item and (names := _term_names(item["term"])):
            self.layout.definitions[number] = names
        if "[[" not in line and not any(mark in line for mark in EMPHASIS_MARKS):
            return
        read = inline_text(line)
        if read != line and read.strip():
            self.layout.read_as[number] = read


def _closed_drawers(lines: list[str]) -> set[int]:
    """The lines that open a drawer (``:PROPERTIES:``), each closed by an ``:END:`` before the next
    headline: Org reads a ``:word:`` line that nothing closes as a paragraph's (one pass, from the
    end)."""
    closed, end_ahead = set(), False
    for number in range(len(lines), 0, -1):
        line = lines[number - 1]
        if line.startswith("*") and _HEADLINE.fullmatch(line):
            end_ahead = False
        elif line.strip().upper() == ":END:":
            end_ahead = True
        elif end_ahead and _DRAWER.fullmatch(line):
            closed.add(number)
    return closed


def _term_names(term: str) -> tuple[str, ...]:
    """The names a description list's term gives: code in ``=`` or ``~`` (``=org-startup-folded=``,
    ``~--batch~, ~-q~``; beside the keys that run a command, ``{{{kbd(TAB)}}} (~org-cycle~)``), or
    what is spelt as code (:func:`item_names`)."""
    if "{{{" in term or "(" in term:
        term = _MACRO.sub("", term).replace("(", " ").replace(")", " ")
    pieces = [found.group() for found in _EMPHASIS.finditer(term)]
    in_code = bool(pieces) and all(piece[0] in CODE_MARKS for piece in pieces)
    if in_code and not _EMPHASIS.sub("", term).replace("...", "").strip(" ,"):
        return item_names(", ".join(piece[1:-1] for piece in pieces), code=True)
    return item_names(inline_text(term), code=False)
