"""reStructuredText, read for what the chunker needs: section titles, nested as docutils nests them,
and literal blocks, which never hold a title.

Why not docutils itself: it stops at every Sphinx directive and role it does not know (most of a real
Sphinx project's pages) and builds a whole document tree the chunker does not need. This reader
follows docutils' rules for the parts that decide structure:

- a title is an unindented line after a blank line, underlined (and optionally overlined) with one
  repeated punctuation character; an underline shorter than the title counts when it is at least 4
  characters long, as in docutils;
- section levels come from the order in which adornment styles first appear in the file, an
  overlined style being distinct from the same character underlined only: a page whose title is
  underlined with ``---`` and whose subsections use ``^^^`` nests them under the title;
- the indented block after a paragraph ending in ``::``, the body of a code directive
  (``.. code-block::``, ``.. code::``, ``.. math::``...) and a ``>>>`` doctest block are literal.

What a rendered page does not show is not read as its text: hyperlink targets (``.. _label:``,
``__ https://...``), substitution definitions (``.. |name| replace:: ...``), comments, directives
that only set up how the rest is shown (``highlight``, ``role``, ``index``, ``meta``...), and the
field list at the top of a page or right after its title, which docutils takes as the page's
metadata (docinfo; Sphinx's ``:orphan:`` and ``:tocdepth:``), and an ``.. only::`` block for
another builder than the web's (a PDF's copy of a page's list). Title adornments and transitions are
markup (:attr:`Document.markup`): kept in a chunk's text, counting nothing toward its size, as are an
``.. include::`` and a ``.. literalinclude::`` with their options: the page shows the file they name
where they stand (:attr:`Document.includes`), which a build reads as that file.

Plain-text notes (``.txt``) are read the same way: underlined titles are common there too. The names
a page defines (Sphinx's object directives, a rendered man page's NAME line, a labelled section
title that is names, with its labels: :func:`labelled_title_names`, an option
list's options and a definition list's terms that are names: :func:`listed_names`, a table
row's first cell that is options in code: :func:`table_reading`) are read as
:mod:`indexer.formats.definitions` says, and each object directive heads its indented description
under its section, as a function heads its body in source code (:func:`definition_headings`).
Tables are read as their cells (:func:`table_reading`): a grid table's frame and padding, and a
simple table's rules, are markup.
"""

from __future__ import annotations

import bisect
import csv
import re
import string

from indexer.formats.definitions import (
    AUTODOC_PREFIX,
    argument_names,
    describes_object,
    directive_definitions,
    item_names,
    man_page_names,
    option_cell_names,
    spelt_as_code,
    title_names,
)
from indexer.formats.document import Document, Heading, split_lines

_DIRECTIVE = re.compile(r"^\.\.\s+([\w:.+-]+)::")
#: The end of the name of an object directive that the rest of the page describes, at its own
#: indentation, not an indented body (``module``, ``py:module``, ``automodule``): it heads nothing
#: (:func:`definition_headings`).
_PAGE_DIRECTIVE = "module"
#: Explicit markup a reader never sees: a target, an anonymous target, a substitution definition, or
#: a comment (``..`` followed by anything that is not a directive, footnote or citation).
_UNSEEN = re.compile(r"^(?:\.\.\s+_|__\s|\.\.\s+\|[^|]+\||\.\.(?:\s*$|\s+(?!\[|[\w:.+-]+::)))")
#: An internal hyperlink target: a label the section or block after it is cited by (one without
#: blanks; one with a link after its colon is an external link, no label).
_TARGET = re.compile(r"\.\.[ \t]+_([^\s:`][^\s:`]{0,127}):[ \t]*")
#: A labelled title's text that is a name (:func:`labelled_title_names`): words joined by ``-``,
#: ``_`` or ``.``, with a letter in it, not a version (``v2.0``). ``_`` is a word character, so the
#: words are split at ``-`` and ``.`` alone and a joint looked ahead for: one name never splits two
#: ways, and a long title that is none fails in linear time.
_LABELLED_NAME = re.compile(
    r"(?![vV]?\d+(?:\.\d+)*(?:[-+][\w.]+)?$)(?=[^\s]*[A-Za-z])(?=[\w$.-]*?[\w$][-_.][\w$])[\w$]+(?:[-.][\w$]+)*"
)
#: What no definition list's term starts with: explicit markup, a field, a line block, a doctest.
_NOT_A_TERM_START = frozenset(".:|>")
#: A bullet or an enumerator before a list item's text (``- ``, ``* ``, ``1. ``, ``(a) ``, ``#. ``).
_LIST_START = re.compile(r"(?:[-*+\u2022]|\(?(?:\d{1,9}|[A-Za-z#]|[ivxlcdmIVXLCDM]{1,9})[.)])(?:[ \t]|$)")
#: An option list's options (docutils): each ``-a``, ``--long`` or ``/V``, maybe with its argument
#: after a blank or ``=`` (a word or ``<placeholder>``), comma-separated; then two blanks before its
#: description, or the line's end.
_LISTED_OPTION = r"(?:--?|/)[A-Za-z0-9][\w-]{0,63}(?:[ =](?:<[^<>\n]{1,64}>|[A-Za-z][\w-]{0,63}))?"
_OPTION_ITEM = re.compile(rf"(?P<options>{_LISTED_OPTION}(?:, {_LISTED_OPTION})*)(?:  +(?=\S)|$)")
_WHOLE_LITERAL = re.compile(r"``([^`]{1,512})``")
_CELL_LITERAL = re.compile(r"`([^`]{1,512})`")
_FIELD = re.compile(r"^:[^:\s][^:]*:(?:\s|$)")
#: Directives that set up how the rest of a page is shown, and show nothing themselves.
UNSEEN_DIRECTIVES = frozenset(
    """highlight role default-role default-domain tabularcolumns index currentmodule meta contents
    sectionauthor codeauthor""".split()
)
#: Directives that include another file's text where they stand (docutils' ``include``, Sphinx's
#: ``literalinclude``): the page shows that file's text, not their lines (:attr:`Document.includes`).
INCLUDE_DIRECTIVES = frozenset({"include", "literalinclude"})
LITERAL_DIRECTIVES = frozenset(
    """code code-block sourcecode parsed-literal math productionlist doctest testcode testoutput
    testsetup testcleanup ipython jupyter-execute code-cell prompt raw graphviz digraph graph mermaid
    uml plantuml""".split()
)
SHORTEST_SHORT_UNDERLINE = 4
#: The tags Sphinx sets when it builds a site for the web (the builder's name and its format), and
#: those other builders set: ``.. only::`` chooses content by them. The web's other builders
#: (``dirhtml``, ``singlehtml``) may or may not be the one a site is built with: unknown.
_WEB_TAGS = frozenset("html format_html builder_html".split())
_OTHER_BUILDER_TAGS = frozenset(
    """latex man texinfo text epub xml pseudoxml gettext linkcheck changes format_latex format_man
    format_texinfo format_text format_epub builder_latex builder_man builder_texinfo builder_text
    builder_epub""".split()
)
_ONLY_WORDS = re.compile(r"[()]|[\w-]+")
#: The most words of an ``.. only::`` expression read: a longer one is no expression a page writes.
_MOST_ONLY_WORDS = 64
#: Inline markup (:func:`inline_text`), each part bounded and free of the mark that ends it, so a
#: mark never closed costs a look ahead to the next.
_ROLE = re.compile(r":([A-Za-z][\w.+:-]{0,63}):`([^`]{1,1024})`")
#: Code in a line: an inline literal, a role, or text in the default role (a Sphinx project's
#: ``default_role``, most often code; docutils' own shows a title in italics).
_CODE = re.compile(
    r"(``[^`]{1,512}``|(?<![\w`]):[A-Za-z][\w.+:-]{0,63}:`[^`]{1,1024}`|(?<![\w`:])`[^`]{1,1024}`(?![\w`]))"
)
#: Code as :func:`inline_text` shows it: its characters in one pair of backticks.
_SHOWN_CODE = re.compile(r"`([^`]+)`")
_HYPERLINK = re.compile(r"(?<![\w`])`([^`]{1,1024})`__?(?![\w`])")
_SIMPLE_REFERENCE = re.compile(r"(?<![\w\\-])([A-Za-z0-9][A-Za-z0-9.-]{0,127})__?(?!\w)")
_STRONG = re.compile(r"(?<![\w*\\])\*\*(?=\S)([^*]{1,512})(?<=\S)\*\*(?!\w)")
_EMPHASIS = re.compile(r"(?<![\w*\\])\*(?=[^\s*])([^*]{1,512})(?<=[^\s*])\*(?![\w*])")
#: Roles whose text is prose, shown as it reads; every other role (``:func:``, ``:class:``,
#: ``:option:``...) names code, shown in backticks as an inline literal is.
PROSE_ROLES = frozenset(
    """ref doc term numref download abbr guilabel menuselection emphasis strong title-reference
    title t sub subscript sup superscript keyword std:ref std:doc std:term math""".split()
)
#: Roles whose text is a number a page shows with a name before it.
NUMBERED_ROLES = {"pep": "PEP", "rfc": "RFC"}
#: What a page shows of a directive's own line (:func:`shown_pieces`): an admonition its title, a
#: version note its sentence's start and the version, a titled block its title (its argument), an
#: object description its signature (its argument too, as code); any other directive's line shows
#: nothing (a code block, an image, a table of contents, an include...), its content what it shows.
ADMONITIONS = {
    "note": "Note", "warning": "Warning", "tip": "Tip", "hint": "Hint", "important": "Important",
    "caution": "Caution", "danger": "Danger", "error": "Error", "attention": "Attention",
    "seealso": "See also", "todo": "Todo",
}  # fmt: skip
VERSION_NOTES = {
    "versionadded": "Added in version", "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version", "versionremoved": "Removed in version",
}  # fmt: skip
TITLED_DIRECTIVES = frozenset(
    """admonition topic sidebar rubric table csv-table list-table tab group-tab tab-item dropdown
    card grid-item-card""".split()
)
#: A list-table's cell mark: the ``*`` of a row and the ``-`` of a cell, at a line's start.
_LIST_CELL = re.compile(r"(?:\*[ \t]{1,8})?-(?:[ \t]{1,8}|$)")
#: A directive's option: a field whose name is one word (``:maxdepth: 2``, ``:alt: text``), and
#: the fields of Sphinx's info field lists, which a page shows ("Returns: ..."), not options.
_OPTION = re.compile(r":(?P<name>[\w-]{1,64}):(?:\s|$)")
INFO_FIELDS = frozenset(
    "param parameter arg argument key keyword type raises raise except exception var ivar cvar vartype "
    "returns return rtype meta".split()
)
#: A directive option's caption, which a page shows above a code block or a table.
_CAPTION = re.compile(r":caption:[ \t]+(\S.*)")


def read_rst(text: str, encoding: str = "utf-8") -> Document:
    """A reStructuredText (or plain-text) file's lines with its sections and literal blocks, and
    without the explicit markup and metadata a reader never sees."""
    written = split_lines(text)
    headings, literal, titles = rst_structure(written)
    in_literal = {number for first, last in literal for number in range(first, last + 1)}
    unseen = unseen_lines(written, headings, in_literal)
    lines = ["" if number in unseen else line for number, line in enumerate(written, 1)]
    markup = {number for heading in headings for number in heading.lines if _is_adornment(lines[number - 1])}
    markup |= _transitions(lines, in_literal)
    includes, include_lines = _include_directives(lines, in_literal)
    markup |= include_lines
    table_markup, read_as, table_names = table_reading(lines, in_literal)
    directives = _moved_to_titles(directive_definitions(written, in_literal, unseen), lines, headings)
    definitions = {
        **listed_names(lines, headings, in_literal),
        **table_names,
        **titles,
        **labelled_title_names(written, headings, titles),
        **man_page_names(lines),
        **directives,
    }
    outline = definition_headings(lines, headings, directives, in_literal)
    return Document(
        lines=lines,
        headings=sorted([*headings, *outline], key=lambda heading: heading.line),
        literal=literal,
        encoding=encoding,
        markup=frozenset(markup | table_markup),
        definitions=definitions,
        read_as=read_as,
        includes=frozenset(includes),
    )


def _include_directives(lines: list[str], in_literal: set[int]) -> tuple[set[int], set[int]]:
    """The lines of the directives that include another file (:data:`INCLUDE_DIRECTIVES`): each
    directive's first line, and all the lines it takes up with its options, which show nothing."""
    includes: set[int] = set()
    taken: set[int] = set()
    index = 0
    while index < len(lines):
        directive = _DIRECTIVE.match(lines[index].strip())
        if directive and index + 1 not in in_literal and directive.group(1).lower() in INCLUDE_DIRECTIVES:
            end = _explicit_end(lines, index)
            includes.add(index + 1)
            taken.update(range(index + 1, end + 1))
            index = end
            continue
        index += 1
    return includes, taken


def labelled_title_names(
    lines: list[str], headings: list[Heading], titles: dict[int, tuple[str, ...]]
) -> dict[int, tuple[str, ...]]:
    """The names of the section titles that explicit targets label (``.. _metadata-soa-edit-api:``
    on the lines before ``SOA-EDIT-API``, blank lines between) where the title is names alone that
    the target made a reference entry of: one or more tokens, comma-separated, each of words joined
    by ``-``, ``_`` or ``.`` and with a letter in it (a setting ``8bit-dns``, a kind of metadata
    ``ALLOW-AXFR-FROM``), as :data:`_LABELLED_NAME` says; with them its labels, which a ``:ref:``
    cites the entry by. A title of one plain word (``Installation``) or of a phrase declares
    nothing: it is a section of prose, however a page cites it (``.. _tools:`` over ``Tools``), and
    a section that declares names is kept whole with what it says as a definition is."""
    declared: dict[int, tuple[str, ...]] = {}
    for heading in headings:
        labels: list[str] = []
        before = heading.line - 2
        while before >= 0 and (not lines[before].strip() or _TARGET.fullmatch(lines[before].rstrip())):
            if target := _TARGET.fullmatch(lines[before].rstrip()):
                labels.append(target.group(1))
            before -= 1
        if not labels:
            continue
        labels.reverse()  # as the page writes them
        tokens = [token.strip() for token in heading.title.split(",")]
        names = [_SHOWN_CODE.sub(r"\1", token).strip("`") for token in tokens]
        if all(map(_labelled_name, tokens, names)):
            declared[heading.line] = tuple(dict.fromkeys([*titles.get(heading.line, ()), *names, *labels]))
    return declared


def _labelled_name(written: str, name: str) -> bool:
    """Whether a labelled title's token, ``written`` as the page writes it, is a ``name``
    (:data:`_LABELLED_NAME`) and spelt as one: in an inline literal, or as code spells a name
    (:func:`~indexer.formats.definitions.item_names`' rule: ``default_ttl``), in capitals
    (``SOA-EDIT-API``) or with a digit (``8bit-dns``). A word hyphenated as prose hyphenates it
    (``Read-only``, ``Plug-ins``) is no name."""
    if not _LABELLED_NAME.fullmatch(name):
        return False
    literal = written.startswith("`")
    return literal or spelt_as_code(name) or name.upper() == name or any(c.isdigit() for c in name)


def listed_names(lines: list[str], headings: list[Heading], literal: set[int]) -> dict[int, tuple[str, ...]]:
    """The names an option list's item or a definition list's term declares, as docutils reads the
    two: an item that starts with options (``-h, --help``, ``--named-conf=<PATH>``, ``-c FILE``)
    and has its description two blanks after them or on the lines below, indented; a term, a line
    whose next line is indented deeper, its definition. Each is read as a manual titles what it
    defines (:func:`item_names`): a term in an inline literal alone as code, any other only when
    it is spelt as a name (``--gmysql``); a word (``dnssec``) or a phrase declares nothing. Each
    starts after a blank line, after the indented body of the item before it, or as the first line
    of a term's definition (a definition list in a definition: ``General:`` over ``BORG_REPO``),
    and an option list's item right after the one before it too."""
    taken = {number for heading in headings for number in heading.lines}
    declared: dict[int, tuple[str, ...]] = {}
    option_items: set[int] = set()  # the lines that start an option list's item
    for index, line in enumerate(lines):
        number, stripped = index + 1, line.strip()
        if not stripped or number in literal or number in taken or stripped[0] in _NOT_A_TERM_START:
            continue
        indent = len(line) - len(line.lstrip())
        before = lines[index - 1] if index else ""
        # a line indented other than the text of the line before starts a block: after an item's
        # body, or as the first line of a term's definition, which may itself be a list (a term
        # over terms); a list item's text goes on at its column, after its bullet
        before_text = before.lstrip()
        before_indent = len(before) - len(before_text)
        if bullet := _LIST_START.match(before_text):
            before_indent += len(before_text) - len(before_text[bullet.end() :].lstrip())
        starts_item = not before_text or before_indent != indent
        after = lines[index + 1] if index + 1 < len(lines) else ""
        body_below = bool(after.strip()) and len(after) - len(after.lstrip()) > indent
        option = _OPTION_ITEM.match(stripped)
        if (
            option
            and (starts_item or number - 1 in option_items)
            and (body_below or option.end() < len(stripped))
        ):
            option_items.add(number)
            names = item_names(option["options"], code=True)
        elif starts_item and body_below and not stripped.endswith("::") and not _LIST_START.match(stripped):
            names = _term_names(stripped.split(" : ", 1)[0])
        else:
            continue
        if names:
            declared[number] = names
    return declared


def _term_names(term: str) -> tuple[str, ...]:
    """The names a definition list's term declares: an inline literal alone read as code, any
    other term without its emphasis marks, as prose is."""
    literal = _WHOLE_LITERAL.fullmatch(term)
    if literal:
        return item_names(literal.group(1), code=True)
    return item_names(term.replace("*", ""), code=False)


def definition_headings(
    lines: list[str], headings: list[Heading], directives: dict[int, tuple[str, ...]], literal: set[int]
) -> list[Heading]:
    """The object directives that declare names on their own line (``directives``) as headings under
    the section they lie in, one under another where a directive lies in the body of the one before
    (a method in a class's), as source code's definitions are (:mod:`indexer.formats.code`): a section
    too long for a chunk is cut before a definition's ``..`` line rather than in its description, the
    chunk that declares its names holds what the page says of it, and a chunk of a long description
    is headed by what it describes. A definition's body is its indented block: the first line back
    at its indentation or less resumes its container's heading (the class's, or the section's), as
    code after a function resumes its module's. One pass down the lines."""
    level = max((heading.level for heading in headings), default=0) + 1
    titles = {heading.line: heading for heading in headings}
    found: list[Heading] = []
    section: Heading | None = None
    bodies: list[tuple[int, Heading]] = []  # the definitions whose bodies hold the line: indent, heading
    for number, line in enumerate(lines, 1):
        if number in titles:
            section, bodies = titles[number], []
            continue
        if not line.strip() or number in literal:
            continue
        indent = len(line) - len(line.lstrip())
        ended = bool(bodies) and indent <= bodies[-1][0]
        while bodies and indent <= bodies[-1][0]:
            bodies.pop()
        title = _definition_title(line.strip()) if number in directives else ""
        if title:
            heading = Heading(number, level + len(bodies), title)
            found.append(heading)
            bodies.append((indent, heading))
        elif ended and (container := bodies[-1][1] if bodies else section):
            found.append(Heading(number, container.level, container.title))
    return found


def _definition_title(directive: str) -> str:
    """The title of the heading of the object directive ``directive`` (a line, stripped): the names
    its argument gives as written (``tick``, ``Pin.irq``, ``-v, --verbose``), as code's outline
    titles a definition by its name; none for a module's, whose description is the rest of the page,
    not an indented body."""
    found = _DIRECTIVE.match(directive)
    if found is None or found.group(1).lower().endswith(_PAGE_DIRECTIVE):
        return ""
    argument = directive[found.end() :].strip()
    return ", ".join(argument_names(argument)) or argument


def unseen_lines(lines: list[str], headings: list[Heading], in_literal: set[int]) -> set[int]:
    """Lines of explicit markup that show nothing (with their indented continuation), and the
    docinfo field list: at the top of the page, or right after its first title."""
    unseen: set[int] = set()
    index = 0
    while index < len(lines):
        stripped = lines[index].strip()
        directive = _DIRECTIVE.match(stripped)
        if index + 1 not in in_literal and (
            _UNSEEN.match(stripped)
            or (directive and directive.group(1).lower() in UNSEEN_DIRECTIVES)
            or (directive and directive.group(1).lower() == "only" and not _on_a_web_page(stripped))
        ):
            end = _explicit_end(lines, index)
            unseen.update(range(index + 1, end + 1))
            index = end
            continue
        index += 1
    return unseen | _docinfo(lines, headings, unseen)


def _on_a_web_page(line: str) -> bool:
    """Whether the content of an ``.. only::`` directive may show on the page Sphinx builds for the
    web: its expression of tags (``not latex``, ``html or epub``, ``(man and not html)``) read with
    the HTML builder's tags true and other builders' false. A tag it does not know (a project's own,
    ``is_release``) may be either, so the content is read; the expression is read in one pass."""
    words = _ONLY_WORDS.findall(line.split("::", 1)[1])[:_MOST_ONLY_WORDS]
    value, end = _only_joined(words, 0)
    return value is not False or end != len(words)  # an expression it cannot read: shown


def _only_joined(words: list[str], at: int, joiner: str = "or") -> tuple[bool | None, int]:
    """``a or b or ...`` (each of ``a and b and ...``) from ``words[at]``: its value (None:
    unknown) and where it ends. The value one operand has alone decides (True an ``or``, False an
    ``and``); else an unknown operand leaves it unknown."""
    deciding = joiner == "or"
    value, at = _only_joined(words, at, "and") if deciding else _only_term(words, at)
    while at < len(words) and words[at] == joiner:
        right, at = _only_joined(words, at + 1, "and") if deciding else _only_term(words, at + 1)
        value = deciding if deciding in (value, right) else None if None in (value, right) else not deciding
    return value, at


def _only_term(words: list[str], at: int) -> tuple[bool | None, int]:
    """A tag, ``not`` a term, or an expression in parentheses from ``words[at]``. An expression that
    ends too soon (``latex and``) or leaves a parenthesis open ends past the words, which
    :func:`_on_a_web_page` reads as one it cannot read."""
    if at >= len(words):
        return None, len(words) + 1
    word = words[at]
    if word == "not":
        value, at = _only_term(words, at + 1)
        return (None if value is None else not value), at
    if word == "(":
        value, at = _only_joined(words, at + 1)
        return value, at + 1 if at < len(words) and words[at] == ")" else len(words) + 1
    return (True if word in _WEB_TAGS else False if word in _OTHER_BUILDER_TAGS else None), at + 1


def _explicit_end(lines: list[str], index: int) -> int:
    """The 1-based last line of the explicit markup block starting at ``lines[index]``: its first
    line and the lines indented deeper than it (blank lines between them included)."""
    indent = len(lines[index]) - len(lines[index].lstrip())
    end = index + 1
    following = index + 1
    while following < len(lines):
        line = lines[following]
        if line.strip():
            if len(line) - len(line.lstrip()) <= indent:
                break
            end = following + 1
        following += 1
    return end


def _docinfo(lines: list[str], headings: list[Heading], unseen: set[int]) -> set[int]:
    """The field list docutils reads as the page's metadata: the first thing on the page, or the
    first thing after the page's first title."""
    starts = [1]
    if headings:
        starts.append(max(headings[0].lines) + 1)
    found: set[int] = set()
    for start in starts:
        number = start
        while number <= len(lines) and (not lines[number - 1].strip() or number in unseen):
            number += 1
        if number > len(lines) or not _FIELD.match(lines[number - 1]):
            continue
        while number <= len(lines) and (
            _FIELD.match(lines[number - 1]) or lines[number - 1][:1] in (" ", "\t")
        ):
            found.add(number)
            number += 1
    return found


def _transitions(lines: list[str], in_literal: set[int]) -> set[int]:
    """Transition lines: a run of four or more of one punctuation character between blank lines."""
    return {
        number
        for number, line in enumerate(lines, 1)
        if number not in in_literal
        and len(line.strip()) >= SHORTEST_SHORT_UNDERLINE
        and _is_adornment(line)
        and (number == 1 or not lines[number - 2].strip())
        and (number == len(lines) or not lines[number].strip())
    }


def rst_structure(
    lines: list[str],
) -> tuple[list[Heading], list[tuple[int, int]], dict[int, tuple[str, ...]]]:
    """Titles (level by first appearance of their adornment style), literal line ranges, and the
    names each title declares on its first line, as a Markdown title does (:func:`title_names`:
    code alone, ````config.inicfg```` or ``:func:`pytest.skip```, or a config key's name; ``Passing
    ``msg=`` to ...`` declares nothing)."""
    headings: list[Heading] = []
    declared: dict[int, tuple[str, ...]] = {}
    literal: list[tuple[int, int]] = []
    styles: list[tuple[str, bool]] = []
    body_indent: int | None = None  # inside a literal block: lines indented deeper than this
    literal_start = literal_end = 0
    after_blank = True
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if body_indent is not None:
            if not stripped or indent > body_indent:
                if stripped:
                    literal_start = literal_start or index + 1
                    literal_end = index + 1
                after_blank = not stripped
                index += 1
                continue
            if literal_start:
                literal.append((literal_start, literal_end))
            body_indent = None
        if not stripped:
            after_blank = True
            index += 1
            continue
        title = _title_at(lines, index) if indent == 0 and after_blank else None
        if title is not None:
            style, text, used = title
            if style not in styles:
                styles.append(style)
            pieces = title_pieces(text)
            headings.append(
                Heading(index + 1, styles.index(style) + 1, _shown_title(pieces, text), index + used)
            )
            if names := title_names(pieces):
                declared[index + 1] = names
            index += used
            after_blank = False
            continue
        if after_blank and stripped.startswith(">>>"):
            end = _paragraph_end(lines, index)
            literal.append((index + 1, end))
            index = end
            after_blank = False
            continue
        directive = _DIRECTIVE.match(stripped)
        if (directive and directive.group(1).lower() in LITERAL_DIRECTIVES) or (
            stripped.endswith("::") and not directive
        ):
            body_indent, literal_start, literal_end = indent, 0, 0
        after_blank = False
        index += 1
    if body_indent is not None and literal_start:
        literal.append((literal_start, literal_end))
    return headings, literal, declared


def _title_at(lines: list[str], index: int) -> tuple[tuple[str, bool], str, int] | None:
    """The (style, title, lines used) of a section title starting at ``lines[index]``, if any."""
    line = lines[index].rstrip()
    following = lines[index + 1].rstrip() if index + 1 < len(lines) else ""
    if _is_adornment(line):  # an overline: title text, then the same adornment under it
        under = lines[index + 2].rstrip() if index + 2 < len(lines) else ""
        text = following.strip()
        if text and not _is_adornment(following) and under[:1] == line[0] and _is_adornment(under):
            return (line[0], True), text, 3
        return None
    if not _is_adornment(following) or following.startswith((" ", "\t")):
        return None
    if len(following) < len(line) and len(following) < SHORTEST_SHORT_UNDERLINE:
        return None
    return (following[0], False), line.strip(), 2


def _is_adornment(line: str) -> bool:
    """Whether ``line`` is one punctuation character repeated (then blanks): a title's adornment or
    a transition. Counted rather than matched with a repeated back reference, which grows faster
    than the line on a long one."""
    marks = line.rstrip()
    return bool(marks) and marks[0] in string.punctuation and marks.count(marks[0]) == len(marks)


def _paragraph_end(lines: list[str], index: int) -> int:
    """The 1-based number of the last line of the paragraph that starts at ``lines[index]``."""
    end = index
    while end + 1 < len(lines) and lines[end + 1].strip():
        end += 1
    return end + 1


def shown_pieces(text: str, document: Document) -> dict[int, tuple[str, ...]]:
    """What a page shows of the lines of block markup, for a snippet (1-based line: its pieces; none:
    nothing): a directive's line (see :data:`ADMONITIONS`) and its options (nothing but a caption), a
    list-table's cells without their ``* -`` marks, a csv-table's rows as their cells, and the rows
    of simple and grid tables as their cells, their borders as nothing. Lines of literal blocks are
    code, shown as written. A line block's line shows its text without its ``|``. One pass down the
    lines, each read once.

    A chunk starts where the chunk before it ended, which may be inside a directive: when its first
    line is indented and is a list-table's row or cell (``* -``, ``-``) or a directive's option (a
    field whose name is one word, not one of Sphinx's info fields), the directive's line is in the
    chunk before, and the chunk is read as its content or its options."""
    lines = document.lines
    literal = {number for first, last in document.literal for number in range(first, last + 1)}
    pieces, _ = _table_pieces(lines, literal)
    tables: list[tuple[int, bool]] = []  # the list- and csv-tables open: their indent, and if CSV
    first = next((number for number, line in enumerate(lines, 1) if line.strip()), 0)
    if first and first not in literal and lines[first - 1][:1].isspace():
        opening = lines[first - 1]
        indent = len(opening) - len(opening.lstrip())
        if _LIST_CELL.match(opening.lstrip()):  # a nested list's ``-`` shows as a bullet, not a dash
            tables.append((0, False))  # to the next unindented line: its rows' marks may be less indented
        elif (option := _OPTION.match(opening.lstrip())) and option["name"] not in INFO_FIELDS:
            directive_options(lines, first - 1, indent - 1, pieces)
    number = 0
    while number < len(lines):
        number += 1
        line = lines[number - 1]
        stripped = line.strip()
        if not stripped or number in literal:
            continue
        indent = len(line) - len(line.lstrip())
        while tables and indent <= tables[-1][0]:
            tables.pop()
        directive = _DIRECTIVE.match(stripped) if stripped.startswith("..") else None
        if directive is not None:
            name, argument = directive.group(1).lower(), stripped[directive.end() :].strip()
            pieces[number] = directive_pieces(name, argument)
            number = directive_options(lines, number, indent, pieces)
            if name in ("list-table", "csv-table"):
                tables.append((indent, name == "csv-table"))
        elif tables and tables[-1][1]:
            cells = next(csv.reader([stripped], skipinitialspace=True))
            pieces[number] = tuple(cell.strip() for cell in cells if cell.strip())
        elif tables and (mark := _LIST_CELL.match(stripped)):
            pieces[number] = (stripped[mark.end() :],) if stripped[mark.end() :] else ()
        elif (stripped == "|" or stripped.startswith("| ")) and number not in pieces:
            pieces[number] = (stripped[2:],) if stripped[2:].strip() else ()  # a line block's line
    return {number: shown for number, shown in pieces.items() if number not in document.markup}


def directive_options(lines: list[str], number: int, indent: int, pieces: dict[int, tuple[str, ...]]) -> int:
    """Take the options of the directive on line ``number`` (at ``indent``) into ``pieces``,
    showing nothing but a caption; the number of the last line taken (:func:`options_end`)."""
    end = options_end(lines, number, indent)
    for option in range(number + 1, end + 1):
        caption = _CAPTION.match(lines[option - 1].strip())
        pieces[option] = (caption.group(1),) if caption else ()
    return end


def options_end(lines: list[str], number: int, indent: int) -> int:
    """The number of the last line of the options of the directive on line ``number`` (at
    ``indent``): the field list right after it, indented deeper; ``number`` when it has none."""
    while (
        number < len(lines)
        and _FIELD.match(lines[number].strip())
        and len(lines[number]) - len(lines[number].lstrip()) > indent
    ):
        number += 1
    return number


def _moved_to_titles(
    definitions: dict[int, tuple[str, ...]], lines: list[str], headings: list[Heading]
) -> dict[int, tuple[str, ...]]:
    """``definitions`` with each directive that has no content of its own (its options aside) right
    before a section titled with a name it declares moved to the title's first line: ``.. setting::
    LOG_LEVEL`` then a section titled ``LOG_LEVEL`` defines that section (as a label before a title
    targets it), and the name belongs to the chunk that holds what the section says, not to the one
    before it that ends on the directive. A section titled otherwise is not the directive's: an
    ``autoclass`` has no content written, and the section after it is the page's next subject."""
    titles = {heading.line: heading.title for heading in headings}
    moved: dict[int, tuple[str, ...]] = {}
    for number, names in definitions.items():
        directive = lines[number - 1]
        following = options_end(lines, number, len(directive) - len(directive.lstrip()))
        while following < len(lines) and not lines[following].strip():  # lines[following]: the next line
            following += 1  # then past blank lines: a field list after one is content
        titled = titles.get(following + 1) in names
        moved[following + 1 if titled else number] = names
    return moved


def directive_pieces(name: str, argument: str) -> tuple[str, ...]:
    """What a page shows of a directive's line (``name``, lower case, and its ``argument``): see
    :data:`ADMONITIONS`. MyST's Markdown writes the same directives as fenced blocks."""
    if name in ADMONITIONS:
        return (f"{ADMONITIONS[name]}: {argument}" if argument else ADMONITIONS[name],)
    if name in VERSION_NOTES:
        version, _, note = argument.partition(" ")
        if not version:
            return (VERSION_NOTES[name],)
        return (f"{VERSION_NOTES[name]} {version}" + (f": {note.strip()}" if note.strip() else "."),)
    if argument and name in TITLED_DIRECTIVES:
        return (argument,)
    if argument and (describes_object(name) or name.startswith(AUTODOC_PREFIX)):
        return (f"`{argument}`",)  # a signature is code, shown as an inline literal is
    return ()


def _table_pieces(
    lines: list[str], literal: set[int]
) -> tuple[dict[int, tuple[str, ...]], dict[int, tuple[range, str]]]:
    """The borders of simple and grid tables (nothing) and their rows (their cells, cut where the
    border above them sets the columns apart); and each grid table row as the model reads it
    (:func:`_row_read`), by its first line: its lines, and their cells read together. A simple
    table's rows run from a border to a blank line, a grid table's while its lines start with ``|``
    or ``+``.

    A chunk starts where the chunk before it ended, which may be inside a table, its top border in
    that chunk: a first line that starts and ends with ``|`` is a grid table's row, cut where its
    pipes are; the lines of the chunk's first block just above a simple table's closing border (a
    border with a blank line after it) are its rows, cut where that border's columns start."""
    pieces: dict[int, tuple[str, ...]] = {}
    rows: dict[int, tuple[range, str]] = {}
    columns: list[int] = []  # where the open simple table's columns start
    edges: list[int] = []  # where the open grid table's border has a ``+``
    grid_row: list[tuple[int, list[int], list[str]]] = []  # the grid row's lines: number, cuts, cells
    first = next((number for number, line in enumerate(lines, 1) if line.strip()), 0)
    if (
        first
        and first not in literal
        and len(opening := lines[first - 1].strip()) > 1
        and opening[0] == opening[-1] == "|"
    ):
        edges = [place for place, character in enumerate(lines[first - 1]) if character == "|"]
    first_blank = next(
        (number for number in range(max(first, 1), len(lines) + 1) if not lines[number - 1].strip()), 0
    )
    first_blank = first_blank or len(lines) + 1  # the first block's end: a blank line, or the end
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if grid_row and not (edges and stripped[:1] in ("|", "+") and number not in literal):
            _end_row(grid_row, pieces, rows)  # a row ends at a border, or where its table does
            grid_row = []
        if number in literal or not stripped:
            columns, edges = [], []
            continue
        if _is_simple_border(stripped, "=") or (columns and _is_simple_border(stripped, "-")):
            closing = number == len(lines) or not lines[number].strip()
            if not columns and closing and number <= first_blank:
                starts = [found.start() for found in re.finditer("=+", line)]
                pieces.update(
                    {above: _simple_row(lines[above - 1], starts) for above in range(first, number)}
                )
            pieces[number] = ()  # a border, or the underline of a column span's cells
            columns = columns if stripped[0] == "-" else [found.start() for found in re.finditer("=+", line)]
            continue
        if _is_grid_border(stripped):
            if grid_row:
                _end_row(grid_row, pieces, rows)
                grid_row = []
            pieces[number] = ()
            edges = [place for place, character in enumerate(line) if character == "+"]
            continue
        if columns:
            pieces[number] = _simple_row(line, columns)
        elif edges and stripped[0] in "|+":
            cuts = [place for place in edges[: bisect.bisect_left(edges, len(line))] if line[place] in "|+"]
            cuts.append(len(line.rstrip().removesuffix("|")))  # what a row holds past its border's end
            grid_row.append(
                (
                    number,
                    cuts,
                    [line[start + 1 : end].strip() for start, end in zip(cuts, cuts[1:], strict=False)],
                )
            )
        else:
            columns, edges = [], []
    if grid_row:
        _end_row(grid_row, pieces, rows)
    return pieces, rows


def _end_row(
    row: list[tuple[int, list[int], list[str]]],
    pieces: dict[int, tuple[str, ...]],
    rows: dict[int, tuple[range, str]],
) -> None:
    """Take a grid table's row (its lines' numbers, cuts and cells) into ``rows`` as the model reads
    it, then into ``pieces`` as a page shows its lines (:func:`_grid_row`, which reads the cells'
    inline markup in place)."""
    rows[row[0][0]] = (range(row[0][0], row[-1][0] + 1), _row_read(row))
    pieces.update(_grid_row(row))


def _row_read(row: list[tuple[int, list[int], list[str]]]) -> str:
    """A grid table's row as one line of its cells, ``|`` between them: each cell's lines joined,
    column by column where the row's lines are cut alike (line by line where a cell spans columns),
    without the frame and padding that make a wide table's row a line of spaces and dashes."""
    if len({tuple(cuts) for _, cuts, _ in row}) == 1:
        columns = [list(column) for column in zip(*(cells for _, _, cells in row), strict=True)]
    else:
        columns = [[cell] for _, _, line_cells in row for cell in line_cells]
    cells = (" ".join(_cell_text(part) for part in column).split() for column in columns)
    return " | ".join(" ".join(cell) for cell in cells if cell)


def _cell_text(part: str) -> str:
    """A grid table cell's text on one line as read: none where the line is a border between the
    rows of spanned columns (``-----``), without the ``|`` of a line block written in the cell."""
    if set(part) <= {"-", "=", "+", " "}:
        return ""
    return part[2:] if part.startswith("| ") or part == "|" else part


def table_reading(
    lines: list[str], literal: set[int]
) -> tuple[set[int], dict[int, str], dict[int, tuple[str, ...]]]:
    """What the model reads of a page's tables (:attr:`Document.read_as`), the lines it reads
    nothing of (:attr:`Document.markup`), and the options a row declares: a grid table as its
    cells, each row on its first line (:func:`_row_read`), its other lines and borders markup; a
    simple table's rows as written, its rules markup. Read raw, a wide grid table is mostly spaces,
    dashes and pipes, so its chunks hold a row or two each and read as nothing in particular, near
    to any question. A row whose first cell with text is options in inline literals alone
    (``| | ``-n``, ``--dry-run`` | do not create a backup archive |``, as a command's reference
    tabulates them) declares them (:func:`~indexer.formats.definitions.option_cell_names`)."""
    pieces, rows = _table_pieces(lines, literal)
    in_rows = {number for numbers, _ in rows.values() for number in numbers}
    markup = {number for number, shown in pieces.items() if not shown and number not in in_rows}
    read_as: dict[int, str] = {}
    for first, (numbers, read) in rows.items():
        markup.update(numbers[1:] if read else numbers)
        if read:
            read_as[first] = read
    names = {
        number: found
        for number, cells in pieces.items()
        if cells and "`" in cells[0] and (found := option_cell_names(_literal_pieces(cells[0])))
    }
    return markup, read_as, names


def _literal_pieces(text: str) -> list[tuple[bool, str]]:
    """A cell's inline literals and the text between them, each marked whether it is a literal:
    written ````--all````, or in the one pair of backticks a row over several lines is read with
    (:func:`inline_text`)."""
    parts = _CELL_LITERAL.split(text.replace("``", "`"))
    return [(place % 2 == 1, part) for place, part in enumerate(parts) if part]


def _grid_row(row: list[tuple[int, list[int], list[str]]]) -> dict[int, tuple[str, ...]]:
    """A grid table's row (its lines' numbers, cuts and cells) as each line's cells: a cell's text
    over the row's lines read together (a role or a reference may end on its next line), line for
    line, when the row's lines are cut alike; each line's alone where cells span columns."""
    if len({tuple(cuts) for _, cuts, _ in row}) == 1 and len(row) > 1:
        for column in range(len(row[0][2])):
            read = inline_text("\n".join(cells[column] for _, _, cells in row)).split("\n")
            if len(read) == len(row):
                for (_, _, cells), text in zip(row, read, strict=True):
                    cells[column] = text.strip()
    return {
        number: tuple(cell for cell in cells if cell and not set(cell) <= {"-", "="})
        for number, _, cells in row
    }


def _simple_row(line: str, columns: list[int]) -> tuple[str, ...]:
    """A simple table's row as its cells: cut where each column starts, unless text runs on
    across the blank between two columns (a cell spanning them)."""
    starts = columns[1 : bisect.bisect_left(columns, len(line))]
    cuts = [0, *(start for start in starts if line[start - 1].isspace()), len(line)]
    cells = (line[start:end].strip() for start, end in zip(cuts, cuts[1:], strict=False))
    return tuple(cell for cell in cells if cell)


def _is_simple_border(stripped: str, mark: str) -> bool:
    """A simple table's border (``mark`` ``=``; ``-``: the underline of a column span's cells): runs
    of ``mark`` set apart by spaces, two columns at least (one alone is a title's adornment or a
    transition)."""
    return stripped[0] == mark and " " in stripped and set(stripped) == {mark, " "}


def _is_grid_border(stripped: str) -> bool:
    """A grid table's border: ``+`` at both ends, ``-`` or ``=`` between them (``+----+----+``)."""
    return (
        len(stripped) >= 3
        and stripped[0] == stripped[-1] == "+"
        and set(stripped) in ({"+", "-"}, {"+", "="})
    )


def inline_text(text: str) -> str:
    """Lines' inline markup (a paragraph's, read together: a reference or emphasis may end on a
    later line) read as the words a rendered page shows, line for line, for a reader of a snippet:
    a hyperlink reference (```text <url>`_``, ```text`_``, ``name_``) as its text, emphasis and
    strong emphasis without their stars, a role as its text (``:ref:`text <label>``` reads
    ``text``; with no text, its target: Sphinx shows the title there, which the line does not hold),
    ``:pep:`8``` as ``PEP 8``. Code stays code: an inline literal, a role naming code
    (``:func:`name```) and text in the default role show as one pair of backticks around their
    characters as written."""
    if not any(mark in text for mark in "`*_"):
        return text
    pieces = _CODE.split(text)  # code at the odd places
    for place in range(0, len(pieces), 2):
        prose = _HYPERLINK.sub(lambda found: _reference_text(found.group(1)), pieces[place])
        prose = _SIMPLE_REFERENCE.sub(r"\1", prose) if "_" in prose else prose
        pieces[place] = _EMPHASIS.sub(r"\1", _STRONG.sub(r"\1", prose)) if "*" in prose else prose
    for place in range(1, len(pieces), 2):
        code, role = pieces[place], _ROLE.fullmatch(pieces[place])
        pieces[place] = role_text(role[1], role[2]) if role else code[1:-1] if code.startswith("``") else code
    return "".join(pieces)


def _shown_title(pieces: list[tuple[bool, str]], title: str) -> str:
    """A section title as it shows (its texts, :func:`title_pieces`): its inline markup read, code
    without its backticks, as a page sets a title's code apart by its font alone; as written when
    that shows nothing (an empty literal)."""
    return " ".join("".join(text for _, text in pieces).split()) or title


def title_pieces(title: str) -> list[tuple[bool, str]]:
    """A title's texts as a page shows them (:func:`inline_text`), each marked whether it is code:
    an inline literal, or a role naming code (``:class:`~pytest.Item``` shows ``Item``)."""
    pieces: list[tuple[bool, str]] = []
    for place, piece in enumerate(_CODE.split(title)):
        shown = inline_text(piece)
        code = place % 2 == 1 and _SHOWN_CODE.fullmatch(shown)
        pieces.append((True, code[1]) if code else (False, shown))
    return pieces


def role_text(role: str, text: str) -> str:
    """What a role (``role``, its ``text`` between backticks) shows: its text, else its target's;
    ``~`` shortens a dotted name to its last part; code in backticks. MyST's Markdown writes the
    same roles as ``{role}`text```."""
    role, text = role.lower().removeprefix("py:"), _reference_text(text)
    if role in NUMBERED_ROLES:
        return f"{NUMBERED_ROLES[role]} {text}"
    if role in PROSE_ROLES:
        return text
    text = text.lstrip("!")
    if text.startswith("~"):
        text = text[1:].rsplit(".", 1)[-1]
    return f"`{text}`"


def _reference_text(text: str) -> str:
    """``text <target>`` as its text (the target when there is none), anything else as it is; the
    line breaks of what is left out are kept, so the lines after it stay where they were."""
    if text.endswith(">") and "<" in text:
        shown, _, target = text[:-1].rpartition("<")
        read = " ".join(shown.split()) or " ".join(target.split())
        return read + "\n" * (text.count("\n") - read.count("\n"))
    return text
