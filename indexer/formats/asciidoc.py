"""AsciiDoc, read by its section and block grammar, as Asciidoctor reads it.

What decides structure follows Asciidoctor's rules:

- a section title is a line starting a block (after a blank line, a closing delimiter or the block's
  attribute lines) outside every delimited block: ``== Title`` (``=`` to ``======``, or Markdown's
  ``#``), or a line with a word in it underlined on the next line with one of ``= - ~ ^ +`` repeated
  to its length within one character (``NAME`` over ``----``; under a longer line ``----`` opens a
  listing block). Levels nest as the markers say; a ``[discrete]`` heading is one too;
- delimited blocks open and close on the same line: listing ``----``, literal ``....``, passthrough
  ``++++`` and fenced code are literal, and nothing inside them is read as markup; example ``====``,
  sidebar ``****``, quote ``____``, open ``--`` and tables ``|===`` hold text, read as such, but never
  a section title; a table's cells start at the mark its attribute lines set (``separator=¦``,
  ``format=csv``), or at its delimiter's first character. ``[source]``, ``[listing]``,
  ``[literal]`` (and the like) make an open block or a paragraph literal, as does indenting a
  paragraph;
- comment lines (``//``), comment blocks (``////``, or a ``[comment]`` block), attribute entries
  (``:name: value``), block attribute lines and anchors (``[source,java]``, ``[[id]]``, ``[#id]``),
  the preprocessor's lines (``ifdef::``, ``endif::``, ``include::``), list continuations, breaks and
  the header's author and revision lines show nothing: they are markup (:attr:`Document.markup`),
  kept in a chunk's text and left out of what the model reads; an ``include::`` line is where
  another file's text stands (:attr:`Document.includes`), which is read as that file;
- what the model reads of the other lines (:attr:`Document.read_as`) is their visible text: a title
  without its ``==``, a block title without its dot, ``term:: text`` as ``term: text``, inline macros
  as the text they show (``link:url[text]``, ``xref:page.adoc[text]``, ``<<id,text>>``,
  ``https://...[text]``, a URL after a reference the page does not set ``{url-org}/x[text]``,
  ``kbd:[Ctrl+C]``; a custom macro's text, or its target and a man page section:
  ``linkgit:git-commit[1]`` reads ``git-commit(1)``; a target after a reference the page does not
  set reads without it: ``javadoc:{url-api}/org.example.Type[]`` reads ``org.example.Type``),
  attribute references replaced by the values the file sets (and the built-in ones,
  ``{nbsp}``...), but for an escaped one (``\\{name}`` shows ``{name}``) and the text an inline
  passthrough shows as written (``+{name}+``, `` `+{name}+` ``, ``pass:[{name}]``), anchors and
  index terms dropped. The ``description`` attribute is read as the text it is, as a Markdown
  page's front matter description is.

A list's entries that are links to other pages alone (``* xref:install.adoc[]``, as Antora's
navigation files list a component's pages, :func:`links_away`) are its linked entries
(:attr:`Document.linked_entries`): a chunk made mostly of them is stored as a contents list.

The names a page defines (:attr:`Document.definitions`): a manual page's NAME section
(``git-commit - Record changes to the repository``, what ``whatis`` reads), the ids that anchor
a section title (``[[restore-dump]]``), which cross references name it by, and a description list's
term that is names (``--amend::``, ``core.editor::``, a man page's ``*-o, --out-file*=_FILE_::``,
read without its bold and italic marks, and as code when it starts in monospace: :func:`term_names`),
and a list item's term in bold or monospace that a block anchor gives an id (``[[nsa-auto-config]]``
over ``* **auto-config**``), a reference written as a list.

Why not a parser from PyPI: the Python ones either convert to HTML or DocBook without positions or an
AST (asciidoc-py, asciidoc3, both GPL), or are early alphas too slow for a build (a Lark-grammar
parser took seconds for a page of 200 lines); none gives line numbers. Every rule here reads a line
at a time, with patterns that cannot backtrack far, so a file is read in time linear in its size.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field

from indexer.formats.definitions import item_names, man_entry_names, title_names
from indexer.formats.document import Document, Heading, Layout, UnreadableFile, shown_characters, split_lines

_ATX_TITLE = re.compile(r"(={1,6}|#{1,6})[ \t]+(?=\S)")
_SETEXT_LEVELS = {"=": 1, "-": 2, "~": 3, "^": 4, "+": 5}
#: Delimiters of four or more of one character, by kind: what is inside a literal or comment block
#: is not read as markup; a compound block's content is read as text.
_DELIMITED_KINDS = {
    "-": "literal",
    ".": "literal",
    "+": "literal",
    "/": "comment",
    "=": "compound",
    "*": "compound",
    "_": "compound",
}
_DELIMITER_STARTS = frozenset("-.+/=*_`|,:!")
_TABLE_DELIMITER = re.compile(r"[|,:!]={3,}")
#: A table cell's specifier (``2+``, ``3*``, ``.2+^.^``, ``a``, ``h``...), written before the ``|``
#: that starts the cell: at the start of a line, or after a blank at the end of the cell before.
_CELL_SPEC = r"(?:(?:\d{1,4}(?:\.\d{0,4})?|\d{0,4}\.\d{1,4})[*+])?[<^>]?(?:\.[<^>])?[a-z]?"
_LEADING_CELL_SPEC = re.compile(rf"[ \t]{{0,8}}{_CELL_SPEC}")
_TRAILING_CELL_SPEC = re.compile(rf"[ \t]{_CELL_SPEC}$")
#: The most characters a cell's specifier (and the blank before it) takes up.
CELL_SPEC_CHARS = 24
#: Block styles that make an open block or a paragraph literal (Asciidoctor Diagram's among them).
LITERAL_STYLES = frozenset(
    """source listing literal pass stem latexmath asciimath plantuml mermaid graphviz ditaa svgbob
    d2 vega vegalite wavedrom bytefield""".split()
)
_BLOCK_ATTRIBUTES = re.compile(r"\[(?:|[\w.#%{,\"'].*|\[(?:|[A-Za-z_:][\w\-:.]*(?:, *.+)?)\])\]")
_ATTRIBUTE_ENTRY = re.compile(r":(!?\w[^:]*):(?:[ \t]+(.*))?")
_BLOCK_MACRO = re.compile(r"(\w[\w-]*)::([^\[\s][^\[]*)?\[(.*)\]")
_PREPROCESSOR = re.compile(r"(ifdef|ifndef|ifeval|endif|include)::([^\[]*)\[(.*)\]")
_THEMATIC_BREAK = re.compile(r"'{3,}|<{3,}|([-*_])( *)\1\2\1")
#: A list item's marker or a table cell's, before which no description list term starts.
_LIST_ITEM = re.compile(r"[ \t]*(?:[*.-]+[ \t]|\d+\.[ \t]|<\d+>|\|)")
#: A list item's marker, before its text: ``*`` to ``*****``, ``-``, ``.`` to ``.....``, ``1.``.
_LIST_MARKER = re.compile(r"[ \t]*(?:\*{1,5}|-|\.{1,5}|\d{1,9}\.)[ \t]+")
#: A list item's text that is one term in bold or monospace, alone or before a colon or a dash
#: (``**session-fixation-protection**``, ```max-sessions`: ...``), the marks not doubled inside it.
_ITEM_TERM = re.compile(
    r"(?P<mark>\*\*|\*|``|`)(?P<term>[^*`\s][^*`\n]{0,511}?)(?P=mark)(?:[ \t]*:.*|[ \t]+-{1,2}[ \t].*)?"
)
_DESCRIPTION_TERM = re.compile(r"(\S.*?)(?::{2,4}|;;)(?:[ \t]+(.*))?")
#: A table's ``format`` and ``separator`` attributes, and the mark each format starts a cell with.
_TABLE_FORMAT = re.compile(r"\bformat=[\"']?(csv|dsv|psv|tsv)\b", re.IGNORECASE)
_TABLE_SEPARATOR = re.compile(r"\bseparator=[\"']?(\\t|[^\s\"',\]])")
_FORMAT_MARKS = {"csv": ",", "dsv": ":", "tsv": "\t"}  # a psv table's: its delimiter's (``|``, ``!``)
#: The ids an anchor or a block attribute line gives the block after it.
_ANCHOR_ID = re.compile(r"\[\[([\w:][\w\-:.]*)")
_SHORTHAND_ID = re.compile(r"#([^.%,#\]\s]+)")
#: A named ``id`` attribute, its value bare or in double or single quotes (``[id='install-{context}']``,
#: as modular documentation's templates write each module's id).
_NAMED_ID = re.compile(r"\bid=[\"']?([^\"',\]\s]+)")
#: The dash between a manual page's names and its purpose.

#: Inline markup, each with its longest part bounded, so no pattern backtracks far.
#: An attribute reference, maybe escaped with a backslash (``\{name}``, which shows ``{name}``).
_ATTRIBUTE_REFERENCE = re.compile(r"(\\?)\{(\w[\w-]{0,127})\}")
#: A reference the page does not set, at the start of a macro's target (``{url-api}/``): a base
#: address an Antora component or an included file sets, which no reader sees.
_UNSET_BASE = re.compile(r"\{[\w-]{1,128}\}/?")
#: Inline passthroughs, whose text shows as written, without substitutions (Asciidoctor reads
#: them before every other substitution): monospace passed through (`` `+{name}+` ``, with one to
#: three pluses), constrained ``+{name}+`` (not after a word character, a quote or a backtick, its
#: text not starting or ending with a blank), and ``pass:[{name}]`` with no substitutions named.
_PASSTHROUGH = re.compile(
    r"(?<![\w\\])`(?P<marks>\+{1,3})(?P<code>[^`\n]{1,2048}?)(?P=marks)`"
    r"|(?<![\w;:\\+\"'`}])\+(?P<plain>[^\s+](?:[^+\n]{0,2046}[^\s+\\])?)\+(?![\w+])"
    r"|(?<![\w\\])pass:\[(?P<pass>(?:[^\[\]\\]|\\.){0,2048})\]"
)
#: Where a passthrough's text is held while the rest of its line is read: private use characters,
#: which a page's text seldom holds.
_HELD = re.compile("\ue000(\\d{1,6})\ue001")
#: The marks :data:`_HELD` is made of: a line that holds one already (an icon font's glyph) has its
#: passthroughs read with the rest of it, so that no mark of its own is taken for one.
_HOLDING_MARKS = frozenset("\ue000\ue001")
_INLINE_ANCHOR = re.compile(r"\[\[\[?[\w:][^\[\]]{0,512}\]\]\]?")
_CROSS_REFERENCE = re.compile(r"<<([^<>,\s][^<>,]{0,511})(?:,[ \t]*([^<>]{0,2048}))?>>")
_URL_MACRO = re.compile(r"(?<![\w\\])((?:https?|ftp|irc)://[^\s\[\]]{1,2048})\[((?:[^\[\]\\]|\\.){0,2048})\]")
#: A URL macro whose address starts with an attribute reference the page does not set
#: (``{url-org}/x[text]``, ``{docs-url}[the docs]``, set by an Antora component or an included
#: file): Asciidoctor replaces references before it reads macros, so the page shows its text. Where
#: a URL may start (as Asciidoctor's link rule has it): at the line's start, after a blank, a
#: bracket or a quote.
_ATTRIBUTE_URL = re.compile(
    r"(?<![^\s<>()\[\];\"'])\{[\w-]{1,128}\}[^\s\[\]{}`]{0,2048}\[((?:[^\[\]\\\n]|\\.){0,2048})\]"
)
_INLINE_MACRO = re.compile(
    r"(?<![\w\\-])([A-Za-z][\w-]{0,63}):(?!/)([^\s\[\]]{0,1024})\[((?:[^\[\]\\]|\\.){0,2048})\]"
)
_INDEX_TERMS = re.compile(r"\(\(\([^()]{0,512}\)\)\)")
_INDEX_TERM = re.compile(r"\(\(([^()]{1,512})\)\)")
_MONOSPACE = re.compile(r"`\+?([^`]{0,512}?)\+?`")
#: Inline formatting, as Asciidoctor's quotes substitution reads it (:func:`inline_text`): each
#: mark's text bounded and free of the mark, so a mark never closed costs a look ahead to the next.
_CURVED_QUOTES = re.compile(r"([\"'])`([^`\n]{1,512})`\1")
_APOSTROPHE = re.compile(r"(?<=\w)`'")
_CODE = re.compile(r"(``[^`]{1,512}``|`[^`]{1,512}`)")
_ROLE = r"(?:\[[^\[\]\n]{0,128}\])?"
#: Bold, italic and highlighted text, each pattern matching monospace first (the text may hold code).
_SKIP_CODE = r"(?P<code>``[^`]{1,512}``|`[^`]{1,512}`)|"
_UNCONSTRAINED = re.compile(
    _SKIP_CODE + _ROLE + r"(?:\*\*([^*]{1,512})\*\*|__([^_]{1,512})__|##([^#]{1,512})##)"
)
_CONSTRAINED = re.compile(
    _SKIP_CODE
    + r"(?<![\w*_#&\\])"
    + _ROLE
    + "(?:"
    + "|".join(
        rf"{mark}(?=[^\s{mark}])([^{mark}]{{1,512}})(?<=[^\s{mark}]){mark}" for mark in (r"\*", "_", "#")
    )
    + r")(?![\w*_#])"
)
#: How deep macros nested in one another's text are read (a cross reference in a footnote is two).
MACRO_DEPTH = 3
#: Macros that show nothing of their own: an anchor, an index term, an icon.
HIDDEN_MACROS = frozenset({"anchor", "indexterm", "icon"})
#: Inline macros whose brackets hold text or a formula rather than an attribute list: shown whole.
CONTENT_MACROS = frozenset({"kbd", "btn", "pass", "stem", "latexmath", "asciimath", "footnote"})
#: A named attribute in a macro's attribute list (``window=_blank``, ``format = annotation``).
_NAMED_ATTRIBUTE = re.compile(r"(?:^|,)\s*[A-Za-z_][\w-]*\s*=")
#: The attributes every AsciiDoc document has: character replacements, as Asciidoctor defines them.
BUILT_IN_ATTRIBUTES = {
    "nbsp": " ", "sp": " ", "empty": "", "zwsp": "", "wj": "", "apos": "'", "quot": '"',
    "lsquo": "\u2018", "rsquo": "\u2019", "ldquo": "\u201c", "rdquo": "\u201d", "deg": "\u00b0",
    "plus": "+", "brvbar": "\u00a6", "vbar": "|", "amp": "&", "lt": "<", "gt": ">", "startsb": "[",
    "endsb": "]", "caret": "^", "asterisk": "*", "tilde": "~", "backslash": "\\", "backtick": "`",
    "two-colons": "::", "two-semicolons": ";;", "cpp": "C++", "cxx": "C++", "pp": "++",
}  # fmt: skip
#: Attribute entries whose value is text a reader of the page sees (its summary), not a setting.
READ_ATTRIBUTES = frozenset({"description"})


@dataclass
class AsciidocLayout(Layout):
    """What the grammar found in an AsciiDoc text, as 1-based line numbers, and its tables."""

    #: The lines of tables (1-based line: the character that starts a cell, ``|``, or ``,`` and
    #: ``:`` of comma and delimiter separated tables, ``!`` of a table in a table's cell).
    table_lines: dict[int, str] = field(default_factory=dict)


#: How OpenPGP's ASCII armor begins (RFC 4880, section 6.2) when it holds no text to read: a key, a
#: signature or an encrypted message, which share AsciiDoc's ``.asc``; a clearsigned message (``BEGIN
#: PGP SIGNED MESSAGE``, a security advisory) is text, read as written.
_ARMOR = re.compile(r"\ufeff?\s*-----BEGIN PGP (?:PUBLIC KEY BLOCK|PRIVATE KEY BLOCK|SIGNATURE|MESSAGE)")


def read_asciidoc(text: str, encoding: str = "utf-8") -> Document:
    """An AsciiDoc file's lines with its sections, literal blocks and markup as its grammar says,
    each line read as the rendered page shows it. A file in OpenPGP's armor is refused: ``.asc`` is
    the extension of both, and a key's or a signature's base64 is nothing a question finds."""
    if _ARMOR.match(text):
        raise UnreadableFile("an OpenPGP key or signature (ASCII armor), not AsciiDoc", status="no-text")
    lines = split_lines(text)
    return asciidoc_layout(lines).document(lines, encoding)


def asciidoc_layout(lines: list[str]) -> AsciidocLayout:
    """Sections, literal blocks, markup lines, lines read otherwise than written, and definitions."""
    reader = _Reader(lines)
    reader.read()
    reader.layout.definitions.update(manual_page_names(lines, reader.layout))
    return reader.layout


class _Reader:
    """One pass over the lines, keeping the state the grammar needs: the compound blocks open, whether
    the next line starts a block, the style and ids of the block attribute lines just read, the
    attributes set so far."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.layout = AsciidocLayout()
        self.open_blocks: list[str] = []  # closing delimiters of the compound blocks open
        self.cell_marks: dict[int, str] = {}  # the mark that starts a cell, by depth of the table open
        self.at_block_start = True
        self.style = ""  # the style of the block attribute line just read ('source', 'discrete'...)
        self.ids: list[str] = []  # the ids of the anchors just read, for a section title after them
        self.attributes = dict(BUILT_IN_ATTRIBUTES)
        self.in_header = True  # before the document's title or first block
        self.header_lines = 0  # author and revision lines still allowed after the document title

    def read(self) -> None:
        index = 0
        while index < len(self.lines):
            index = self._read_line(index)

    def _read_line(self, index: int) -> int:
        """Read the line at ``index`` (and any lines that belong with it); the index of the next."""
        line = self.lines[index].rstrip()
        if "::" in line and _PREPROCESSOR.fullmatch(line):
            self._preprocessor(index, line)
            return index + 1
        if not line:
            self.at_block_start, self.header_lines = True, 0
            return index + 1
        if _is_comment_line(line):
            self.layout.markup.add(index + 1)
            return index + 1
        if self._delimiter(line) is not None:
            return self._delimited_block(index, line)
        if len(self.open_blocks) in self.cell_marks:
            self.layout.table_lines[index + 1] = self.cell_marks[len(self.open_blocks)]
        if line == "+":  # a list continuation: the next line starts a block attached to the item
            self.layout.markup.add(index + 1)
            self.at_block_start = True
            return index + 1
        if self.header_lines:
            self.header_lines -= 1
            if not _ATTRIBUTE_ENTRY.fullmatch(line):  # the author line, then the revision line
                self.layout.markup.add(index + 1)
                return index + 1
        if not self.at_block_start:
            if _BLOCK_ATTRIBUTES.fullmatch(line):  # ends the paragraph, and starts a block
                self.layout.block_starts.append(index + 1)
                self.at_block_start = True
            else:
                self._text_line(index, line)
                return index + 1
        return self._block_start(index, line)

    def _block_start(self, index: int, line: str) -> int:
        """Read a line that starts a block: its metadata, a title, a break, or its first line."""
        number = index + 1
        if _BLOCK_ATTRIBUTES.fullmatch(line):
            self._block_attributes(line)
            self.layout.markup.add(number)
            return number
        entry = _ATTRIBUTE_ENTRY.fullmatch(line)
        if entry:
            return self._attribute_entry(index, entry)
        if _is_block_title(line):
            self._read(number, line[1:])
            return number
        if not self.open_blocks:
            used = self._section_title(index, line)
            if used:
                return index + used
        self.in_header = False
        if _THEMATIC_BREAK.fullmatch(line):
            self.layout.markup.add(number)
            self.style, self.ids = "", []
            return number
        if self.style == "comment":
            return self._hidden_paragraph(index)
        if self.style in LITERAL_STYLES or line[:1] in (" ", "\t"):
            return self._literal_paragraph(index)
        macro = _BLOCK_MACRO.fullmatch(line)
        if macro:
            self._block_macro(number, macro)
            return number
        ids, self.at_block_start, self.style, self.ids = self.ids, False, "", []
        self._text_line(index, line)
        if ids and (names := self._anchored_item_names(line)):
            self.layout.definitions[number] = names
        return number

    def _anchored_item_names(self, line: str) -> tuple[str, ...]:
        """The names a list item declares that a block anchor gives an id (``[[nsa-http-auto-config]]``
        over ``* **auto-config**``): a reference written as a list, each entry a term in bold or
        monospace alone (or before a colon or a dash), then its description, as a description list
        would write it. The anchor is what makes the item a definition, so its term is read as code
        is (:func:`item_names`): a word with hyphens in bold is as much a name as in monospace."""
        item = _LIST_MARKER.match(line)
        term = _ITEM_TERM.fullmatch(line[item.end() :].rstrip()) if item else None
        if term is None:
            return ()
        return item_names(title_text(term["term"].strip("+"), self.attributes), code=True)

    def _preprocessor(self, index: int, line: str) -> None:
        """A preprocessor line shows nothing, wherever it is; a one-line ``ifdef`` shows its text. An
        ``include::`` line includes another file's text (:attr:`Document.includes`)."""
        directive = _PREPROCESSOR.fullmatch(line)
        assert directive is not None
        shown = self._conditional_text(directive) if directive.group(1) in ("ifdef", "ifndef") else ""
        if directive.group(1) == "include":
            self.layout.includes.add(index + 1)
        if shown.strip():
            self._read(index + 1, shown)
        else:
            self.layout.markup.add(index + 1)

    def _conditional_text(self, directive: re.Match[str]) -> str:
        """What a one-line ``ifdef`` or ``ifndef`` shows: its text. An attribute entry there sets its
        attribute when the condition holds (``ifndef::imagesdir[:imagesdir: images]``, a default the
        build's command line may override), and shows nothing."""
        text = directive.group(3)
        entry = _ATTRIBUTE_ENTRY.fullmatch(text)
        if entry is None:
            return text
        if self._holds(directive.group(1), directive.group(2)):
            self._set_attribute(entry.group(1), entry.group(2) or "")
        return ""

    def _holds(self, kind: str, names: str) -> bool:
        """Whether an ``ifdef`` (``kind``) or ``ifndef`` of ``names`` holds, as Asciidoctor reads
        them: ``a,b`` any of them set (``ifndef``: none), ``a+b`` all of them (``ifndef``: not all)."""
        every = "+" in names
        found = [name.strip().lower() in self.attributes for name in re.split(r"[,+]", names)]
        defined = all(found) if every else any(found)
        return defined if kind == "ifdef" else not defined

    def _set_attribute(self, name: str, value: str) -> None:
        """Set attribute ``name`` to ``value`` as the page shows it; ``name!`` or ``!name`` unsets it."""
        bare = name.strip("!").lower()
        if name.startswith("!") or name.endswith("!"):
            self.attributes.pop(bare, None)
        else:
            self.attributes[bare] = visible_text(value, self.attributes)

    def _delimiter(self, line: str) -> str | None:
        """The kind of block ``line`` delimits ('literal', 'comment', 'compound'), or None."""
        if line[:1] not in _DELIMITER_STARTS:
            return None
        if line == "--" or _TABLE_DELIMITER.fullmatch(line):
            return "compound"
        if line.startswith("```"):
            return "literal"
        if len(line) >= 4 and line == line[0] * len(line):
            return _DELIMITED_KINDS.get(line[0])
        return None

    def _delimited_block(self, index: int, line: str) -> int:
        """Open a delimited block at ``index`` (or close the compound block open); the next index."""
        number = index + 1
        if self.open_blocks and line == self.open_blocks[-1]:
            self.cell_marks.pop(len(self.open_blocks), None)
            self.open_blocks.pop()
            self.layout.markup.add(number)
            self._block_ends(number)
            return number
        kind = self._delimiter(line)
        if line == "--" and self.style in LITERAL_STYLES:
            kind = "literal"
        elif line == "--" and self.style == "comment":
            kind = "comment"
        if not self.at_block_start:
            self.layout.block_starts.append(number)
        self.in_header, self.style, self.ids = False, "", []
        if kind == "compound":
            self.open_blocks.append(line)
            if _TABLE_DELIMITER.fullmatch(line):
                self.cell_marks[len(self.open_blocks)] = self._cell_mark(index, line)
            self.layout.markup.add(number)
            self.at_block_start = True
            return number
        closing = "```" if line.startswith("```") else line
        last = self._closing_line(index, closing)
        if kind == "comment":
            self.layout.markup.update(range(number, last + 1))
        else:
            self.layout.literal.append((number, last))
            self.layout.markup.add(number)
            if last > number and self.lines[last - 1].rstrip() == closing:
                self.layout.markup.add(last)
            for inner in range(number + 1, last):
                if directive := _PREPROCESSOR.fullmatch(self.lines[inner - 1].rstrip()):
                    self.layout.markup.add(inner)
                    if directive.group(1) == "include":  # a listing of another file's text
                        self.layout.includes.add(inner)
        self._block_ends(last)
        return last

    def _cell_mark(self, index: int, delimiter: str) -> str:
        """The mark that starts a cell of the table opened at ``index``: the delimiter's first
        character, unless the table's attribute lines (its title among them, in any order) set a
        ``format`` (``csv``, ``tsv``, ``dsv``) or, for a prefix separated table, a ``separator``
        (``separator=¦``), as Asciidoctor reads them; comment lines between them change nothing. (A
        delimited table's own separator is left to its format's: its cells are read as one each.)"""
        mark = delimiter[0]
        separator = ""
        before = index - 1
        while before >= 0 and (above := self.lines[before].rstrip()):
            if _BLOCK_ATTRIBUTES.fullmatch(above):
                format_set = _TABLE_FORMAT.search(above)
                separator_set = _TABLE_SEPARATOR.search(above)
                mark = _FORMAT_MARKS.get(format_set.group(1).lower(), mark) if format_set else mark
                separator = separator_set.group(1).replace("\\t", "\t") if separator_set else separator
            elif not (_is_block_title(above) or _is_comment_line(above)):
                break
            before -= 1
        return separator if separator and mark in "|!" else mark

    def _closing_line(self, index: int, closing: str) -> int:
        """The 1-based line that closes the block opened at ``index`` (the last line when none does:
        Asciidoctor reads an unclosed block to the end of the document)."""
        for following in range(index + 1, len(self.lines)):
            if self.lines[following].rstrip() == closing:
                return following + 1
        return len(self.lines)

    def _block_ends(self, number: int) -> None:
        """After a block's last line (``number``) the next line starts a block, blank or not, but the
        delimiter that closes the compound block around it (an admonition's ``====`` after the
        source block inside it), which ends a block rather than starting one."""
        self.at_block_start = True
        if number >= len(self.lines) or not (following := self.lines[number].rstrip()):
            return
        if not (self.open_blocks and following == self.open_blocks[-1]):
            self.layout.block_starts.append(number + 1)

    def _block_attributes(self, line: str) -> None:
        """Take the style and ids of a block attribute line or anchor for the block after it."""
        if line.startswith("[["):
            anchor = _ANCHOR_ID.match(line)
            self.ids.extend([anchor.group(1)] if anchor else [])
            return
        first = line[1:-1].split(",", 1)[0].strip()
        if "=" not in first:
            style = re.split(r"[#.%]", first, maxsplit=1)[0].strip().strip("\"'")
            self.style = style.lower() or self.style
            self.ids.extend(_SHORTHAND_ID.findall(first))
        self.ids.extend(_NAMED_ID.findall(line))

    def _attribute_entry(self, index: int, entry: re.Match[str]) -> int:
        """An attribute entry (with the lines its value continues on, each ending in a backslash):
        markup, but for the page's description; its value is remembered for references to it."""
        name, value = entry.group(1), (entry.group(2) or "")
        last = index
        while value.endswith("\\") and last + 1 < len(self.lines):
            last += 1
            value = value[:-1].rstrip() + " " + self.lines[last].strip()
        numbers = range(index + 1, last + 2)
        self._set_attribute(name, value)
        if name.lower() in READ_ATTRIBUTES and value.strip():
            self._read(index + 1, value)
            self.layout.markup.update(numbers[1:])
        else:
            self.layout.markup.update(numbers)
        return last + 1

    def _section_title(self, index: int, line: str) -> int:
        """The lines a section title at ``index`` takes up (0: it is none), recorded as a heading."""
        number = index + 1
        atx = _ATX_TITLE.match(line)
        if atx:
            marker = atx.group(1)
            title = line[atx.end() :].removesuffix(" " + marker).rstrip()
            level, used = len(marker), 1
        else:
            underline = self.lines[index + 1].rstrip() if index + 1 < len(self.lines) else ""
            level = _setext_level(line, underline)
            if not level:
                return 0
            title, used = line.strip(), 2
            self.layout.markup.add(number + 1)
        shown = title_text(title, self.attributes)
        self.layout.headings.append(Heading(number, level, shown, number + used - 1))
        self._read(number, shown)
        ids = self.ids + [anchor.group(1) for anchor in _ANCHOR_ID.finditer(title)]
        if names := (*ids, *title_names(title_pieces(title, self.attributes))):
            self.layout.definitions[number] = tuple(dict.fromkeys(names))
        self.header_lines = 2 if self.in_header and level == 1 else 0
        self.in_header, self.style, self.ids = False, "", []
        self.at_block_start = True
        return used

    def _hidden_paragraph(self, index: int) -> int:
        """A ``[comment]`` paragraph: markup to its end."""
        last = self._paragraph_end(index)
        self.layout.markup.update(range(index + 1, last + 1))
        self.style, self.ids = "", []
        return last

    def _literal_paragraph(self, index: int) -> int:
        """An indented paragraph, or one styled ``[source]``, ``[literal]``...: literal to its end."""
        last = self._paragraph_end(index)
        self.layout.literal.append((index + 1, last))
        self.at_block_start, self.style, self.ids = False, "", []
        return last

    def _paragraph_end(self, index: int) -> int:
        """The 1-based last line of the paragraph starting at ``index``: before a blank line, or
        before the line that closes the compound block it is in (an example's ``====``, a table's
        ``|===``): Asciidoctor cuts a block's content at its closing line before it reads the
        content, so no paragraph inside runs past it."""
        closing = self.open_blocks[-1] if self.open_blocks else None
        last = index + 1
        while last < len(self.lines) and self.lines[last].strip() and self.lines[last].rstrip() != closing:
            last += 1
        return last

    def _block_macro(self, number: int, macro: re.Match[str]) -> None:
        """A block macro (``image::diagram.png[Alt text]``, ``toc::[]``) shows its image's alt text."""
        name, attributes = macro.group(1), macro.group(3)
        alt = first_attribute(attributes) if name == "image" else ""
        if alt:
            self._read(number, alt)
        else:
            self.layout.markup.add(number)
        self.at_block_start, self.style, self.ids = True, "", []

    def _text_line(self, index: int, line: str) -> None:
        """A line of a paragraph, a list or a table, read as it shows."""
        self.in_header = False
        term = _DESCRIPTION_TERM.fullmatch(line.strip())
        if term and not _LIST_ITEM.match(line):
            if names := term_names(term.group(1), self.attributes):
                self.layout.definitions[index + 1] = names
            line = term.group(1) + (": " + term.group(2) if term.group(2) else "")
        item = _LIST_MARKER.match(line)
        if item and links_away(line[item.end() :]):
            self.layout.linked_entries[index + 1] = shown_characters(line)
        self._read(index + 1, visible_text(line, self.attributes).removesuffix(" +"))

    def _read(self, number: int, shown: str) -> None:
        """Line ``number`` reads as ``shown`` when that differs from it, as markup when it is empty."""
        if not shown.strip():
            self.layout.markup.add(number)
        elif shown != self.lines[number - 1]:
            self.layout.read_as[number] = shown


def _setext_level(line: str, underline: str) -> int:
    """The level of a two-line title (``line`` over ``underline``), or 0: the underline one of the
    level characters repeated, within a character of the title's length, the title holding a word
    and not starting with a dot."""
    level = _SETEXT_LEVELS.get(underline[:1], 0)
    if not level or underline != underline[0] * len(underline) or abs(len(line) - len(underline)) > 1:
        return 0
    if line.startswith(".") or not any(character.isalnum() for character in line):
        return 0
    return level


def title_text(title: str, attributes: dict[str, str]) -> str:
    """A section title as it shows: its visible text, without anchors or monospace marks."""
    return " ".join(_MONOSPACE.sub(r"\1", visible_text(title, attributes)).split())


def title_pieces(title: str, attributes: dict[str, str]) -> list[tuple[bool, str]]:
    """A section title's texts as the page shows them, each marked whether it is set in monospace:
    what :func:`~indexer.formats.definitions.title_names` reads, as it does a Markdown title's
    (``===== `core.autocrlf` `` declares ``core.autocrlf``)."""
    shown = visible_text(title, attributes)
    pieces: list[tuple[bool, str]] = []
    start = 0
    for span in _MONOSPACE.finditer(shown):
        pieces += [(False, shown[start : span.start()]), (True, span.group(1))]
        start = span.end()
    return [piece for piece in (*pieces, (False, shown[start:])) if piece[1].strip()]


def term_names(term: str, attributes: dict[str, str]) -> tuple[str, ...]:
    """The names a description list's term declares (:func:`item_names`), read as the page shows
    it: without its bold and italic marks (a man page's ``*-o, --out-file*=_OUT_FILE_``), and as
    code when it starts in monospace (`` `name` ``), as a code span's words are."""
    shown = inline_text(visible_text(term, attributes)).strip()
    code = shown.startswith("`")
    return item_names(" ".join(_MONOSPACE.sub(r"\1", shown).split()), code=code)


def visible_text(line: str, attributes: dict[str, str]) -> str:
    """``line`` as a rendered page shows it: attribute references replaced (those unknown kept as
    written, as Asciidoctor does), anchors and index terms dropped, macros and cross references
    read as the text they show, a link whose address starts with a reference the page does not set
    too (``{url-org}/x[text]``), and an inline passthrough's text as written, without its marks."""
    held: list[str] = []
    if ("+" in line or "pass:" in line) and not _HOLDING_MARKS.intersection(line):
        line = _PASSTHROUGH.sub(lambda found: _held(found, held), line)
    if "{" in line:
        line = _ATTRIBUTE_REFERENCE.sub(lambda found: _attribute_value(found, attributes), line)
    if "[" in line:
        line = _INLINE_ANCHOR.sub("", line)
        for _ in range(MACRO_DEPTH):  # the innermost macros first: a cross reference in a footnote
            read = _INLINE_MACRO.sub(_macro_text, line)  # before URLs: ``link:https://...[text]``
            read = _URL_MACRO.sub(lambda found: first_attribute(found.group(2)) or found.group(1), read)
            if "{" in read:
                read = _ATTRIBUTE_URL.sub(
                    lambda found: first_attribute(found.group(1)) or found.group(0), read
                )
            if read == line:
                break
            line = read
    if "<<" in line:
        line = _CROSS_REFERENCE.sub(lambda found: found.group(2) or _reference_name(found.group(1)), line)
    if "((" in line:
        line = _INDEX_TERM.sub(r"\1", _INDEX_TERMS.sub("", line))
    if held:
        line = _HELD.sub(lambda found: held[int(found.group(1))], line)
    return line


def _held(found: re.Match[str], held: list[str]) -> str:
    """A passthrough's text, as it shows (monospace kept in its backticks), held in ``held`` and
    replaced by a mark that no other substitution reads."""
    code = found["code"]
    held.append(f"`{code}`" if code is not None else found["plain"] or found["pass"] or "")
    return f"\ue000{len(held) - 1}\ue001"


def _attribute_value(found: re.Match[str], attributes: dict[str, str]) -> str:
    """What an attribute reference shows: the value the page (or AsciiDoc) sets, the reference as
    written when nothing sets it, as Asciidoctor does, and the reference without its backslash
    when it is escaped."""
    escaped, name = found.groups()
    reference = "{" + name + "}"
    return reference if escaped else attributes.get(name.lower(), reference)


def inline_text(text: str) -> str:
    """Lines' inline formatting (a paragraph's, read together: bold text may end on a later line)
    read as the words it shows, line for line, for a reader of a snippet (what the model reads of a
    line is :func:`visible_text`'s): bold, italic and highlighted text (``*bold*``,
    ``**man**ual``, ``_it_``, ``[.role]#mark#``) without its marks, and curved quotes
    (``"`word`"``) as the quotes they make. Monospace is code, and stays one
    pair of backticks around its characters as written (``+`{lit}+`` shows ```{lit}```)."""
    if "`" in text:
        text = _APOSTROPHE.sub("\u2019", _CURVED_QUOTES.sub(_curved, text))
    if any(mark in text for mark in "*_#"):
        text = _CONSTRAINED.sub(_formatted_text, _UNCONSTRAINED.sub(_formatted_text, text))
    pieces = _CODE.split(text)  # code at the odd places
    for place in range(1, len(pieces), 2):
        pieces[place] = "`" + pieces[place].strip("`").removeprefix("+").removesuffix("+") + "`"
    return "".join(pieces)


def shown_pieces(text: str, document: Document) -> dict[int, tuple[str, ...]]:
    """A table's lines that set cells apart, for a snippet, as their cells (1-based line: its
    cells): without the marks that start each cell, nor the cell's specifier before it (``2+|``,
    ``a|``), an escaped mark as the mark, each cell read as the rest of the page
    (:func:`visible_text`), empty cells left out. The tables are the reader's (``|===`` and the
    like); a line of a cell with no mark in it is a line of text, read as such.

    A chunk starts where the chunk before it ended, which may be inside a table: when a line before
    its first table delimiter (any line, when it has none) starts a cell (``|``, or a specifier and
    ``|``), outside code, the chunk is read after a table's opening delimiter, so that the delimiter
    that closes the table closes it rather than opening one."""
    lines = document.lines
    literal = {number for first, last in document.literal for number in range(first, last + 1)}
    inside = False
    for number, line in enumerate(lines, 1):
        if _TABLE_DELIMITER.fullmatch(line.rstrip()):
            break
        if number not in literal and "|" in line and _LEADING_CELL_SPEC.fullmatch(line.split("|", 1)[0]):
            inside = True
            break
    reader = _Reader(["|===", *lines] if inside else lines)
    reader.read()
    pieces: dict[int, tuple[str, ...]] = {}
    for number, separator in reader.layout.table_lines.items():
        number -= inside
        line = lines[number - 1]
        if number in literal or number in document.markup or separator not in line:
            continue
        cells = table_cells(line, separator)
        pieces[number] = tuple(shown for cell in cells if (shown := visible_text(cell, reader.attributes)))
    return pieces


def _is_block_title(line: str) -> bool:
    """Whether ``line`` titles the block after it (``.Example``), not an ellipsis or a literal dot."""
    return line.startswith(".") and len(line) > 1 and line[1] not in ". \t"


def _is_comment_line(line: str) -> bool:
    """Whether ``line`` is a comment line (``// note``), not a comment block's delimiter (``////``)."""
    return line.startswith("//") and not line.startswith("///")


def table_cells(line: str, separator: str) -> list[str]:
    """A table's line as its cells' text: a comma separated table's as CSV, a delimiter separated
    one's split at each ``:`` not escaped; a prefix separated table's (``|``, ``!``) split at each
    mark not escaped, without the specifier before each mark, and the text before the first mark
    (the end of the cell on the line before) kept unless it is a specifier."""
    if separator in ",\t":
        return [cell.strip() for cell in next(csv.reader([line], delimiter=separator, skipinitialspace=True))]
    parts = re.split(rf"(?<!\\){re.escape(separator)}", line)
    cells = parts
    if separator != ":":
        cells = [] if _LEADING_CELL_SPEC.fullmatch(parts[0]) else [parts[0]]
        for place in range(1, len(parts)):
            cell = parts[place]
            if place < len(parts) - 1:
                head, tail = cell[:-CELL_SPEC_CHARS], cell[-CELL_SPEC_CHARS:]
                cell = head + _TRAILING_CELL_SPEC.sub("", tail)
            cells.append(cell)
    return [cell.strip().replace("\\" + separator, separator) for cell in cells]


def _formatted_text(found: re.Match[str]) -> str:
    """The text of the one mark's alternative that matched (bold, italic or highlighted); monospace
    as written."""
    if found["code"] is not None:
        return found[0]
    return next(text for text in found.groups()[1:] if text is not None)


def _curved(found: re.Match[str]) -> str:
    """``"`text`"`` and ``'`text`'``: the text in the curved quotes they make."""
    opening, closing = ("\u201c", "\u201d") if found.group(1) == '"' else ("\u2018", "\u2019")
    return opening + found.group(2) + closing


def _macro_text(found: re.Match[str]) -> str:
    """The text an inline macro shows: its text, else its target; a target with a number in
    brackets is a manual page (``linkgit:git-commit[1]``: ``git-commit(1)``)."""
    name, target, text = found.group(1).lower(), found.group(2), found.group(3).replace("\\]", "]")
    if name in HIDDEN_MACROS:
        return ""
    if name == "image":
        return first_attribute(text)
    if name == "menu":
        return " > ".join([target, *(item.strip() for item in text.split(">") if item.strip())])
    if text.isdigit() and target:
        return f"{target}({text})"
    if name not in CONTENT_MACROS:
        text = first_attribute(text)
    if text:
        return text
    if name == "xref":
        return _reference_name(target)
    base = _UNSET_BASE.match(target)
    return target[base.end() :] if base and base.end() < len(target) else target


def first_attribute(text: str) -> str:
    """A macro's text when its brackets hold an attribute list (``Text,window=_blank``): the first
    positional attribute, unquoted, without a new window's ``^``. A named attribute never shows
    (``javadoc:org.example.Type[format=annotation]`` shows no ``format=annotation``), and brackets
    with none hold one text, commas and all (``link:url[Hello, world]``)."""
    if _NAMED_ATTRIBUTE.search(text):
        first = text.split(",", 1)[0]
        text = "" if _NAMED_ATTRIBUTE.match(first) else first
    return text.strip().strip('"').removesuffix("^")


def links_away(text: str) -> bool:
    """Whether a list item's ``text`` is links to other pages alone, punctuation aside: an entry of
    a contents list, as Antora's navigation files (``** xref:install.adoc[]``) and a page's list of
    where to read next write them. A link to another page is a cross reference to another document
    (``xref:cli:index.adoc[]``, ``<<options.adoc#safe,Safe>>``; not ``<<safe>>``, an id of this
    one), or a ``link:`` macro's or a URL's address that is no fragment of this page."""
    targets: list[tuple[str, bool]] = []  # each link's target, and whether it names a document

    def link(target: str, names_document: bool) -> str:
        targets.append((target, names_document))
        return " "

    rest = _INLINE_MACRO.sub(
        lambda found: (
            link(found[2], found[1].lower() == "xref") if found[1].lower() in ("xref", "link") else found[0]
        ),
        text,
    )
    rest = _URL_MACRO.sub(lambda found: link(found[1], False), rest)
    rest = _CROSS_REFERENCE.sub(lambda found: link(found[1], True), rest)
    return (
        bool(targets)
        and all(_other_page(target, names_document) for target, names_document in targets)
        and not any(character.isalnum() for character in rest)
    )


def _other_page(target: str, names_document: bool) -> bool:
    """Whether a link's ``target`` is another page: a cross reference's when it names a document
    (``page.adoc``, ``page.adoc#id``, ``page#id``), an address when it is no fragment (``#id``)."""
    page, fragment, _ = target.partition("#")
    if names_document:
        return page.endswith(".adoc") or bool(page and fragment)
    return bool(page)


def _reference_name(target: str) -> str:
    """A cross reference's target as a reader can name it: its fragment, else its page's name."""
    page, _, fragment = target.partition("#")
    return fragment or page.rsplit("/", 1)[-1].removesuffix(".adoc")


def manual_page_names(lines: list[str], layout: AsciidocLayout) -> dict[int, tuple[str, ...]]:
    """The names of a manual page's NAME section (its first section, titled NAME): the names before
    the dash of its first paragraph (``git-commit - Record changes to the repository``), on its line."""
    first_two = sorted(layout.headings, key=lambda heading: heading.line)[:2]  # title, first section
    named = next((heading for heading in first_two if heading.title.upper() == "NAME"), None)
    if named is None:
        return {}
    number = max(named.lines) + 1
    while number <= len(lines) and (not lines[number - 1].strip() or number in layout.markup):
        number += 1
    entry: list[str] = []
    for following in range(number, len(lines) + 1):
        if not lines[following - 1].strip():
            break
        entry.append(layout.read_as.get(following, lines[following - 1]))
    names = man_entry_names(" ".join(entry))
    return {number: names} if names else {}
