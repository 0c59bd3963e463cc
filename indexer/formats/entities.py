"""XML's general entities, as a DocBook manual declares them: ``&app;`` read as ``GnuCash``.

A manual declares the text it repeats (its product's name, its menus' labels) once, as entities:
in the file's own internal subset (``<!DOCTYPE book [<!ENTITY app "GnuCash">]>``), or in a DTD its
doctype names (``<!DOCTYPE chapter SYSTEM "gnc-gui-C.dtd">``) or that the internal subset includes
(``<!ENTITY % entities SYSTEM "custom-entities.ent"> %entities;``), which may include others.
:func:`expand_entities` reads those declarations and puts each reference's text in its place, as a
rendered manual shows it, before the file is parsed.

What is read, and what never is:

- Only files inside the folder the build indexes, where its walk goes
  (:class:`~indexer.formats.document.Neighbours`), never the network nor a file outside it: a DTD
  named by a URL, an absolute path or a path that leaves the folder is not read. A doctype's DTD is
  found where its name says, relative to the file, else as the file of that name in the file's
  folder or a folder above it inside the indexed folder; one that only a catalog or a search path
  finds elsewhere (GnuCash's ``docbook/`` beside ``C/``) is not looked for, which would take a
  listing of folders for each file.
- An entity's text is its value's words, without the markup it holds (``<application>GnuCash
  </application>`` reads ``GnuCash``): inserted as text, it cannot change how the file parses, and
  a value whose markup is not well formed cannot damage the file. An external general entity (a
  file of XML, ``<!ENTITY ch01 SYSTEM "ch01.xml">``) is not read: it includes that file, which a
  build reads as a file of its own, so its reference is put in place as the XInclude element it is
  the older form of (an empty element: it shows nothing and parses as nothing else). Any entity no
  declaration defines shows its name.
- A character entity of the ISO and HTML sets that DocBook's DTD declares (``&rsquo;``) reads as its
  character wherever no declaration read defines it, as the DTD a manual's build reads defines it.
- Every step is bounded, so that a hostile file (a "billion laughs") costs little: entities nested
  :data:`MAX_DEPTH` deep, files included :data:`MAX_FILES`, one entity's text :data:`MAX_ENTITY_CHARS`
  characters (a longer one is left unexpanded), a file's expansions :data:`MAX_EXPANDED_CHARS` in
  all, and DTD text read :data:`MAX_DTD_CHARS`.
"""

from __future__ import annotations

import html
import html.entities
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from indexer.formats.document import Neighbours

#: How deep entities nest in one another, and DTDs include one another.
MAX_DEPTH = 8
#: How many DTD files one document's declarations are read from.
MAX_FILES = 16
#: The longest text one entity is read as: far more than a name, a label or a note takes.
MAX_ENTITY_CHARS = 4096
#: How many characters the expansions of one document add up to, at most.
MAX_EXPANDED_CHARS = 4 * 1024 * 1024
#: How many characters of DTD text one document's declarations are read from, includes counted each
#: time they are read.
MAX_DTD_CHARS = 8 * 1024 * 1024
#: What reading a DTD's text counts toward :data:`MAX_DTD_CHARS` beside its characters: a parameter
#: entity of a few characters included many times costs as much as a long one.
INCLUDE_CHARS = 1024
#: The characters named by the ISO and HTML entity sets DocBook's DTD declares (``&rsquo;``,
#: ``&nbsp;``, ``&ccaron;``): read as their characters where no declaration the reader reads
#: defines them. HTML 4's are DocBook's ISO Latin 1, symbol and special sets; of the names HTML 5
#: added, the letters alone (``&ccaron;``, ISO Latin 2's): its others are mathematical symbols and
#: controls (``&eg;``, ``&Tab;``) whose names a manual's own entities spell more often (KDE's
#: ``&eg;`` for "e.g.", its ``&Tab;`` for the key), and an entity the reader cannot find shows its
#: name, which says more than a symbol.
CHARACTERS = {
    name: text
    for name, text in html.entities.html5.items()
    if name.endswith(";")
    and (name[:-1] in html.entities.name2codepoint or (len(text) == 1 and text.isalpha()))
}
#: The namespace of XInclude's elements: an external entity's reference is put in place as one.
XINCLUDE_NAMESPACE = "http://www.w3.org/2001/XInclude"
#: The entities XML predefines: never declared, and left for the parser.
PREDEFINED = frozenset({"amp", "lt", "gt", "quot", "apos"})

_NAME = r"[A-Za-z_:][\w.:-]*"
_QUOTED = r"\"[^\"]*\"|'[^']*'"
_DOCTYPE = re.compile(
    rf"<!DOCTYPE\s+[^\s\[>]+(?:\s+(?:SYSTEM\s+({_QUOTED})|PUBLIC\s+(?:{_QUOTED})\s+({_QUOTED})))?\s*(\[)?"
)
_DTD_TOKEN = re.compile(rf"<!--|<\?|<!ENTITY\s|<!\[|\]\]>|<!|%({_NAME});|\]")
_ENTITY = re.compile(
    rf"<!ENTITY\s+(%\s+)?({_NAME})\s+(?:({_QUOTED})|SYSTEM\s+({_QUOTED})|PUBLIC\s+(?:{_QUOTED})\s+({_QUOTED}))"
    rf"(\s+NDATA\s+{_NAME})?\s*>"
)
_DECLARATION = re.compile(r"<!(?:[^>\"']|\"[^\"]*\"|'[^']*')*>")
_SECTION = re.compile(rf"<!\[\s*(INCLUDE|IGNORE|%{_NAME};)\s*\[")
_PARAMETER_REFERENCE = re.compile(rf"%({_NAME});")
_REFERENCE = re.compile(rf"&(#x[0-9A-Fa-f]+|#[0-9]+|{_NAME});")
_TAG = re.compile(r"<[^<>]*>")
_SPACES = re.compile(r"\s+")
_DOCUMENT_TOKEN = re.compile(rf"<!--|<!\[CDATA\[|<\?|<|&({_NAME});")
_ENDS = {"<!--": "-->", "<![CDATA[": "]]>", "<?": "?>", "<": ">"}


def expand_entities(text: str, path: str, neighbours: Neighbours | None) -> str:
    """``text`` (an XML file at ``path``, relative to the folder of ``neighbours``) with each
    reference to a general entity its declarations define as text put in its place, escaped as text,
    its spaces made one space so that no line moves; any other reference as it is. A file that
    declares no entity is returned as it is."""
    if "&" not in text:
        return text
    match = _DOCTYPE.search(text, 0, _prolog_end(text))
    declarations = _Declarations(neighbours)
    if match is None:
        return _Expansion(declarations).text(text, 0)
    end = match.end()
    if match.group(3):  # the internal subset, read first: its declarations win
        end = declarations.scan(text, end, posixpath.dirname(path), depth=0, internal=True)
    system = match.group(1) or match.group(2)
    if system and neighbours is not None:
        declarations.include_doctype(system[1:-1], path)
    return _Expansion(declarations).text(text, end)


def _prolog_end(text: str) -> int:
    """Where the root element's start tag may start, at the earliest: the doctype is before it."""
    position = 0
    while (start := text.find("<", position)) >= 0:
        if text.startswith("<!--", start):
            end = text.find("-->", start)
            position = len(text) if end < 0 else end + 3
        elif text.startswith("<!DOCTYPE", start):
            return len(text)
        elif text.startswith(("<?", "<!"), start):
            position = _after(text, start, ">")
        else:
            return start
    return len(text)


def _after(text: str, start: int, end: str) -> int:
    found = text.find(end, start)
    return len(text) if found < 0 else found + len(end)


@dataclass
class _Declarations:
    """The entities a document's DTDs declare, the first declaration of each winning, as XML has it:
    general ones as their values (parameter entities expanded), parameter ones as their values or
    the files they name."""

    neighbours: Neighbours | None
    general: dict[str, str] = field(default_factory=dict)
    parameters: dict[str, str] = field(default_factory=dict)
    parameter_files: dict[str, str] = field(default_factory=dict)  # name: its file, relative to the root
    files: dict[str, str] = field(default_factory=dict)  # external general entities: the file each names
    files_read: int = 0
    chars_read: int = 0

    def include_doctype(self, system: str, path: str) -> None:
        """Read the declarations of the doctype's DTD, found where :mod:`this module <indexer.formats.
        entities>` says."""
        if self.neighbours is None:
            return
        tried: set[str] = set()
        for name in _candidates(system, posixpath.dirname(path)):
            if name not in tried and self._include_file(name, depth=1):
                return
            tried.add(name)

    def scan(self, text: str, position: int, folder: str, depth: int, internal: bool = False) -> int:
        """Read the declarations in ``text`` from ``position`` (a DTD in ``folder``); where they end:
        the internal subset's ``]`` or the text's end."""
        self.chars_read += INCLUDE_CHARS + len(text) - position
        while (match := _DTD_TOKEN.search(text, position)) is not None:
            token = match.group()
            if token == "<!--":
                position = _after(text, match.end(), "-->")
            elif token == "<?":
                position = _after(text, match.end(), "?>")
            elif token == "]":
                position = match.end()
                if internal:
                    return position
            elif token == "]]>":
                position = match.end()
            elif token == "<![":
                position = self._section(text, match.start())
            elif match.group(1):  # a parameter entity's text read as declarations, where it is referenced
                self._include(match.group(1), folder, depth + 1)
                position = match.end()
            elif (declared := _ENTITY.match(text, match.start())) is not None:
                self._declare(declared, folder)
                position = declared.end()
            elif (other := _DECLARATION.match(text, match.start())) is not None:
                position = other.end()
            else:  # a declaration never closed: nothing after it is read as one
                return len(text)
        return len(text)

    def _section(self, text: str, start: int) -> int:
        """Where reading goes on after a conditional section's start at ``start``: inside it, or after
        an ignored one."""
        match = _SECTION.match(text, start)
        if match is None:
            return start + 3
        keyword = match.group(1)
        if keyword.startswith("%"):
            keyword = self.parameters.get(keyword[1:-1], "").strip()
        return _after(text, match.end(), "]]>") if keyword == "IGNORE" else match.end()

    def _declare(self, declared: re.Match[str], folder: str) -> None:
        parameter, name, value, system, public_system, unparsed = declared.groups()
        if unparsed:
            return
        if parameter:
            if name in self.parameters or name in self.parameter_files:
                return
            if value is not None:
                if (expanded := self._with_parameters(value[1:-1])) is not None:
                    self.parameters[name] = expanded
            elif (file := _named(folder, (system or public_system)[1:-1])) is not None:
                self.parameter_files[name] = file
        elif name in self.general or name in self.files or name in PREDEFINED:
            return
        elif value is not None:
            if (expanded := self._with_parameters(value[1:-1])) is not None:
                self.general[name] = expanded
        else:
            self.files[name] = (system or public_system)[1:-1]

    def _with_parameters(self, value: str) -> str | None:
        """A literal value with its parameter entities' references in place (their values are
        expanded when declared); None past :data:`MAX_ENTITY_CHARS`."""
        if "%" in value:
            value = _PARAMETER_REFERENCE.sub(lambda match: self.parameters.get(match[1], match[0]), value)
        return value if len(value) <= MAX_ENTITY_CHARS else None

    def _include(self, name: str, folder: str, depth: int) -> None:
        if depth > MAX_DEPTH or self.chars_read > MAX_DTD_CHARS:
            return
        if name in self.parameters:
            self.scan(self.parameters[name], 0, folder, depth)
        elif name in self.parameter_files:
            self._include_file(self.parameter_files[name], depth)

    def _include_file(self, name: str, depth: int) -> bool:
        """Read the declarations of the DTD ``name`` (relative to the root); whether it was read."""
        if self.neighbours is None or self.files_read >= MAX_FILES or self.chars_read > MAX_DTD_CHARS:
            return False
        data = self.neighbours.read(name)
        if data is None:
            return False
        self.files_read += 1
        self.scan(data.decode("utf-8", errors="replace"), 0, posixpath.dirname(name), depth)
        return True


def _named(folder: str, system: str) -> str | None:
    """The file a system identifier names from a file in ``folder``, relative to the root (which
    reads no name outside it: :class:`indexer.formats.document.Neighbours`); None for a URL."""
    if not system or ":" in system:
        return None
    return posixpath.join(folder, system)


def _candidates(system: str, folder: str) -> Iterator[str]:
    """Where a doctype's DTD may be, in order: where its name says, relative to the file; then a file
    of its name in the file's folder or a folder above it."""
    named = _named(folder, system)
    if named is None:
        return
    yield named
    base = posixpath.basename(system)
    while True:
        yield posixpath.join(folder, base)
        if not folder:
            return
        folder = posixpath.dirname(folder)


class _Expansion:
    """The texts of a document's entities, each worked out once, and the references put in place."""

    def __init__(self, declarations: _Declarations) -> None:
        self.general = declarations.general
        self.files = declarations.files
        self.texts: dict[str, str | None] = {}
        self.budget = MAX_EXPANDED_CHARS

    def text(self, text: str, start: int) -> str:
        """``text`` with the references after ``start`` (the doctype's end) to entities with a text
        put in its place, escaped; none in a comment, a CDATA section, an instruction or a tag."""
        pieces: list[str] = []
        copied = 0  # where the text not yet in pieces starts
        position = start
        while (match := _DOCUMENT_TOKEN.search(text, position)) is not None:
            name = match.group(1)
            if name is None:
                end = text.find(_ENDS[match.group()], match.end())
                if end < 0:
                    break
                position = end + len(_ENDS[match.group()])
                continue
            position = match.end()
            if name in self.files:
                replacement = _include_element(self.files[name])
            elif (words := None if name in PREDEFINED else self._of(name, 0)) is not None:
                replacement = html.escape(words, quote=False)
            else:
                continue
            if len(replacement) > self.budget:
                continue
            self.budget -= len(replacement)
            pieces += [text[copied : match.start()], replacement]
            copied = position
        return "".join(pieces) + text[copied:]

    def _of(self, name: str, depth: int) -> str | None:
        """The text entity ``name`` reads as: its value's words, markup aside, the references in it
        read the same way; None for one with no text (undeclared, nested too deep, in a cycle, or
        past :data:`MAX_ENTITY_CHARS`)."""
        if name in self.texts:
            return self.texts[name]
        value = self.general.get(name)
        if value is None:
            return CHARACTERS.get(name + ";")
        if depth > MAX_DEPTH:
            return None
        self.texts[name] = None  # in a cycle until worked out
        parts: list[str] = []
        size = 0
        position = 0
        words = _TAG.sub("", value)
        for match in _REFERENCE.finditer(words):
            reference = match.group(1)
            if reference.startswith("#"):
                text = _character(reference)
            elif reference in PREDEFINED:
                text = html.unescape(match.group())
            else:
                nested = self._of(reference, depth + 1)
                text = reference if nested is None else nested  # by its name, as the parser shows it
            parts += [words[position : match.start()], text]
            size += match.start() - position + len(text)
            position = match.end()
            if size > MAX_ENTITY_CHARS:
                return None
        parts.append(words[position:])
        result = _SPACES.sub(" ", "".join(parts))
        if len(result) > MAX_ENTITY_CHARS:
            return None
        self.texts[name] = result
        return result


def _include_element(system: str) -> str:
    """The XInclude element that includes the file an external entity names, on one line."""
    href = html.escape(_SPACES.sub(" ", system), quote=True)
    return f'<xi:include xmlns:xi="{XINCLUDE_NAMESPACE}" href="{href}"/>'


def _character(reference: str) -> str:
    """The character a character reference (``#x2026``, ``#8230``) names; '' for none."""
    try:
        code = int(reference[2:], 16) if reference[1] in "xX" else int(reference[1:])
    except ValueError:
        return ""
    allowed = code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0x10FFFF
    return chr(code) if allowed and code not in (0xFFFE, 0xFFFF) else ""  # a character XML allows
