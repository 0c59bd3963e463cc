"""LaTeX sources, read by the structure their commands declare: ``thesis.tex``, ``chapter3.tex``.

- **Sections**: ``\\part``, ``\\chapter``, ``\\section``, ``\\subsection``, ``\\subsubsection``,
  ``\\paragraph`` and ``\\subparagraph`` (starred or not, with a short title or not) head what
  follows, at their levels; the document's ``\\title`` heads it all. A title is read as its text
  (``\\section{The \\texttt{ls} command}``: ``The ls command``).
- **Code**: ``verbatim``, ``Verbatim``, ``lstlisting``, ``minted`` and their kin are literal;
  ``comment`` environments show nothing.
- **Markup, shown nothing** (:attr:`Document.markup`): comment lines (``% ...``), the preamble
  before ``\\begin{document}`` (packages, settings, macro definitions; its ``\\title`` aside), and
  lines of commands alone (``\\begin{itemize}``, ``\\label{sec:intro}``, ``\\maketitle``).
- **What the model reads** (:attr:`Document.read_as`): a line's text as the typeset page shows it:
  formatting commands without their names (``\\emph{this}``: ``this``), references, citations,
  labels and index entries dropped, a link as its text, escapes as their characters, a comment
  after its ``%`` dropped.
- **Names** (:attr:`Document.definitions`): a list item whose label is in typewriter type
  (``\\item[\\texttt{--verbose}]``), as a manual lists its options, read as
  :func:`indexer.formats.definitions.item_names` reads a term.

Every rule reads a line at a time, braces counted in one pass: linear in the file's length whatever
it holds. Macros the file defines are not expanded: what they print is not known without TeX.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from indexer.formats.definitions import item_names
from indexer.formats.document import Document, Heading, Layout, split_lines

#: The sectioning commands, by level (the document's ``\title`` above them all).
SECTION_LEVELS = {
    "title": 0, "part": 1, "chapter": 2, "section": 3, "subsection": 4, "subsubsection": 5,
    "frametitle": 5, "paragraph": 6, "subparagraph": 7,
}  # fmt: skip
_SECTION = re.compile(
    r"[ \t]*\\(?P<command>" + "|".join(SECTION_LEVELS) + r")\*?[ \t]*(?:\[[^\]\n]{0,1024}\])?[ \t]*\{"
)
#: Environments whose lines are code, as written.
LITERAL_ENVIRONMENTS = frozenset(
    "verbatim verbatim* Verbatim Verbatim* BVerbatim LVerbatim lstlisting minted alltt".split()
)
#: Environments whose lines are never typeset.
HIDDEN_ENVIRONMENTS = frozenset({"comment"})
_BEGIN = re.compile(r"[ \t]*\\begin\{(?P<name>[\w*]{1,64})\}")
_END = re.compile(r"\\end\{(?P<name>[\w*]{1,64})\}")
BEGIN_DOCUMENT = "\\begin{document}"
#: A comment: an unescaped ``%`` to the line's end.
_COMMENT = re.compile(r"(?<!\\)%.*")
_VERB = re.compile(r"\\verb\*?(?P<delimiter>[^\w\s])(?P<text>.{0,512}?)(?P=delimiter)")
#: Commands that print nothing of their arguments: references, labels, citations, index entries,
#: spacing, graphics, files.
_SILENT = re.compile(
    r"\\(?:label|ref|eqref|pageref|autoref|cref|Cref|cite[tp]?|nocite|index|glossary|vspace|hspace"
    r"|includegraphics|input|include|usepackage|documentclass|bibliography|bibliographystyle"
    r"|setlength|addtolength|setcounter|newpage|clearpage|pagebreak|hypersetup)(?![A-Za-z@])\*?"
    r"(?:[ \t]*\[[^\]\n]{0,512}\])*(?:[ \t]*\{[^{}\n]{0,512}\})*"
)
#: An environment's opening or closing, with the arguments that set it up where they are settings (a
#: table's columns, a listing's language, a float's placement); a slide's or a list's arguments are
#: its text (``\begin{frame}{Title}``).
_ENVIRONMENT = re.compile(
    r"\\(?:begin|end)\{(?:(?:tabular\*?|tabularx|longtable|array|minted|multicols|wrapfigure|figure\*?"
    r"|table\*?|minipage|adjustbox)\}(?:[ \t]*\[[^\]\n]{0,128}\])*(?:[ \t]*\{[^{}\n]{0,128}\})*"
    r"|[^{}\n]{0,64}\})"
)
#: A line break (``\\``, maybe with its space: ``\\[2pt]``) or a control space (``\ ``): a space.
_BREAK = re.compile(r"\\\\\*?(?:\[[^\]\n]{0,64}\])?|\\ ")
_HREF = re.compile(r"\\href\{[^{}\n]{0,2048}\}\{(?P<text>[^{}\n]{0,2048})\}")
_ESCAPES = {"\\%": "%", "\\&": "&", "\\_": "_", "\\#": "#", "\\$": "$", "\\{": "{", "\\}": "}", "~": " "}
_ESCAPE = re.compile(r"\\[%&_#${}]|~")
#: Commands that print a word of their own.
NAMED = {
    "LaTeX": "LaTeX", "LaTeXe": "LaTeX2e", "TeX": "TeX", "ldots": "…", "dots": "…", "textbackslash": "\\",
}  # fmt: skip
_COMMAND = re.compile(r"\\(?P<name>[A-Za-z@]{1,64})\*?(?:[ \t]*\[[^\]\n]{0,512}\])?")
_ITEM_LABEL = re.compile(r"\\item[ \t]*\[(?P<label>[^\]\n]{0,512})\]")
_TYPEWRITER = re.compile(r"\\(?:texttt|verb|code|lstinline|tt\b)")


def read_latex(text: str, encoding: str = "utf-8") -> Document:
    """A LaTeX file's lines with its sections, literal environments and markup as its commands say,
    each line read as its typeset text."""
    reader = _Reader(split_lines(text))
    reader.read()
    return reader.layout.document(reader.lines, encoding)


def inline_text(text: str) -> str:
    """LaTeX as its typeset text: commands' names and options, silent commands with their arguments
    (environments' names too), braces and comments dropped; a link as its text, an item's label,
    line breaks and escapes as what they print; ``\\verb`` text as written, a ``%`` in it too."""
    pieces: list[str] = []
    start = 0
    for verbatim in _VERB.finditer(text):
        before = text[start : verbatim.start()]
        if _COMMENT.search(before):  # the rest of the line is a comment, ``\\verb`` in it or not
            return "".join(pieces) + _typeset(before)
        pieces += [_typeset(before), verbatim["text"]]
        start = verbatim.end()
    return "".join(pieces) + _typeset(text[start:])


def _typeset(text: str) -> str:
    """:func:`inline_text` of text without ``\\verb``."""
    text = _COMMENT.sub("", text)
    text = _BREAK.sub(" ", text)
    text = _ENVIRONMENT.sub("", text)
    text = _ITEM_LABEL.sub(lambda found: found["label"] + " ", text)
    text = _SILENT.sub("", text)
    text = _HREF.sub(lambda found: found["text"], text)
    text = _COMMAND.sub(_command_text, text)
    text = _ESCAPE.sub(lambda found: _ESCAPES[found.group()], text)
    return text.replace("{", "").replace("}", "")


def _command_text(command: re.Match[str]) -> str:
    """What a command prints of itself: a logo's word, else nothing (its argument in braces is what
    it formats; an option in brackets sets how)."""
    return NAMED.get(command["name"], "")


def braced(text: str, start: int) -> str:
    """The argument in braces opening at ``text[start - 1]``, to its closing brace (braces inside
    counted), or to the line's end when it does not close there."""
    depth = 1
    for place in range(start, len(text)):
        character = text[place]
        if character == "{" and text[place - 1] != "\\":
            depth += 1
        elif character == "}" and text[place - 1] != "\\":
            depth -= 1
            if depth == 0:
                return text[start:place]
    return text[start:]


def _has_preamble(lines: list[str]) -> bool:
    """Whether the file opens with a preamble: a ``\\documentclass`` before any section, outside a
    verbatim environment (an example of a whole document in a chapter is no preamble)."""
    environment = ""
    for line in lines:
        if environment:
            end = _END.search(line)
            environment = "" if end is not None and end["name"] == environment else environment
            continue
        begin = _BEGIN.match(line)
        if begin and begin["name"] in LITERAL_ENVIRONMENTS | HIDDEN_ENVIRONMENTS:
            end = _END.search(line, begin.end())
            environment = "" if end is not None and end["name"] == begin["name"] else begin["name"]
        elif line.lstrip().startswith("\\documentclass"):
            return True
        elif _SECTION.match(line):
            return False
    return False


@dataclass
class _Reader:
    """One pass over the lines: the environment open, whether the document's body has begun."""

    lines: list[str]
    layout: Layout = field(default_factory=Layout)
    environment = ""  # the literal or hidden environment open
    environment_start = 0
    in_preamble = False

    def read(self) -> None:
        self.in_preamble = _has_preamble(self.lines)
        for number, line in enumerate(self.lines, 1):
            self._line(number, line)

    def _line(self, number: int, line: str) -> None:
        if self.environment:
            self._in_environment(number, line)
            return
        stripped = line.lstrip()
        if stripped.startswith("%"):
            self.layout.markup.add(number)
            return
        if self.in_preamble:
            self.in_preamble = not stripped.startswith(BEGIN_DOCUMENT)
            if not self._section(number, line, only_title=True):
                self.layout.markup.add(number)
            return
        begin = _BEGIN.match(line)
        if begin and (begin["name"] in LITERAL_ENVIRONMENTS or begin["name"] in HIDDEN_ENVIRONMENTS):
            end = _END.search(line, begin.end())
            if end is None or end["name"] != begin["name"]:
                self.environment, self.environment_start = begin["name"], number
                self.layout.markup.add(number)
            elif begin["name"] in LITERAL_ENVIRONMENTS:
                self.layout.literal.append((number, number))  # ``\begin{verbatim}x\end{verbatim}``
            else:
                self.layout.markup.add(number)
            return
        if self._section(number, line):
            return
        if stripped:
            self._text(number, line)

    def _in_environment(self, number: int, line: str) -> None:
        end = _END.search(line)
        if end is None or end["name"] != self.environment:
            if self.environment in HIDDEN_ENVIRONMENTS:
                self.layout.markup.add(number)
            return
        if self.environment in LITERAL_ENVIRONMENTS and number > self.environment_start + 1:
            self.layout.literal.append((self.environment_start + 1, number - 1))
        self.layout.markup.add(number)
        self.environment = ""

    def _section(self, number: int, line: str, only_title: bool = False) -> bool:
        """Whether line ``number`` is a sectioning command (only ``\\title`` in the preamble); if so,
        head a section with its title's text."""
        found = _SECTION.match(line)
        if found is None or (only_title and found["command"] != "title"):
            return False
        title = " ".join(inline_text(braced(line, found.end())).split())
        if not title:
            return False
        self.layout.headings.append(Heading(line=number, level=SECTION_LEVELS[found["command"]], title=title))
        self.layout.read_as[number] = title
        return True

    def _text(self, number: int, line: str) -> None:
        read = " ".join(inline_text(line).split())
        if not read:
            self.layout.markup.add(number)
            return
        if read != " ".join(line.split()):
            self.layout.read_as[number] = read
        item = _ITEM_LABEL.match(line.lstrip())
        if item:
            label = item["label"]
            if names := item_names(inline_text(label).strip(), code=_TYPEWRITER.search(label) is not None):
                self.layout.definitions[number] = names
