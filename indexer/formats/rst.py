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

Plain-text notes (``.txt``) are read the same way: underlined titles are common there too.
"""

from __future__ import annotations

import re
import string

from indexer.formats.document import Document, Heading, split_lines

_ADORNMENT = re.compile("^([" + re.escape(string.punctuation) + r"])\1*\s*$")
_DIRECTIVE = re.compile(r"^\.\.\s+([\w:.+-]+)::")
LITERAL_DIRECTIVES = frozenset(
    """code code-block sourcecode parsed-literal math productionlist doctest testcode testoutput
    testsetup testcleanup ipython jupyter-execute code-cell prompt raw graphviz digraph graph mermaid
    uml plantuml""".split()
)
SHORTEST_SHORT_UNDERLINE = 4


def read_rst(text: str, encoding: str = "utf-8") -> Document:
    """A reStructuredText (or plain-text) file's lines with its sections and literal blocks."""
    lines = split_lines(text)
    headings, literal = rst_structure(lines)
    return Document(lines=lines, headings=headings, literal=literal, encoding=encoding)


def rst_structure(lines: list[str]) -> tuple[list[Heading], list[tuple[int, int]]]:
    """Titles (level by first appearance of their adornment style) and literal line ranges."""
    headings: list[Heading] = []
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
            headings.append(Heading(index + 1, styles.index(style) + 1, text))
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
    return headings, literal


def _title_at(lines: list[str], index: int) -> tuple[tuple[str, bool], str, int] | None:
    """The (style, title, lines used) of a section title starting at ``lines[index]``, if any."""
    line = lines[index].rstrip()
    following = lines[index + 1].rstrip() if index + 1 < len(lines) else ""
    if _ADORNMENT.match(line):  # an overline: title text, then the same adornment under it
        under = lines[index + 2].rstrip() if index + 2 < len(lines) else ""
        text = following.strip()
        if text and not _ADORNMENT.match(following) and under[:1] == line[0] and _ADORNMENT.match(under):
            return (line[0], True), text, 3
        return None
    underline = _ADORNMENT.match(following)
    if underline is None or following.startswith((" ", "\t")):
        return None
    if len(following) < len(line) and len(following) < SHORTEST_SHORT_UNDERLINE:
        return None
    return (following[0], False), line.strip(), 2


def _paragraph_end(lines: list[str], index: int) -> int:
    """The 1-based number of the last line of the paragraph that starts at ``lines[index]``."""
    end = index
    while end + 1 < len(lines) and lines[end + 1].strip():
        end += 1
    return end + 1
