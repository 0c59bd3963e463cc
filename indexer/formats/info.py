"""GNU Info manuals, as ``info`` shows them: ``coreutils.info.gz``, ``find.info-1.gz``.

A Texinfo manual is installed as Info files: plain text in nodes, which ``makeinfo`` writes in a
declared shape. What the reader knows of it:

- **Nodes**: each opens with a separator line (``\\x1f``) and a line naming it and its neighbours
  (``File: find.info,  Node: Invoking find,  Next: ..., Up: Top``). That line is navigation, not
  text: it shows nothing, unless the node has no title of its own, when it shows the node's name,
  which heads the node one level under the node its ``Up`` names.
- **Titles**: a node's title is a line underlined with ``*`` (a chapter), ``=`` (a section), ``-``
  (a subsection) or ``.`` (a subsubsection), as wide as the title. The ``Top`` node's title is the
  manual's, and heads everything in the file. A node's section starts at its separator, so its
  chunks hold what the node says and nothing of the next node's.
- **Names**: a definition line (`` -- Function: int memeql_sec (const void *A, ...)``, `` -- Test:
  -name pattern``, `` -- Variable: int errno``) declares what it defines, as Texinfo's ``@deffn``
  does; so does a table's item (``‘--mirror’`` on a line of its own, its description indented five
  columns under it), as ``@item`` of a ``@table`` does. A word in capitals after an option is its
  value (``‘--ignore=PATTERN’``), as Texinfo prints ``@var``.
- **Lists of other nodes**: a menu's entries (``* Invoking find::  Finding and acting on files.``)
  and an index's (``* --all:  Which files are listed.  (line 6)``) are links to other nodes: a
  chunk mostly of them is a contents list, not an answer. The menu's description is the node's own
  words, counted as text.
- **Cross references** (``*note Invoking find::``) read as a printed or HTML manual shows them,
  "see Invoking find" (:func:`references_read`): the marks are Info's, not the manual's words.
- **What ``info`` never shows**: the tables of a manual's nodes and of its parts (``Tag Table:``,
  ``Indirect:``), the file's trailer (``Local Variables:``), the lines of its directory entry
  (``INFO-DIR-SECTION``), a menu's ``* Menu:`` line, and the markers around an index (which hold
  NULs: :func:`without_markers`); an image's marker shows its ``alt`` text.

A file named as an Info file (:func:`is_info_name`) without a node is read as lines. Each line is
read a bounded number of times, with patterns of bounded parts that cannot retry far: linear in the
file's length whatever it holds.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from indexer.formats.definitions import argument_names, item_names
from indexer.formats.document import Document, Heading, shown_characters, split_lines
from indexer.formats.text import looks_binary, read_plain

#: An Info file's name: ``find.info``, and the parts a large manual is split into, ``find.info-1``.
#: The most digits of a part's number.
PART_DIGITS = 4
_INFO_NAME = re.compile(rf".+\.info(?:-\d{{1,{PART_DIGITS}}})?")
#: The type of an Info file, a part's as the whole manual's (``find.info-1``).
INFO_TYPE = "info"
#: What Info puts before and after a marker's text (``[index]``, ``[image src="a.png"]``): a NUL and
#: a backspace, so that a reader shows the marker as nothing.
MARKER = b"\x00\x08"
#: What starts a node or a table: the separator, alone on its line, maybe with a form feed.
SEPARATOR = "\x1f"
_NODE_LINE = re.compile(r"File:[^,]{0,512},[ \t]+Node:[ \t]*(?P<node>[^,\t]{1,512})(?P<pointers>.{0,2048})")
_UP = re.compile(r",[ \t]+Up:[ \t]*(?P<up>[^,\t]{1,512})")
#: The sections of an Info file that are tables for ``info`` itself, shown as nothing.
_TABLES = ("Tag Table:", "Indirect:", "End Tag Table", "Local Variables:")
#: The lines of the installation's directory entry (``install-info`` reads them), shown as nothing.
_DIRECTORY_LINES = ("INFO-DIR-SECTION", "START-INFO-DIR-ENTRY", "END-INFO-DIR-ENTRY")
#: A title's underline: one character, repeated; its level.
UNDERLINE_LEVELS = {"*": 1, "=": 2, "-": 3, ".": 4}
#: The node every manual opens with: its title is the manual's.
TOP_NODE = "Top"
#: The level of the manual's title, above its chapters'.
MANUAL_LEVEL = 0
#: The deepest level a node without a title of its own is put at.
DEEPEST_LEVEL = 8
MENU = "* Menu:"
INDEX_MARKER = "[index]"
#: A menu's entry: ``* Name::`` or ``* Label: Node.`` (a node of another manual in brackets), then
#: its description.
_MENU_ENTRY = re.compile(
    r"\* (?:[^:\n]{1,512}::|[^:\n]{1,512}:[ \t]+(?![ \t])(?:\([^)\n]{0,256}\))?[^.,\t\n]{0,512}[.,\t])"
)
#: What marks a cross reference: ``*note`` opens it (``*Note`` at a sentence's start; not makeinfo's
#: ``*Note:*``); ``::`` ends its name where the node is named so too, ``:`` before a space ends a
#: label before the node's name, which a ``.`` or ``,`` ends.
_REFERENCE_MARKS = re.compile(r"\*[Nn]ote(?=[ \t]|$)|::|:(?=\s|$)|[.,]")
#: An image's marker, as ``without_markers`` leaves it: ``[image src="a.png" alt="Modules"]``.
_IMAGE = re.compile(r'\[image src="[^"\n]{0,1024}"(?: alt="(?P<alt>[^"\n]{0,1024})")?[^\]\n]{0,4096}\]')
#: A definition line (``@deffn``): its category and what it defines.
_DEFINITION = re.compile(r" -- (?P<category>[^\W\d_][\w ]{0,40}):[ \t]+(?P<signature>\S.{0,2048})")
#: The most lines a definition's signature is wrapped on.
MAX_SIGNATURE_LINES = 8
#: The most tags one table item is given on lines of their own (``@itemx``), before its description.
MAX_TAG_LINES = 8
#: How much deeper than its signature a wrapped definition's next line is.
SIGNATURE_CONTINUATION = 10
#: How much deeper than its tag a table item's description is.
ITEM_INDENT = 5
#: How Texinfo quotes code (``@code``, ``@samp``, ``@option``), in Unicode or in ASCII.
_QUOTED = re.compile(r"‘(?P<curly>[^‘’\n]{1,256})’|'(?P<straight>[^'\n]{1,256})'")
#: A placeholder as Info prints ``@var``: a word in capitals (``MAX-ARGS``) after the name it belongs
#: to, not after a comma (``‘SIGINT’, ‘SIGTERM’`` are two names).
_PLACEHOLDER = re.compile(
    r"(?:(?<=[^,] )|(?<=[=\[]))(?P<word>[A-Z][A-Z0-9_]{0,63}(?:-[A-Z][A-Z0-9_]{0,63}){0,4})(?=$|[ ,\]\.])"
)
#: Words of a definition's category that say its signature is a type, maybe after the type of
#: what it defines (``-- Variable: int errno``): the name is the signature's last word.
_TYPED_CATEGORIES = frozenset({"type", "variable", "constant", "struct"})


def is_info_name(name: str) -> bool:
    """Whether a file ``name`` (lower case, of the file a compressed one holds) is an Info file's."""
    return _INFO_NAME.fullmatch(name) is not None


def without_markers(data: bytes) -> bytes:
    """An Info file's bytes without the NULs and backspaces around its markers (``[index]``): they
    are how ``info`` hides a marker, and the only NULs an Info file holds, which would make it
    binary to a text reader."""
    return data.replace(MARKER, b"")


def head_looks_binary(head: bytes) -> bool:
    """Whether an Info file's first bytes hold a NUL outside its markers (:func:`without_markers`),
    as no text does; a marker cut in two at the head's end is no NUL of the text's."""
    return looks_binary(without_markers(head).removesuffix(b"\x00"))


def read_info(text: str, encoding: str = "utf-8") -> Document:
    """The Info manual in ``text`` as ``info`` shows it, line for line; text without a node as
    lines."""
    lines = split_lines(text)
    if not any(line.startswith(SEPARATOR) for line in lines):
        return read_plain(text, encoding)
    return _Manual(lines).read(encoding)


@dataclass
class _Manual:
    """One file's reading: its nodes' titles and levels, what each line shows, the names it declares."""

    lines: list[str]
    shown: list[str] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)
    markup: set[int] = field(default_factory=set)
    definitions: dict[int, tuple[str, ...]] = field(default_factory=dict)
    linked: dict[int, int] = field(default_factory=dict)
    levels: dict[str, int] = field(default_factory=dict)  # each titled node's level, by its name
    node_line = 0  # the line naming the node being read, until its title is found
    separator_line = 0  # the separator before it, where its section starts
    node = ""
    up = ""
    in_table = False  # in one of ``info``'s own tables, up to the next separator
    in_menu = False
    in_index = False

    def read(self, encoding: str) -> Document:
        self.shown = [_IMAGE.sub(_alt_text, line) if "[image" in line else line for line in self.lines]
        number = 0
        while number < len(self.lines):
            number = self._line(number + 1)
        self._untitled_node(len(self.lines) + 1)
        self.shown, read_as, unread = references_read(self.shown)
        return Document(
            lines=self.shown,
            headings=self.headings,
            encoding=encoding,
            markup=frozenset(self.markup | unread),
            definitions=self.definitions,
            linked_entries=self.linked,
            read_as=read_as,
        )

    def _line(self, number: int) -> int:
        """Read line ``number`` (1-based), and any that go with it; the last line read."""
        line = self.lines[number - 1]
        if line.startswith(SEPARATOR):
            self._untitled_node(number)
            self.in_table = self.in_menu = self.in_index = False
            self.node_line, self.shown[number - 1] = 0, ""
            self.separator_line = number
            return self._node_line(number + 1)
        if self.in_table or line.startswith(_DIRECTORY_LINES) or line == INDEX_MARKER:
            self.in_index = self.in_index or line == INDEX_MARKER
            self.shown[number - 1] = ""
            return number
        if line == MENU:
            self.in_menu, self.shown[number - 1] = True, ""
            return number
        if self.in_menu and line.startswith("* "):
            self._menu_entry(number, line)
            return number
        if self.in_index and line[:1].isspace() and line.strip().startswith("(line"):
            self.linked[number] = shown_characters(line)
            return number
        if self._title(number, line):
            return number + 1
        if line.startswith(" -- "):
            return self._definition(number)
        self._item(number, line)
        return number

    def _node_line(self, number: int) -> int:
        """Read the line after a separator: a node's name, or the start of one of ``info``'s tables."""
        if number > len(self.lines):
            return number - 1
        line = self.lines[number - 1]
        found = _NODE_LINE.match(line)
        if found:
            self.node, self.node_line = found["node"].strip(), number
            up = _UP.search(found["pointers"])
            self.up = up["up"].strip() if up else ""
            self.shown[number - 1] = ""
        elif line.startswith(_TABLES):
            self.in_table, self.shown[number - 1] = True, ""
        else:
            return number - 1  # text after a stray separator: read as text
        return number

    def _title(self, number: int, line: str) -> bool:
        """Whether line ``number`` is a title, underlined on the next line; if so, head a section."""
        if number >= len(self.lines) or not line.strip() or line[:1].isspace():
            return False
        underline = self.lines[number].rstrip()
        mark = underline[:1]
        title = line.rstrip()
        if mark not in UNDERLINE_LEVELS or underline != mark * len(underline):
            return False
        if len(underline) != display_width(title):  # a table's header over its rule is wider
            return False
        level = MANUAL_LEVEL if self.node == TOP_NODE and self.node_line else UNDERLINE_LEVELS[mark]
        start = number
        if self.node_line:
            self.levels[self.node] = level
            start, self.node_line = self.separator_line or self.node_line, 0
            self._parent_elsewhere(start, level)
        self.headings.append(Heading(line=start, level=level, title=title, last_line=number + 1))
        self.markup.add(number + 1)
        return True

    def _parent_elsewhere(self, line: int, level: int) -> None:
        """Head the node a titled node's ``Up`` names, by its name, one level above it, where that
        node is in another file and nothing above this node's level has been titled yet: a large
        manual is split into parts (``screen.info-3``), and a part's first nodes continue a chapter
        an earlier part began, which ``info`` names on their ``Up`` line."""
        if not self.up or self.up.startswith("(") or self.up in self.levels or level <= MANUAL_LEVEL + 1:
            return
        if any(heading.level < level for heading in self.headings):
            return
        self.levels[self.up] = level - 1
        self.headings.append(Heading(line=line, level=level - 1, title=self.up))

    def _untitled_node(self, end: int) -> None:
        """Head the node named on :attr:`node_line` by its name, if no title was found before line
        ``end``: one level under the node its ``Up`` names."""
        if not self.node_line:
            return
        parent = self.levels.get(self.up, self.headings[-1].level if self.headings else MANUAL_LEVEL)
        level = MANUAL_LEVEL if self.node == TOP_NODE else min(parent + 1, DEEPEST_LEVEL)
        self.levels[self.node] = level
        self.shown[self.node_line - 1] = self.node
        self.headings.append(Heading(line=self.node_line, level=level, title=self.node))
        self.node_line = 0

    def _menu_entry(self, number: int, line: str) -> None:
        """Count a menu's entry as links: the whole line in an index, the name and node in a menu."""
        if self.in_index:
            self.linked[number] = shown_characters(line)
        elif entry := _MENU_ENTRY.match(line):
            self.linked[number] = shown_characters(entry.group())

    def _definition(self, number: int) -> int:
        """Declare what a definition line defines, its signature joined from its wrapped lines; the
        last of them."""
        found = _DEFINITION.match(self.lines[number - 1])
        if found is None:
            return number
        signature, last = found["signature"], number
        while last < len(self.lines) and last - number < MAX_SIGNATURE_LINES:
            following = self.lines[last]
            if len(following) - len(following.lstrip()) < SIGNATURE_CONTINUATION or "(" in signature:
                break
            signature, last = f"{signature} {following.strip()}", last + 1
        if names := definition_names(found["category"], signature):
            self.definitions[number] = names
        return last

    def _item(self, number: int, line: str) -> None:
        """Declare the names a table item's tag gives: a line whose next line (or the next tag's,
        for several tags on lines of their own) is indented five columns deeper."""
        if not line.strip() or number >= len(self.lines):
            return
        indent = len(line) - len(line.lstrip())
        following = self.lines[number]
        if not following.strip():
            return
        deeper = len(following) - len(following.lstrip()) - indent
        if deeper == 0 and not self._tags_before_description(number, indent):
            return
        if deeper not in (0, ITEM_INDENT):
            return
        if names := tag_names(line.strip()):
            self.definitions[number] = names

    def _tags_before_description(self, number: int, indent: int) -> bool:
        """Whether the lines from ``number`` on at ``indent`` are tags (at most a few) whose
        description comes after them, indented five columns deeper."""
        for following in self.lines[number : number + MAX_TAG_LINES]:
            depth = len(following) - len(following.lstrip())
            if not following.strip() or depth < indent:
                return False
            if depth == indent + ITEM_INDENT:
                return True
            if depth != indent or not tag_names(following.strip()):
                return False
        return False


def definition_names(category: str, signature: str) -> tuple[str, ...]:
    """The name a definition of ``category`` declares in its ``signature``: a callable's, the word
    before its parameters (``memeql_sec`` of ``int memeql_sec (const void *A, ...)``); a type's, a
    variable's or a constant's, its last word, after its type (``struct sha256_ctx``, ``int
    errno``); anything else's, its first word, before its arguments (``-name`` of ``-name
    pattern``, ``ls`` of ``ls [OPTION]...``, ``focus`` of ``focus [ (width|max) ]``: brackets in an
    optional argument group its choices, and open no parameters)."""
    quoted = _QUOTED.match(signature)  # a name of several words, before its attributes (``@deftp``)
    if quoted:
        names = [(quoted["curly"] or quoted["straight"]).split()[-1]]
    elif "(" in signature.partition("[")[0]:
        names = argument_names(signature)
    else:
        words = signature.split()
        typed = not _TYPED_CATEGORIES.isdisjoint(category.lower().split())
        names = [words[-1].lstrip("*") if typed else words[0]]
    return tuple(name for found in names for name in item_names(found, code=True))


def tag_names(tag: str) -> tuple[str, ...]:
    """The names a table item's ``tag`` gives: code in quotes (``‘-m’``, ``‘--ignore=PATTERN’``,
    ``'-name PATTERN'``, ``‘-a’, ‘--all’``), each placeholder in capitals read as a value; text not
    in quotes only where it is spelt as code (:func:`item_names`)."""
    quoted = [found["curly"] or found["straight"] for found in _QUOTED.finditer(tag)]
    in_quotes = bool(quoted) and not _QUOTED.sub("", tag).strip(" ,")  # ``‘-a’, ‘--all’`` too
    text = ", ".join(quoted) if in_quotes else tag
    if all(word.startswith("-") for word in text.split()):
        text = ", ".join(text.split())  # options a space apart (``'-c --stdout'``)
    text = _PLACEHOLDER.sub(lambda found: f"<{found['word']}>", text)
    return item_names(text, code=in_quotes)


def part_globs(extension: str) -> list[str]:
    """The GLOBs of the endings of an Info manual's parts, after ``extension`` (``.info-1`` to
    ``.info-9999``)."""
    return [f"*.{extension}-" + "[0-9]" * digits for digits in range(1, PART_DIGITS + 1)]


#: Where a reader is in a cross reference: outside one, in its name, in its node after a label.
_OUTSIDE, _NAME, _NODE = range(3)


def references_read(lines: list[str]) -> tuple[list[str], dict[int, str], set[int]]:
    """``lines`` with each cross reference shown as a rendered manual prints it (``see Invoking
    find``): ``*note`` as "see" (nothing after a "see" of the sentence's own), ``*Note`` as "See",
    and the ``::`` after its name dropped, on the next line where the name wraps; a label's node
    (``*note Regex: (grep)Regular Expressions.``) is kept: it names where to look. With them, what
    the model reads: of each line that holds a reference (1-based line: text), the line without it,
    the marks, the name and a label's node; and the lines that are only a reference's wrapped name,
    which it reads nothing of. A reference names another node, whose subject it is: read as this
    node's words, it would make a node that points at the answer read as the answer. A reference
    ends with its paragraph. Each line is read once, left to right."""
    shown, read_as, unread, state = [], {}, set(), _OUTSIDE
    for number, line in enumerate(lines, start=1):
        state = state if line.strip() else _OUTSIDE
        opened_in, pieces, read, start = state, [], [], 0
        for mark in _REFERENCE_MARKS.finditer(line):
            before, found = line[start : mark.start()], mark.group()
            kept = before if state == _OUTSIDE else ""
            if found.startswith("*"):
                said = _ends_with_see(before)
                see = "See" if found[1] == "N" else "see"
                pieces.append(before.rstrip() if said else before + see)
                read.append(kept.rstrip() if said else kept)
                state = _NAME
            elif state == _NAME and found in ("::", ":"):
                pieces.append(before if found == "::" else before + found)
                state = _OUTSIDE if found == "::" else _NODE
            elif state == _NODE and found in (".", ","):
                pieces.append(before + found)
                read.append(found)
                state = _OUTSIDE
            else:
                pieces.append(before + found)
                read.append(kept + found if state == _OUTSIDE else "")
            start = mark.end()
        pieces.append(line[start:])
        read.append(line[start:] if state == _OUTSIDE else "")
        shown.append("".join(pieces))
        if shown[-1] != line or opened_in != _OUTSIDE:
            text = " ".join("".join(read).split())
            if text:
                read_as[number] = text
            else:
                unread.add(number)
    return shown, read_as, unread


def _ends_with_see(text: str) -> bool:
    """Whether ``text`` ends with the word "see" and a space: a reference after it says nothing more."""
    words = text.rstrip()
    return text[-1:].isspace() and words.lower().endswith("see") and not words[-4:-3].isalnum()


def display_width(text: str) -> int:
    """How many columns ``text`` takes on a terminal, as makeinfo underlines a title: two for a wide
    character (CJK), one for any other."""
    return sum(2 if unicodedata.east_asian_width(character) in "WF" else 1 for character in text)


def _alt_text(marker: re.Match[str]) -> str:
    """What an image's marker shows: its ``alt`` text, or nothing."""
    return marker["alt"] or ""
