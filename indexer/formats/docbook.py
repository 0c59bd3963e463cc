"""DocBook XML (4 and 5, with or without DocBook 5's namespace): the words a rendered manual shows,
read at the source lines that hold them.

Parsed by libxml2's XML parser (through lxml), in recovery mode, without the DTD, the network or
XInclude: an ``xi:include`` (and an external entity's reference, which is one) shows nothing, and is
where another file's text stands (:attr:`Document.includes`), which a build reads as that file's
own. A manual's pages name entities that its build defines elsewhere: those its internal
subset declares, or a DTD inside the indexed folder that its doctype names or includes (GnuCash's
``&app;``), read as their texts (:mod:`indexer.formats.entities`); any other (PostgreSQL's
``&pgsql;``, defined by its build) shows its name. A file libxml2 reads only in part
(:data:`TEXT_LOSING_ERRORS`: a stray end tag, text after the root, nesting past its depth) is
damaged, rather than read in part without a word.

A document's lines are what the file's lines show, without their tags, each at its own number,
so a citation points at the source, and what is stored, searched and shown is the manual's text, as
HTML's reader places a page's words: a line of tags alone, a comment or a processing instruction
shows nothing. Index terms and remarks show nothing either; a man page's section number shows in
parentheses, as man prints it (``systemd(1)``); an empty cross-reference its target's title, where
the file holds it (:func:`_referenced_titles`).

- **Headings**: the titles of the sectioning elements (:data:`SECTIONS`), a ``<title>`` of their own
  or in their ``<info>``, nested as the elements nest; where none heads it, a formal object's
  (:data:`FORMAL`: a fragment's table). A reference page (``refentry``) is headed as
  a man page's NAME says it, its names and purpose (``systemctl — Control the systemd system and
  service manager``), else by its ``refmeta`` (``systemctl(1)``).
- **Code**: the literal elements (:data:`LITERAL`), from their start tag to their last line.
- **Definitions**: a reference page's names (as a man page's NAME declares them), the term of a
  ``varlistentry`` that is names as a manual lists its options and settings
  (``<term><option>--user</option></term>``, ``<term><varname>ExecStart=</varname></term>``: read
  as code where the term is code elements alone, :func:`item_names`), a ``funcdef``'s function,
  and the function a table row's first entry starts with a call to, in code (PostgreSQL's tables of
  functions: ``<function>btrim</function> ( <parameter>string</parameter> ...``).

``.docbook`` and ``.dbk`` files are DocBook; an ``.xml`` or ``.sgml`` file is when its doctype
names DocBook, its root is in DocBook 5's namespace, or its root is a DocBook element and it holds
an element only DocBook has (:func:`is_docbook`), and any other (a build's ``pom.xml``, an Android
layout or animator, an SVG) is read as plain lines, as other configuration is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol

from lxml import etree

from indexer.formats.definitions import cell_call_names, item_names, known_names
from indexer.formats.document import (
    Document,
    Heading,
    Layout,
    Neighbours,
    UnreadableFile,
    placed_lines,
    split_lines,
)
from indexer.formats.entities import XINCLUDE_NAMESPACE, expand_entities
from indexer.formats.text import read_plain

NAMESPACE = "http://docbook.org/ns/docbook"
XML_ID = "{http://www.w3.org/XML/1998/namespace}id"
#: An element that includes another file's text (:attr:`Document.includes`): XInclude's, or an
#: external entity's reference, put in place as one (:mod:`indexer.formats.entities`).
XINCLUDE = f"{{{XINCLUDE_NAMESPACE}}}include"
_LONE_RETURN = re.compile(r"\r(?!\n)")
#: How much of an ``.xml`` file is parsed to tell whether it is DocBook: far more than a prolog and
#: a root's start tag take.
HEAD_CHARS = 64 * 1024
#: The elements whose title is a heading, nested as they nest.
SECTIONS = frozenset(
    """set book part chapter appendix preface article reference partintro section sect1 sect2 sect3
    sect4 sect5 simplesect refsect1 refsect2 refsect3 refsection refsynopsisdiv glossary
    bibliography index colophon dedication acknowledgements""".split()
)
#: A reference page: headed by its names and purpose.
REFENTRY = "refentry"
#: The title a section that has none of its own shows, as man prints it.
UNTITLED = {"refsynopsisdiv": "Synopsis"}
#: The elements a DocBook document (or a fragment a manual includes, systemd's
#: ``standard-options.xml``) may start with: no other XML vocabulary roots its files in them.
ROOTS = SECTIONS | frozenset(
    """refentry variablelist itemizedlist orderedlist para simpara glossentry glossdiv refnamediv
    bookinfo articleinfo""".split()
)
#: The errors after which libxml2 goes on without the text they concern: an end tag that closes no
#: open element, content after the root's end, nesting past its limit.
TEXT_LOSING_ERRORS = frozenset({"ERR_TAG_NAME_MISMATCH", "ERR_DOCUMENT_END", "ERR_RESOURCE_LIMIT"})
#: Elements no other vocabulary names so: an un-namespaced file rooted in a DocBook element is
#: DocBook only when it holds one (an Android animator's ``<set>`` or a config's ``<section>`` holds
#: none).
MARKERS = frozenset(
    """para simpara refnamediv refentrytitle varlistentry programlisting screen itemizedlist
    orderedlist listitem sect1 sect2 refsect1 ulink xref emphasis""".split()
)
LITERAL = frozenset("programlisting screen synopsis literallayout funcsynopsis cmdsynopsis".split())
HIDDEN = frozenset({"indexterm", "remark"})
#: The parts of a synopsis a space sets apart where they are written together (``ls -l -a``, ``int
#: foo int x``), as docbook-xsl prints them.
SPACED_IN_CODE = frozenset({"arg", "group", "paramdef"})
#: The elements that mark code: a term made of them alone (and punctuation) lists names.
CODE = frozenset(
    """option varname command literal function parameter constant filename envar code systemitem
    type property userinput replaceable classname methodname structname structfield symbol token
    errorcode returnvalue sgmltag tag markup uri computeroutput keycap""".split()
)
#: The elements inside a line of text: no space is put between them and the words around them.
INLINE = CODE | frozenset(
    """emphasis ulink link xref olink citerefentry refentrytitle manvolnum quote acronym
    application productname firstterm glossterm foreignphrase phrase subscript superscript
    trademark citetitle abbrev wordasword prompt optional group arg sbr email keycombo guimenu
    guibutton guilabel guimenuitem guisubmenu menuchoice package database interface anchor
    footnoteref citation accel""".split()
)
#: The elements a title heads where no section's does (a fragment a manual includes, a ``<para>``
#: holding a table): a formal object, titled as docbook-xsl titles it.
FORMAL = frozenset("table figure example procedure sidebar equation".split())
#: A cross-reference that holds no text, read as the title of the element it names in the same file.
XREF = "xref"
#: A man page's section number, shown in parentheses.
VOLUME = "manvolnum"
#: How a term's placeholders and optional parts are read for the names it lists, as a manual
#: writes them in plain text (``set-hostname <NAME>``, ``list-units [<PATTERN>...]``): a value after
#: a name, not words of a phrase.
VALUE_MARKS = {"replaceable": ("<", ">"), "optional": ("[", "]")}
#: A synopsis's argument (``arg``): one that holds an option is a name, set apart from the names
#: before it as a list's items are (``<group><arg><option>-s</option></arg><arg><option>--show-secrets
#: </option></arg></group>`` lists ``-s, --show-secrets``); any other is a value (``<arg>INTEGER
#: width</arg>`` after a command).
ARGUMENT = "arg"
#: How many characters of a title, a term or a name are read: far more than any takes, so that
#: each is read in bounded work whatever the file holds.
COLLECTED_CHARS = 300
#: The texts read apart as well as shown: each kind, one at a time (the outermost).
COLLECTED = frozenset(
    {"title", "term", "refname", "refpurpose", "refentrytitle", VOLUME, "function", "entry"}
)
#: The element each of them is read in, where not anywhere: a reference page's names in its
#: ``refnamediv``, its title and section in its ``refmeta`` (a ``citerefentry`` names another
#: page), a function's name in its ``funcdef`` (not its uses in the text).
COLLECTED_IN = {
    "refname": "refnamediv", "refpurpose": "refnamediv", "refentrytitle": "refmeta", VOLUME: "refmeta",
    "function": "funcdef",
}  # fmt: skip
#: A type in parentheses after a term's name, as PostgreSQL lists its settings
#: (``<varname>work_mem</varname> (<type>integer</type>)``); not an option's short form (``(-h)``).
_TYPE_AFTER = re.compile(r"\s+\((?!-)[^()]*\)\Z")


def read_docbook(
    text: str, encoding: str = "utf-8", path: str = "", neighbours: Neighbours | None = None
) -> Document:
    """A DocBook document: its lines, as the source has them, with what each shows, its entities
    read as the texts its DTDs declare (:func:`~indexer.formats.entities.expand_entities`: those
    of its internal subset, and of the DTDs that ``path``'s ``neighbours`` hold). A line ended by a
    carriage return alone (an old Mac's) is a line, as libxml2 counts it."""
    text = expand_entities(_LONE_RETURN.sub("\n", text), path, neighbours)
    root, errors = _parse(text)
    return _read(root, errors, text, encoding)


def read_xml(
    text: str, encoding: str = "utf-8", path: str = "", neighbours: Neighbours | None = None
) -> Document:
    """An ``.xml`` or ``.sgml`` file: read as DocBook when it is (:func:`is_docbook`, asked of its
    first :data:`HEAD_CHARS` characters, so that a large file of data is not parsed whole to be
    read as lines), else as plain lines."""
    head, _ = _parse(text[:HEAD_CHARS])
    if head is None or not is_docbook(head):
        return read_plain(text, encoding)
    return read_docbook(text, encoding, path, neighbours)


class _Node(Protocol):
    """What the reader uses of an lxml node (lxml ships no types): a comment's, a processing
    instruction's or an entity's ``tag`` is not a string."""

    tag: object
    text: str | None
    tail: str | None
    sourceline: int | None

    attrib: dict[str, str]

    def getparent(self) -> _Node | None: ...
    def iter(self) -> Iterator[_Node]: ...
    def getroottree(self) -> _Tree: ...
    def itersiblings(self, preceding: bool = False) -> Iterator[_Node]: ...
    def __iter__(self) -> Iterator[_Node]: ...
    def __reversed__(self) -> Iterator[_Node]: ...


class _Tree(Protocol):
    docinfo: _DocInfo


class _DocInfo(Protocol):
    doctype: str


def _parse(text: str) -> tuple[_Node | None, list[tuple[str, str]]]:
    """The root of the tree libxml2 reads in ``text`` (None when it reads nothing), and the errors
    it met, each its kind and one line."""
    parser = etree.XMLParser(
        recover=True, resolve_entities=False, no_network=True, load_dtd=False, encoding="utf-8"
    )
    try:  # bytes, as the text is decoded already: a declared encoding is no error
        root: _Node | None = etree.fromstring(text.encode("utf-8", errors="replace"), parser)
    except etree.XMLSyntaxError:  # nothing to parse: an empty or whitespace-only file
        return None, []
    return root, [
        (error.type_name, f"{error.message.strip()} (line {error.line})") for error in parser.error_log
    ]


def is_docbook(root: _Node) -> bool:
    """Whether a parsed XML file is DocBook: its doctype names DocBook, or it has none and its root
    is a DocBook element (in DocBook 5's namespace, or in none and one of :data:`ROOTS`): LinuxDoc's
    ``<!doctype linuxdoc system>`` roots its files in an ``article`` too."""
    doctype = root.getroottree().docinfo.doctype
    if doctype:
        return "docbook" in doctype.lower()
    if not isinstance(root.tag, str):
        return False
    namespace, _, name = root.tag[1:].rpartition("}") if root.tag.startswith("{") else ("", "", root.tag)
    if namespace:
        return namespace == NAMESPACE
    foreign = any(str(attribute).startswith("{") for attribute in root.attrib)  # xmlns:android=...
    return name in ROOTS and not foreign and any(_is_marker(node) for node in root.iter())


def _is_marker(node: _Node) -> bool:
    """Whether ``node`` is an element only DocBook has (:data:`MARKERS`)."""
    return isinstance(node.tag, str) and node.tag in MARKERS


def _read(root: _Node | None, errors: list[tuple[str, str]], text: str, encoding: str) -> Document:
    """The document of a parsed file; damaged where libxml2 met an error that loses text (an end
    tag that closes no element, content after the root, nesting past its limit) or read nothing
    of a file with text. An undefined entity loses nothing: it shows its name."""
    lines = split_lines(text)
    walk = _Walk()
    losing = [message for kind, message in errors if kind in TEXT_LOSING_ERRORS]
    if root is None and any(line.strip() for line in lines):
        losing.append(errors[0][1] if errors else "no XML element in it")
    if losing:
        raise UnreadableFile(f"cannot be read as XML: {losing[0]}", status="damaged")
    if root is not None:
        walk.titles = _referenced_titles(root)
        walk.read([*reversed(list(root.itersiblings(preceding=True))), root, *root.itersiblings()])
    return walk.document(len(lines), encoding)


def _name(tag: str) -> str:
    """An element's name without its namespace (``{http://docbook.org/ns/docbook}para``)."""
    return tag.rsplit("}", 1)[-1]


@dataclass
class _Collected:
    """The text of an element read apart (a title, a term...), from ``line``: each piece with
    whether it lies in code, up to :data:`COLLECTED_CHARS` characters."""

    element: _Node
    line: int = 0
    pieces: list[tuple[bool, str]] = field(default_factory=list)
    size: int = 0

    def add(self, line: int, text: str, code: bool) -> None:
        if text.strip() and not self.line:
            self.line = line + text[: len(text) - len(text.lstrip())].count("\n")
        if self.size < COLLECTED_CHARS:
            self.pieces.append((code, text[: COLLECTED_CHARS - self.size]))
            self.size += len(self.pieces[-1][1])

    @property
    def text(self) -> str:
        return " ".join("".join(text for _, text in self.pieces).split())


@dataclass
class _Section:
    """An open sectioning element: whether its title was found, whether it heads what it holds (a
    section without a heading is no level of the headings inside it), and for a reference page its
    names and purpose, and its ``refmeta``'s title and section."""

    element: _Node
    is_page: bool = False  # a reference page, headed by its names rather than a title
    titled: bool = False
    headed: bool = False  # a page and a section man titles are, before their heading is made
    names: list[tuple[int, str]] = field(default_factory=list)
    purpose: str = ""
    meta: tuple[int, str] | None = None
    volume: str = ""


class _Walk:
    """One document's reading: the text of each line, its headings, literal blocks and names."""

    def __init__(self) -> None:
        self.pieces: list[tuple[int, str]] = []  # (line, text) shown
        self.line = 1  # where the text being read starts
        self.layout = Layout()
        self.sections: list[_Section] = []
        self.literal: list[int] = []  # first lines of the open literal elements
        self.hidden = 0  # open hidden elements
        self.code = 0  # open code elements
        self.collecting: dict[str, _Collected] = {}
        self.row_opened = False  # a table row started whose first entry has not
        self.first_entry = False  # the entry being opened is its row's first
        self.starts: set[int] = set()
        self.titles: dict[str, str] = {}  # the titles empty cross-references read as, by id

    def read(self, nodes: list[_Node]) -> None:
        """Walk the nodes in document order, without recursion: a document nested as deep as
        libxml2 reads is read like any other."""
        stack: list[tuple[_Node, str | None]] = [(node, None) for node in reversed(nodes)]
        while stack:
            node, closing = stack.pop()
            if closing is not None:
                self._end(node, closing)
                self._text(node.tail)
                continue
            if node.sourceline:  # an element's start tag ends there, a comment or instruction too
                self.line = max(self.line, node.sourceline)
            if not isinstance(node.tag, str):
                if node.tag is etree.Entity:
                    self._text((node.text or "").strip("&;"))  # the name of an entity left unexpanded
                self._text(node.tail)
                continue
            if node.tag == XINCLUDE:
                self.layout.includes.add(self.line)
            name = _name(node.tag)
            self._start(node, name)
            self._text(node.text)
            if name == XREF and node.text is None and next(iter(node), None) is None:
                self._text(self.titles.get(node.attrib.get("linkend", "")))
            stack.append((node, name))
            stack.extend((child, None) for child in reversed(node))

    def _start(self, node: _Node, name: str) -> None:
        if name not in INLINE and not self.literal:
            self.starts.add(self.line)
            self._add(" ")
        if self.literal and name in SPACED_IN_CODE:
            self._add(" ")
        if name in HIDDEN:
            self.hidden += 1
        if name in CODE:
            self.code += 1
        if name in LITERAL:
            self.literal.append(self.line)
        if name in SECTIONS or name == REFENTRY:
            page = name == REFENTRY
            self.sections.append(_Section(node, is_page=page, headed=page or name in UNTITLED))
        elif name in FORMAL and not any(section.headed for section in self.sections):
            self.sections.append(_Section(node))  # headed by its title, where no section's heads it
        if name == VOLUME:
            self._add("(")
        if name == "row":
            self.row_opened = True
        if name == "entry":  # a nested table's entries end the outer row's first as well
            self.first_entry, self.row_opened = self.row_opened, False
        if "term" in self.collecting and (marks := self._value_marks(node, name)):
            self.collecting["term"].add(self.line, marks[0], False)
            self.code += name == ARGUMENT and marks == VALUE_MARKS["replaceable"]  # a value, in code
        if name in COLLECTED and name not in self.collecting and self._collects(node, name):
            self.collecting[name] = _Collected(node)

    def _value_marks(self, node: _Node, name: str) -> tuple[str, str] | None:
        """What a term's element is marked with for the names it lists: a value's brackets
        (:data:`VALUE_MARKS`, an argument that holds no option), an option's argument after another
        name a comma before it (:data:`ARGUMENT`); None for any other."""
        if name != ARGUMENT:
            return VALUE_MARKS.get(name)
        if not any(isinstance(child.tag, str) and _name(child.tag) == "option" for child in node):
            return VALUE_MARKS["replaceable"]
        return (", ", "") if self.collecting["term"].text else None

    def _collects(self, node: _Node, name: str) -> bool:
        """Whether the text of ``node`` is read apart: the first title of the innermost open
        section (its own, or in its ``info``), a term, a reference page's names and purpose, a
        function's name in its ``funcdef``."""
        parent = node.getparent()
        if name == "entry":
            return self.first_entry
        if name == "title":
            section = self.sections[-1] if self.sections else None
            if section is None or section.is_page or section.titled or parent is None:
                return False
            owner = parent.getparent() if _name(str(parent.tag)).endswith("info") else parent
            return owner is section.element
        wanted = COLLECTED_IN.get(name)
        return wanted is None or (parent is not None and _name(str(parent.tag)) == wanted)

    def _end(self, node: _Node, name: str) -> None:
        collected = self.collecting.get(name)
        if collected is not None and collected.element is node:
            del self.collecting[name]
            self._collected(name, collected)
        if name == VOLUME:
            self._add(")")
        if "term" in self.collecting and (marks := self._value_marks(node, name)):
            self.collecting["term"].add(self.line, marks[1], False)
            self.code -= name == ARGUMENT and marks == VALUE_MARKS["replaceable"]
        if name in SECTIONS or name == REFENTRY or (self.sections and self.sections[-1].element is node):
            self._close_section(self.sections.pop())
        if name in LITERAL:
            first = self.literal.pop()
            if not self.literal:
                self.layout.literal.append((first, self.line))
        if name in CODE:
            self.code -= 1
        if name in HIDDEN:
            self.hidden -= 1
        if name not in INLINE and not self.literal:
            self._add(" ")

    def _collected(self, name: str, collected: _Collected) -> None:
        """What a text read apart says: a title heads its section, a term or a function declares
        names, a reference page's names and purpose head it."""
        text = collected.text
        if not text or not collected.line:
            return
        section = self.sections[-1] if self.sections else None
        if name == "title" and section is not None:
            section.titled = section.headed = True
            self.layout.headings.append(Heading(collected.line, self._level(self.sections[:-1]), text))
        elif name == "term":
            named = _TYPE_AFTER.sub("", text)
            self._declare(collected.line, item_names(named, code=_is_code(collected.pieces)))
        elif name == "function":
            self._declare(collected.line, known_names([text]))
        elif name == "entry" and _starts_in_code(collected.pieces):
            self._declare(collected.line, cell_call_names(text))
        elif (page := self._page()) is not None:
            if name == "refname":
                page.names.append((collected.line, text))
            elif name == "refpurpose":
                page.purpose = text
            elif name == "refentrytitle" and page.meta is None:
                page.meta = (collected.line, text)
            elif name == VOLUME and not page.volume:
                page.volume = text

    def _page(self) -> _Section | None:
        """The innermost open reference page."""
        return next((section for section in reversed(self.sections) if section.is_page), None)

    def _close_section(self, section: _Section) -> None:
        """Head a reference page by its names and purpose (its ``refmeta`` else), and a section
        without a title that man titles (``refsynopsisdiv``) by that title."""
        name = _name(str(section.element.tag))
        level = self._level(self.sections)
        if section.is_page and (heading := _page_heading(section, level)) is not None:
            self.layout.headings.append(heading)
            self._declare(heading.line, known_names(text for _, text in section.names))
        elif not section.is_page and not section.titled and name in UNTITLED:
            line = section.element.sourceline or self.line
            self.layout.headings.append(Heading(line, level, UNTITLED[name]))

    @staticmethod
    def _level(around: list[_Section]) -> int:
        """The level of a heading inside the sections ``around`` it: one below those that head."""
        return 1 + sum(section.headed for section in around)

    def _declare(self, line: int, names: tuple[str, ...]) -> None:
        if names:
            known = self.layout.definitions.get(line, ())
            self.layout.definitions[line] = tuple(dict.fromkeys((*known, *names)))

    def _text(self, data: str | None) -> None:
        if not data:
            return
        if not self.hidden:
            for collected in self.collecting.values():
                collected.add(self.line, data, self.code > 0)
            for offset, part in enumerate(data.split("\n")):
                if part:
                    self.pieces.append((self.line + offset, part))
        self.line += data.count("\n")

    def _add(self, text: str) -> None:
        """A mark of the reader's own (a space at a block's edge, a section number's parentheses)."""
        if not self.hidden:
            self.pieces.append((self.line, text))
            for collected in self.collecting.values():
                collected.add(self.line, text, False)

    def document(self, count: int, encoding: str) -> Document:
        """The document of a file of ``count`` lines: each line what it shows, as HTML's reader
        places a page's words (a line of tags alone, a comment, shows nothing), so that what is
        stored, searched by keyword, embedded and shown is the manual's text, not its tags."""
        literal = {number for first, last in self.layout.literal for number in range(first, last + 1)}
        lines = placed_lines(self.pieces, count, literal)
        for first, _ in self.layout.literal:  # code starts after its tag, whatever indents the tag
            lines[first - 1] = lines[first - 1].lstrip()
        self.layout.headings.sort(key=lambda heading: heading.line)
        self.layout.block_starts = sorted(self.starts)
        return self.layout.document(lines, encoding)


def _referenced_titles(root: _Node) -> dict[str, str]:
    """The titles that the file's empty cross-references (``<xref linkend="id"/>``) read as, by the
    id they name: the ``xreflabel`` of the element of that id in the file, else its title (its own,
    or in its ``info``), as docbook-xsl words a reference's text. An id the file holds no element
    of, or one without a title, reads as nothing."""
    wanted: set[str] = set()
    elements: dict[str, _Node] = {}
    for node in root.iter():
        if not isinstance(node.tag, str):
            continue
        if _name(node.tag) == XREF and node.text is None and next(iter(node), None) is None:
            wanted.add(node.attrib.get("linkend", ""))
        element_id = node.attrib.get("id") or node.attrib.get(XML_ID)
        if element_id:
            elements.setdefault(element_id, node)
    titles = {}
    for element_id in wanted & elements.keys():
        if title := _title_of(elements[element_id]):
            titles[element_id] = title
    return titles


def _title_of(element: _Node) -> str:
    label = element.attrib.get("xreflabel", "")
    if label.strip():
        return " ".join(label.split())
    for child in element:
        if not isinstance(child.tag, str):
            continue
        name = _name(child.tag)
        if name == "title":
            return " ".join(_words(child).split())[:COLLECTED_CHARS]
        if name.endswith("info"):
            return _title_of(child)
    return ""


def _words(element: _Node) -> str:
    """The text an element shows: hidden elements (an index term) and comments show nothing."""
    parts = [element.text or ""]
    for child in element:
        if isinstance(child.tag, str) and _name(child.tag) not in HIDDEN:
            parts.append(_words(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _page_heading(page: _Section, level: int) -> Heading | None:
    """A reference page's heading, as man heads it: its names and purpose at its first name
    (``systemctl — Control the systemd system and service manager``), else its ``refmeta``'s title
    and section (``systemctl(1)``); None when it has neither."""
    if page.names:
        title = ", ".join(text for _, text in page.names)
        return Heading(page.names[0][0], level, f"{title} — {page.purpose}" if page.purpose else title)
    if page.meta is not None:
        line, title = page.meta
        return Heading(line, level, f"{title}({page.volume})" if page.volume else title)
    return None


def _starts_in_code(pieces: list[tuple[bool, str]]) -> bool:
    """Whether the first words of a text are code."""
    return next((code for code, text in pieces if text.strip()), False)


def _is_code(pieces: list[tuple[bool, str]]) -> bool:
    """Whether a term's text is code: some of it in code elements, and the rest punctuation
    (``<option>-t</option>, <option>--type=</option>``)."""
    return any(code and text.strip() for code, text in pieces) and not any(
        char.isalnum() for code, text in pieces if not code for char in text
    )
