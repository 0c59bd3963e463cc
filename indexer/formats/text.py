"""Plain text: decoding bytes, whatever the encoding, and text files read as lines.

A text file with no markup a reader knows (``README``, ``FAQ``, ``TODO``, ``NEWS.gz``) is read as
lines, with the structure plain text declares by conventions older than any markup:

- a changelog's entries, as its format declares them (:mod:`indexer.formats.changes`);
- a title underlined by one punctuation character repeated about as long as it is (``lftp`` over
  ``~~~~``), as Markdown's setext headings and reStructuredText's titles write it, each character a
  level in the order the file first uses them; a line of dashes under a sentence of another length
  is a rule, not a title's underline;
- a FAQ's questions: lines at column 0 that start ``Q:`` (or ``Q.``), each answered by an ``A:``
  line after it, two at least: each question opens a block, which its answer is read in. Not a
  heading: a chunk packs several short entries, and would be headed by its first question alone.

UTF-8 (with or without BOM) and UTF-16 with a BOM are taken as such. Anything else is handed to
charset-normalizer, which tries every codec Python has and keeps those whose result reads least like
noise. On short Western European text several single-byte codecs tie (a French note decodes the same
in cp1250 and cp1252 except for its 'è'), and charset-normalizer's first pick is then often wrong;
cp1252, the most common legacy encoding of Western text (HTML5 reads 'latin-1' as cp1252 too), wins
such a tie.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import replace

from indexer.formats.changes import changelog_headings
from indexer.formats.definitions import man_page_names
from indexer.formats.document import Document, Heading, UnreadableFile, split_lines

BINARY_SNIFF_BYTES = 8192
PREFERRED_LEGACY = "cp1252"
#: how much more "noise" (charset-normalizer's chaos, 0..1) cp1252 may show than the best candidate and
#: still win: on a 150-byte French note cp1252 scored 0.0 like cp1250, on a repeated German/French
#: line 0.036 against mac_latin2's 0.028, where mac_latin2 turned every 'é' into 'Ú'
TIE_MARGIN = 0.01
#: What a terminal acts on and never prints, as ECMA-48 defines it: a control sequence (``ESC [``,
#: its parameters, intermediates and final byte: colours, cursor moves), an operating system command
#: (``ESC ]`` up to its terminator: a window title, a hyperlink's address), a two-byte escape
#: (``ESC (`` and a character set, ``ESC 7``), and the other C0 controls but the tab. A captured
#: terminal session or a log written in colour holds them between its words.
_TERMINAL_CONTROL = re.compile(
    r"\x1b\[[0-?]{0,64}[ -/]{0,16}[@-~]?"
    r"|\x1b\][^\x07\x1b]{0,512}(?:\x07|\x1b\\)?"
    r"|\x1b[ -/]{0,4}[0-~]?"
    r"|[\x00-\x08\x0b-\x1f\x7f]"
)
#: The characters a title's underline repeats (Markdown's setext ``=`` and ``-``, and
#: reStructuredText's other adornments).
_UNDERLINE_CHARACTERS = frozenset("=-~^*+#")
#: The longest line taken for a title: a title is short.
MAX_TITLE_CHARS = 80
#: How many characters an underline may be shorter or longer than its title, and still be one.
UNDERLINE_SLACK = 2
#: A FAQ's question and answer at column 0: ``Q:`` or ``Q.``, then its text.
_QUESTION = re.compile(r"Q[:.][ \t]+\S")
_ANSWER = re.compile(r"A[:.](?:[ \t]|$)")
#: The fewest answered questions that make a file a FAQ: one may be a line that looks like one.
MIN_QUESTIONS = 2
#: The most lines a question runs to before its answer.
MAX_QUESTION_LINES = 4
#: A character every one of those holds: an escape or another C0 control, but the tab.
_CONTROL_CHARACTER = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def decode(data: bytes) -> tuple[str, str]:
    """The text of a file's bytes and the encoding it was read with, or :class:`UnreadableFile`."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16"), "utf-16"
        except UnicodeDecodeError as error:
            raise UnreadableFile(
                f"cannot be decoded as UTF-16 (byte {error.start})", status="encoding"
            ) from error
    if looks_binary(data):
        raise UnreadableFile("binary file (contains NUL bytes)", status="binary")
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        return _decode_legacy(data)


def looks_binary(head: bytes) -> bool:
    """Whether a file's first bytes hold a NUL, as no text does (UTF-16 with its BOM aside)."""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    return b"\x00" in head[:BINARY_SNIFF_BYTES]


def _decode_legacy(data: bytes) -> tuple[str, str]:
    # imported here: most files are UTF-8, and `index query` never decodes a file
    from charset_normalizer import from_bytes

    matches = from_bytes(data)
    best = matches.best()
    if best is None:
        raise UnreadableFile("not UTF-8, and no known text encoding fits it", status="encoding")
    for match in matches:
        if match.chaos <= best.chaos + TIE_MARGIN and PREFERRED_LEGACY in match.could_be_from_charset:
            return data.decode(PREFERRED_LEGACY), PREFERRED_LEGACY
    return str(best), best.encoding


def read_plain(text: str, encoding: str) -> Document:
    """Plain notes and data: lines, with no headings but those a changelog's format declares for its
    entries (:mod:`indexer.formats.changes`: a Debian changelog, a GNU ChangeLog or NEWS, systemd's
    NEWS, dated releases) and underlined titles, and a FAQ's questions as blocks (this module's
    docstring; a ``#`` line is no heading); the names of a man page saved as text (``ls.1``), from its NAME
    line."""
    lines = split_lines(text)
    headings, read_as = changelog_headings(lines)
    underlined = underlined_titles(lines)
    taken = {heading.line for heading in headings}
    for heading in underlined:
        if not taken.intersection(heading.lines):
            headings.append(heading)
            taken.update(heading.lines)
    headings.sort(key=lambda heading: heading.line)
    return Document(
        lines=lines,
        headings=headings,
        read_as=read_as,
        markup=frozenset(heading.last_line for heading in underlined if heading.line in taken),
        block_starts=faq_questions(lines),
        encoding=encoding,
        definitions=man_page_names(lines),
    )


def underlined_titles(lines: list[str]) -> list[Heading]:
    """The titles ``lines`` underline (this module's docstring): a short line with text after a
    blank line (or first in the file), then a line of one punctuation character repeated, as long
    as the title give or take :data:`UNDERLINE_SLACK`; the title's level is its character's, in
    the order the file first uses them."""
    levels: dict[str, int] = {}
    headings: list[Heading] = []
    for index in range(1, len(lines)):
        title, underline = lines[index - 1].rstrip(), lines[index].rstrip()
        if _underlines(underline, title) and (index == 1 or not lines[index - 2].strip()):
            level = levels.setdefault(underline[0], len(levels) + 1)
            headings.append(Heading(index, level, " ".join(title.split()), last_line=index + 1))
    return headings


def _underlines(underline: str, title: str) -> bool:
    """Whether ``underline`` is a title's underline under ``title``: one character of
    :data:`_UNDERLINE_CHARACTERS` repeated, as long as a short title with a word in it, give or take
    :data:`UNDERLINE_SLACK`."""
    if not underline or underline[0] not in _UNDERLINE_CHARACTERS:
        return False
    if underline.count(underline[0]) != len(underline) or len(title) > MAX_TITLE_CHARS:
        return False
    return abs(len(underline) - len(title)) <= UNDERLINE_SLACK and any(c.isalnum() for c in title)


def faq_questions(lines: list[str]) -> list[int]:
    """The lines (1-based) of a FAQ's questions written as ``Q:`` and ``A:`` lines at column 0
    (this module's docstring), each answered by an ``A:`` line within :data:`MAX_QUESTION_LINES`;
    none unless :data:`MIN_QUESTIONS` are answered."""
    questions: list[int] = []
    asked = 0  # the open question's line
    for number, line in enumerate(lines, start=1):
        if _QUESTION.match(line):
            asked = number
        elif asked and _ANSWER.match(line):
            questions.append(asked)
            asked = 0
        elif asked and number - asked >= MAX_QUESTION_LINES:
            asked = 0  # a line that starts ``Q:`` among others, answered by none
    return questions if len(questions) >= MIN_QUESTIONS else []


def without_terminal_controls(document: Document) -> Document:
    """``document`` with what the model reads of each line leaving out what a terminal would act on
    and never print (:data:`_TERMINAL_CONTROL`), whatever the format; a line of that alone is markup.
    The chunk keeps the line as written."""
    if not _CONTROL_CHARACTER.search("\n".join(document.lines)):  # one quick pass: most files hold none
        return document
    read_as = dict(document.read_as)
    shown_nothing = set()
    for number, line in enumerate(document.lines, 1):
        if _TERMINAL_CONTROL.search(line):
            shown = _TERMINAL_CONTROL.sub("", read_as.get(number, line))
            if shown.strip():
                read_as[number] = shown
            else:
                read_as.pop(number, None)
                shown_nothing.add(number)
    return replace(document, read_as=read_as, markup=document.markup | shown_nothing)
