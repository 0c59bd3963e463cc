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
from collections.abc import Iterator
from dataclasses import dataclass, field

from indexer.formats.definitions import item_names
from indexer.formats.document import Document, Heading, Layout, split_lines

#: The sectioning commands, by level (the document's ``\title`` above them all).
SECTION_LEVELS = {
    "title": 0, "part": 1, "chapter": 2, "section": 3, "subsection": 4, "subsubsection": 5,
    "frametitle": 5, "paragraph": 6, "subparagraph": 7,
}  # fmt: skip
_SECTION = re.compile(
    r"[ \t]*\\(?P<command>" + "|".join(SECTION_LEVELS) + r")\*?[ \t]*(?:\[[^\]\n]{0,1024}\])?[ \t]*"
    r"(?:\{|(?P<next_line>(?<!\\)%.*|$))"
)
#: A beamer frame's opening with its title (``\begin{frame}<2->[fragile]{Title}{Subtitle}``): a
#: slide's title, as ``\frametitle`` sets it.
_FRAME = re.compile(r"[ \t]*\\begin\{frame\}(?:[ \t]*<[^>\n]{0,128}>|[ \t]*\[[^\]\n]{0,512}\]){0,4}[ \t]*\{")
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
_ESCAPES = {
    "\\%": "%", "\\&": "&", "\\_": "_", "\\#": "#", "\\$": "$", "\\{": "\ue000", "\\}": "\ue001", "~": " ",
}  # fmt: skip
_ESCAPE = re.compile(r"\\[%&_#${}]|~")
#: Commands that print a word of their own.
NAMED = {
    "LaTeX": "LaTeX", "LaTeXe": "LaTeX2e", "TeX": "TeX", "ldots": "…", "dots": "…", "textbackslash": "\\",
}  # fmt: skip
_COMMAND = re.compile(r"\\(?P<name>[A-Za-z@]{1,64})\*?(?:[ \t]*\[[^\]\n]{0,512}\])?")
_ITEM_LABEL = re.compile(r"\\item[ \t]*\[(?P<label>[^\]\n]{0,512})\]")
_TYPEWRITER = re.compile(r"\\(?:texttt|verb|code|lstinline|tt\b)")
#: Braces and backslashes that a command prints (``\marg{name}``: ``{⟨name⟩}``, ``\cs{foo}``:
#: ``\foo``), held apart from the markup's, which the page does not show, until the line is read.
_KEPT = {"{": "\ue000", "}": "\ue001", "\\": "\ue002"}
_KEEP = str.maketrans(_KEPT)
_RESTORE = str.maketrans({kept: character for character, kept in _KEPT.items()})
#: The placeholders of a documented command's arguments as the doc package's (and the pgf and beamer
#: manuals') macros print them: ``\meta{name}`` is ``⟨name⟩``, ``\marg{name}`` a mandatory argument
#: ``{⟨name⟩}``, ``\oarg`` an optional one ``[⟨name⟩]``, ``\parg`` a picture's ``(⟨name⟩)``, ``\sarg``
#: an overlay specification ``<⟨name⟩>``. Each argument is a word of a signature, apart from the others.
PLACEHOLDERS = {"meta": "⟨{}⟩", "marg": " {{⟨{}⟩}}", "oarg": " [⟨{}⟩]", "parg": " (⟨{}⟩)", "sarg": " <⟨{}⟩>"}
_PLACEHOLDER = re.compile(r"\\(?P<kind>meta|[mops]arg)(?![A-Za-z])[ \t]*\{(?P<text>[^{}\\\n]{0,256})\}")
#: Commands that print a command's name, backslash and all: the doc classes' ``\cs{foo}``,
#: ``\tn{foo}`` and ``\cmd{\foo}``, TeX's ``\string\foo``, doc's ``\DescribeMacro{\foo}``.
_COMMAND_NAME = re.compile(
    r"\\(?:cs|tn)[ \t]*\{\\?(?P<name>[^{}\s\\]{1,64})\}"
    r"|\\(?:cmd|string|DescribeMacro)(?![A-Za-z])[ \t]*(?P<brace>\{)?[ \t]*"
    r"\\(?P<command>[A-Za-z@_:]{1,64}|[^A-Za-z@\s])"
    r"(?(brace)[ \t]*\})"
)
#: The lines of a documented thing's entry heads: its name or signature as its first argument.
_DESCRIBED = re.compile(
    r"\\Describe(?:Macro|Env)[ \t]*"
    r"(?:\{[ \t]*\\?(?P<braced>[^{}\s\\]{1,64})[ \t]*\}|\\(?P<bare>[A-Za-z@]{1,64}))"
)
#: What a line holds that is code (``\verb|x|``; the short-verbatim character's runs), or that says
#: where code cannot start: an escaped character (``\|``, ``\$``), a math delimiter (``\left|``), math
#: itself (between ``$`` signs, ``\(`` and ``\)``), a table's column specification (``{|l|c|}``).
_CODE_PARTS = (
    r"\\verb\*?(?P<delimiter>[^\w\s])(?P<text>.{0,512}?)(?P=delimiter)"
    r"|(?P<math>\$\$?|\\[()\[\]])"
    r"|\\(?:left|right|middle|[Bb]igg?[lrm]?)(?![A-Za-z])[ \t]*\S"
    r"|\\[^A-Za-z@\s]"
    r"|\\begin\{(?:tabular\*?|tabularx|tabulary|longtable|array)\}(?:[ \t]*\[[^\]\n]{0,128}\])*"
    r"(?:[ \t]*\{(?:[^{}\n]|\{[^{}\n]{0,64}\}){0,256}\})*"
)
_CODE = {
    short_verb: re.compile(_CODE_PARTS + (f"|(?P<short>{re.escape(short_verb)})" if short_verb else ""))
    for short_verb in ("", "|")
}


def read_latex(text: str, encoding: str = "utf-8") -> Document:
    """A LaTeX file's lines with its sections, literal environments and markup as its commands say,
    each line read as its typeset text."""
    reader = _Reader(split_lines(text))
    reader.read()
    return reader.layout.document(reader.lines, encoding)


def inline_text(text: str, short_verb: str = "", inferred: bool = False) -> str:
    """LaTeX as its typeset text: commands' names and options, silent commands with their arguments
    (environments' names too), braces and comments dropped; a link as its text, an item's label,
    line breaks and escapes as what they print, an argument's placeholder as a signature shows it
    (``\\marg{name}``: ``{⟨name⟩}``); ``\\verb`` text, and text between two ``short_verb``
    characters (``|\\frame|``, where the document makes ``|`` short verbatim, outside math; where
    that is ``inferred``, only those that start with a command's name or hold no space: ``|label=|``,
    not ``x | y and a|``), as written, a ``%`` in it too."""
    pieces = _pieces(text, short_verb, inferred)
    return "".join(piece if code else _typeset(piece) for piece, code in pieces)


def _pieces(text: str, short_verb: str, inferred: bool = False) -> Iterator[tuple[str, bool]]:
    """``text`` in pieces, in order, each with whether it is code, written as it shows: ``\\verb``
    text, a short-verbatim run (closed on its line); nothing after a comment's ``%``. Each search
    starts where the last match ended, so the pass is linear in the text."""
    pattern = _CODE.get(short_verb) or re.compile(_CODE_PARTS + f"|(?P<short>{re.escape(short_verb)})")
    start = position = 0
    in_math = False
    while (found := pattern.search(text, position)) is not None:
        position = found.end()
        if found["math"]:
            in_math = found["math"] in ("\\(", "\\[") or (found["math"] not in ("\\)", "\\]") and not in_math)
            continue
        if found["text"] is not None:
            code, end = found["text"], found.end()
        elif found.groupdict().get("short") and not in_math:
            close = text.find(short_verb, position)
            if close < 0 or "\n" in text[position:close]:
                continue
            if inferred and not (
                _COMMAND_START.match(text, position) or _ONE_TOKEN.fullmatch(text, position, close)
            ):
                continue  # bars around words (``x | y``): text, where the document never declared it
            code, end = text[position:close], close + 1
        else:
            continue
        before = text[start : found.start()]
        yield before, False
        if _COMMENT.search(before):  # the rest of the line is a comment, code in it or not
            return
        yield code, True
        start = position = end
    yield text[start:], False


def _typeset(text: str) -> str:
    """:func:`inline_text` of text without code."""
    text = _COMMENT.sub("", text)
    text = _BREAK.sub(" ", text)
    text = _ENVIRONMENT.sub("", text)
    text = _ITEM_LABEL.sub(lambda found: found["label"] + " ", text)
    text = _SILENT.sub("", text)
    text = _HREF.sub(lambda found: found["text"], text)
    text = _COMMAND_NAME.sub(_command_name, text)
    text = _PLACEHOLDER.sub(
        lambda found: PLACEHOLDERS[found["kind"]].format(found["text"]).translate(_KEEP), text
    )
    text = _COMMAND.sub(_command_text, text)
    text = _ESCAPE.sub(lambda found: _ESCAPES[found.group()], text)
    return text.replace("{", "").replace("}", "").translate(_RESTORE)


def _command_name(found: re.Match[str]) -> str:
    """A command's name as a doc class prints it: with its backslash (kept from the rules that drop
    commands)."""
    return ("\\" + (found["name"] or found["command"])).translate(_KEEP)


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


#: A declaration that makes a character short verbatim: ``\MakeShortVerb{\|}`` (the doc and
#: shortvrb packages), ``\DefineShortVerb{\|}`` (fancyvrb).
_SHORT_VERB_DECLARATION = re.compile(
    r"\\(?:MakeShortVerb|DefineShortVerb)\*?[ \t]*(?:\[[^\]\n]{0,256}\][ \t]*)?"
    r"\{?[ \t]*\\(?P<character>[^\w\s])"
)
#: The documentation classes that make ``|`` short verbatim themselves.
_SHORT_VERB_CLASS = re.compile(r"\\documentclass[ \t]*(?:\[[^\]\n]{0,512}\][ \t]*)?\{(?:ltxdoc|l3doc)\}")
#: Environments of displayed math, where ``|`` is a bar (``|x|``), never short verbatim.
MATH_ENVIRONMENTS = frozenset(
    f"{name}{star}"
    for name in "equation align gather multline flalign alignat eqnarray".split()
    for star in ("", "*")
) | {"displaymath", "math"}


def _short_verb(lines: list[str]) -> tuple[str, bool]:
    """The character the document makes short verbatim, and whether that is inferred (then not every
    run of it is code, :func:`inline_text`): the one it declares (or ``|`` for a doc class that
    does); else ``|`` where a line's text, outside math and code, holds a ``|`` run that starts with
    a command's name (``the |\\frame| command``): a chapter of a manual whose root file declares it,
    whose other bars may still be text (``x | y``). '' when neither: ``|`` is then read as itself."""
    environment, evidence = "", False
    for line in lines:
        if environment:
            end = _END.search(line)
            environment = "" if end is not None and end["name"] == environment else environment
            continue
        code = _COMMENT.sub("", line)
        if declared := _SHORT_VERB_DECLARATION.search(code):
            return declared["character"], False
        if _SHORT_VERB_CLASS.search(code):
            return "|", False
        begin = _BEGIN.match(code)
        if begin and begin["name"] in LITERAL_ENVIRONMENTS | HIDDEN_ENVIRONMENTS | MATH_ENVIRONMENTS:
            end = _END.search(code, begin.end())
            environment = "" if end is not None and end["name"] == begin["name"] else begin["name"]
        elif not evidence and "|" in code:
            evidence = any(code and _COMMAND_START.match(piece) for piece, code in _pieces(code, "|"))
    return ("|", True) if evidence else ("", False)


#: An environment opening with its first argument: a manual's entry for a thing when it names one
#: (:data:`ENTRY_KINDS`) or its argument is a command's signature (``\begin{command}{\frame\marg{x}}``).
_ENTRY = re.compile(r"[ \t]*\\begin\{(?P<kind>[A-Za-z]{1,64})\}[ \t]*(?:\[[^\]\n]{0,256}\][ \t]*)?\{")
#: What the documentation classes call the environments they give a thing's entry in, as the ends of
#: their names in any case: doc's ``macro`` and ``environment``, l3doc's ``function`` and ``variable``,
#: the pgf and beamer manuals' ``command``, ``key``, ``element``, ``classoption``..., tcolorbox's
#: documentation library's ``docCommand``, ``docKey``, ``docEnvironment``.
ENTRY_KINDS = tuple(
    "macro environment function variable command key option element package class theme shape".split()
)
#: The entry kinds of a command, whose page shows its name with its backslash.
COMMAND_KINDS = ("macro", "command")
#: A command's name at an argument's start (l3doc's names hold ``_`` and ``:``).
_COMMAND_START = re.compile(r"[ \t]*\\(?P<name>[A-Za-z@_:]{1,64}|[^A-Za-z@\s])")
#: A short-verbatim run of one token (``label=``, ``columns``), code where the document uses ``|`` so.
_ONE_TOKEN = re.compile(r"[^\s|]{1,128}")
_MORE_COMMANDS = re.compile(r"[ \t]*,[ \t]*\\(?P<name>[A-Za-z@_:]{1,64})")
#: A thing's name at an entry's argument's start: a word, or braced (``{columns}\sarg{...}``).
_ENTRY_NAME = re.compile(r"[ \t]*(?:\{(?P<braced>[^{}\\\n]{1,64})\}|(?P<word>[^\s{}\\\[\]<>=,()%|]{1,64}))")
_NEXT_WORD = re.compile(r"\s+\w")
#: The arguments after an entry's first, each a word of its head apart from the others.
_NEXT_ARGUMENT = re.compile(r"\}[ \t]*(?=[{\[])")


@dataclass
class _Reader:
    """One pass over the lines: the environment open, whether the document's body has begun."""

    lines: list[str]
    layout: Layout = field(default_factory=Layout)
    environment = ""  # the literal or hidden environment open
    environment_start = 0
    in_preamble = False
    short_verb = ""  # the character the document makes short verbatim
    inferred = False  # the document uses it without declaring it (:func:`_short_verb`)
    title_line = 0  # a line that holds the title of the sectioning command on the line before

    def read(self) -> None:
        self.in_preamble = _has_preamble(self.lines)
        self.short_verb, self.inferred = _short_verb(self.lines)
        for number, line in enumerate(self.lines, 1):
            self._line(number, line)

    def _line(self, number: int, line: str) -> None:
        if self.environment:
            self._in_environment(number, line)
            return
        stripped = line.lstrip()
        if stripped.startswith("%") or number == self.title_line:
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
        if self._section(number, line) or self._frame(number, line):
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
        head a section with its title's text, which may open on the next line (``\\title[Short]``
        then ``{Title}``)."""
        found = _SECTION.match(line)
        if found is None or (only_title and found["command"] != "title"):
            return False
        if found["next_line"] is None:
            title = self._read(braced(line, found.end()))
        elif number < len(self.lines) and (following := self.lines[number]).lstrip().startswith("{"):
            title = self._read(braced(following, following.index("{") + 1))
            self.title_line = number + 1 if title else 0
        else:
            return False
        if not title:
            return False
        self.layout.headings.append(Heading(line=number, level=SECTION_LEVELS[found["command"]], title=title))
        self.layout.read_as[number] = title
        return True

    def _frame(self, number: int, line: str) -> bool:
        """Whether line ``number`` opens a slide with its title (and maybe a subtitle after it); if so,
        head the slide with its title, as ``\\frametitle`` does."""
        found = _FRAME.match(line)
        if found is None:
            return False
        title = braced(line, found.end())
        after = line[found.end() + len(title) + 1 :].lstrip()
        subtitle = braced(after, 1) if after.startswith("{") else ""
        read_title = self._read(title)
        if not read_title:
            return False
        heading = Heading(line=number, level=SECTION_LEVELS["frametitle"], title=read_title)
        self.layout.headings.append(heading)
        self.layout.read_as[number] = " ".join(filter(None, (read_title, self._read(subtitle))))
        return True

    def _read(self, text: str) -> str:
        """``text`` as the page shows it, one space apart."""
        return " ".join(inline_text(text, self.short_verb, self.inferred).split())

    def _text(self, number: int, line: str) -> None:
        entry = _ENTRY.match(line)
        head = self._entry_head(entry["kind"], line, entry.end()) if entry else None
        read, names = head if head else (self._read(line), ())
        if not read:
            self.layout.markup.add(number)
            return
        if read != " ".join(line.split()):
            self.layout.read_as[number] = read
        names += tuple(found["braced"] or found["bare"] for found in _DESCRIBED.finditer(line))
        item = _ITEM_LABEL.match(line.lstrip())
        if item:
            label = item["label"]
            code = _TYPEWRITER.search(label) is not None or bool(self.short_verb and self.short_verb in label)
            names += item_names(inline_text(label, self.short_verb, self.inferred).strip(), code=code)
        if names:
            self.layout.definitions[number] = tuple(dict.fromkeys(names))

    def _entry_head(self, kind: str, line: str, start: int) -> tuple[str, tuple[str, ...]] | None:
        """A manual's entry head (``\\begin{command}{\\frame\\sarg{overlay}\\marg{title}}``) read as
        its signature line shows it, the command named as written and each argument apart, with the
        names it declares: its commands' names (``frame``) or the thing it names (``columns`` of
        ``\\begin{environment}{{columns}...}``, ``handout`` of ``\\begin{classoption}{handout}``), not
        a phrase (``\\begin{element}{palette primary}``). None for an environment that is no entry."""
        argument = braced(line, start)
        rest = _NEXT_ARGUMENT.sub("} ", line[start + len(argument) + 1 :])
        named_kind = kind.lower().endswith(ENTRY_KINDS)
        command = _COMMAND_START.match(argument)
        if command and (named_kind or _PLACEHOLDER.search(argument)):
            names = [command["name"]]
            position = command.end()
            while more := _MORE_COMMANDS.match(argument, position):
                names.append(more["name"])
                position = more.end()
            shown = ", ".join("\\" + name for name in names)
            declared = tuple(name for name in names if name[:1].isalpha() or name[:1] == "@")
        elif named_kind and (word := _ENTRY_NAME.match(argument)):
            name = word["braced"] or word["word"]
            shown, position = name.strip(), word.end()
            phrase = " " in shown or (
                word["word"] is not None and _NEXT_WORD.match(argument, position) is not None
            )
            declared = () if phrase else item_names(shown, code=True)
            if declared and kind.lower().endswith(COMMAND_KINDS):
                shown = "\\" + shown  # ``\begin{docCommand}{tcbset}``: the page shows ``\tcbset``
        else:
            return None
        signature = shown + inline_text(argument[position:], self.short_verb, self.inferred)
        read = " ".join(f"{signature} {inline_text(rest, self.short_verb, self.inferred)}".split())
        return read, declared
