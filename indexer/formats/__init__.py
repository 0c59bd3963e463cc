"""Reading a file as a document: its text lines and the structure its format's own parser finds.

Between the corpus (which finds files and reads their bytes) and the chunker (which cuts a
:class:`Document` into chunks). One module per format; :func:`read_document` picks one by the file's
extension. Each reader's module is imported when a file of its type is first read (:func:`_reader`),
and a reader that needs a large library imports it only then too: ``index query`` loads none of
them, but the reader of a hit it shows as its page shows it (:func:`shown_text`: a Markdown hit's
snippet loads the Markdown reader alone).

:func:`read_document` is the one place readers are called, so it is where a reader's failure on one
file (a parser's assertion, a damaged archive's ``zlib.error``, a ``RecursionError`` from nesting, a
``MemoryError``) becomes that file's :class:`UnreadableFile`, never the build's.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any, cast

from indexer.formats.compressed import OPENERS, compression_of, expanded, uncompressed_name
from indexer.formats.data import DATA_FORMATS, DATA_READERS, DECLARATION_CHARS, declared_format, read_data
from indexer.formats.document import (
    Document,
    Heading,
    Neighbours,
    Part,
    UnreadableFile,
    split_lines,
    too_much_text,
)
from indexer.formats.info import (
    INFO_TYPE,
    head_looks_binary,
    is_info_name,
    part_globs,
    read_info,
    without_markers,
)
from indexer.formats.roff import is_man_page_name, read_roff
from indexer.formats.text import decode, looks_binary, read_plain, without_terminal_controls
from indexer.records import lead_lines

__all__ = [
    "BUILD_FILE_NAMES",
    "CODE_FILE_NAMES",
    "Document",
    "Heading",
    "Neighbours",
    "Part",
    "SHEBANG",
    "UNPARSED_CODE_EXTENSIONS",
    "UnreadableFile",
    "decode",
    "file_type",
    "head_check",
    "heading_titles",
    "is_source_code",
    "is_unparsed_code",
    "parse_text",
    "read_document",
    "read_extensions",
    "shown_text",
    "split_lines",
    "type_globs",
    "written_name",
]


def _reader(qualified: str) -> Callable[..., Any]:
    """The function ``module.name`` of this package, its module imported when it is first called."""
    module, name = qualified.rsplit(".", 1)

    def call(*arguments: Any) -> Any:
        return getattr(importlib.import_module(f"{__name__}.{module}"), name)(*arguments)

    return call


#: How a script's first line starts: ``#!`` and the interpreter that runs it, whatever its name.
SHEBANG = "#!"
#: Formats read from bytes: they are not text, and carry no encoding.
BINARY_READERS = cast(
    dict[str, Callable[[bytes], Document]],
    {"pdf": _reader("pdf.read_pdf"), "docx": _reader("docx.read_docx")},
)
#: Text formats with structure; source code is read by its language's grammar (:func:`parse_text`),
#: and any other text file by :func:`read_plain`, without headings but a changelog's entries.
TEXT_READERS = cast(
    dict[str, Callable[[str, str], Document]],
    {
        **dict.fromkeys(("md", "markdown"), _reader("markdown.read_markdown")),
        "mdx": _reader("markdown.read_mdx"),
        **dict.fromkeys(("rst", "rest", "txt", "text"), _reader("rst.read_rst")),
        **dict.fromkeys(("html", "htm", "xhtml"), _reader("html.read_html")),
        "ipynb": _reader("notebook.read_notebook"),
        **dict.fromkeys(("adoc", "asciidoc", "asc"), _reader("asciidoc.read_asciidoc")),
        "org": _reader("org.read_org"),
        "tex": _reader("latex.read_latex"),
        **dict.fromkeys(("docbook", "dbk"), _reader("docbook.read_docbook")),
        **dict.fromkeys(("xml", "sgml"), _reader("docbook.read_xml")),
    },
)
#: Formats whose files may declare text they use in other files of the folder (a DocBook file's
#: entities, in its DTD): their readers are given the file's path and its neighbours, to read them.
NEIGHBOUR_READERS = cast(
    dict[str, Callable[[str, str, str, Neighbours], Document]],
    {
        **dict.fromkeys(("docbook", "dbk"), _reader("docbook.read_docbook")),
        **dict.fromkeys(("xml", "sgml"), _reader("docbook.read_xml")),
    },
)
#: How a failure names the reader of each extension ("the HTML reader failed: ..."); source code's
#: is "source code".
READER_NAMES = {
    "pdf": "PDF",
    "docx": "Word",
    **dict.fromkeys(("md", "markdown", "mdx"), "Markdown"),
    **dict.fromkeys(("rst", "rest", "txt", "text"), "reStructuredText"),
    **dict.fromkeys(("html", "htm", "xhtml"), "HTML"),
    "ipynb": "notebook",
    **dict.fromkeys(("adoc", "asciidoc", "asc"), "AsciiDoc"),
    "org": "Org",
    "tex": "LaTeX",
    **dict.fromkeys(("docbook", "dbk", "xml", "sgml"), "DocBook"),
    **{extension: name for extension, (name, _) in DATA_FORMATS.items()},
}
#: How each markup format's inline markup (emphasis, links, roles, code spans...) reads as the words a
#: rendered page shows: for the lines a snippet shows, outside code.
INLINE_READERS = cast(
    dict[str, Callable[[str], str]],
    {
        **dict.fromkeys(("md", "markdown", "mdx"), _reader("markdown.inline_text")),
        **dict.fromkeys(("rst", "rest"), _reader("rst.inline_text")),
        **dict.fromkeys(("adoc", "asciidoc", "asc"), _reader("asciidoc.inline_text")),
        "org": _reader("org.inline_text"),
    },
)
#: Formats whose readers read each line's inline markup themselves (:attr:`Document.read_as` is the
#: line as the page shows it): a snippet shows that reading as it is, since reading it again would
#: take the code it keeps (LaTeX's ``|\\frame|``, read as ``\\frame``) for markup.
READ_AS_SHOWN = frozenset({"tex"})
#: What each markup format's block markup shows of a line where a rendered page shows other than
#: the line's text, for a snippet (1-based line: the pieces it shows; none: nothing): a table row as
#: its cells, without the marks that set them apart; a directive's line as its title, or nothing.
#: The model reads the lines as the reader reads them (:attr:`Document.read_as`), unchanged.
SHOWN_PIECES = cast(
    dict[str, Callable[[str, Document], dict[int, tuple[str, ...]]]],
    {
        **dict.fromkeys(("md", "markdown", "mdx"), _reader("markdown.shown_pieces")),
        **dict.fromkeys(("rst", "rest"), _reader("rst.shown_pieces")),
        **dict.fromkeys(("adoc", "asciidoc", "asc"), _reader("asciidoc.shown_pieces")),
    },
)
#: What sets a table row's cells apart in a snippet, whatever marks its format sets them apart with.
CELL_SEPARATOR = " | "
#: A reader's failure is told in one line of at most this many characters.
MAX_REASON_CHARS = 300
#: The suffixes of a template that Jinja renders into a file of the format named before them
#: (``README.md.jinja``, ``index.html.j2``; cookiecutter, Copier and Ansible write theirs so): its
#: text is that format's, its tags (``{{ name }}``, ``{% if %}``) text among it. A template with no
#: format before them (``requirements.jinja``) is plain text.
TEMPLATE_SUFFIXES = (".jinja2", ".jinja", ".j2")
#: The suffixes of an example copy of the file named before them, which a user copies to that name
#: and edits: a package's ``examples/opendkim.conf.sample`` and ``setup.lua.sample``, a project's
#: ``config.example``, ``phpunit.xml.dist``. Its text is that file's, in that file's format, and it
#: is read where that file would be (:func:`indexer.corpus.is_text_name`).
EXAMPLE_SUFFIXES = (".sample", ".example", ".dist")
#: The suffix of a part of a page written to be included in pages of its format, which is named
#: before it (``create.rst.inc``, as Sphinx projects name the files their pages ``.. include::``;
#: ``header.php.inc``): its text is that format's. A part named for no format a reader reads
#: (``defs.inc``, an assembler's or Pascal's include) is left to the suffix alone.
INCLUDED_SUFFIX = ".inc"


def untemplated_name(name: str) -> str:
    """``name`` as the file its template renders is named: without a template suffix
    (:data:`TEMPLATE_SUFFIXES`), if it has one after a name."""
    return _without_suffix(name, TEMPLATE_SUFFIXES)


def example_name(name: str) -> str:
    """``name`` as the file its example copy stands for is named: without an example's suffix
    (:data:`EXAMPLE_SUFFIXES`), if it has one after a name."""
    return _without_suffix(name, EXAMPLE_SUFFIXES)


def _without_suffix(name: str, suffixes: tuple[str, ...]) -> str:
    lowered = name.lower()
    for suffix in suffixes:
        if lowered.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def written_name(name: str) -> str:
    """``name`` as the format its text is written in names it: a template's without its suffix
    (:func:`untemplated_name`), an example copy's without its own (:func:`example_name`), and a
    part written for inclusion without :data:`INCLUDED_SUFFIX` when a format a reader reads is
    named before it."""
    name = example_name(untemplated_name(name))
    if not name.lower().endswith(INCLUDED_SUFFIX):
        return name
    included = name[: -len(INCLUDED_SUFFIX)]
    extension = included.rsplit(".", 1)[-1].lower() if "." in included.lstrip(".") else ""
    return included if extension in read_extensions() else name


def extension_of(path: str) -> str:
    """The lower-case extension of a path's file name ('' when it has none), of the file it holds
    for a compressed one (``md`` of ``README.md.gz``: :mod:`indexer.formats.compressed`), of the
    file it renders for a template (``md`` of ``README.md.jinja``: :data:`TEMPLATE_SUFFIXES`), of
    the file an example copy stands for (``conf`` of ``opendkim.conf.sample``: :data:`EXAMPLE_SUFFIXES`),
    of the format a part written for inclusion names (``rst`` of ``create.rst.inc``:
    :data:`INCLUDED_SUFFIX`)."""
    name = _file_name(path)
    return name.rsplit(".", 1)[-1] if "." in name else ""


def file_type(path: str) -> str:
    """The type of the document at ``path``, as ``index status`` lists it and ``types`` filters on
    it: its extension (:func:`extension_of`), ``info`` for a part of a split Info manual
    (``find.info-1.gz``)."""
    return INFO_TYPE if is_info_name(_file_name(path)) else extension_of(path)


#: What GLOB reads as a pattern: ``*``, ``?`` and ``[``, each matched as itself inside brackets.
_GLOB_MARKS = re.compile(r"[*?\[]")


def type_globs(kind: str) -> list[str]:
    """The lower-case GLOBs that the path of a file of type ``kind`` (``md``, ``.info``) matches:
    named with the extension, or with it and the suffix of a part written for inclusion
    (``create.rst.inc``), then maybe an example copy's or a template's suffix
    (``opendkim.conf.sample``, ``README.md.jinja``), then maybe a compression suffix
    (``README.md.gz``), and for Info a part's number too (``find.info-1``): every name
    :func:`written_name` reads as ``kind``'s, so that a filter finds every file :func:`file_type`
    types so."""
    extension = _GLOB_MARKS.sub(r"[\g<0>]", kind.lower().lstrip("."))  # a type is written, not a pattern
    named = [f"*.{extension}", *(part_globs(extension) if extension == INFO_TYPE else [])]
    if kind.lower().lstrip(".") in read_extensions():
        named.append(f"*.{extension}{INCLUDED_SUFFIX}")  # a part written for inclusion
    written = [ending + suffix for ending in named for suffix in ("", *EXAMPLE_SUFFIXES, *TEMPLATE_SUFFIXES)]
    return [ending + suffix for ending in written for suffix in ("", *OPENERS)]


def _file_name(path: str) -> str:
    """The lower-case name of the file at ``path``, of the file it holds for a compressed one, as
    the format it is written in names it (:func:`written_name`)."""
    return written_name(uncompressed_name(path).rsplit("/", 1)[-1]).lower()


def read_document(path: str, data: bytes, neighbours: Neighbours | None = None) -> Document:
    """The document in a file's bytes, read by the reader of its extension; ``neighbours``, the
    other files of the folder the build indexes, for a format whose files use text that another
    file declares (:data:`NEIGHBOUR_READERS`), ``path`` naming the file among them.

    A compressed file's bytes are expanded first (:func:`indexer.formats.compressed.expanded`).

    Raises :class:`UnreadableFile` (with the status to record) for a binary or undecodable file, a
    PDF without text, a document past a cap on its expanded size or its text (``too-large``: see
    :func:`indexer.formats.document.too_much_text`), and for any failure of a reader on it
    (``damaged``: a damaged PDF, DOCX, notebook or compressed file, markup that trips its parser,
    memory run out).
    """
    extension = extension_of(path)
    try:
        data = expanded(path, data)
        if is_info_name(_file_name(path)):
            data = without_markers(data)  # the only NULs of an Info file, which no other text holds
        if extension in BINARY_READERS:
            document = BINARY_READERS[extension](data)
        else:
            text, encoding = decode(data)
            if (refused := too_much_text(len(text), text.count("\n"))) is not None:
                raise refused  # before its parser builds anything of it
            document = parse_text(path, text, encoding, neighbours)
    except UnreadableFile:
        raise
    except Exception as error:  # the reader's failure on this one file: see the module's docstring
        reader = _reader_name(path)
        reason = f"the {reader} reader failed on it: {describe_error(error)}"
        raise UnreadableFile(reason, status="damaged") from error
    if (refused := too_much_text(sum(map(len, document.lines)), len(document.lines))) is not None:
        raise refused
    return document


#: The readers of files that :data:`READER_NAMES` does not list by extension, as a failure names them.
MAN_PAGE, INFO, SOURCE_CODE, PLAIN = "man page", "Info", "source code", "text"


def _reader_name(path: str) -> str:
    """Which reader reads the file at ``path``, as a failure names it: its extension's
    (:data:`READER_NAMES`), else a man page's, an Info manual's, source code's or plain text's. The
    one place that orders them: :func:`parse_text` and :func:`heading_titles` ask it."""
    extension = extension_of(path)
    if extension in READER_NAMES:
        return READER_NAMES[extension]
    if is_man_page_name(_file_name(path)):
        return MAN_PAGE
    if is_info_name(_file_name(path)):
        return INFO
    return SOURCE_CODE if _code_language(path) else PLAIN


def describe_error(error: BaseException) -> str:
    """``AssertionError: unexpected call ...``: an exception on one short line."""
    text = " ".join(f"{type(error).__name__}: {error}".split())
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 3] + "..."


def head_check(path: str) -> Callable[[bytes], bool] | None:
    """How to tell from a file's first bytes that it is binary, so the rest is not read: a NUL in a
    text format (:func:`looks_binary`), in an Info file outside its markers (:func:`without_markers`);
    None for the formats read from bytes (PDF, DOCX) and for a compressed file, whose bytes are
    binary until expanded (its reader checks what they expand to)."""
    if extension_of(path) in BINARY_READERS or compression_of(path):
        return None
    return head_looks_binary if is_info_name(_file_name(path)) else looks_binary


def parse_text(
    path: str, text: str, encoding: str = "utf-8", neighbours: Neighbours | None = None
) -> Document:
    """The document in ``text``, already decoded, read as its extension says; source code by its
    language's grammar, headed by its path (:mod:`indexer.formats.code`). Whatever the format, the
    model reads no terminal's control sequences (:func:`without_terminal_controls`)."""
    return without_terminal_controls(_read_text(path, text, encoding, neighbours))


def _read_text(path: str, text: str, encoding: str, neighbours: Neighbours | None = None) -> Document:
    extension = extension_of(path)
    if neighbours is not None and extension in NEIGHBOUR_READERS:
        return NEIGHBOUR_READERS[extension](text, encoding, path, neighbours)
    if extension in TEXT_READERS:
        return TEXT_READERS[extension](text, encoding)
    reader = _reader_name(path)
    if reader == MAN_PAGE:
        return read_roff(text, encoding)
    if reader == INFO:
        return read_info(text, encoding)
    if extension in DATA_READERS:
        return read_data(path, text, encoding, extension)
    if reader == SOURCE_CODE:
        from indexer.formats.code import read_code

        return read_code(path, text, encoding, cast(str, _code_language(path)))
    script = text.startswith(SHEBANG)  # a script named without its language's extension
    if script:
        from indexer.formats.code import read_code, script_language

        if (language := script_language(text)) is not None:
            return read_code(path, text, encoding, language)
    if script or is_unparsed_code(path):  # a script in a language no grammar reads, or such code
        return _headed_by_path(path, read_plain(text, encoding))
    if (declared := declared_format(path, text[:DECLARATION_CHARS])) is not None:
        return read_data(path, text, encoding, declared)  # an inventory's ``hosts``, ``group_vars/all``
    return read_plain(text, encoding)


#: Source and build files of languages no grammar here reads, by extension, and build files by name
#: (with a suffix of their own too: ``Dockerfile.dev``, ``Makefile.am``, ``Gemfile.lock``): read as
#: plain lines, headed by their path as source code is, since a line of them is read where it lies
#: in a project (``web/Dockerfile``, ``db/schema.sql``, ``infra/main.tf``); but a build file named
#: exactly as one written in a language (:data:`CODE_FILE_NAMES`) is read as that language's code.
UNPARSED_CODE_EXTENSIONS = frozenset(
    """m mm fs vb pl pm r jl erl clj cljs nim fish ps1 bat sql css scss sass less vue svelte
    properties graphql proto tf hcl gradle cmake mk dockerfile containerfile""".split()
)
#: Build files written in a language a grammar reads, by their whole name (case aside), which
#: their tools read as that language: the Ruby DSLs of Bundler, Rake, Vagrant, Guard, CocoaPods,
#: Homebrew Bundle, Capistrano, Berkshelf, Thor, Danger, fastlane, r10k and Steep. Only the whole
#: name: ``Gemfile.lock`` and ``Podfile.lock`` are what the tools write, no Ruby.
CODE_FILE_NAMES = dict.fromkeys(
    """gemfile rakefile vagrantfile guardfile podfile brewfile capfile berksfile thorfile dangerfile
    fastfile appfile puppetfile steepfile""".split(),
    "ruby",
)
BUILD_FILE_NAMES = frozenset(
    ("makefile", "dockerfile", "containerfile", "procfile", "justfile", *CODE_FILE_NAMES)
)


def is_unparsed_code(path: str) -> bool:
    """Whether the file at ``path`` is source or a build file read as plain lines
    (:data:`UNPARSED_CODE_EXTENSIONS`, :data:`BUILD_FILE_NAMES`)."""
    name = _file_name(path)
    return extension_of(path) in UNPARSED_CODE_EXTENSIONS or name.partition(".")[0] in BUILD_FILE_NAMES


def _headed_by_path(path: str, document: Document) -> Document:
    """``document`` headed by ``path``, the headings its reader found under it."""
    if not document.lines:
        return document
    below = [replace(heading, level=heading.level + 1) for heading in document.headings]
    return replace(document, headings=[Heading(1, 1, path), *below])


def is_source_code(path: str) -> bool:
    """Whether the file at ``path`` is source code: a file :func:`parse_text` gives the code reader
    (by its extension: a file the grammar cannot read, read as plain lines, is source code still)."""
    return extension_of(path) not in TEXT_READERS and _code_language(path) is not None


def read_extensions() -> frozenset[str]:
    """The lower-case extensions of the files this package's readers read by their format: the
    markup formats', the formats read from bytes, the data formats' and source code's languages."""
    from indexer.formats.code import CODE_EXTENSIONS

    return frozenset((*TEXT_READERS, *BINARY_READERS, *DATA_READERS, *CODE_EXTENSIONS))


def _code_language(path: str) -> str | None:
    """The language the file at ``path`` is written in, if any: by its whole name
    (:data:`CODE_FILE_NAMES`), else by its extension (:mod:`indexer.formats.code`, imported only
    when a file is not one of :data:`TEXT_READERS`' formats)."""
    named = CODE_FILE_NAMES.get(_file_name(path))
    if named is not None:
        return named
    from indexer.formats.code import language_of

    return language_of(extension_of(path))


def heading_titles(path: str, text: str) -> list[str]:
    """The titles of the headings in ``text`` (a chunk of the file at ``path`` in one of
    :data:`TEXT_READERS`' formats, or plain text: a changelog's entries), as its reader finds them;
    none for PDF, Word, source code, man pages and Info manuals, nor should the reader fail on the
    chunk (it read the whole file at the build): a search never fails on it."""
    if extension_of(path) not in TEXT_READERS and (_reader_name(path) != PLAIN or is_unparsed_code(path)):
        return []
    try:
        return [heading.title for heading in parse_text(path, text).headings]
    except Exception:  # as the build takes a reader's failure on one file: no headings, not a failed search
        return []


def shown_text(path: str, text: str, code_lead: int = 0) -> str:
    """``text`` (a chunk of the file at ``path``) as a rendered page shows it, for a snippet.

    Read alone, a chunk that starts inside a code block would be misread: its first fence, the one
    that closes the block, would open one, the prose after it shown as code and the code before it
    read as text. The build read the whole file and recorded how the chunk's first lines lie in such
    a block (``code_lead``, :func:`indexer.records.code_lead`): those lines are shown as written (a
    closing fence shows nothing), and the lines after them read alone (:func:`_shown_alone`)."""
    lead, closed = lead_lines(code_lead)
    if not lead:
        return _shown_alone(path, text)
    lines = text.split("\n")
    shown = lines[: lead - closed]
    if lead < len(lines):
        shown.append(_shown_alone(path, "\n".join(lines[lead:])))
    return "\n".join(shown)


def _shown_alone(path: str, text: str) -> str:
    """``text`` (a chunk of the file at ``path``, or its lines after a code block it starts in) as
    a rendered page shows it, read alone, line for line: lines of markup alone left out, each other
    line as the reader reads it (:attr:`Document.read_as`) and, outside literal blocks, its inline
    markup read as its words (:data:`INLINE_READERS`), a paragraph's lines together (a link or
    emphasis may end on a later line). A line of block markup shows what the page shows of it
    (:data:`SHOWN_PIECES`), text read as text: a table row its cells, each read alone, set apart by
    :data:`CELL_SEPARATOR`; a directive's line its title (read with its paragraph, as a line's text
    is: an admonition's text may start on it and go on; alone in a block the reader takes for code,
    a MyST directive's) or nothing. Code keeps its characters: a literal block's lines are shown as
    written."""
    document = parse_text(path, text)
    extension = extension_of(path)
    inline = INLINE_READERS.get(extension)
    pieces = SHOWN_PIECES[extension](text, document) if extension in SHOWN_PIECES else {}
    literal = {number for first, last in document.literal for number in range(first, last + 1)}
    shown: list[str] = []
    paragraph: list[str] = []
    for number, line in enumerate(document.lines, start=1):
        shown_pieces = pieces.get(number)  # before markup: a MyST fence, markup, shows its title
        if shown_pieces is not None and len(shown_pieces) != 1:
            shown += _read_together(paragraph, inline)
            paragraph = []
            if shown_pieces:
                shown.append(
                    CELL_SEPARATOR.join(inline(piece) if inline else piece for piece in shown_pieces)
                )
            continue
        if shown_pieces is None and number in document.markup:
            continue
        if shown_pieces is not None and number in literal:  # text a fenced block's line shows
            line = inline(shown_pieces[0]) if inline else shown_pieces[0]
        elif shown_pieces is not None:
            line = shown_pieces[0]
        else:
            line = document.read_as.get(number, line)
        if inline is not None and number not in literal and line.strip():
            paragraph.append(line)
            continue
        shown += _read_together(paragraph, inline)
        paragraph = []
        shown.append(line)
    return "\n".join(shown + _read_together(paragraph, inline))


def _read_together(lines: list[str], inline: Callable[[str], str] | None) -> list[str]:
    """A paragraph's lines read by ``inline`` together, line for line (one at a time should the
    reading change their number, so a line never moves)."""
    if not lines or inline is None:
        return lines
    read = inline("\n".join(lines)).split("\n")
    return read if len(read) == len(lines) else [inline(line) for line in lines]
