"""Man pages in roff, as ``man`` shows them: ``ls.1``, ``ssh_config.5.gz``, ``Pod::Usage.3perl.gz``.

A man page is written in roff: requests and macros on lines of their own (``.SH DESCRIPTION``,
``.B gzip``, ``.TP``) and escapes inside the text (``\\fBbold\\fR``, ``\\-``, ``\\(em``). Read as
written, a page's words are glued to its escapes (``\\fBgzip\\fR`` is no word ``gzip`` to a keyword
search) and its sections are not headings. So each line is read as the text ``man`` shows of it,
one line for one, as a PDF's text is read: the index stores, searches, shows and cites that text, at
the line numbers of the source. What the reader knows:

- **Sections**: the page's title (``.TH GZIP 1``; mdoc's ``.Dt``) heads the page as ``GZIP(1)``,
  ``.SH``/``.Sh`` its sections and ``.SS``/``.Ss`` their subsections.
- **Names**: the NAME section declares the names the page defines (``gzip, gunzip, zcat \\- compress
  or expand files``; mdoc's ``.Nm``), so a one-name question finds the page; a list item's tag
  declares the options or keywords it writes as code (``\\fB\\-v\\fR``; mdoc's ``.It Fl J Ar
  destination`` the flag ``-J``, its macros saying which word is the name and which its value;
  ``.BR xfer:clobber " (boolean)"`` the setting ``xfer:clobber``, the words in parentheses its
  value's type); a paragraph that is a command's synopsis (``.B pget``, then only its arguments'
  macros: ``.RI [ OPTS ]``, ``.I rfile``) declares the command and opens its entry, read as one
  line (``pget [OPTS] rfile``), as ``man`` fills it.
- **Code**: ``.nf``/``.fi``, ``.EX``/``.EE``, mdoc's ``.Bd -literal``/``.Ed`` and Pod::Man's
  ``.Vb``/``.Ve`` are literal blocks.
- **Text**: the man macros' fonts (``.BR a b`` is ``ab``), mdoc's callable macros (``.Op Fl v Ar
  file`` is ``[-v file]``, ``.Xr ls 1`` is ``ls(1)``), escapes as the characters they print, strings
  the page defines (``.ds``) and the common ones; macro definitions (``.de``), ignored blocks
  (``.ig``), requests and a condition's second branch (``.el \\{``, the typesetter's, where
  ``man`` shows the terminal's) show nothing; a table's cells are shown apart, without its layout.

A file named as a man page (:data:`MAN_SECTION`) that is no roff is read as lines (a rendered page
saved as ``ls.1``). Every line is read once, by a regular expression of bounded parts: linear in its
length whatever it holds.
"""

from __future__ import annotations

import re
import shlex

from indexer.formats.definitions import MAX_MAN_NAME_LINES, item_names, man_entry_names
from indexer.formats.document import Document, Heading, shown_characters, split_lines
from indexer.formats.text import read_plain

#: The extension of a man page's file: its section, maybe with a suffix (``1``, ``3pm``, ``1ssl``,
#: ``8x``), or ``man``.
MAN_SECTION = re.compile(r"[1-9][a-z]{0,8}|man")
#: Extensions that look like a man page's section and are formats of their own.
_LIKE_SECTIONS = frozenset({"7z", "3gp", "3g2"})
#: What comes before the number of a library's version or a rotated log, not a man page's section.
_NUMBERED_STEMS = (".so", ".log")
#: How many of a file's first lines are read to tell roff from text that only looks like it.
SNIFF_LINES = 200
#: A request or a macro that only roff starts a page with.
_ROFF_OPENING = re.compile(r"""[.'][ \t]*(?:\\"|TH[ \t]|SH[ \t]|Dd[ \t]|Dt[ \t]|so[ \t]|de[ \t])""")
#: A control line: a request or a macro, its name and its arguments.
_CONTROL = re.compile(r"""[.'][ \t]*(?P<name>[^\s\\]{1,16}|\\["#])?[ \t]*(?P<arguments>.*)""")
#: A comment, to the end of its line.
_COMMENT = re.compile(r"""\\["#].*""")
#: An escape: a named character (``\\(em``, ``\\[em]``), a font, string, size, colour or register
#: (``\\fB``, ``\\*(lq``, ``\\s-1``, ``\\n[x]``), a quoted argument (``\\h'2n'``, ``\\N'34'``), a
#: comment to the line's end, or one character. Each part is bounded: a line is read in one pass.
_ESCAPE = re.compile(
    r"""\\(?:(?P<special>\(..|\[[^\]\n]{0,64}\])"""
    r"""|(?P<call>[fF*nmMgY])(?:\(..|\[[^\]\n]{0,64}\]|.)"""
    r"""|s[+-]?(?:\d{1,2}|\(\d\d|\[[^\]\n]{0,16}\])"""
    r"""|(?P<quoted>[vhwlLDoXZbNxRSCA])'(?P<value>[^'\n]{0,256})'"""
    r"""|["#].*"""
    r"""|[kz].?"""
    r"""|(?P<one>.)?)"""
)
#: Named characters as they print: groff's names for dashes, quotes, bullets and signs.
SPECIAL_CHARACTERS = {
    "em": "\u2014", "en": "\u2013", "hy": "-", "mi": "-", "bu": "\u2022", "aq": "'", "dq": '"',
    "lq": "\u201c", "rq": "\u201d", "oq": "\u2018", "cq": "\u2019", "co": "\u00a9", "rg": "\u00ae",
    "tm": "\u2122", "ha": "^", "ti": "~", "ul": "_", "pl": "+", "eq": "=", "<=": "\u2264",
    ">=": "\u2265", "!=": "\u2260", "->": "\u2192", "<-": "\u2190", "mu": "\u00d7", "de": "\u00b0",
    "sc": "\u00a7", "dg": "\u2020", "ga": "`", "aa": "\u00b4", "rs": "\\", "sl": "/", "ba": "|",
    "br": "|", "lB": "[", "rB": "]", "lC": "{", "rC": "}", "fm": "\u2032", "Fo": "\u00ab", "Fc": "\u00bb",
}  # fmt: skip
#: Strings every page may use without defining them (man's, mdoc's and DocBook's stylesheets').
COMMON_STRINGS = {
    "lq": "\u201c",
    "rq": "\u201d",
    "R": "\u00ae",
    "Tm": "\u2122",
    "Aq": "'",
    "dq": '"',
    "Ba": "|",
}
#: What the one-character escapes print: the rest print the character itself (``\\.`` a dot).
_ONE_CHARACTER = {"e": "\\", "E": "\\", "-": "-", " ": " ", "~": " ", "0": " ", "t": "\t"}
_PRINTS_NOTHING = frozenset("&|^%c:/,){}!?p\n")
#: The man macros that set their arguments in alternating fonts, written without spaces between.
_ALTERNATING = frozenset({"BR", "BI", "IB", "IR", "RB", "RI"})
#: The macros whose arguments a page does not show (paragraphs, indents, links' targets, lists'
#: layout); roff's own requests, named in lower case (``.br``, ``.if``, ``.nr``, ``.do ftr``), show
#: nothing either, but ``.nop``, which prints what follows it.
_SILENT = frozenset(
    """PP LP P TP TQ HP RS RE PD UR UE MT ME YS EX EE Dd Os Bl El Bd Ed Pp Lp Bk Ek Sm Bt Ud Rs Re""".split()
)
#: mdoc's macros that a line calls by name among its words: they print nothing themselves, or
#: enclose or prefix the words after them.
_MDOC_CALLABLE = frozenset(
    """Ac Ad An Ao Ap Aq Ar At Bc Bo Bq Brc Bro Brq Bsx Bx Cd Cm Dc Do Dq Dv Dx Ec Em En Eo Er Es Ev
    Fa Fc Fl Fn Fo Fr Ft Fx Ic In It Li Lk Ms Mt Nm No Ns Nx Oc Oo Op Ox Pa Pc Pf Po Pq Qc Ql Qo Qq
    Sc Sh So Sq Ss St Sx Sy Ta Tn Ux Va Vt Xc Xo Xr""".split()
)
#: mdoc's line macros that show their words: displays of one line and a reference's parts.
_MDOC_SHOWN = frozenset("D1 Dl %A %B %C %D %I %J %N %O %P %Q %R %T %U %V".split())
#: What mdoc's enclosing macros put around the rest of their line.
_MDOC_ENCLOSING = {
    "Op": ("[", "]"), "Oo": ("[", ""), "Oc": ("", "]"), "Bq": ("[", "]"), "Bo": ("[", ""), "Bc": ("", "]"),
    "Pq": ("(", ")"), "Po": ("(", ""), "Pc": ("", ")"), "Dq": ("\u201c", "\u201d"), "Do": ("\u201c", ""),
    "Dc": ("", "\u201d"), "Qq": ('"', '"'), "Sq": ("\u2018", "\u2019"), "Aq": ("<", ">"),
    "Brq": ("{", "}"), "Ql": ("\u2018", "\u2019"),
}  # fmt: skip
#: What mdoc's macros for operating systems print (``.Ux``: UNIX; ``.Ox 2.8``: OpenBSD 2.8).
_MDOC_SYSTEMS = {
    "Ux": "UNIX", "Bx": "BSD", "Bsx": "BSD/OS", "Dx": "DragonFly", "Fx": "FreeBSD", "Nx": "NetBSD",
    "Ox": "OpenBSD",
}  # fmt: skip
#: The closing delimiters mdoc writes as words of their own, set against the word before them.
_MDOC_DELIMITERS = frozenset(".,:;)]?!")
#: Every delimiter mdoc sets apart from the macros' arguments: closing, middle (``|``) and opening.
_MDOC_PUNCTUATION = _MDOC_DELIMITERS | {"|", "(", "["}
#: A line of references to other pages alone (``systemd.exec(5)``, ``ls(1), dir(1).``), as a SEE ALSO
#: section and an index of directives write them: man's links to other pages.
_REFERENCES = re.compile(r"[ \t]*(?:[\w:+-][\w.:+-]{0,199}\([1-9][a-z]{0,8}\)[,.;]?[ \t]*)+")
#: A table's option naming the character that separates its cells (``tab(:)``).
_TABLE_TAB = re.compile(r"tab\s{0,8}\((.)\)")
#: The macros that start a paragraph or a list's item, after which a lone line may be an item's tag.
_PARAGRAPHS = frozenset({"PP", "LP", "P", "TP", "TQ", "IP", "HP", "It", "Pp", "Lp"})
#: mdoc's macros that name what a list item's tag defines, with what each prints before its
#: argument: a flag (``Fl J`` prints ``-J``), a command or keyword (``Cm``, ``Ic``), an environment
#: variable (``Ev``).
_MDOC_NAMING = {"Fl": "-", "Cm": "", "Ic": "", "Ev": ""}
#: The words that set a tag's alternatives apart (``.It Cm s | Cm S``, ``.It Fl b , Fl Fl brief``).
_MDOC_ALTERNATIVES = frozenset({"|", ","})
#: A line written in bold or italic from its start: a font escape or one of the man macros' fonts.
_IN_FONT = re.compile(
    r"""\\f[BI(\[]|[.'][ \t]*(?:B|I|BR|BI|IB|IR|RB|RI|SB)[ \t]|(?:Fl|Cm|Ic|Ar|Nm|Pa|Ev|Va|Dv|Li|Sy)\b"""
)
#: A tag that is one bold or italic run of words joined by unbreakable spaces (``\fBauth\ users\fP``).
_JOINED_NAME = re.compile(r"\\f[BI](?:[\w.-]{1,64}\\ ){1,8}[\w.-]{1,64}\\f[PR]")
#: A font escape and its font's name, in any of roff's three forms (``\fB``, ``\f(CB``, ``\f[BI]``).
_FONT_ESCAPE = re.compile(r"\\f(?:\((..)|\[([^\]\n]{0,16})\]|(.))")
#: What a font says of the words it sets, by man-pages(7)'s convention: bold (and constant width,
#: ``CW``, and pandoc's ``C`` and ``CR``) is typed as shown, italic is a value to replace; the rest
#: (``R``, ``P``, ``1``) is roman.
_FONT_ROLES = {
    **dict.fromkeys(("B", "3", "CB", "CW", "C", "CR"), "B"),
    **dict.fromkeys(("I", "2", "BI", "4", "CI"), "I"),
}
#: A word of a keyword a command line takes (``mtu``, ``gso_max_size``, ``-c``).
_KEYWORD = re.compile(r"[\w-][\w.+-]*")
#: The spaces between a control line's arguments: those no backslash escapes.
_ARGUMENT_SPACES = re.compile(r"(?<!\\)[ \t]+")
#: A control line's first argument (:func:`_first_argument`).
_FIRST_ARGUMENT = re.compile(r'"([^"]*)"?|((?:\\.|[^\s\\])+)')
_HEADING_LEVELS = {"SH": 2, "Sh": 2, "SS": 3, "Ss": 3}
#: The lines that open and close a literal block: roff's no-fill, man's example, and Pod::Man's
#: verbatim macros (every Perl module's page, and OpenSSL's, defines ``.Vb`` and ``.Ve`` so).
_LITERAL_OPENINGS = frozenset({"nf", "EX", "Vb"})
_LITERAL_CLOSINGS = frozenset({"fi", "EE", "Ve"})
#: The macros that end a paragraph, and a synopsis written in one (:meth:`_Page._synopsis`).
_BREAKS = frozenset({"PP", "LP", "P", "TP", "TQ", "IP", "HP", "Pp", "Lp", "It"})
#: The paragraph macros after which a command's synopsis may open an entry (:meth:`_Page._synopsis`).
_SYNOPSIS_OPENERS = frozenset({"PP", "LP", "P"})
#: The requests that break a line or leave a blank one (roff's ``.br``, ``.sp``; Pod::Man's ``.Sp``):
#: they end a synopsis, and another may follow (a command's second form).
_LINE_BREAKS = frozenset({"br", "sp", "Sp"})
_HAS_WORD = re.compile(r"\w")
#: The macros that write a synopsis's arguments after its command (``.RI [ OPTS ]``, ``.I file``).
_ARGUMENT_MACROS = _ALTERNATING | {"B", "I"}


def is_man_page_name(name: str) -> bool:
    """Whether a file ``name`` (lower case) is a man page's: a name, then its section
    (:data:`MAN_SECTION`). A version's digits alone are no name (``3.10.1``, a build definition),
    nor is a library's or a log's name before its number (``libz.so.1``, a rotated ``app.log.1``),
    and a few formats' extensions look like a section (``.7z``, ``.3gp``)."""
    stem, _, extension = name.rpartition(".")
    if MAN_SECTION.fullmatch(extension) is None or extension in _LIKE_SECTIONS:
        return False
    return any(character.isalpha() for character in stem) and not stem.endswith(_NUMBERED_STEMS)


def read_roff(text: str, encoding: str = "utf-8") -> Document:
    """The man page in ``text`` as ``man`` shows it, line for line; text that is no roff as lines."""
    lines = split_lines(text)
    if not any(_ROFF_OPENING.match(line) for line in lines[:SNIFF_LINES]):
        return read_plain(text, encoding)
    return _Page(lines).read(encoding)


class _Page:
    """One page's reading: its strings, where its literal blocks and sections are, its NAME lines."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.strings = dict(COMMON_STRINGS)
        self.shown: list[str] = []
        self.headings: list[Heading] = []
        self.literal: list[tuple[int, int]] = []
        self.literal_from = 0
        self.skipping_to = ""  # the name of the macro ending a definition or an ignored block (``.``)
        self.macros: set[str] = set()  # the page's own (``.de``), which show nothing here
        self.title = ""  # the page's title (``.TH``, ``.Dt``): a bare ``.Nm`` prints it when none named it
        self.heading_level = 0  # a section macro's without a title: the next line of text is it
        self.name_lines: list[tuple[int, str]] = []
        self.tags: dict[int, tuple[str, ...]] = {}  # the names each list item's tag declares
        self.tag_next = False  # after ``.TP``: the next line shown is an item's tag
        self.since_paragraph: list[tuple[int, str, str]] | None = None  # lines since ``.PP``, shown
        self.naming = False  # in the NAME section's entry, before its first paragraph ends
        self.page_name = ""  # mdoc's first ``.Nm`` argument, which a bare ``.Nm`` prints
        self.hidden_depth = 0  # inside an ``.el`` block (the typesetter's branch): ``\{`` less ``\}``
        self.table = ""  # inside a table (``.TS``): "format" before its data, then "data"
        self.table_tab = "\t"  # the character a table's data lines separate cells with
        self.markup: set[int] = set()  # a synopsis's lines after its first, read with it
        self.read_as: dict[int, str] = {}
        self.block_starts: list[int] = []
        self.opens_paragraph = True  # the line before ended a paragraph: a synopsis may start
        self.synopsis: list[int] = []  # the lines of the command's synopsis being read, if any

    def read(self, encoding: str) -> Document:
        for number, line in enumerate(self.lines, 1):
            self.shown.append(self._line(number, line))
        self._synopsis_end()
        if self.literal_from:
            self.literal.append((self.literal_from, len(self.lines)))
        titles = {heading.line for heading in self.headings}
        return Document(
            lines=self.shown,
            headings=self.headings,
            literal=self.literal,
            block_starts=self.block_starts,
            encoding=encoding,
            markup=frozenset(self.markup),
            read_as=self.read_as,
            definitions={**self.tags, **self._names()},
            linked_entries={
                number: shown_characters(line)
                for number, line in enumerate(self.shown, 1)
                if "(" in line and number not in titles and _REFERENCES.fullmatch(line)
            },
        )

    def _line(self, number: int, line: str) -> str:
        """What the page shows of line ``number``: '' for a line that shows nothing."""
        control = _CONTROL.fullmatch(line) if line[:1] in ".'" else None
        name = (control["name"] or "") if control else ""
        if self.skipping_to:
            if name == self.skipping_to:  # ``..``, also ``.  .``
                self.skipping_to = ""
            return ""
        if self.hidden_depth:
            self.hidden_depth += line.count("\\{") - line.count("\\}")
            return ""
        if self.table and (self.table == "format" or name in ("TE", "T&")):
            return self._table_layout(line, name)
        paragraph = name in _PARAGRAPHS  # before the line is read: ``.TP`` marks the next one
        if control is not None:
            shown = self._control(number, control)
        else:
            shown = self._table_row(line) if self.table else self.text(line)
        shown = shown.rstrip()
        if self.heading_level and control is None and shown.strip():
            self._heading(number, self.heading_level, shown.strip())
        elif self.naming and shown.strip() and self.headings[-1].line != number:
            self.name_lines.append((number, shown))
        ended = len(self.name_lines) >= MAX_MAN_NAME_LINES or (paragraph and self.name_lines)
        self.naming = self.naming and not ended
        self._follow_tags(number, line, name, shown, paragraph)
        self._synopsis(number, line, name, control)
        return shown

    def _synopsis(self, number: int, line: str, name: str, control: re.Match[str] | None) -> None:
        """Follow a command's synopsis as a paragraph writes it (after ``.P``, ``.PP``, ``.LP`` or
        a blank line): ``.B`` and the command's one word, then only its arguments' font macros
        (:data:`_ARGUMENT_MACROS`: ``.RI [ OPTS ]``, ``.I rfile``, ``.RB [ \\-E ]``) or lines of text
        in fonts alone (:meth:`_only_arguments`), if any, up to the paragraph's end. Such a
        paragraph declares the command and opens its entry; the model reads it as one line, as
        ``man`` fills it. A line of roman text, or any other macro, in it makes it a paragraph that
        starts in bold (``.B Note`` then a sentence)."""
        arguments = control is not None and name in _ARGUMENT_MACROS
        if self.synopsis and (arguments or (control is None and self._only_arguments(line))):
            self.synopsis.append(number)
            return
        ends = not line.strip() or name in _BREAKS or name in _HEADING_LEVELS or name in _LINE_BREAKS
        if self.synopsis and ends:
            self._synopsis_end()
        self.synopsis = []
        if control is not None and name == "B" and self.opens_paragraph:
            command = _arguments(_COMMENT.sub("", control["arguments"]))
            if len(command) == 1 and _KEYWORD.fullmatch(word := self.text(command[0])) and word[:1].islower():
                self.synopsis = [number]
        self.opens_paragraph = not line.strip() or name in _SYNOPSIS_OPENERS or name in _LINE_BREAKS

    def _only_arguments(self, line: str) -> bool:
        """Whether a line of text in a synopsis holds only arguments: every word set in a font
        (``\\fIldir\\fP``, ``[\\fB\\-d\\fP] \\fIdelay\\fP``), the roman between them brackets,
        bars and dots alone."""
        runs = self._font_runs(line)
        return any(role != "R" for role, _ in runs) and not any(
            role == "R" and _HAS_WORD.search(text) for role, text in runs
        )

    def _synopsis_end(self) -> None:
        """Declare the command of the synopsis just read, if any."""
        if not self.synopsis:
            return
        first, *rest = self.synopsis
        self.tags[first] = (self.shown[first - 1].strip(),)
        self.block_starts.append(first)
        if rest:
            self.read_as[first] = " ".join(self.shown[number - 1].strip() for number in self.synopsis)
            self.markup.update(rest)
        self.synopsis = []

    def _follow_tags(self, number: int, line: str, name: str, shown: str, paragraph: bool) -> None:
        """Declare the names a list item's tag gives (:func:`item_names`): the line after ``.TP``
        or ``.TQ``, an ``.IP``'s tag, mdoc's ``.It`` (by its macros: :meth:`_mdoc_tag`), and a
        paragraph's one line before its indented description (``.PP``, a line, ``.RS``: DocBook's
        stylesheets write a variable list so). A tag written in bold or italic is names as code
        writes them (``PrivateTmp=``, ``\\fB\\-v\\fR, \\fB\\-\\-verbose\\fR``); in roman, only what
        is spelt as code (``-v``)."""
        if name == "RS":
            if self.since_paragraph is not None and len(self.since_paragraph) == 1:
                self._tag(*self.since_paragraph[0])
            self.since_paragraph = None
            return
        if paragraph:
            self.tag_next = name in ("TP", "TQ")
            self.since_paragraph = [] if name in ("PP", "LP", "P", "Pp", "Lp") else None
            if name in ("IP", "It") and shown:
                tag = line.lstrip(".' \t")[len(name) :].lstrip(' \t"')
                named = self._mdoc_tag(_arguments(_COMMENT.sub("", tag))) if name == "It" else None
                if named is not None:
                    self._tag(number, named, None)
                else:  # its first argument: Pod::Man writes an indent after it (``.IP "..." 4``)
                    self._tag(number, shown, _first_argument(line.lstrip(".' \t")[len(name) :]))
            return
        if not shown.strip():
            return
        if self.tag_next:
            self._tag(number, shown, line)
            self.tag_next = False
        if self.since_paragraph is not None and len(self.since_paragraph) < 2:
            self.since_paragraph.append((number, shown, line))

    def _mdoc_tag(self, words: list[str]) -> str | None:
        """The names an mdoc ``.It`` tag's macros declare (after an ``Xo``), as a list for
        :func:`item_names`: the arguments of a flag, command, keyword or variable macro
        (:data:`_MDOC_NAMING`) that starts the tag or one of its alternatives, as the macro prints
        them (``Fl J Ar destination``: ``-J``; ``Cm s | Cm S`` and ``Cm s | S``: ``s, S``; ``Fl b ,
        Fl Fl brief``: ``-b, --brief``). What follows a name up to the next alternative is its value,
        whatever macro writes it (``Ar destination``, ``Ns = Ns Ar value``, ``Op Ar path``, a flag's
        ``Cm generate``): read with the name, it would make the tag a phrase. None when the tag
        starts with no such macro."""
        words = words[1:] if words[:1] == ["Xo"] else words
        if not words or words[0] not in _MDOC_NAMING:
            return None
        names: list[str] = []
        prefix: str | None = None  # what the naming macro being read prints before its arguments
        at_name = True  # at the start of the tag or of an alternative
        index = 0
        while index < len(words):
            word = words[index]
            index += 1
            if word in _MDOC_ALTERNATIVES:
                at_name = True
            elif word in _MDOC_CALLABLE:
                prefix = _MDOC_NAMING.get(word) if at_name else None
                while word == "Fl" and prefix is not None and index < len(words) and words[index] == "Fl":
                    prefix, index = prefix + "-", index + 1
            else:
                if prefix is not None and at_name:
                    names.append(prefix + self.text(word))
                at_name = False
        return ", ".join(names)

    def _tag(self, number: int, shown: str, written: str | None) -> None:
        """Declare the names of a tag ``shown`` as its source line ``written`` sets it: in bold or
        italic, names as code writes them; one bold or italic run whose words are joined by
        unbreakable spaces, one name (``\\fBauth\\ users\\fP``: a setting's name of words, as
        rsyncd.conf writes theirs). None: names mdoc's macros marked, which are code."""
        if written is not None and _JOINED_NAME.fullmatch(written.strip()):
            self.tags[number] = (" ".join(shown.split()),)
        elif names := item_names(shown, code=written is None or _IN_FONT.match(written) is not None):
            self.tags[number] = names
        elif written is not None and (names := _literal_names(self._font_runs(written))):
            self.tags[number] = names

    def _font_runs(self, written: str) -> list[tuple[str, str]]:
        """The runs of a tag's source line, each its font's role (:data:`_FONT_ROLES`: ``B``,
        ``I`` or ``R``) and the text it shows: a font macro's arguments (``.BI table " TABLEID"``)
        or the stretches between font escapes (``\\fBmtu lock\\fR \\fIMTU\\fR``)."""
        control = _CONTROL.fullmatch(written) if written[:1] in ".'" else None
        if control is not None:
            name = control["name"] or ""
            if name not in _ALTERNATING and name not in ("B", "I"):
                return []
            words = [self.text(word) for word in _arguments(_COMMENT.sub("", control["arguments"]))]
            return [(_FONT_ROLES.get(name[index % len(name)], "R"), word) for index, word in enumerate(words)]
        runs, role, start = [], "R", 0
        for escape in _FONT_ESCAPE.finditer(written):
            runs.append((role, self.text(written[start : escape.start()])))
            role = _FONT_ROLES.get(next(font for font in escape.groups() if font is not None), "R")
            start = escape.end()
        runs.append((role, self.text(written[start:])))
        return runs

    def _control(self, number: int, control: re.Match[str]) -> str:
        name, arguments = control["name"] or "", _COMMENT.sub("", control["arguments"])
        if name in ('\\"', "\\#", ""):
            return ""
        if name in ("de", "de1", "am", "ig"):
            words = arguments.split()
            if name != "ig" and words:
                self.macros.add(words[0])
            self.skipping_to = words[0] if name == "ig" and words else "."
            return ""
        if name == "ds" and arguments.strip():
            key, _, value = arguments.strip().partition(" ")
            if key not in COMMON_STRINGS:  # pages define those per device, in conditions not followed
                self.strings[key] = self.text(value.lstrip().removeprefix('"'))
            return ""
        if name in ("TH", "Dt"):
            return self._title(number, _arguments(arguments))
        if name == "TS":
            self.table, self.table_tab = "format", "\t"
            return ""
        if name == "el" and "\\{" in arguments:  # the typesetter's branch; ``man`` shows the terminal's
            self.hidden_depth = arguments.count("\\{") - arguments.count("\\}")
            return ""
        if name in _HEADING_LEVELS:
            title = " ".join(self.text(word) for word in _arguments(arguments)).strip()
            if not title:
                self.heading_level = _HEADING_LEVELS[name]
                return ""
            self._heading(number, _HEADING_LEVELS[name], title)
            return title
        self._literal_mark(number, name, arguments)
        if name == "nop":
            return self.text(arguments)
        if name in _SILENT or name in self.macros or name.islower():
            return ""
        words = [self.text(word) for word in _arguments(arguments)]
        if name in ("B", "I", "SM", "SB", "IP", "SY"):
            return " ".join(words[:1] if name == "IP" else words)
        if name in _ALTERNATING:
            return "".join(words)
        if name == "OP":
            return "[" + " ".join(words) + "]"
        if name == "Nd":  # mdoc's summary in NAME: man shows it after a dash, as man's pages write it
            return "\u2014 " + " ".join(words)
        if name in _MDOC_CALLABLE or name in _MDOC_SHOWN:
            return self._mdoc(name, _arguments(arguments))
        return ""  # a macro of a package the page loads (``.LINKSTYLE``): what it does is not known

    def _heading(self, number: int, level: int, title: str) -> None:
        """A section (or subsection) titled ``title`` starts at line ``number``."""
        self.headings.append(Heading(number, level, title))
        self.naming = title.upper() == "NAME" and not self.name_lines
        self.heading_level = 0

    def _table_layout(self, line: str, name: str) -> str:
        """A table's options and format lines (``allbox tab(:);``, ``l l.``), ``.T&`` and ``.TE``:
        they show nothing, and say where its data starts and what separates its cells."""
        stripped = line.strip()
        if name == "TE":
            self.table = ""
        elif name == "T&":
            self.table = "format"
        elif stripped.endswith(";"):
            separator = _TABLE_TAB.search(stripped)
            self.table_tab = separator[1] if separator else self.table_tab
        elif stripped.endswith("."):
            self.table = "data"
        return ""

    def _table_row(self, line: str) -> str:
        """A table's data line as ``man`` shows it: its cells apart, without the marks of a cell's
        text block (``T{``, ``T}``); a rule (``_``, ``=``) shows nothing."""
        if line.strip() in ("_", "=", "T{", "T}"):
            return ""
        cells = line.removeprefix("T}").removesuffix("T{").split(self.table_tab)
        return "  ".join(self.text(cell.strip()) for cell in cells if cell.strip() not in ("T{", "T}"))

    def _title(self, number: int, arguments: list[str]) -> str:
        """The page's title line (``.TH GZIP 1``; mdoc's ``.Dt LS 1``): ``GZIP(1)``, heading the page."""
        if not arguments:
            return ""
        self.title = self.text(arguments[0])
        section = f"({self.text(arguments[1])})" if len(arguments) > 1 else ""
        title = self.title + section
        self.headings.append(Heading(number, 1, title))
        return title

    def _literal_mark(self, number: int, name: str, arguments: str) -> None:
        """Open or close a literal block at line ``number`` (the lines between are code)."""
        opens = name in _LITERAL_OPENINGS or (name == "Bd" and "-literal" in arguments.split()[:1])
        if opens and not self.literal_from:
            self.literal_from = number + 1
        elif (name in _LITERAL_CLOSINGS or name == "Ed") and self.literal_from:
            if number - 1 >= self.literal_from:
                self.literal.append((self.literal_from, number - 1))
            self.literal_from = 0

    def _mdoc(self, name: str, arguments: list[str]) -> str:
        """What an mdoc line (or any other macro's) shows: its words, with the macros it calls among
        them read (``.It Fl v`` is ``-v``, ``.Xr ls 1`` is ``ls(1)``); the macro's name itself only
        where it prints (``.Nm``, the enclosing macros, the systems' names). As mdoc(7) sets them:
        ``Fl`` dashes each of its arguments but delimiters (``Fl c | s``: ``-c | -s``), and alone
        before another flag is its dash (``Fl Fl brief``: ``--brief``); ``Nm`` before punctuation
        alone prints the page's name; ``Pf``'s argument is set against what follows it (``.Pf non- Ox``:
        ``non-OpenBSD``); closing delimiters that end the line go after what an
        enclosing macro closes (``.Dq yes ,``: ``“yes”,``)."""
        words = [name, *arguments] if name in _MDOC_CALLABLE else arguments
        ending = len(words)
        while ending > 1 and words[ending - 1] in _MDOC_DELIMITERS:
            ending -= 1
        words, trailing = words[:ending], words[ending:]
        shown: list[list[str]] = []  # words, each of the pieces set against each other
        closing: list[str] = []
        glue = False
        flags = False  # reading the arguments of ``Fl``, which dashes each
        prefixing = False  # after ``Pf``: its argument is set against what follows it
        index = 0
        while index < len(words):
            word = words[index]
            index += 1
            following = index < len(words) and words[index] not in _MDOC_CALLABLE
            if word not in _MDOC_CALLABLE:
                piece = self.text(word)
                piece = "-" + piece if flags and piece and piece not in _MDOC_PUNCTUATION else piece
            elif word in ("Nm", "Fl"):
                following = following and (word == "Fl" or words[index] not in _MDOC_DELIMITERS)
                argument = self.text(words[index]) if following else ""
                index += following
                if word == "Fl":
                    piece = "-" + argument
                else:
                    self.page_name = self.page_name or argument
                    piece = argument or self.page_name or self.title.lower()
            elif word == "Xr" and index + 1 < len(words):
                piece = f"{self.text(words[index])}({self.text(words[index + 1])})"
                index += 2
            elif word in _MDOC_SYSTEMS:
                versioned = word != "Ux" and following and words[index] not in _MDOC_DELIMITERS
                piece = _system_name(word, self.text(words[index]) if versioned else "")
                index += versioned
            elif word in _MDOC_ENCLOSING:
                opening, close = _MDOC_ENCLOSING[word]
                flags = False
                if not opening:  # a closing macro (``.Oc``): it closes what an earlier line opened
                    (shown[-1] if shown else closing).append(close)
                    continue
                if shown and glue:  # an enclosure in an enclosure (``.Sq Bq 3``: ``‘[3]’``)
                    shown[-1].append(opening)
                else:
                    shown.append([opening])
                glue = True
                closing += [close] if close else []
                continue
            else:
                glue = glue or word == "Ns"
                prefixing = word == "Pf"
                flags = False
                continue
            if shown and (glue or piece in _MDOC_DELIMITERS):
                shown[-1].append(piece)
            else:
                shown.append([piece])
            glue = prefixing or (
                word == "Fl" and piece == "-" and index < len(words) and words[index] == "Fl"
            )
            prefixing = False
            flags = word == "Fl" or (flags and word not in _MDOC_CALLABLE)
        shows = " ".join(filter(None, map("".join, shown))) + "".join(reversed(closing))
        return shows + "".join(self.text(word) for word in trailing)

    def text(self, line: str) -> str:
        """``line`` with its escapes read as what they print."""
        return _ESCAPE.sub(self._escape, line) if "\\" in line else line

    def _escape(self, found: re.Match[str]) -> str:
        if found["special"]:
            return _special(found["special"])
        if found["call"] == "*":
            name = found[0][2:].removeprefix("(").removeprefix("[").removesuffix("]")
            return self.strings.get(name, "")
        if found["quoted"] == "N":
            return _character(found["value"])
        one = found["one"]
        if one is None:
            return ""
        return _ONE_CHARACTER.get(one, "" if one in _PRINTS_NOTHING else one)

    def _names(self) -> dict[int, tuple[str, ...]]:
        """The names the NAME section declares, on its first line of text: before its dash (man),
        or its ``.Nm`` lines' (mdoc, whose ``.Nd`` line is the dash)."""
        entry: list[str] = []
        for _, shown in self.name_lines:  # the entry's first paragraph, up to its dash
            entry.append(shown)
            if names := man_entry_names(" ".join(entry)):
                return {self.name_lines[0][0]: names}
        return {}


#: The most words a tag's value after an option in bold runs to (``--hostlimit host1,host2``,
#: ``-o output file``): more are a sentence the tag goes on with.
MAX_VALUE_WORDS = 3


def _literal_names(runs: list[tuple[str, str]]) -> tuple[str, ...]:
    """The names a tag declares by its fonts (:meth:`_Page._font_runs`): the literal words it
    starts with in bold, when what follows them is a value to replace, in italic (``table
    TABLEID``, ``mtu lock MTU``, ``-c file``, ``netns { PID | NAME }``), as man-pages(7) sets a
    command's syntax; an option in bold whatever font its value is in (``\\fB--detail\\fR level``):
    the few words after an option in its tag are what it takes (:data:`MAX_VALUE_WORDS`; words, not
    a list's ``, ...``). Any other
    tag with a roman word after its bold ones (``up and down``, ``ls(1)``) or
    with nothing after them (``read only``) is a phrase. Words typed together (``mtu lock``) are one
    name, as a setting's words joined by unbreakable spaces are; words that start a sentence
    (``This option sets the``) are none."""
    shown = [(role, text) for role, text in runs if text.strip()]
    bold = 0
    while bold < len(shown) and shown[bold][0] == "B":
        bold += 1
    value = shown[bold:]
    term = " ".join("".join(text for _, text in shown[:bold]).split())
    taken = " ".join(text for _, text in value).split()
    if bold and term.startswith("-") and taken and taken[0][0].isalnum() and len(taken) <= MAX_VALUE_WORDS:
        return item_names(term, code=True)  # an option's value, in any font (``--detail`` then ``level``)
    if not bold or not any(role == "I" for role, _ in value):
        return ()
    if any(role == "R" and re.search(r"\w", text) for role, text in value):
        return ()
    if names := item_names(term, code=True):
        return names
    words = term.split()
    if words[0][:1].isupper() or not all(_KEYWORD.fullmatch(word) for word in words):
        return ()
    return (term,)


def _system_name(macro: str, version: str) -> str:
    """What an mdoc system macro prints with its version, if any: after the name (``OpenBSD 2.8``),
    but BSD's before it (``.Bx 4.4``: ``4.4BSD``)."""
    name = _MDOC_SYSTEMS[macro]
    if not version:
        return name
    return version + name if macro == "Bx" else f"{name} {version}"


def _first_argument(arguments: str) -> str:
    """A control line's first argument: in double quotes, or up to a space no backslash escapes."""
    first = _FIRST_ARGUMENT.match(arguments.lstrip(" \t"))
    return "" if first is None else first[1] if first[1] is not None else first[2]


def _arguments(arguments: str) -> list[str]:
    """A control line's arguments, split at spaces outside double quotes (``"SEE ALSO"`` is one)
    that no backslash escapes (``max\\ connections`` is one)."""
    if '"' not in arguments:
        return [argument for argument in _ARGUMENT_SPACES.split(arguments.strip()) if argument]
    try:
        return shlex.split(arguments.replace("\\", "\\\\"), posix=True)
    except ValueError:  # an unclosed quote: the words as they are
        return arguments.replace('"', " ").split()


def _special(name: str) -> str:
    """What a named character escape prints (``(em``, ``[em]``, ``[u00E9]``); '' for one unknown."""
    name = name[1:] if name.startswith("(") else name[1:-1]
    if name.startswith("u") and len(name) in (5, 6) and all(c in "0123456789ABCDEFabcdef" for c in name[1:]):
        return _printable(int(name[1:], 16))
    return SPECIAL_CHARACTERS.get(name, "")


def _character(code: str) -> str:
    """What ``\\N'34'`` prints: the character of that code, if it is one."""
    return _printable(int(code)) if code.isdigit() else ""


def _printable(code: int) -> str:
    """The character of ``code`` if it is one text can hold: not a control character, nor half of
    a UTF-16 pair (a lone surrogate cannot be encoded, and would fail the whole build's hashing)."""
    return chr(code) if 31 < code < 0x110000 and not 0xD800 <= code <= 0xDFFF else ""
