"""Markdown, read by a CommonMark parser (pulldown-cmark, through pyromark).

The parser decides what is a heading, so a ``#`` line inside a fenced or indented code block, an
HTML comment or YAML front matter is never one, and setext headings (a title underlined with ``===``
or ``---``) are. Code blocks become literal ranges. pulldown-cmark is the CommonMark parser of rustdoc
and mdBook; pyromark gives its events with byte ranges, from which the line numbers come.

What a rendered page does not show is not read as its text:

- front matter (YAML between ``---`` lines, TOML between ``+++`` lines) is metadata: its ``title``
  is the page's top heading when the page has no ``#`` title of its own, its ``description`` (or
  ``summary``) is read at the top of the page, and the rest is left out;
- reference-style link definitions (``[name]: /url/``), HTML comments and HTML blocks that are a
  ``<script>`` or a ``<style>`` element (a VitePress page's ``<script setup>``, whose Vue code the
  site runs and never shows) are left out: the definitions only say where a link in the text
  points, and a line of them alone is no passage;
- code fences, a setext title's underline, a table's delimiter row and thematic breaks are markup
  (:attr:`Document.markup`): they stay in a chunk's text, and count nothing toward its size;
- a custom container's lines (VitePress' and Docusaurus' ``::: tip`` ... ``:::``,
  :func:`container_lines`) read as the box the page shows: its title, or its type's name, on the
  opening line; the closing line, and a tab group's opening line, are markup;
- Shiki's notation at the end of a code line (VitePress' ``// [!code ++]``, which marks the line and
  is taken out of it) is not read;
- a heading's attribute list (``## Docs URLs { #docs-urls }``: an id or a class, as MkDocs'
  ``attr_list``, Pandoc and pulldown-cmark write it) is not part of its title;
- what the model reads of a line outside code that holds HTML (:attr:`Document.read_as`) is the
  line as the page shows it: tags and their attributes dropped, an element's text kept, an image
  as its alternative text, an abbreviation with its title after it (:func:`html_shown`); a
  template's directive (``{% include "x.md" %}``, which the site's generator runs) shows nothing,
  and a line of them alone is markup;
- where another file's text stands (:attr:`Document.includes`): a template's include directive alone
  on a line, an MDX page's use of a page it imports (``import Intro from './_intro.mdx'``, then
  ``<Intro />`` alone on a line), and MkDocs' snippet line (``--8<-- "snippets/install.md"``, which
  is markup too): the build reads that file as itself.

A heading whose title is code alone (``## `--write` ``) or a key's name as a config reference titles
it (``## server.strictPort``) declares the names it spells (:attr:`Document.definitions`,
:func:`indexer.formats.definitions.title_names`), and so does
a table row whose first cell is a command's options in code (``| `--all`, `-a` | ... |``,
:func:`indexer.formats.definitions.option_cell_names`) or a name in code the page anchors there
(``| <a id="opt-acme-email">`acme.email`</a> | ... |``,
:func:`indexer.formats.definitions.anchored_cell_names`), or a list item that starts with options
(``* `--port <int>` - Bind to this port.``). An HTML block that is one heading element (``<h3>How do I
configure it?</h3>``) is the heading the page renders.

Why pyromark rather than markdown-it-py: on the pipeline benchmark's Markdown, markdown-it-py parsed
3 MB/s (block rules only, inline off), which alone would add about 3 s to a 3.2 s build of 2,000 files;
pyromark parsed 121 MB/s, with the same headings and code blocks.
"""

from __future__ import annotations

import bisect
import html
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from indexer.formats.definitions import (
    anchored_cell_names,
    listed_term_names,
    option_cell_names,
    starts_option_cell,
    title_names,
)
from indexer.formats.document import Document, Heading, shown_characters, split_lines
from indexer.formats.metadata import FrontMatter, read_front_matter
from indexer.formats.rst import ADMONITIONS, directive_options, directive_pieces, read_rst, role_text
from indexer.formats.rst import inline_text as restructured_text
from indexer.formats.rst import shown_pieces as restructured_pieces

if TYPE_CHECKING:
    from pyromark.event import Range

LEVELS = {"H1": 1, "H2": 2, "H3": 3, "H4": 4, "H5": 5, "H6": 6}
#: Inline markup (:func:`inline_text`), each part bounded and free of the mark that ends it, so a
#: mark never closed costs a look ahead to the next.
_CODE_SPAN = re.compile(r"(?<!`)(``?)([^`]{1,1024})\1(?!`)")
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^<>\s]{1,2048}|[\w.+-]{1,128}@[\w.-]{1,253})>")
#: An HTML tag as CommonMark knows one, of bounded length, not after a backslash: an element's
#: opening tag with its attributes, a closing tag, a comment, a processing instruction or a
#: declaration. Anything else between angle brackets is text the page shows (``Map<K, V>``).
_TAG = re.compile(
    r"(?<!\\)<(?:[A-Za-z][A-Za-z0-9-]{0,63}"
    r"(?:\s{1,16}[A-Za-z_:][\w.:-]{0,63}(?:\s{0,16}=\s{0,16}(?:[^\s\"'=<>`]{1,400}|'[^'\n]{0,400}'|\"[^\"\n]{0,400}\""
    r"|\{[^{}\n]{0,400}\}))?){0,32}"
    r"\s{0,16}/?"
    r"|/[A-Za-z][A-Za-z0-9-]{0,63}\s{0,16}|!--[^\n]{0,400}?--|\?[^\n]{0,400}?\?|![A-Za-z][^>\n]{0,400})>"
)
#: How an MDX page's ESM starts (``import { Tabs } from '@theme/Tabs'``, ``export const meta =
#: {...}``): a paragraph of the page's top level that starts so is the module's code, which the page
#: does not show (MDX's grammar; Docusaurus reads its ``.md`` pages as MDX too).
_ESM = re.compile(
    r"import\s{1,16}(?:type\s{1,16})?(?:['\"]|(?:[\w$]{1,128}\s{0,16},\s{0,16})?"
    r"(?:[\w$]{1,128}|\{[^{}]{0,2048}\}|\*\s{1,16}as\s{1,16}[\w$]{1,128})\s{1,16}from\s{0,16}['\"])"
    r"|export\s{1,16}(?:(?:const|let|var|function|async|class|default|type|interface)\s|[{*])"
)
#: An MDX page's import of another page as a component (``import Intro from './_intro.mdx'``): the
#: component used alone on a line (``<Intro />``) is where that page's text stands.
_PAGE_IMPORT = re.compile(
    r"""import\s{1,16}([A-Za-z_$][\w$]{0,127})\s{1,16}from\s{0,16}['"][^'"\n]{0,1024}\.mdx?['"]"""
)
_COMPONENT_ALONE = re.compile(r"[ \t]{0,64}<([A-Z][\w$]{0,127})[ \t]{0,16}/>[ \t]*")
#: A template's include directive alone on a line (Jinja's and Jekyll's ``{% include "x.md" %}``,
#: ``{% include_relative x.md %}``), which the site's generator replaces by the file it names.
_TEMPLATE_INCLUDE = re.compile(
    r"[ \t]{0,64}\{%-?[ \t]{0,16}include(?:_relative|_cached)?[ \t][^\n]{0,1024}?-?%\}[ \t]*"
)
#: A snippet line of MkDocs' pymdownx.snippets (``--8<-- "docs/snippets/install.md"``), which the
#: site's build replaces by the file it names.
_SNIPPET = re.compile(r"""[ \t]{0,64}-{1,2}8<-{1,2}[ \t]{1,16}(?:"[^"\n]{1,1024}"|'[^'\n]{1,1024}')[ \t]*""")
#: A backslash escape: CommonMark's, of an ASCII punctuation character, which the page shows alone.
_BACKSLASH_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
#: Elements that sit inside a line of text (a link, code, emphasis): their tags show nothing, where
#: a block's tags (a paragraph's, a table cell's, a line break) set the words either side apart.
_INLINE_ELEMENTS = frozenset(
    "a abbr b bdi bdo cite code data del dfn em font i ins kbd mark q s samp small span strong sub sup"
    " time u var wbr".split()
)
#: A tag's element, and an attribute's name and value in it (``alt="Logo"``, ``title='x'``, ``alt=Logo``).
_TAG_NAME = re.compile(r"</?([A-Za-z][\w-]{0,63})")
_ATTRIBUTE = re.compile(
    r"\s([\w-]{1,64})[ \t]*=[ \t]*(?:\"([^\"]{0,400})\"|'([^']{0,400})'|(\{[^{}\n]{0,400}\})"
    r"|([^\s\"'=<>`]{1,400}))"
)
#: The attributes whose text a JSX component (an MDX page's ``<DetailedExplanation title={`...`}>``,
#: ``<TabItem label="npm">``) shows as its title, by the convention components follow.
_COMPONENT_TITLES = ("title", "label")
#: A JavaScript string literal alone, as a JSX attribute's expression gives a text: ``{"npm"}``,
#: ``{`Detailed: thunks`}`` (a template literal without a substitution).
_STRING_LITERAL = re.compile(r"\{\s*(?:\"([^\"]*)\"|'([^']*)'|`([^`$]*)`)\s*\}")
#: An abbreviation whose title spells it out (``<abbr title="Object-Relational Mapper">ORM</abbr>``),
#: as the page shows it on hover: the words a reader looks for the abbreviation by.
_ABBREVIATION = re.compile(r"<abbr(\s[^<>\n]{0,400})>((?:[^<\n]|<(?!/abbr>)){0,400})</abbr>", re.IGNORECASE)
#: An id among a tag's attributes (``<a id="opt-acme-email" href=...>``, an old anchor's ``name``):
#: where the page's links to the text after it point.
_ID_ATTRIBUTE = re.compile(r"\s(?:id|name)[ \t]*=", re.IGNORECASE)
#: A template's directive (``{% include-markdown "intro.md" %}``, Jinja's and Liquid's), run by the
#: site's generator before the page is rendered: it shows nothing of its own.
_TEMPLATE_DIRECTIVE = re.compile(r"\{%(?:[^%{}\n]|%(?!\})){0,1024}%\}")
#: A Hugo shortcode's call (``{{< figure src="x.png" alt="Setup" >}}``, ``{{% notice %}}``) or its end
#: (``{{< /table >}}``): template markup the site runs, which shows what its caption, title or alt
#: attribute says (:data:`_SHORTCODE_TITLES`); a call of other arguments alone as written (what it
#: shows is made of them: a provider's name and link, a page a reference points to), one of none
#: (an end, a box's opening) nothing. An escaped call (``{{</* x */>}}``), shown as written on the
#: page, is none.
_SHORTCODE = re.compile(
    r"\{\{[<%][ \t]*/?[ \t]*[\w.-]{1,128}(?P<arguments>(?:\s[^\n]{0,1024}?)?)[ \t]*[>%]\}\}"
)
_SHORTCODE_TITLES = ("caption", "title", "alt")
#: Where a link's text ends: its destination (with a title, maybe) or a reference's label.
_LINK_END = (
    r"(?:\([^()\s]{0,2048}(?:[ \t]{1,8}(?:\"[^\"\n]{0,512}\"|'[^'\n]{0,512}'))?\)"
    r"|\[[^\[\]\n]{0,512}\])"
)
#: A list item that is links alone, punctuation between them aside (``- [Routing](#routing)``,
#: ``* [Install](install.md) | [Usage](usage.md)``): an entry of a contents list.
_LINKED_ENTRY = re.compile(
    r"(?:[-*+]|\d{1,9}[.)])[ \t]{1,8}(?:\[[^\[\]\n]{1,1024}\]" + _LINK_END + r"[ \t,;.|/\u00b7-]{0,8}){1,16}"
)
#: Images, links and MyST's roles (``{func}`name```), each a pattern that matches a code span first,
#: so that what looks like one inside code is never read, while a link's text may hold code
#: (:func:`_outside_code`).
_SKIP_CODE = r"(?P<code>(?<!`)(?P<ticks>``?)[^`]{1,1024}(?P=ticks)(?!`))|"
_IMAGE = re.compile(_SKIP_CODE + r"!\[(?P<text>[^\[\]]{0,1024})\]" + _LINK_END)
_LINK = re.compile(_SKIP_CODE + r"(?<!\\)\[(?P<text>[^\[\]]{1,1024})\]" + _LINK_END)
_ROLE = re.compile(_SKIP_CODE + r"\{(?P<role>[A-Za-z][\w.+:-]{0,63})\}`(?P<text>[^`]{1,1024})`")
#: What marks a quote, then a heading, at the start of a line, and a heading's closing marks.
_QUOTE_MARKS = re.compile(r"^[ \t]{0,3}>[> \t]{0,64}")
_HEADING_MARKS = re.compile(r"^[ \t]{0,3}#{1,6}(?:[ \t]|$)")
_CLOSING_MARKS = re.compile(r"[ \t]#{1,64}[ \t]{0,8}$")
#: A heading's attribute list (``## Docs URLs { #docs-urls }``, MkDocs' and Pandoc's), which gives it
#: an id or a class and shows nothing.
_HEADING_ATTRIBUTES = re.compile(r"[ \t]{1,8}\{[ \t]{0,8}[#.][^{}\n]{0,256}\}[ \t]{0,8}$")
#: A MyST directive's fence (```` ```{note} ````, ``:::{note}``), which a page shows as a directive
#: (:func:`indexer.formats.rst.directive_pieces`), and a colon fence that closes one.
_DIRECTIVE_FENCE = re.compile(
    r"[ \t]{0,3}(?:`{3,64}|~{3,64}|:{3,64})[ \t]*\{(?P<name>[\w:.+-]{1,64})\}(?P<argument>.*)"
)
_COLON_FENCE = re.compile(r"[ \t]{0,3}:{3,64}[ \t]*")
#: An object's documentation put in the page by mkdocstrings or mkautodoc (``::: httpx.get``), the
#: lines indented under it its options: the page shows the object's name (and its docstring), and
#: the documentation of each member its options list (``members:`` then ``- name``), under its name.
_AUTODOC = re.compile(r"(?P<indent>[ \t]{0,16}):::[ \t]+(?P<name>[\w.:-]{1,256})[ \t]*")
_LISTED_MEMBER = re.compile(r"[ \t]{0,64}-[ \t]{1,8}(?P<name>[\w.]{1,256})[ \t]*")
#: A custom container's opening line: markdown-it-container's, which VitePress writes (``::: tip``,
#: ``::: details Click to expand {open}``, ``::: code-group``), and Docusaurus' admonition's
#: (``:::note[Take care]``, ``:::tip Title``); a line of the colons alone, at least as many, closes
#: it (:func:`container_lines`). Its title, where it gives one, is what the page shows on its line.
_CONTAINER_OPENING = re.compile(
    r"[ \t]{0,3}(?P<colons>:{3,64})[ \t]*(?P<name>[A-Za-z][\w-]{0,63})"
    r"(?:\[(?P<bracketed>[^\[\]\n]{0,512})\]|[ \t]+(?P<title>[^{}\s](?:[^{}\n]{0,510}?[^{}\s])?))?"
    r"(?:[ \t]*\{[^{}\n]{0,256}\})?[ \t]*"
)
#: The containers VitePress and Docusaurus name (an admonition's type, :data:`ADMONITION_TYPES`, or
#: one of these): a line of colons and another word is a paragraph there (``::: Note that ...``),
#: or mkdocstrings' reference to an object (``::: httpx``).
CONTAINER_NAMES = frozenset({"details", "code-group", "raw", "v-pre", "caution", "danger"})
#: An admonition of Python-Markdown (``!!! note "Title"``, ``??? tip`` folded) and a block of
#: PyMdown Extensions (``/// note | Title``, ``//// tab | Python``, ``///`` closing one): what
#: MkDocs pages write for what reStructuredText writes as directives.
_ADMONITION = re.compile(
    r"[ \t]{0,3}(?:!!!|\?\?\?\+?)[ \t]+(?P<name>[\w-]{1,64})"
    r"[^\"\n]{0,256}?(?:\"(?P<title>[^\"\n]{0,512})\")?"
)
_BLOCK = re.compile(r"[ \t]{0,3}/{3,64}[ \t]*(?P<name>[\w-]{0,64})[ \t]*(?:\|[ \t]*(?P<title>.{0,512}))?")
#: A content tab of PyMdown Extensions (``=== "Python"``, ``===+ "Output"``): its content is
#: indented under it, as an admonition's is.
_TAB = re.compile(r"[ \t]{0,3}===[!+]?[ \t]+\"(?P<title>[^\"\n]{0,512})\"")
#: How far an admonition's or a tab's content is indented under its line (Python-Markdown's tab
#: length), and the fence that opens a fenced code block, in which no such line opens anything.
_BODY_INDENT = 4
_OPENING_FENCE = re.compile(r"[ \t]{0,3}(?P<marks>`{3,64}|~{3,64})")
#: A code block's caption in its fence's info string, which the page shows above the code
#: (Docusaurus', MkDocs Material's, Starlight's ``title="src/app.ts"``, Nextra's ``filename=``).
_FENCE_CAPTION = re.compile(
    r"""[ \t](?:title|filename)=(?:"(?P<double>[^"\n]{1,256})"|'(?P<single>[^'\n]{1,256})')"""
)
#: VitePress' caption: a label in brackets right after the language, ending the info string but for
#: the lines to highlight (a code group's tab: ```` ```ts [src/index.ts] {2} ````); one of numbers and
#: ranges is those lines (```` ```js [1,2] ````), no caption.
_FENCE_LABEL = re.compile(
    r"[ \t]*[\w+#.-]{1,64}[ \t]+\[(?P<label>[^\[\]\n]{1,256})\][ \t]*(?:\{[^{}\n]{0,256}\})?[ \t]*$"
)
_LINE_NUMBERS = re.compile(r"[\d,\s-]+")
#: Shiki's notation at the end of a code line, in a comment of the code's language (``// [!code
#: ++]``, ``# [!code highlight]``, ``<!-- [!code focus:3] -->``): the highlighter marks the line
#: (added, removed, highlighted, focused, an error) and takes the comment out of the page. Each part
#: bounded, so a try at each position of a line costs a bounded look: one pass.
_CODE_NOTATION = re.compile(
    r"[ \t]{0,64}(?://|#|--|/\*|<!--)[ \t]{0,16}(?:\[!code [\w+-]{1,32}(?::\d{1,4})?\][ \t]{0,16}){1,8}"
    r"(?:\*/|-->)?[ \t]{0,16}$"
)
#: A JSX component's opening and closing tags on lines of their own, in an MDX page (``<Tabs>``,
#: ``<TabItem label="npm">``, ``</Tabs>``): a capital letter starts a component's name.
_COMPONENT_OPENING = re.compile(r"[ \t]*<[A-Z][\w.]{0,63}(?:\s[^<>]{0,1024})?>[ \t]*")
_COMPONENT_CLOSING = re.compile(r"[ \t]*</[A-Z][\w.]{0,63}[ \t]*>[ \t]*")
#: Admonition types whose title, when none is given, is their name (reStructuredText's, and those
#: of MkDocs' Material theme).
ADMONITION_TYPES = frozenset(ADMONITIONS) | frozenset(
    "abstract summary info success question failure bug example quote details".split()
)
#: The start tag of an element whose content a browser runs or applies and never shows: a script
#: (a VitePress page's ``<script setup>``, its Vue code hoisted out of the page; an analytics
#: snippet) or a style sheet (``<style scoped>``). CommonMark reads each as one HTML block, blank
#: lines and all, up to the line of its end tag.
_UNSHOWN_START = re.compile(r"<(script|style)(?=[\s>])", re.IGNORECASE)
#: An HTML heading element's start tag (``<h3>``, ``<h1 align="center">``), bounded.
_HTML_HEADING_START = re.compile(r"<h(?P<level>[1-6])(?:\s[^<>]{0,1000})?>", re.IGNORECASE)
#: Where a list item's term ends: a colon, or a dash between blanks (``- `--port` - Bind...``).
_TERM_END = re.compile(r"[:\uff1a]|\s[-\u2013\u2014](?:\s|$)")
#: The most characters a table cell's or list item's term of options is read for: more is prose.
_LONGEST_TERM = 500
#: The tags a list item's term may hold without ending: its paragraph, emphasis and links.
_INLINE_TAGS = frozenset(("Paragraph", "Emphasis", "Strong", "Strikethrough", "Link"))
#: A pipe that sets a table's cells apart: one not escaped (GFM's tables split at every other, in a
#: code span too).
_CELL_PIPE = re.compile(r"(?<!\\)\|")


def _enclosed(mark: str) -> str:
    """Text between two ``mark``s, starting and ending with no space, holding no ``mark``."""
    first, escaped = re.escape(mark[0]), re.escape(mark)
    return rf"{escaped}(?=[^\s{first}])([^{first}]{{1,512}})(?<=[^\s{first}]){escaped}"


#: Strong and plain emphasis, each matching a code span first (the text may hold code).
_STRONG = re.compile(_SKIP_CODE + rf"(?<![\w\\])(?:{_enclosed('**')}|{_enclosed('__')})(?!\w)")
_EMPHASIS = re.compile(_SKIP_CODE + rf"(?<![\w*\\])(?:{_enclosed('*')}|{_enclosed('_')})(?![\w*])")
TITLE_EVENTS = ("Text", "Code", "InlineMath", "DisplayMath")


#: The fences of front matter (:func:`_front_matter`) by the one that opens it: its style, and the
#: lines that close it.
_FRONT_MATTER_FENCES = {"---": ("yaml", ("---", "...")), "+++": ("toml", ("+++",))}
#: How front matter's first line starts: a key (YAML's ``title:``, TOML's ``title =``, quoted or
#: not), a comment, or the closing fence of an empty one (Jekyll's ``---`` twice).
_METADATA_START = re.compile(r"""[ \t]{0,16}(?:["']?[\w.-]{1,256}["']?[ \t]{0,16}[:=]|#|---|\+\+\+|\.\.\.)""")


@dataclass
class MarkdownLayout:
    """What the parser found in a Markdown text, as 1-based line numbers."""

    headings: list[Heading] = field(default_factory=list)
    literal: list[tuple[int, int]] = field(default_factory=list)
    markup: set[int] = field(default_factory=set)
    hidden: set[int] = field(default_factory=set)  # link definitions, HTML comments, scripts, styles
    table_rows: set[int] = field(default_factory=set)  # a table's head and rows, not its delimiter row
    #: titles of code alone, and table rows keyed by options (see the module's docstring)
    definitions: dict[int, tuple[str, ...]] = field(default_factory=dict)
    items: list[int] = field(default_factory=list)  # the first line of each list item
    captions: dict[int, str] = field(default_factory=dict)  # code fences' captions (fence_caption)
    front_matter: tuple[int, int, str, str] | None = None  # first line, last line, style, its text


def read_mdx(text: str, encoding: str = "utf-8") -> Document:
    """An MDX page, read as Markdown is but for what MDX's grammar reads otherwise: a JSX
    component's children are Markdown however they are indented under it (MDX has no indented code
    blocks), and a component's own lines open no HTML block (:func:`_components_read`)."""
    return read_markdown(text, encoding, mdx=True)


def read_markdown(text: str, encoding: str = "utf-8", mdx: bool = False) -> Document:
    """A Markdown file's lines with the headings and code blocks its parser found, front matter read
    as metadata and link definitions left out."""
    layout = markdown_layout(text, mdx)
    lines = split_lines(text)
    for number in layout.hidden:
        if number <= len(lines):
            lines[number - 1] = ""
    headings = layout.headings
    if layout.front_matter is not None:
        first, last, style, source = layout.front_matter
        headings = _with_front_matter(lines, headings, first, last, read_front_matter(source, style))
    read_as, shown_nothing = _html_read(lines, layout.literal)
    read_as.update(layout.captions)
    read_as.update(_without_notation(lines, layout.literal))
    for number, shown in container_lines(lines, layout.literal).items():
        if shown:
            read_as[number] = shown
        else:
            shown_nothing.add(number)
    includes = _includes(lines, layout.literal, layout.markup | shown_nothing)
    return Document(
        lines=lines,
        headings=headings,
        literal=layout.literal,
        encoding=encoding,
        markup=frozenset(layout.markup | shown_nothing | includes),
        definitions=layout.definitions,
        read_as=read_as,
        linked_entries=_linked_entries(lines, layout.items),
        includes=frozenset(includes),
    )


def _without_notation(lines: list[str], literal: list[tuple[int, int]]) -> dict[int, str]:
    """The code lines that end with Shiki's notation (:data:`_CODE_NOTATION`: VitePress' ``//
    [!code ++]``), read as the page shows them: without it. A line of the notation alone is kept
    as written (a line is never read as nothing)."""
    read_as: dict[int, str] = {}
    for first, last in literal:
        for number in range(first, min(last, len(lines)) + 1):
            line = lines[number - 1]
            if (
                "[!code " in line
                and (notation := _CODE_NOTATION.search(line))
                and line[: notation.start()].strip()
            ):
                read_as[number] = line[: notation.start()]
    return read_as


def _includes(lines: list[str], literal: list[tuple[int, int]], unshown: set[int]) -> set[int]:
    """The lines outside code where another file's text stands (:attr:`Document.includes`): an MDX
    page's use of a page it imports as a component, alone on its line, a template's include
    directive alone on a line (both show nothing), and a pymdownx snippet line."""
    code = {number for first, last in literal for number in range(first, last + 1)}
    imported = {
        found[1]
        for number in unshown
        if number <= len(lines) and (found := _PAGE_IMPORT.match(lines[number - 1]))
    }
    includes: set[int] = set()
    for number, line in enumerate(lines, 1):
        if number in code or not any(mark in line for mark in ("<", "{%", "8<")):
            continue
        used = _COMPONENT_ALONE.fullmatch(line) if number in unshown else None
        if (used and used[1] in imported) or (number in unshown and _TEMPLATE_INCLUDE.fullmatch(line)):
            includes.add(number)
        elif _SNIPPET.fullmatch(line):
            includes.add(number)
    return includes


def _html_read(lines: list[str], literal: list[tuple[int, int]]) -> tuple[dict[int, str], set[int]]:
    """What the model reads of the lines outside code that hold HTML or a template's directive
    (:attr:`Document.read_as`): the line as the page shows it (:func:`html_shown`, then its entities
    and backslash escapes as the characters they stand for: ``\\<all&#124;es5>`` shows
    ``<all|es5>``), its code spans as written, but for a line that is one tag (a JSX component's,
    whose attributes' expressions may hold backticks); and, apart, the lines that show nothing
    (tags alone, a directive alone), which are markup. An options table whose rows are keyed by anchors (``<a
    id="opt-x" href="#opt-x">``) is then read, and sized, by what its rows say, not by their tags."""
    code = {number for first, last in literal for number in range(first, last + 1)}
    read_as: dict[int, str] = {}
    shown_nothing: set[int] = set()
    for number, line in enumerate(lines, 1):
        if number in code or ("<" not in line and "{%" not in line):
            continue
        read = _shown_text(line) if _TAG.fullmatch(line.strip()) else _outside_code_spans(line, _shown_text)
        if not read.strip():
            shown_nothing.add(number)
        elif read != line:
            read_as[number] = read
    return read_as, shown_nothing


def _shown_text(prose: str) -> str:
    """Text outside code as the page shows it: its HTML (:func:`html_shown`), then its entities and
    CommonMark's backslash escapes."""
    return _unescaped(_BACKSLASH_ESCAPE.sub(r"\1", html_shown(prose)))


def _linked_entries(lines: list[str], items: list[int]) -> dict[int, int]:
    """The list items (their first lines, :attr:`MarkdownLayout.items`) that are links alone, each
    with its characters (:attr:`Document.linked_entries`): a page's list of where to read next, and
    a README's table of contents, which names what its own sections are about. Links to this page's
    sections count here, not in HTML or AsciiDoc: those pages get their contents from the tool that
    renders them (a theme's sidebar, ``:toc:``), which the readers leave out, and a list of their own
    sections written in the page is a summary it says; a Markdown page has none rendered, and its
    author writes one in its place."""
    return {
        number: shown_characters(lines[number - 1])
        for number in items
        if number <= len(lines) and _LINKED_ENTRY.fullmatch(lines[number - 1].strip())
    }


def _with_front_matter(
    lines: list[str], headings: list[Heading], first: int, last: int, metadata: FrontMatter
) -> list[Heading]:
    """Blank the front matter's lines; its title on its first line (the page's top heading when the
    page neither has a level-1 heading nor starts with a heading of that title) and its description
    on the second. A first heading that repeats the title heads the page: the headings after it at
    its level or above (a Hugo page's ``## Backup Hooks`` then ``## Hook Example``) are under it,
    as they are under the title the site shows above them."""
    for number in range(first, min(last, len(lines)) + 1):
        lines[number - 1] = ""
    named = any(heading.level == 1 for heading in headings)
    if not named and headings and headings[0].title.casefold() == metadata.title.casefold():
        named = True
        if any(heading.level <= headings[0].level for heading in headings[1:]):
            headings = [replace(headings[0], level=1), *headings[1:]]
    if metadata.title and not named:
        lines[first - 1] = metadata.title
        headings = [Heading(first, 1, metadata.title), *headings]
    if metadata.description and first + 1 <= len(lines):
        lines[first] = metadata.description
    return headings


def markdown_layout(text: str, mdx: bool = False) -> MarkdownLayout:
    """Headings, code blocks, markup lines, hidden lines and front matter of Markdown ``text`` (of
    an MDX page's, where ``mdx``: :func:`_components_read`)."""
    # imported here, so that `index query` does not load a parser it never uses
    import pyromark

    text = _components_read(_bodies_dedented(text)) if mdx else _bodies_dedented(text)
    front_matter = _front_matter(text)
    if front_matter is not None:  # read as blank lines: the parser knows no metadata (see below)
        after = text.split("\n", front_matter[1])[front_matter[1] :]
        text = "\n" * front_matter[1] + "".join(after)
    source = text.encode("utf-8")
    line_starts = [0]
    position = source.find(b"\n")
    while position != -1:
        line_starts.append(position + 1)
        position = source.find(b"\n", position + 1)

    def line_of(offset: int) -> int:
        return bisect.bisect_right(line_starts, offset)

    def lines_of(span: Range) -> tuple[int, int]:
        return line_of(span["start"]), line_of(max(span["start"], span["end"] - 1))

    lines = split_lines(text)
    layout = MarkdownLayout(front_matter=front_matter)
    covered: list[tuple[int, int]] = []  # the line ranges of top-level blocks
    depth = 0
    title: list[tuple[bool, str]] | None = None  # a heading's texts, each marked whether it is code
    row_line = 0  # the line of a table row whose first cell is not read yet
    term: _OptionTerm | None = None  # a table row's first cell or a list item's start, being read
    collected: list[str] | None = None  # the texts of an open HTML block
    options = pyromark.Options.ENABLE_TABLES | pyromark.Options.ENABLE_HEADING_ATTRIBUTES
    # events are dicts ({"Start": tag}, {"Text": "..."}) or bare strings ("SoftBreak", "Rule"); a tag
    # with fields is a dict ({"Heading": {...}}), a bare tag a string ("Paragraph")
    for event, span in pyromark.events_with_range(text, options=options):
        if isinstance(event, str):
            if term is not None and term.in_item and event in ("SoftBreak", "HardBreak"):
                _declare_options(layout, term)  # an item's term ends with its first line
                term = None
            if event == "Rule":
                layout.markup.add(line_of(span["start"]))
                if depth == 0:
                    covered.append(lines_of(span))
            continue
        start, end = event.get("Start"), event.get("End")
        if start is None and end is None:  # text, code, HTML...: only a title or metadata keeps it
            if title is not None:
                title.extend(_title_pieces(event))
            elif term is not None:
                if isinstance(tag := event.get("InlineHtml"), str):
                    term.anchor(tag)
                elif not term.read(_title_pieces(event)):
                    term = None  # keyed by no option: the rest of it is not read
                elif term.ended:
                    _declare_options(layout, term)
                    term = None
            elif collected is not None:
                collected.extend(_texts(event, ("Text", "Html")))
            continue
        if start is not None:
            if depth == 0:
                covered.append(lines_of(span))
                first, last = covered[-1]
                if start == "Paragraph" and _ESM.match("\n".join(lines[first - 1 : last])):
                    layout.markup.update(range(first, last + 1))
            depth += 1
        else:
            depth -= 1
        if title is not None:
            if type(end) is dict and "Heading" in end:
                first, last = lines_of(span)
                name = " ".join("".join(text for _, text in title).split())
                layout.headings.append(Heading(first, LEVELS[end["Heading"]], name, last))
                if declared := title_names(title):
                    layout.definitions[first] = declared
                if last > first:  # a setext title's underline
                    layout.markup.add(last)
                title = None
            continue
        if term is not None and term.ends_at(start, end):
            if term.described:  # an item of the term alone describes nothing
                _declare_options(layout, term)
            term = None
        if collected is not None:  # inside an HTML block
            if end is not None and depth == 0:
                _close_html(layout, "".join(collected), lines_of(span))
                collected = None
            continue
        if start is None:
            continue
        if type(start) is dict and "Heading" in start:
            title = []
        elif type(start) is dict and "CodeBlock" in start:
            first, last = lines_of(span)
            layout.literal.append((first, last))
            if type(start["CodeBlock"]) is dict or start["CodeBlock"] != "Indented":
                if caption := fence_caption(lines[first - 1] if first <= len(lines) else ""):
                    layout.captions[first] = caption
                else:
                    layout.markup.add(first)
                if last > first and _is_fence(lines[last - 1] if last <= len(lines) else ""):
                    layout.markup.add(last)
        elif start == "HtmlBlock" and depth == 1:
            collected = []
        elif type(start) is dict and "Table" in start:
            table = lines_of(span)
            layout.markup.update(range(table[0], table[1] + 1))  # rows are taken back below
        elif start in ("TableHead", "TableRow"):
            first, last = lines_of(span)
            layout.table_rows.update(range(first, last + 1))
            row_line = first if start == "TableRow" else 0
        elif start == "TableCell" and row_line:
            term, row_line = _OptionTerm(row_line, in_item=False), 0
        elif start == "Item":
            term = _OptionTerm(line_of(span["start"]), in_item=True)
            layout.items.append(term.line)
    layout.markup -= layout.table_rows
    layout.hidden |= _uncovered_lines(lines, covered)
    return layout


#: A table's head, read before a chunk that starts inside a table (see :func:`shown_pieces`).
_TABLE_HEAD = "| |\n|-|\n"


def shown_pieces(text: str, document: Document) -> dict[int, tuple[str, ...]]:
    """The cells of each row of a table (its head too), for a snippet: the text between the pipes,
    without the pipes that start and end the row, an escaped pipe as a pipe, empty cells left out.
    The rows are the parser's (a pipe in a paragraph or a code block sets nothing apart).

    A chunk starts where the chunk before it ended, which may be inside a table, its head in that
    chunk: when the chunk's first line starts with a pipe and the parser finds no table there, the
    rows are the ones it finds after a table's head put before the chunk."""
    lines = document.lines
    rows = markdown_layout(text).table_rows
    first = next((number for number, line in enumerate(lines, 1) if line.strip()), 0)
    if first and first not in rows and lines[first - 1].lstrip().startswith("|"):
        shift = _TABLE_HEAD.count("\n")
        rows = {number - shift for number in markdown_layout(_TABLE_HEAD + text).table_rows if number > shift}
    pieces = {number: table_cells(lines[number - 1]) for number in rows if number <= len(lines)}
    pieces.update(_directive_lines(document))
    return pieces


def _directive_lines(document: Document) -> dict[int, tuple[str, ...]]:
    """What a page shows of the lines that open and close directives and admonitions: a MyST
    directive's fence as reStructuredText's directive line shows (its options nothing, the reST of
    an ``{eval-rst}`` block as a reST page's), an admonition's or a PyMdown block's line its title
    (its type's name when it gives none and is an admonition), a closing line nothing, an object
    documented by mkdocstrings or mkautodoc (``::: httpx.get``) its name as code and its options
    nothing but the names of the members they list. The text in a MyST directive is shown as the
    reader reads it: as written, a fenced block's."""
    lines = document.lines
    literal = {number for first, last in document.literal for number in range(first, last + 1)}
    pieces: dict[int, tuple[str, ...]] = {}
    options = 0  # the last line of the options of the object documented last
    containers = container_lines(lines, document.literal)
    for first, last in document.literal:  # a fenced block: a MyST directive, or captioned code
        fence = _DIRECTIVE_FENCE.fullmatch(lines[first - 1]) if first <= len(lines) else None
        if fence is None:
            if caption := fence_caption(lines[first - 1] if first <= len(lines) else ""):
                pieces[first] = (caption,)
            continue
        name, argument = fence["name"].lower(), fence["argument"].strip()
        pieces[first] = directive_pieces(name, argument)
        end = last - 1 if last > first and _is_fence(lines[last - 1]) else last
        if name == "eval-rst":
            pieces.update(_restructured(lines, first, end))
        else:
            directive_options(lines, first, -1, pieces)
    for number, line in enumerate(lines, 1):
        if number in literal or number in pieces or not line.lstrip().startswith((":", "/", "!", "?", "=")):
            continue
        if fence := _DIRECTIVE_FENCE.fullmatch(line):
            pieces[number] = directive_pieces(fence["name"].lower(), fence["argument"].strip())
        elif number in containers:
            pieces[number] = (containers[number],) if containers[number] else ()
        elif (autodoc := _AUTODOC.fullmatch(line)) and number > options:
            pieces[number] = (f"`{autodoc['name']}`",)
            options = number
            while options < len(lines) and _indent(lines[options]) > len(autodoc["indent"]):
                member = _LISTED_MEMBER.fullmatch(lines[options])
                options += 1
                pieces[options] = (f"`{member['name']}`",) if member else ()
        elif _COLON_FENCE.fullmatch(line):
            pieces[number] = ()
        elif tab := _TAB.fullmatch(line.rstrip()):
            pieces[number] = (tab["title"].strip(),) if tab["title"].strip() else ()
        elif found := _ADMONITION.fullmatch(line.rstrip()) or _BLOCK.fullmatch(line):
            name, title = found["name"].lower(), found["title"]
            shown = title if title is not None else name.capitalize() if name in ADMONITION_TYPES else ""
            pieces[number] = (shown.strip(),) if shown.strip() and name != "html" else ()
    return pieces


def container_lines(lines: list[str], literal: list[tuple[int, int]]) -> dict[int, str]:
    """What a page shows on the lines that open and close its custom containers (VitePress' and
    Docusaurus' ``::: tip`` ... ``:::``, :data:`_CONTAINER_OPENING`), outside code: an opening line
    its title, or its type's name when it gives none and is an admonition (``Tip``; a
    ``code-group``'s tabs show none), a closing line nothing ('').

    Only a container that a line of colons closes is one: an object documented by mkdocstrings
    (``::: httpx.get``) is closed by nothing, and a MyST directive's colon fence (``:::{note}``)
    closes with the same line, so each opening waits for its closing on a stack, one pass."""
    code = {number for first, last in literal for number in range(first, last + 1)}
    open_lines: list[tuple[int, int, str | None]] = []  # (line, colons, shown; None: a MyST directive)
    shown: dict[int, str] = {}
    for number, line in enumerate(lines, 1):
        if number in code or ":::" not in line:
            continue
        if closing := _COLON_FENCE.fullmatch(line):
            colons = closing.group().count(":")
            if open_lines and colons >= open_lines[-1][1]:
                opened, _, title = open_lines.pop()
                if title is not None:
                    shown[opened], shown[number] = title, ""
        elif _DIRECTIVE_FENCE.fullmatch(line):  # a colon fence: a backtick one is code
            fence = line.lstrip(" \t")
            open_lines.append((number, len(fence) - len(fence.lstrip(":")), None))
        elif (opening := _CONTAINER_OPENING.fullmatch(line)) and _names_a_container(opening):
            name = opening["name"].lower()
            title = (opening["bracketed"] or opening["title"] or "").strip()
            if not title and name in ADMONITION_TYPES:
                title = ADMONITIONS.get(name, name.capitalize())
            open_lines.append((number, len(opening["colons"]), title))
    return shown


def _names_a_container(opening: re.Match[str]) -> bool:
    """Whether a line like a container's opening names one (:data:`CONTAINER_NAMES`, an admonition's
    type) or gives it a title in brackets, as only Docusaurus' admonitions write (``:::note[Take
    care]``)."""
    name = opening["name"].lower()
    return opening["bracketed"] is not None or name in ADMONITION_TYPES or name in CONTAINER_NAMES


def _indent(line: str) -> int:
    """How far ``line`` is indented; a blank line as not at all."""
    return len(line) - len(line.lstrip()) if line.strip() else 0


def _restructured(lines: list[str], first: int, end: int) -> dict[int, tuple[str, ...]]:
    """What a page shows of the reStructuredText of an ``{eval-rst}`` block (its lines after line
    ``first`` up to ``end``): its directives, options and tables as a reST page's (see
    :func:`indexer.formats.rst.shown_pieces`), the explicit markup that shows nothing as nothing,
    its paragraphs' lines and what those show with their inline markup read as reST's (each line
    alone), and the rest as written: a directive's content may be code the reader does not know
    for code (Click's ``.. click:example::`` holds Python), as the whole block was before."""
    content = lines[first:end]
    document = read_rst("\n".join(content))
    literal = {number for start, last in document.literal for number in range(start, last + 1)}
    pieces = {
        first + number: tuple(map(restructured_text, piece))
        for number, piece in restructured_pieces("", document).items()
    }
    for number, (written, read) in enumerate(zip(content, document.lines, strict=False), first + 1):
        if not written.strip() or number in pieces:
            continue
        if not read.strip() or number - first in document.markup:
            pieces[number] = ()
        elif number - first not in literal and not read[:1].isspace():
            pieces[number] = (restructured_text(read),)
    return pieces


def table_cells(row: str) -> tuple[str, ...]:
    """A table row's cells as written, without the marks of a quote it is in."""
    cells = _CELL_PIPE.split(_QUOTE_MARKS.sub("", row))
    return tuple(shown for cell in cells if (shown := cell.strip().replace("\\|", "|")))


def _title_pieces(event: Mapping[str, object]) -> list[tuple[bool, str]]:
    """The text a heading's (or a table cell's) event carries, marked whether it is a code span."""
    return [(kind == "Code", text) for kind in TITLE_EVENTS for text in _texts(event, (kind,))]


def _texts(event: Mapping[str, object], kinds: tuple[str, ...]) -> list[str]:
    """The text an event of one of ``kinds`` carries (``{"Text": "..."}``), none for another kind."""
    return [text for kind in kinds if isinstance(text := event.get(kind), str)]


def _close_html(layout: MarkdownLayout, html: str, lines: tuple[int, int]) -> None:
    """An HTML block that is one comment, or one element whose content the page never shows
    (:func:`_is_unshown_element`), is hidden; one that is a heading heads its lines."""
    first, last = lines
    if _is_comment(html) or _is_unshown_element(html):
        layout.hidden.update(range(first, last + 1))
    elif heading := _html_heading(html):
        layout.headings.append(Heading(first, heading[0], heading[1], last))


def _front_matter(text: str) -> tuple[int, int, str, str] | None:
    """The front matter ``text`` opens with, as :attr:`MarkdownLayout.front_matter`: between a first
    line of ``---`` (YAML, closed by ``---`` or ``...``) or ``+++`` (TOML) and its closing fence,
    its first line a key's (``title: Setup``, ``title = "Setup"``) or a comment: a ``---`` before a
    blank line or a paragraph is a thematic break. Read here, not by the parser's metadata option:
    that one takes any ``---`` line followed by text for a metadata block, anywhere in the file,
    where CommonMark and every renderer read a thematic break and the heading and text after it (a
    README that sets its sections apart so)."""
    opening, _, rest = text.partition("\n")
    style = _FRONT_MATTER_FENCES.get(opening.rstrip())
    if style is None or not _METADATA_START.match(rest):
        return None
    kind, closings = style
    inside: list[str] = []
    for number, line in enumerate(rest.split("\n"), 2):
        if line.rstrip() in closings:
            return 1, number, kind, "".join(kept + "\n" for kept in inside)
        inside.append(line)
    return None


def _outside_code_spans(line: str, read: Callable[[str], str]) -> str:
    """``line`` with ``read`` applied to its text outside code spans, the spans as written."""
    pieces = _CODE_SPAN.split(line)  # (marks, code) pairs after each text
    shown = []
    for place in range(0, len(pieces), 3):
        shown.append(read(pieces[place]))
        if place + 2 < len(pieces):
            marks = pieces[place + 1]
            shown.append(marks + pieces[place + 2] + marks)
    return "".join(shown)


def html_shown(prose: str) -> str:
    """Text outside code as a rendered page shows its HTML: a template's directive nothing, an
    autolink its address, an abbreviation followed by its title in parentheses, each tag as
    :func:`_tag_shown` reads it."""
    if "{{" in prose:
        prose = _SHORTCODE.sub(_shortcode_shown, prose)
    if "{%" in prose:
        prose = _TEMPLATE_DIRECTIVE.sub("", prose)
    if "<" in prose:
        prose = _ABBREVIATION.sub(_abbreviation_shown, _AUTOLINK.sub(r"\1", prose))
        prose = _TAG.sub(_tag_shown, prose)
    return prose


def _shortcode_shown(found: re.Match[str]) -> str:
    """What a Hugo shortcode's call shows: the values of its caption, title and alt attributes;
    the call as written where it has other arguments alone, nothing where it has none."""
    arguments = found.group("arguments")
    titles = (_attribute(arguments, key).strip() for key in _SHORTCODE_TITLES)
    return " ".join(filter(None, titles)) or (found.group() if arguments.strip() else "")


def _abbreviation_shown(found: re.Match[str]) -> str:
    """An abbreviation and, when its title spells it out, the title in parentheses after it."""
    title = _attribute(found.group(1), "title").strip()
    return f"{found.group(2)} ({title})" if title else found.group(2)


def _attribute(tag: str, name: str) -> str:
    """The value of attribute ``name`` in ``tag`` (or in a tag's attributes); '' when it has none."""
    for found in _ATTRIBUTE.finditer(tag):
        if found.group(1).lower() == name:
            return next(value for value in found.groups()[1:] if value is not None)
    return ""


def _tag_shown(found: re.Match[str]) -> str:
    """What a tag shows: an image its alternative text, an inline element's tag nothing
    (``<code>rg</code>,`` reads ``rg,``), any other's (a line break, a cell's) a space; a comment
    nothing."""
    tag = found.group()
    name = _TAG_NAME.match(tag)
    element = name.group(1).lower() if name else ""
    if element == "img":  # in any case, as HTML's names are (``<IMG>``, ``<Img>``)
        return _text_value(_attribute(tag, "alt"))
    if name and name.group(1)[0].isupper() and not name.group(1).isupper():  # a JSX component's
        return next(filter(None, (_text_value(_attribute(tag, key)) for key in _COMPONENT_TITLES)), " ")
    return " " if element and element not in _INLINE_ELEMENTS else ""


def _text_value(value: str) -> str:
    """An attribute's value as text: as written, or the string a JSX expression gives alone; ''
    for another expression (``{props.title}``), which shows what the page computes."""
    if not value.startswith("{"):
        return value
    literal = _STRING_LITERAL.fullmatch(value)
    return next((text for text in literal.groups() if text is not None), "") if literal else ""


def _html_heading(block: str) -> tuple[int, str] | None:
    """The level and title of an HTML block that is one heading element (``<h3 name="config">How do
    I configure it?</h3>``), as a page titles its sections where Markdown's own marks cannot carry
    an anchor or an alignment; the page renders it as that heading. Any other block is none."""
    stripped = block.strip()
    opening = _HTML_HEADING_START.match(stripped)
    if opening is None or not stripped.lower().endswith(f"</h{opening['level']}>"):
        return None
    inner = stripped[opening.end() : -len("</h1>")]
    if _HTML_HEADING_START.search(inner):
        return None  # several headings in one block
    title = " ".join(html.unescape(_TAG.sub(_tag_shown, inner)).split())
    return (int(opening["level"]), title) if title else None


@dataclass
class _OptionTerm:
    """The first text of a table row's first cell, or of a list item, read while it may still be a
    command's options in code (``| `--all`, `-a` | ...``, ``* `--port <int>` - Bind to this
    port.``): a table or a list keyed by options says what each does, as a manual's list of them
    does. A cell's term is all of it; an item's ends at its separator (``:`` or a dash between
    blanks) or with its first line, the lines after it describing it. An item that is the term
    alone describes nothing: a list of names (a widget's CSS classes ``-warning``, ``-error``).

    A cell the page anchors (an element with an id before its text, ``<a id="opt-acme-email">``
    around ``acme.email`` in code) may be any name in code: a generated reference's options table
    keys its rows so (:func:`anchored_cell_names`)."""

    line: int
    in_item: bool
    pieces: list[tuple[bool, str]] = field(default_factory=list)
    anchored: bool = False
    ended: bool = False
    size: int = 0  # characters read
    paragraph_ended: bool = False  # a loose item's first paragraph, the term's, has ended
    described: bool = False  # something in the item follows the term

    def read(self, pieces: list[tuple[bool, str]]) -> bool:
        """Take the term's next texts in; whether it may still declare names: its first text an
        option in code (any code in an item, or in a cell the page anchors), and no longer than a
        term of options is (a long item is prose)."""
        for is_code, text in pieces:
            if self.ended:
                break
            if not (is_code or self.pieces or text.strip()):
                continue  # the space between a cell's anchor and its text
            separator = None if is_code or not self.in_item else _TERM_END.search(text)
            self.pieces.append((is_code, text[: separator.start()] if separator else text))
            self.size += len(self.pieces[-1][1])
            self.ended = separator is not None
            first = self.pieces[0]
            if not (starts_option_cell(first) or ((self.anchored or self.in_item) and first[0])):
                return False
            if self.size > _LONGEST_TERM:
                return False
        return True

    def anchor(self, tag: str) -> None:
        """Take in an HTML tag of the term: one with an id before a cell's first text anchors it."""
        self.anchored = self.anchored or (
            not self.in_item and not self.pieces and bool(_ID_ATTRIBUTE.search(tag))
        )

    def ends_at(self, start: object, end: object) -> bool:
        """Whether a tag's start or end ends the term (:attr:`described` says whether it declares):
        a cell's end; in an item, any block that follows the term (a paragraph after the term's
        own, a nested list), or the item's end, which leaves the term describing nothing."""
        if not self.in_item:
            self.described = end == "TableCell"
            return self.described
        if start is not None and (self.paragraph_ended or _tag_name(start) not in _INLINE_TAGS):
            self.described = True
            return True
        self.paragraph_ended = self.paragraph_ended or end == "Paragraph"
        return end == "Item"


def _declare_options(layout: MarkdownLayout, term: _OptionTerm) -> None:
    """Record the names ``term`` declares: options (:func:`option_cell_names`), the name in code of a
    cell the page anchors (:func:`anchored_cell_names`), or an item's names in code
    (:func:`listed_term_names`)."""
    declared = (
        option_cell_names(term.pieces)
        or (anchored_cell_names(term.pieces) if term.anchored else ())
        or (listed_term_names(term.pieces) if term.in_item else ())
    )
    if declared:
        layout.definitions[term.line] = declared


def _tag_name(tag: object) -> str:
    """A tag's name: a bare tag is its name (``"Paragraph"``), one with fields a dict keyed by it."""
    if isinstance(tag, str):
        return tag
    return next(iter(tag), "") if isinstance(tag, dict) else ""


def _is_comment(html: str) -> bool:
    stripped = html.strip()
    return stripped.startswith("<!--") and stripped.endswith("-->") and "-->" not in stripped[4:-3]


def _is_unshown_element(html: str) -> bool:
    """Whether an HTML block is one ``<script>`` or ``<style>`` element (:data:`_UNSHOWN_START`),
    from its start tag to its end tag: CommonMark's HTML block of the first kind, which ends on the
    line of that end tag (text after it on that line is shown, and such a block is not hidden)."""
    stripped = html.strip()
    opening = _UNSHOWN_START.match(stripped)
    if opening is None:
        return False
    end = f"</{opening[1].lower()}>"
    return stripped.lower().find(end) == len(stripped) - len(end)  # its first end tag ends the block


def _bodies_dedented(text: str) -> str:
    """``text`` with the content of each admonition and content tab (the lines indented under its
    line, and the blank lines among them) moved left to where that line starts, as Python-Markdown
    and PyMdown Extensions read it: CommonMark alone reads such content past its first paragraph as
    an indented code block, and its fences and headings as code. The line that opens the content
    is read as a blank line, so it is no part of the content's first paragraph (or title). Every
    line keeps its number. No such line opens content inside a fenced code block, so a page showing
    the syntax keeps it as code; a fence the content opens and leaves open is none, as the
    extension's own parse of the content reads it."""
    lines = text.split("\n")
    depth = 0  # the admonitions and tabs the line is in
    fence, fence_depth, fence_line = "", 0, 0  # the marks, depth and line of the fence the line is in
    for number, line in enumerate(lines):
        if not line.strip():
            continue
        written = line[: len(line) - len(line.lstrip(" \t"))]
        indent = len(written.expandtabs(_BODY_INDENT))
        depth = min(depth, indent // _BODY_INDENT)
        if fence and depth < fence_depth:  # content that ends with its fence open: no fence, as
            fence, lines[fence_line] = "", ""  # its own parse reads it (the lines after it as text)
        if depth:
            line = " " * (indent - _BODY_INDENT * depth) + line.lstrip(" \t")
            lines[number] = line
        if fence:
            fence = "" if _is_fence(line) and line.strip().startswith(fence) else fence
        elif opening := _OPENING_FENCE.match(line):
            fence, fence_depth, fence_line = opening["marks"], depth, number
        elif _opens_content(line):
            depth += 1
            lines[number] = ""
    return "\n".join(lines)


def _components_read(text: str) -> str:
    """An MDX page's ``text`` as MDX reads it, for CommonMark's parser: the children of each JSX
    component (``<Tabs>``, ``<TabItem label="npm">``, ``<Steps>``, on lines of their own) moved
    left to the column its tag starts at, since MDX has no indented code blocks (a list or a fence
    indented in a ``<TabItem>`` is a list and a fence; in a list item, the item's still); and each
    component's opening and closing lines read as blank lines, so that neither opens an HTML block
    that takes the fence after it in (what the page shows of them is read apart, :func:`_html_read`).
    A fence opens at any depth, and what it holds is left as written. Every line keeps its number."""
    lines = text.split("\n")
    shifts: list[int] = []  # how far the children of each component open around the line move left
    fence = ""  # the marks of the fence the line is in
    for number, line in enumerate(lines):
        if not line.strip():
            continue
        indent = _text_column(line)
        shift = shifts[-1] if shifts else 0
        moved = " " * (indent - min(indent, shift)) + line.lstrip(" \t")
        if fence:
            fence = "" if _is_fence(moved) and moved.strip().startswith(fence) else fence
        elif opening := _OPENING_FENCE.match(moved.lstrip()):
            fence = opening["marks"]
        elif _COMPONENT_CLOSING.fullmatch(line):
            moved = ""
            if shifts:
                shifts.pop()
        elif _COMPONENT_OPENING.fullmatch(line) and not line.rstrip().endswith("/>"):
            moved = ""
            child = number + 1
            while child < len(lines) and not lines[child].strip():
                child += 1
            below = _text_column(lines[child]) if child < len(lines) else 0
            shifts.append(shift + max(below - indent, 0))
        lines[number] = moved
    return "\n".join(lines)


def _text_column(line: str) -> int:
    """The column a line's text starts at, a tab reaching the next multiple of four."""
    return len(line[: len(line) - len(line.lstrip(" \t"))].expandtabs(_BODY_INDENT))


def _opens_content(line: str) -> bool:
    """Whether ``line`` is an admonition's or a content tab's, whose content is indented under it."""
    start = line.lstrip(" \t")[:3]
    return start in ("!!!", "???", "===") and bool(
        _ADMONITION.fullmatch(line.rstrip()) or _TAB.fullmatch(line.rstrip())
    )


def fence_caption(line: str) -> str:
    """The caption a code fence's info string gives its block (:data:`_FENCE_CAPTION`,
    :data:`_FENCE_LABEL`), read as the line the page shows above the code: a file's name says what
    the code is; '' when it gives none."""
    line = line.lstrip(" \t")  # a fence opening a block (a list item's, nested) at any depth
    opening = _OPENING_FENCE.match(line)
    if opening is None:
        return ""
    if found := _FENCE_CAPTION.search(line, opening.end()):
        return (found["double"] or found["single"]).strip()
    labelled = _FENCE_LABEL.match(line, opening.end())
    if labelled is None or _LINE_NUMBERS.fullmatch(labelled["label"]):
        return ""
    return labelled["label"].strip()


def _is_fence(line: str) -> bool:
    """A closing code fence: three or more backticks or tildes alone."""
    stripped = line.strip()
    return len(stripped) >= 3 and (set(stripped) == {"`"} or set(stripped) == {"~"})


def _uncovered_lines(lines: list[str], covered: list[tuple[int, int]]) -> set[int]:
    """Non-blank lines outside every top-level block: CommonMark gives link reference definitions no
    block of their own, so these are they."""
    inside: set[int] = set()
    for first, last in covered:
        inside.update(range(first, last + 1))
    return {number for number, line in enumerate(lines, 1) if line.strip() and number not in inside}


def inline_text(text: str) -> str:
    """Lines outside code (a paragraph's, read together: a link or emphasis may end on a later line)
    as a rendered page shows them, for a reader of a snippet, line for line: no heading or quote
    marks, no HTML tags or comments, entities as their characters, a link or an image as its text
    (``[text](url)``, ``[text][ref]``, ``![alt](src)``), an autolink as its address, emphasis
    without its marks, a MyST role as reStructuredText's reads (``{func}`name```). A code span is
    code: it stays one pair of backticks around its characters as written, the one mark a
    plain-text reader needs to tell ``open`` the function from the word."""
    text = "\n".join(_without_line_marks(line) for line in text.split("\n"))
    if "{" in text:
        text = _ROLE.sub(_outside_code(lambda found: role_text(found["role"], found["text"])), text)
    if "[" in text:
        text = _IMAGE.sub(_outside_code(lambda found: found["text"]), text)
        text = _LINK.sub(_outside_code(lambda found: found["text"]), text)
    if "*" in text or "_" in text:
        text = _EMPHASIS.sub(_outside_code(_enclosed_text), _STRONG.sub(_outside_code(_enclosed_text), text))
    pieces = _CODE_SPAN.split(text)  # (marks, code) pairs at the odd places
    shown = []
    for place in range(0, len(pieces), 3):
        prose = pieces[place]
        shown.append(html_shown(prose))
        if place + 2 < len(pieces):
            shown.append(f"`{pieces[place + 2].strip(' ')}`")
    return "\n".join(_unescaped(line) for line in "".join(shown).split("\n"))


def _enclosed_text(found: re.Match[str]) -> str:
    """The text of the one :func:`_enclosed` alternative that matched."""
    return next(text for text in found.groups()[2:] if text is not None)


def _outside_code(read: Callable[[re.Match[str]], str]) -> Callable[[re.Match[str]], str]:
    """``read`` for a pattern that matches a code span first: a code span stays as written."""
    return lambda found: found[0] if found["code"] is not None else read(found)


def _without_line_marks(line: str) -> str:
    """A line without the marks of a quote and a heading (``> ## Title ##``), nor a heading's
    attribute list."""
    line = _QUOTE_MARKS.sub("", line)
    heading = _HEADING_MARKS.match(line)
    return _HEADING_ATTRIBUTES.sub("", _CLOSING_MARKS.sub("", line[heading.end() :])) if heading else line


def _unescaped(line: str) -> str:
    """A line with its entities as their characters, on one line (``&#10;`` is a newline)."""
    return " ".join(html.unescape(line).split("\n")) if "&" in line else line
