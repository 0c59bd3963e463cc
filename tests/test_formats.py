"""Reading each format: what becomes text, which lines are headings and literal, how hits are cited.

The documents are made here (tests/support/documents.py writes the PDFs, DOCX files and notebooks), and the
last tests build a real index of a folder holding one of each, asserting exactly which files,
headings and citations end up in it.
"""

from __future__ import annotations

import gc
import math
import time

import apsw
import pytest
from conftest import write
from documents import (
    docx_bomb,
    make_docx,
    make_notebook,
    make_pdf,
    pdf_flate_bomb,
    pdf_with_a_page_tree_loop,
    with_a_flipped_byte,
    with_document_entry_patched,
)
from helpers import HashBackend, fastest_seconds, grows_linearly

from indexer import Index, formats
from indexer.chunking import ChunkSettings, chunk_document
from indexer.formats import UnreadableFile, decode, parse_text, read_document
from indexer.formats.document import MAX_LINES, MAX_TEXT_CHARS
from indexer.formats.docx import MAX_XML_BYTES
from indexer.formats.notebook import MAX_JSON_VALUES
from indexer.formats.pdf import MEMORY_LIMIT
from indexer.store.migrations import all_migrations, migrations_folder
from indexer.store.sqlite import SQLiteStore


def words(texts: list[str]) -> list[int]:
    return [len(text.split()) for text in texts]


def headings_of(path: str, text: str) -> list[tuple[int, int, str]]:
    return [(h.line, h.level, h.title) for h in parse_text(path, text).headings]


def heading_paths(path: str, text: str) -> list[str]:
    """The heading path of the text under each heading, in order (what a chunk starting there carries)."""
    trail: list[tuple[int, str]] = []
    paths = []
    for heading in parse_text(path, text).headings:
        trail = [(level, title) for level, title in trail if level < heading.level] + [
            (heading.level, heading.title)
        ]
        paths.append(" > ".join(title for _, title in trail))
    return paths


# -- encodings ----------------------------------------------------------------------------------


def test_utf8_utf16_and_legacy_encodings_are_decoded_and_named():
    assert decode("\ufeffhello".encode()) == ("hello", "utf-8")
    assert decode("hello".encode("utf-16")) == ("hello", "utf-16")
    note = "Menu du café: crème brûlée, gâteau. Prix: 3,50 €\n".encode("cp1252")
    assert decode(note) == ("Menu du café: crème brûlée, gâteau. Prix: 3,50 €\n", "cp1252")
    russian = "Привет, как дела? Это короткий текст на русском языке.\n".encode("cp1251")
    assert decode(russian) == ("Привет, как дела? Это короткий текст на русском языке.\n", "cp1251")


def test_binary_is_refused():
    with pytest.raises(UnreadableFile, match="binary") as refused:
        decode(b"abc\x00def")
    assert refused.value.status == "binary"


# -- Markdown -----------------------------------------------------------------------------------


def test_markdown_headings_in_comments_fences_and_front_matter_are_not_headings():
    text = (
        "---\ntitle: Notes\n---\n\n# Guide\n\n<!--\n# Old title\n-->\n\nintro\n\n"
        "```sh\n# install it\npip install x\n```\n\n    # indented code\n\n"
        "Setup\n-----\n\nsteps\n\n## Use `it`\n\nrun\n"
    )
    assert headings_of("doc.md", text) == [(5, 1, "Guide"), (20, 2, "Setup"), (25, 2, "Use it")]
    document = parse_text("doc.md", text)
    assert document.literal == [(13, 16), (18, 18)]
    assert heading_paths("doc.md", text) == ["Guide", "Guide > Setup", "Guide > Use it"]


def test_a_rule_then_text_further_down_is_no_front_matter_but_a_rule_and_what_follows():
    """A README that sets its sections apart with ``---`` lines: each section's heading is one,
    whether or not the file opens with front matter of its own."""
    sections = "# Guide\n\nintro\n\n---\n#### Rotating files\nbody one\n\n---\n#### Backtrace\nbody two\n"
    assert headings_of("README.md", sections) == [
        (1, 1, "Guide"),
        (6, 4, "Rotating files"),
        (10, 4, "Backtrace"),
    ]
    assert parse_text("README.md", sections).literal == []
    fronted = "---\ntitle: Notes\n---\n" + sections
    assert headings_of("README.md", fronted)[1:] == [(9, 4, "Rotating files"), (13, 4, "Backtrace")]
    assert parse_text("README.md", fronted).literal == []
    opening = "---\nThe library in short.\n\n## Install\n\n```yaml\n---\nkey: value\n```\n"  # a rule first
    assert [title for _, _, title in headings_of("README.md", opening)] == ["Install"]
    alone = parse_text("notes.md", "---\ntitle: Notes\n---")  # front matter alone, no final newline
    assert (alone.lines, alone.markup) == (["Notes", "", ""], frozenset())


def test_an_admonition_s_and_a_content_tab_s_indented_content_is_text_not_code():
    """Python-Markdown's admonitions and PyMdown's content tabs indent their content under their
    line; CommonMark alone reads it, past its first paragraph, as an indented code block."""
    text = (
        '# Guide\n\n!!! note "Take care"\n    The worker runs in a thread.\n\n'
        "    Call `run_worker` to start it:\n\n    ```python\n    self.run_worker(fetch())\n    ```\n\n"
        '=== "Output"\n\n    The app shows a window.\n\n'
        "    ??? tip\n        Nested, it is read too.\n\n"
        "```markdown\n!!! note\n    ```python\n    shown as the syntax\n    ```\n```\n\n"
        "    indented code after the tab\n"
    )
    lines = text.split("\n")
    document = parse_text("docs/guide.md", text)
    fence = lines.index("    ```python") + 1
    example = lines.index("```markdown") + 1
    indented = lines.index("    indented code after the tab") + 1
    assert document.literal == [(fence, fence + 2), (example, example + 5), (indented, indented)]
    assert {fence, fence + 2, example, example + 5} <= document.markup
    assert document.lines == text.splitlines(), "the lines are kept as written"
    shown = formats.shown_text("docs/guide.md", text)
    assert "Output" in shown.split("\n") and '=== "Output"' not in shown


def test_an_mdx_page_s_imports_show_nothing_and_a_component_shows_its_title():
    text = (
        "# Thunks\n\nimport { DetailedExplanation } from '../components/DetailedExplanation'\n"
        "import Tabs from '@theme/Tabs'\n\nexport const meta = {\n  draft: true,\n}\n\n"
        'import this sentence, as prose may.\n\n<DetailedExplanation title={`Thunks and "containers"`}>\n\n'
        'Thunks hold logic.\n\n</DetailedExplanation>\n\n<TabItem value="npm" label="With npm">\n\n'
        "<Card title={props.title} />\n"
    )
    lines = text.split("\n")
    document = parse_text("docs/thunks.mdx", text)
    assert {3, 4, 6, 7, 8} <= document.markup and 10 not in document.markup
    tag = lines.index('<DetailedExplanation title={`Thunks and "containers"`}>') + 1
    assert document.read_as[tag] == 'Thunks and "containers"'
    assert document.read_as[lines.index('<TabItem value="npm" label="With npm">') + 1] == "With npm"
    assert {lines.index("</DetailedExplanation>") + 1, lines.index("<Card title={props.title} />") + 1} <= (
        document.markup
    )
    shown = formats.shown_text("docs/thunks.mdx", text).split("\n")
    assert 'Thunks and "containers"' in shown and not any(
        "import" in line and "from" in line for line in shown
    )


@pytest.mark.parametrize(
    ("path", "page", "included"),
    [
        (
            "docs/install.mdx",
            "import Intro from './_intro.mdx';\nimport Tabs from '@theme/Tabs';\n\n# Install\n\n<Intro />\n",
            6,
        ),
        ("docs/changelog.md", '# Changelog\n\n--8<-- "CHANGELOG.md"\n', 3),
        ("docs/faq.md", '# FAQ\n\n{% include "faq-body.md" %}\n', 3),
    ],
    ids=["an MDX page's imported page", "an MkDocs snippet", "a template's include"],
)
def test_a_doc_site_page_that_only_includes_another_page_stores_no_chunk(path, page, included):
    """A title over the page a site's build puts in its place: a chunk of the title alone would come
    first for what the included page answers, with nothing in it to read."""
    document = read_document(path, page.encode())
    assert document.includes == {included} and included in document.markup
    assert (
        chunk_document(document, lambda texts: [len(t.split()) for t in texts], ChunkSettings.for_limit(64))
        == []
    )


def test_a_doc_site_page_keeps_its_own_text_and_a_component_or_snippet_that_includes_nothing():
    words = lambda texts: [len(t.split()) for t in texts]  # noqa: E731
    tabs = "import Tabs from '@theme/Tabs';\n\n# Tabs\n\n<Tabs />\n"  # a component, not a page
    assert read_document("docs/tabs.mdx", tabs.encode()).includes == frozenset()
    usage = '# Usage\n\nRun it.\n\n--8<-- "snippets/run.md"\n\n```\n--8<-- "shown.md"\n```\n'
    document = read_document("docs/usage.md", usage.encode())
    assert document.includes == {5}  # the snippet in a code block is shown as written
    chunks = chunk_document(document, words, ChunkSettings.for_limit(64))
    assert [chunk.heading for chunk in chunks] == ["Usage"] and "Run it." in chunks[0].text


def test_an_mdx_component_s_indented_children_are_markdown_not_code():
    text = (
        '# Setup\n\n<Tabs>\n  <TabItem label="Manual">\n    <Steps>\n\n'
        "      1. Add the plugin:\n\n"
        '          ```sh title="install.sh"\n          cargo add tauri-plugin-deep-link\n          ```\n\n'
        "    </Steps>\n  </TabItem>\n</Tabs>\n\n"
        "<ShowSolution>\n```html\n<title>App</title>\n```\n</ShowSolution>\n\n"
        "    indented code in plain Markdown\n"
    )
    lines = text.split("\n")
    fence = lines.index('          ```sh title="install.sh"') + 1
    solution = lines.index("```html") + 1
    mdx = parse_text("docs/plugin.mdx", text)
    assert mdx.literal[:2] == [(fence, fence + 2), (solution, solution + 2)]  # the fences, no indented block
    assert (
        mdx.read_as[fence] == "install.sh"
        and mdx.read_as[lines.index('  <TabItem label="Manual">') + 1].strip() == "Manual"
    )
    assert lines.index("<title>App</title>") + 1 not in mdx.read_as  # code, not an HTML block's tags
    step = lines.index("      1. Add the plugin:") + 1
    assert not any(first <= step <= last for first, last in mdx.literal)
    plain = parse_text("docs/plugin.md", text)  # CommonMark's: an indented code block
    assert any(first <= step <= last for first, last in plain.literal)
    # a fence in a list item, however deep: what it holds (tags, a heading's HTML) stays code
    listed = (
        "# Fonts\n\n<Steps>\n1. Add the font:\n\n    ```astro\n    <Layout>\n      <h1>Hello</h1>\n"
        "    </Layout>\n    ```\n\n2. Use it.\n</Steps>\n"
    )
    fonts = parse_text("docs/fonts.mdx", listed)
    assert [heading.title for heading in fonts.headings] == ["Fonts"] and fonts.literal == [(6, 10)]


def test_a_code_fence_s_caption_is_read_and_shown_as_the_line_above_its_code():
    text = (
        "# Slices\n\n"
        '```ts title="features/users/usersSlice.ts" {3}\nexport const usersSlice = createSlice({})\n```\n\n'
        "```js filename='app.js'\nrun()\n```\n\n"
        '```python\nx = "title=\\"no\\""\n```\n'
    )
    document = parse_text("docs/slices.mdx", text)
    assert document.read_as == {3: "features/users/usersSlice.ts", 7: "app.js"}
    assert {3, 7} & document.markup == set() and {5, 9, 11} <= document.markup
    chunk = chunk_document(
        document, lambda texts: [len(t.split()) for t in texts], ChunkSettings.for_limit(256)
    )
    assert "features/users/usersSlice.ts\nexport const usersSlice" in chunk[0].model_text
    shown = formats.shown_text("docs/slices.mdx", text).split("\n")
    assert shown[2] == "features/users/usersSlice.ts" and "app.js" in shown and "```python" not in shown
    # VitePress labels a code group's tab in brackets after the language
    group = "::: code-group\n\n```ts [src/server.ts]\nnew Elysia()\n```\n\n```sh\nls [a-z]*\n```\n\n:::\n"
    assert parse_text("patterns/deploy.md", group).read_as == {3: "src/server.ts"}
    # lines to highlight, and a bracket that does not end the info string, are no caption
    for fence in ("```js [1,2]", "```console [root@host ~]# ls"):
        assert parse_text("notes.md", f"{fence}\nls\n```\n").read_as == {}


@pytest.mark.parametrize(
    ("text", "headings", "literal"),
    [
        # a fence the content leaves open is none, as the content's own parse reads it
        (
            "# G\n\n!!! note\n    ```py\n    x = 1\n\nText after.\n\n## Later\n\nMore.\n",
            ["G", "Later"],
            [],
        ),
        # the admonition's line is no part of the title its content starts with
        ("# G\n\n!!! note\n    Title\n    -----\n    body\n", ["G", "Title"], []),
        # Windows line ends
        ('# G\r\n\r\n=== "Py"\r\n\r\n    First.\r\n\r\n    Second.\r\n', ["G"], []),
    ],
)
def test_an_admonition_s_content_ends_where_its_indentation_does(text, headings, literal):
    document = parse_text("docs/page.md", text)
    assert [heading.title for heading in document.headings] == headings
    assert document.literal == literal


def test_a_line_like_an_admonition_s_is_read_in_time_linear_in_its_length():
    def seconds(size: int) -> float:
        text = "# Notes\n\n" + ("!!! note " + "a" * 60 + " " * size + "x\n\n") * 4
        return fastest_seconds(lambda: parse_text("docs/page.md", text), repeats=3)

    assert grows_linearly(seconds, 5_000, 40_000, 20)


def test_a_custom_container_s_lines_read_as_the_box_the_page_shows():
    """VitePress (markdown-it-container) and Docusaurus write admonitions and tab groups between a
    ``::: name`` line and a line of colons: the page shows a box with its title (or its type's name),
    the model and a snippet read that, not the colons; an object mkdocstrings documents (``:::
    httpx.get``, closed by nothing) is still shown as its name."""
    page = (
        "# Deploy to production\n\n## Cluster mode\n\n::: code-group\n\n```ts [src/index.ts]\n"
        "import cluster from 'node:cluster'\n```\n\n:::\n\n::: tip\n"
        "Elysia on Bun uses SO_REUSEPORT by default.\n:::\n\n"
        "::: details Why not --minify {open}\nIt shortens function names.\n:::\n\n"
        ":::warning[Bun needs AVX2]\nThere's no known workaround.\n:::\n\n"
        "::: httpx.get\n"
    )
    lines = page.split("\n")
    document = parse_text("patterns/deploy.md", page)
    line = {text: number for number, text in enumerate(lines, 1)}
    assert document.read_as[line["::: tip"]] == "Tip"
    assert document.read_as[line["::: details Why not --minify {open}"]] == "Why not --minify"
    assert document.read_as[line[":::warning[Bun needs AVX2]"]] == "Bun needs AVX2"
    closings = {number for number, text in enumerate(lines, 1) if text == ":::"}
    assert len(closings) == 4 and closings | {line["::: code-group"]} <= document.markup
    shown = formats.shown_text("patterns/deploy.md", page).split("\n")
    assert "Tip" in shown and "Bun needs AVX2" in shown and "`httpx.get`" in shown
    assert not any(text.startswith(":::") or text == "`tip`" for text in shown)
    prose = "::: Remember that this line is prose\nthat a later line of colons follows.\n:::\n"
    assert parse_text("notes.md", prose).read_as == {}, "no container is named so: read as written"


def test_a_line_like_a_custom_container_s_is_read_in_time_linear_in_its_length():
    def seconds(size: int) -> float:
        text = "# Notes\n\n" + ("::: tip " + "a " * size + "{x\n\n:::\n\n") * 4
        text += "::: tip" + " " * size + "x{\n:::\n"  # blanks a lazy title could end in, three ways
        return fastest_seconds(lambda: parse_text("docs/page.md", text), repeats=3)

    assert grows_linearly(seconds, 5_000, 40_000, 20)


def test_shiki_s_notation_at_a_code_line_s_end_is_not_read():
    """VitePress highlights code with Shiki, whose notation (``// [!code ++]``) marks a line added,
    removed or focused and is taken out of the page: the model and a snippet read the code alone;
    a string holding the words, and text outside code, are read as written."""
    page = (
        "# Dependency\n\n```ts twoslash\nconst main = new Elysia()\n"
        "\t.use(auth) // [!code ++]\n\t.get('/profile', handler) // [!code --]\n"
        "// [!code focus:2]\nconst note = '[!code ++]'\n<div></div> <!-- [!code highlight] -->\n```\n\n"
        "Written as `// [!code ++]` in a page about it.\n"
    )
    document = parse_text("essential/plugin.md", page)
    assert document.read_as == {5: "\t.use(auth)", 6: "\t.get('/profile', handler)", 9: "<div></div>"}
    shown = formats.shown_text("essential/plugin.md", page)
    assert "[!code" not in shown.split("// [!code focus:2]")[0] and "'[!code ++]'" in shown


def test_a_line_like_shiki_s_notation_is_read_in_time_linear_in_its_length():
    def seconds(size: int) -> float:
        line = "x" + " // [!code ++]" * size + " y\n"  # each try reads eight notations, then fails
        return fastest_seconds(
            lambda: parse_text("docs/page.md", "# N\n\n```ts\n" + line * 4 + "```\n"), repeats=3
        )

    assert grows_linearly(seconds, 2_500, 20_000, 20)


def test_a_markdown_heading_s_attribute_list_is_not_part_of_its_title():
    """MkDocs' ``attr_list`` (FastAPI's docs give every heading an id this way), Pandoc and
    pulldown-cmark: ``{ #id .class }`` at a heading's end names it, and shows nothing."""
    text = (
        "# Dependencies { #dependencies }\n\n## With `yield` {#with-yield .note}\n\n"
        "A set {not an attribute}.\n"
    )
    assert headings_of("doc.md", text) == [(1, 1, "Dependencies"), (3, 2, "With yield")]
    assert heading_paths("doc.md", text)[-1] == "Dependencies > With yield"
    assert "A set {not an attribute}." in parse_text("doc.md", text).lines


def test_markdown_inline_html_is_read_as_the_page_shows_it():
    """MkDocs' options tables key each row by an anchor (``<a id href title>``): the model reads a
    line's HTML as the page shows it, tags and their attributes dropped, an image as its
    alternative text, a template's directive as nothing, code as written; and a table's size is
    what its rows say, so a table of anchored rows is no longer cut a row or two at a time."""
    rows = "".join(
        f'| <a id="opt-acme-{name}" href="#opt-acme-{name}" title="#opt-acme-{name}">`acme.{name}`</a>'
        f" | The {name} to use. | No |\n"
        for name in ("email", "caServer", "keyType", "profile")
    )
    page = (
        "# ACME\n\n| Field | Description | Required |\n|---|---|---|\n" + rows + "\n"
        '{% include-markdown "includes/business.md" %}\n\n<div class="grid">\n\n'
        'A <b>bold</b> <img src="logo.png" alt="Traefik logo"> `<b>kept</b>`<br>here,'
        ' <abbr title="Object-Relational Mapper">ORM</abbr>s.\n\n'
        '```html\n<a id="in-code">x</a>\n```\n'
        "\n<code>--trailing-comma \\<all&#124;none></code>, Map<K, V>\n"
    )
    document = parse_text("acme.md", page)
    assert document.read_as[5] == "| `acme.email` | The email to use. | No |"
    assert document.read_as[14] == "A bold Traefik logo `<b>kept</b>` here, ORM (Object-Relational Mapper)s."
    assert {10, 12} <= document.markup  # a directive alone, a tag alone: nothing shown
    assert 17 not in document.read_as  # code as written
    assert document.read_as[20] == "--trailing-comma <all|none>, Map<K, V>"  # escapes, entities, no tag
    table = page[: page.index("\n{%")]
    chunks = chunks_of("acme.md", table, limit=60)
    assert [(chunk.start_line, chunk.end_line) for chunk in chunks] == [(1, 8)]
    assert chunks[0].text.count("<a id=") == 4  # the chunk keeps the file's lines
    assert "href" not in chunks[0].embed_text


# -- reStructuredText ---------------------------------------------------------------------------

RST = """\
Bicycle chains
--------------

How to keep a chain running.

Cleaning
^^^^^^^^

Degrease it::

    # not a heading, a shell comment
    ===============================
    degrease --all

.. code-block:: python

   # also a comment
   Title
   =====

Lubricating
^^^^^^^^^^^

One drop per roller.

>>> oil(chain)
True

Wear
----

Measure the stretch.
"""


def test_rst_levels_follow_first_appearance_and_literal_blocks_hold_no_titles():
    assert headings_of("chain.rst", RST) == [
        (1, 1, "Bicycle chains"),
        (6, 2, "Cleaning"),
        (21, 2, "Lubricating"),
        (29, 1, "Wear"),
    ]
    assert parse_text("chain.rst", RST).literal == [(11, 13), (17, 19), (26, 27)]
    assert heading_paths("chain.rst", RST) == [
        "Bicycle chains",
        "Bicycle chains > Cleaning",
        "Bicycle chains > Lubricating",
        "Wear",
    ]


def test_rst_overlined_style_is_distinct_from_the_same_underline():
    text = "=====\nTitle\n=====\n\nintro\n\nPart\n=====\n\nbody\n\nSub\n---\n\nmore\n"
    assert headings_of("doc.rst", text) == [(1, 1, "Title"), (7, 2, "Part"), (12, 3, "Sub")]


def test_rst_short_underlines_and_transitions():
    text = "A long title here\n----\n\ntext\n\nAnother one\n---\n\n--------\n\nend\n"
    # 4 characters underline a longer title (docutils warns but takes it); 3 do not; a lone
    # line of dashes between blank lines is a transition
    assert headings_of("doc.rst", text) == [(1, 1, "A long title here")]


def test_rst_titles_read_as_a_page_shows_them():
    text = (
        "Diamond inheritance between :class:`pytest.Collector` and :class:`~_pytest.nodes.Item`\n"
        + "=" * 80
        + "\n\ntext\n\nResult log (``--result-log``) and *emphasis*\n"
        + "-" * 50
        + "\n\nmore\n"
    )
    # a role shows its text (``~`` its last part), code its characters: the heading path a user
    # reads and the model is given holds no markup
    assert [title for _, _, title in headings_of("deprecations.rst", text)] == [
        "Diamond inheritance between pytest.Collector and Item",
        "Result log (--result-log) and emphasis",
    ]


def test_rst_a_title_of_code_alone_declares_its_names():
    text = (
        "``config.inicfg``\n~~~~~~~~~~~~~~~~~~\n\ntext\n\n"
        ":func:`pytest.skip` and :func:`~pytest.fail`\n" + "~" * 44 + "\n\nmore\n\n"
        "Passing ``msg=`` to ``pytest.skip``\n" + "~" * 36 + "\n\nprose\n"
    )
    # as a Markdown title of code alone does; a title with prose in it declares nothing
    assert parse_text("deprecations.rst", text).definitions == {
        1: ("config.inicfg",),
        6: ("pytest.skip", "fail"),
    }


# -- HTML ---------------------------------------------------------------------------------------

PAGE = """\
<!DOCTYPE html>
<html><head><title>Pan sauces</title>
<style>body { color: red }</style></head>
<body>
<div id="help"><h2>Keyboard shortcuts</h2><p>Press S to search</p></div>
<nav class="sidebar"><ol><li>Chapter 1</li><li>Chapter 2</li></ol></nav>
<div role="navigation">Previous Next</div>
<ul role="menu"><li><button>Light</button></li><li><button>Coal</button></li></ul>
<main>
<article>
<header><h1 id="pan">Pan sauces <a class="headerlink" href="#pan">¶</a></h1></header>
<p>Deglaze the pan with wine &amp; stock.</p>
<p>Reduce by half.</p>
<pre><code># not a heading
whisk()

serve()</code></pre>
<h2>Finishing</h2>
<p>Mount with cold butter.</p>
</article>
<aside>Related: stocks</aside>
</main>
<footer>Copyright</footer>
</body></html>
"""


def test_html_keeps_the_main_content_at_its_source_lines():
    document = parse_text("sauce.html", PAGE)
    assert len(document.lines) == len(PAGE.splitlines())
    kept = {number: line for number, line in enumerate(document.lines, 1) if line.strip()}
    assert kept == {
        11: "Pan sauces",
        12: "Deglaze the pan with wine & stock.",
        13: "Reduce by half.",
        14: "# not a heading",
        15: "whisk()",
        17: "serve()",
        18: "Finishing",
        19: "Mount with cold butter.",
    }
    headings = [(h.line, h.level, h.title) for h in document.headings]
    assert headings == [(11, 1, "Pan sauces"), (18, 2, "Finishing")]
    assert document.literal == [(14, 17)]


def test_html_without_main_drops_navigation_but_keeps_the_rest():
    page = (
        "<body>\n<header>Site name</header>\n<nav>Home About</nav>\n<h1>Tyres</h1>\n"
        '<p>Check the pressure.</p>\n<div aria-hidden="true">icon</div>\n<footer>Contact</footer>\n</body>'
    )
    kept = [line for line in parse_text("t.html", page).lines if line.strip()]
    assert kept == ["Tyres", "Check the pressure."]


def test_a_block_inside_a_heading_keeps_its_words_apart():
    page = '<h3>impl Borrow for T<div class="where">where T: Sized</div></h3>\n<p>Borrows.</p>'
    document = parse_text("struct.Path.html", page)
    assert [h.title for h in document.headings] == ["impl Borrow for T where T: Sized"]
    assert "T where" in document.lines[0]


# -- PDF, DOCX, notebooks -----------------------------------------------------------------------


@pytest.mark.heavy
def test_pdf_pages_are_parts_and_the_outline_gives_headings():
    data = make_pdf(
        [["Flat tyres", "Find the hole."], ["Patching", "Roughen the tube.", "Glue the patch."]],
        outline=[("Flat tyres", 0), ("Patching", 1)],
    )
    document = read_document("tyres.pdf", data)
    assert document.lines == [
        "Flat tyres",
        "Find the hole.",
        "Patching",
        "Roughen the tube.",
        "Glue the patch.",
    ]
    assert [(h.line, h.title) for h in document.headings] == [(1, "Flat tyres"), (3, "Patching")]
    assert document.locator(3, 5) == "page 2"
    assert document.locator(2, 4) == "pages 1-2"


@pytest.mark.heavy
def test_pdf_text_reads_as_a_reader_sees_it():
    # PDFium marks a hyphen that breaks a word at a line's end as soft; a badly made font reports a
    # glyph as U+FFFD; every page repeats the same header and a page-numbered footer
    pages = [
        ["Widget Manual", f"Section {n} opens here", "Type the declara-", f"tions of part {n} before use|."]
        + [f"Then build part {n}.", f"Page {n} of 4"]
        for n in range(1, 5)
    ]
    document = read_document("manual.pdf", make_pdf(pages, reported={"|": 0xFFFD}))
    text = "\n".join(document.lines)
    assert "Type the declarations of part 2 before use." in document.lines
    assert not {"\ufffe", "\ufffd", "\u00ad"} & set(text)
    assert "Widget Manual" not in text
    assert "of 4" not in text
    assert "Section 4 opens here" in text
    assert [part.number for part in document.parts] == [1, 2, 3, 4]


@pytest.mark.heavy
def test_a_pdf_without_text_is_refused_as_no_text():
    with pytest.raises(UnreadableFile, match="no text layer") as refused:
        read_document("scan.pdf", make_pdf([[], []]))
    assert refused.value.status == "no-text"
    with pytest.raises(UnreadableFile) as damaged:
        read_document("broken.pdf", b"%PDF-1.4 not really")
    assert damaged.value.status == "damaged"


def test_docx_paragraph_styles_become_headings_and_table_rows_lines():
    data = make_docx(
        [
            ("Title", "Pruning roses"),
            ("", "Prune in late winter."),
            ("Heading1", "Tools"),
            ("", "Sharp secateurs."),
        ],
        table=[["Tool", "Use"], ["Saw", "Old canes"]],
    )
    document = read_document("roses.docx", data)
    assert document.lines == [
        "Pruning roses",
        "Prune in late winter.",
        "Tools",
        "Sharp secateurs.",
        "Tool | Use",
        "Saw | Old canes",
    ]
    headings = [(h.line, h.level, h.title) for h in document.headings]
    assert headings == [(1, 0, "Pruning roses"), (3, 1, "Tools")]
    assert document.locator(3, 6) == "paragraphs 3-6"


def test_a_terminal_s_control_sequences_in_a_text_file_are_read_as_nothing():
    """A log written in colour or a captured terminal session: the model reads the words a terminal
    prints, not its colours, cursor moves or window titles; a line of them alone is markup. The
    chunk keeps the line as written."""
    log = "plain line\n\x1b[1;31mError:\x1b[0m disk full\n\x1b]0;build\x07\x1b[2J\x1b[H\n\x1b(Bok\n"
    document = parse_text("build.log", log)
    assert document.read_as == {2: "Error: disk full", 4: "ok"}
    assert document.markup == frozenset({3})
    assert document.lines[1] == "\x1b[1;31mError:\x1b[0m disk full"
    session = parse_text("session.txt", log)  # any format: a .txt is read as reStructuredText
    assert (session.read_as[2], session.markup) == ("Error: disk full", frozenset({3}))


def test_notebook_cells_without_outputs_code_is_literal():
    text = make_notebook(
        [("markdown", "# Sourdough\n\nFeed daily."), ("code", "# weigh the flour\nflour = 100"), ("raw", "x")]
    )
    document = parse_text("bread.ipynb", text)
    assert document.lines == ["# Sourdough", "", "Feed daily.", "# weigh the flour", "flour = 100"]
    assert [(h.line, h.title) for h in document.headings] == [(1, "Sourdough")]
    assert document.literal == [(4, 5)]
    assert "iVBOR" not in "\n".join(document.lines)
    assert document.locator(4, 5) == "cell 2"


def test_a_notebook_s_markdown_cell_is_read_as_a_markdown_page_is():
    banner = (
        '<a href="https://example.org"><img src="logo.png" alt="Course logo"/></a>\n\n<em>Copyright 2024</em>'
    )
    text = make_notebook(
        [("markdown", banner), ("markdown", "## Lists\n\n```python\nx = [1]\n```"), ("code", "x")]
    )
    document = parse_text("course.ipynb", text)
    assert document.read_as[1] == "Course logo" and document.read_as[3] == "Copyright 2024"
    assert {6, 8} <= document.markup  # the fences
    chunk = chunk_document(
        document, lambda texts: [len(t.split()) for t in texts], ChunkSettings.for_limit(256)
    )[0]
    assert "<img" not in chunk.model_text and "Course logo" in chunk.model_text


def test_a_notebook_declares_the_names_its_cells_define_in_its_kernel_s_language():
    cells = [
        ("markdown", "# Training\n\n## `fit_one_cycle`"),
        ("code", "%matplotlib inline\n!pip install torch\nclass WarmUp:\n    def step(self):\n        ..."),
        ("code", "%%bash\ndef not_python(): pass"),  # a cell magic: another language's cell
        ("code", "def plot_curves(history):\n    return (history\n    % 2)\ndef smooth(x):\n    ..."),
        ("code", "%%time\ndef timed(): ..."),  # IPython times the Python after it
    ]
    python = {"kernelspec": {"language": "python"}, "language_info": {"file_extension": ".py"}}
    document = parse_text("train.ipynb", make_notebook(cells, metadata=python))
    assert document.definitions == {
        3: ("fit_one_cycle",),
        6: ("WarmUp",),
        7: ("WarmUp.step", "step"),
        11: ("plot_curves",),
        14: ("smooth",),  # after a line that continues Python's expression with ``%``
        17: ("timed",),
    }
    assert document.literal == [(4, 8), (9, 10), (11, 15), (16, 17)]
    unknown = parse_text("train.ipynb", make_notebook(cells, metadata={"kernelspec": {"language": "sas"}}))
    assert unknown.definitions == {3: ("fit_one_cycle",)}  # no reader of its code: its titles only


# -- damaged and hostile files: each one file's failure, never the build's ------------------------

ROSES = make_docx([("Heading1", "Roses"), ("", "Prune roses in late winter.")])
#: Files an outside attack made each stop the whole build, by what their reader raised.
DAMAGED = {
    "flipped.docx": with_a_flipped_byte(ROSES),  # zlib.error
    "encrypted.docx": with_document_entry_patched(ROSES, flags=1),  # RuntimeError
    "aes.docx": with_document_entry_patched(ROSES, method=99),  # NotImplementedError
    "loop.pdf": pdf_with_a_page_tree_loop(),  # PdfiumError on its page
    "deep.ipynb": ('{"cells": ' + "[" * 100_000 + "]" * 100_000 + "}").encode(),  # RecursionError
}
#: What CPython's html.parser asserts against (another HTML parser may well read it).
ENDIF_PAGE = b"<html><body><p>A page about egrets.</p><![ endif]></body></html>\n"


@pytest.mark.heavy
def test_a_file_its_reader_fails_on_fails_alone_and_is_not_read_again_until_it_changes(tmp_path):
    folder = tmp_path / "docs"
    write(folder / "herons.md", "# Herons\n\nHerons nest in colonies.\n")
    for name, data in DAMAGED.items():
        (folder / name).write_bytes(data)
    (folder / "endif.html").write_bytes(ENDIF_PAGE)
    with Index.open(tmp_path / "index.db", backend=HashBackend()) as index:
        first = index.build(folder, warn=lambda message: None)
        second = index.build(folder, warn=lambda message: None)
        (folder / "deep.ipynb").write_text(make_notebook([("markdown", "# Egrets\n\nEgrets wade.")]))
        third = index.build(folder, warn=lambda message: None)
        hits = index.search("egrets wade", k=5, mode="keyword", min_score=0)
    reasons = {failure.path: failure.reason for failure in first.failures}
    assert first.exit_code == 1
    assert set(DAMAGED) <= set(reasons) <= {*DAMAGED, "endif.html"}
    assert first.files_added == 1 + (len(reasons) == len(DAMAGED))  # herons.md, and the page if read
    assert "Error -3 while decompressing" in reasons["flipped.docx"]
    assert "encrypted" in reasons["encrypted.docx"]
    assert "compression method" in reasons["aes.docx"]
    assert "page 1 cannot be loaded" in reasons["loop.pdf"]
    assert "RecursionError" in reasons["deep.ipynb"]
    assert all("\n" not in reason and len(reason) < 400 for reason in reasons.values())
    # recorded: the next run reads none of them again, and fails nothing
    assert second.exit_code == 0
    assert second.failures == []
    assert second.files_unchanged == first.files_added  # the damaged ones count as left out, below
    assert second.skipped_by_kind() == {"damaged": len(reasons)}
    # a file that changed is read again
    assert third.exit_code == 0
    assert third.files_changed == 1
    assert third.failures == []
    page_read = "endif.html" not in reasons  # it mentions egrets, not wading
    assert [hit.path for hit in hits] == ["deep.ipynb", *(["endif.html"] if page_read else [])]


def test_any_exception_a_reader_raises_is_the_files_failure_with_its_cause(tmp_path, monkeypatch):
    def out_of_memory(text: str, encoding: str) -> formats.Document:
        raise MemoryError("cannot allocate 3 GB")

    monkeypatch.setitem(formats.TEXT_READERS, "html", out_of_memory)
    with pytest.raises(UnreadableFile, match=r"^the HTML reader failed on it: MemoryError: cannot") as failed:
        read_document("page.html", b"<p>x</p>")
    assert failed.value.status == "damaged"
    folder = tmp_path / "docs"
    write(folder / "page.html", "<p>Any page at all.</p>")
    write(folder / "notes.md", "# Notes\n\nAbout egrets.\n")
    with Index.open(tmp_path / "index.db", backend=HashBackend()) as index:
        report = index.build(folder, warn=lambda message: None)
    assert report.exit_code == 1
    assert report.files_added == 1
    assert [(f.path, f.reason) for f in report.failures] == [
        ("page.html", "the HTML reader failed on it: MemoryError: cannot allocate 3 GB")
    ]


def test_a_docx_nested_thousands_deep_is_read_without_recursion():
    depth = 50_000
    data = make_docx(
        [("", "Deep inside, a note about otters.")], around=("<w:sdt>" * depth, "</w:sdt>" * depth)
    )
    assert read_document("deep.docx", data).lines == ["Deep inside, a note about otters."]


def test_a_docx_zip_bomb_is_refused_by_its_size_before_it_is_inflated():
    bomb = docx_bomb(MAX_XML_BYTES // 36 + 1)  # one paragraph more than the cap holds
    assert len(bomb) < MAX_XML_BYTES // 200
    with pytest.raises(UnreadableFile, match=r"word/document.xml expands to more than 32 MB") as refused:
        read_document("bomb.docx", bomb)
    assert refused.value.status == "too-large"


def test_a_notebook_of_millions_of_json_values_is_refused_before_it_is_parsed():
    values = "[" + "{}," * MAX_JSON_VALUES + "{}]"
    with pytest.raises(UnreadableFile, match=r"more than 2,000,000 values") as refused:
        read_document("huge.ipynb", ('{"cells": [], "x": ' + values + "}").encode())
    assert refused.value.status == "too-large"


@pytest.mark.heavy
def test_a_pdf_flate_bomb_fails_that_file_within_its_readers_memory_cap():
    bomb = pdf_flate_bomb(MEMORY_LIMIT // (1 << 20) + 100)  # inflates past the cap
    assert len(bomb) < 1 << 20
    with pytest.raises(
        UnreadableFile, match=r"the PDF reader stopped .*: it ran out of its 512 MB"
    ) as failed:
        read_document("bomb.pdf", bomb)
    assert failed.value.status == "damaged"
    # the next PDF has a reader again
    assert read_document("ok.pdf", make_pdf([["Still readable."]])).lines == ["Still readable."]


# -- the whole build ----------------------------------------------------------------------------


@pytest.fixture
def mixed_folder(tmp_path):
    folder = tmp_path / "docs"
    write(folder / "chain.rst", RST)
    write(
        folder / "guide.md",
        "# Guide\n\n<!--\n# Draft heading\n-->\n\nText.\n\n```sh\n# comment\nrun\n```\n\n## Next\n\nMore.\n",
    )
    write(folder / "sauce.html", PAGE)
    (folder / "tyres.pdf").write_bytes(
        make_pdf([["Flat tyres", "Find the hole with soapy water."]], outline=[("Flat tyres", 0)])
    )
    (folder / "scan.pdf").write_bytes(make_pdf([[]]))
    (folder / "roses.docx").write_bytes(
        make_docx([("Title", "Pruning roses"), ("Heading1", "When"), ("", "Prune roses in late winter.")])
    )
    latin1 = "Café notes\n==========\n\nCrème brûlée at 150 °C.\n".encode("latin-1")
    (folder / "notes.txt").write_bytes(latin1)
    notebook = make_notebook([("markdown", "# Sourdough starter"), ("code", "feed(starter)")])
    write(folder / "bread.ipynb", notebook)
    return folder


@pytest.mark.heavy
def test_a_mixed_folder_indexes_exactly_these_files_headings_and_citations(tmp_path, mixed_folder):
    with Index.open(tmp_path / "index.db", backend=HashBackend(max_tokens=512)) as index:
        report = index.build(mixed_folder, warn=lambda message: None)
        files = index.store.db.execute("SELECT path, status, encoding FROM files ORDER BY path").fetchall()
        chunks = index.store.db.execute(
            "SELECT f.path, c.heading, c.locator FROM chunks c JOIN files f ON f.id = c.file_id "
            "ORDER BY f.path, c.seq"
        ).fetchall()
        hits = index.search("soapy water hole", k=1, mode="keyword", min_score=0)
    assert report.files_skipped == 1
    assert report.files_failed == 0
    assert "scan.pdf: skipped, no text layer (a scanned PDF without OCR?)" in report.warnings
    assert files == [
        ("bread.ipynb", "indexed", "utf-8"),
        ("chain.rst", "indexed", "utf-8"),
        ("guide.md", "indexed", "utf-8"),
        ("notes.txt", "indexed", "cp1252"),
        ("roses.docx", "indexed", ""),
        ("sauce.html", "indexed", "utf-8"),
        ("scan.pdf", "no-text", ""),
        ("tyres.pdf", "indexed", ""),
    ]
    # each file fits in one chunk: its sections are packed under the heading they share
    assert chunks == [
        ("bread.ipynb", "Sourdough starter", "cells 1-2"),
        ("chain.rst", "Bicycle chains", ""),
        ("guide.md", "Guide", ""),
        ("notes.txt", "Café notes", ""),
        ("roses.docx", "Pruning roses > When", "paragraphs 1-3"),  # titles travel with the text
        ("sauce.html", "Pan sauces", ""),
        ("tyres.pdf", "Flat tyres", "page 1"),
    ]
    assert [hit.citation for hit in hits] == ["tyres.pdf:page 1"]
    assert hits[0].to_dict()["locator"] == "page 1"


def test_an_index_made_before_locators_gains_the_columns_when_opened_for_writing(tmp_path):
    path = tmp_path / "old.db"
    old = apsw.Connection(str(path))
    old.execute((migrations_folder("sqlite") / "0001_initial.sql").read_text(encoding="utf-8"))
    old.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL)"
    )
    old.execute("INSERT INTO schema_migrations VALUES (1, '0001_initial.sql', 0)")
    old.execute(
        "INSERT INTO files (root, path, size, mtime_ns, content_hash) VALUES ('/r', 'a.md', 1, 1, 'h')"
    )
    old.close()
    with SQLiteStore.open(path, writable=True) as store:
        applied = store.applied_migrations()
        assert applied == [migration.name for migration in all_migrations("sqlite")]
        assert "0003_locators_and_encodings.sql" in applied
        assert store.db.execute("SELECT path, encoding FROM files").fetchall() == [("a.md", "")]
        assert "locator" in [row[1] for row in store.db.execute("PRAGMA table_info(chunks)")]


def test_a_document_past_the_caps_on_text_is_refused_before_it_is_parsed():
    with pytest.raises(
        UnreadableFile, match=r"more than 500,000 lines \(the cap on a document's lines\)"
    ) as lines:
        read_document("column.csv", b"7\n" * (MAX_LINES + 1))
    with pytest.raises(UnreadableFile, match=r"its text passes 16 M characters") as text:
        read_document("dump.md", b"x" * (MAX_TEXT_CHARS + 1))
    assert lines.value.status == text.value.status == "too-large"
    assert read_document("column.csv", b"7\n" * MAX_LINES).lines[-1] == "7"


# -- what a rendered page does not show is never a chunk ------------------------------------------


def chunks_of(path: str, text: str, limit: int = 40) -> list:
    return chunk_document(parse_text(path, text), words, ChunkSettings(max_tokens=limit, overlap_tokens=0))


HUGO_PAGE = """---
title: collections.Where
description: Returns the given collection, removing elements that do not satisfy the comparison condition.
categories: []
keywords: []
params:
  functions_and_methods:
    aliases: [where]
    returnType: any
---

The `where` function returns the given collection, removing elements that do not satisfy the
comparison condition. The comparison condition is composed of the `KEY`, `OPERATOR`, and `VALUE`
arguments.

## Arguments

The `KEY` can be a field, a map key, or a method of the elements of the collection, and the `OPERATOR`
is one of the comparison operators listed below, with the `VALUE` compared against each element.
"""


@pytest.mark.parametrize("style", ["yaml", "toml"])
def test_front_matter_names_the_page_and_never_shows_in_a_chunk(style):
    text = HUGO_PAGE
    if style == "toml":
        text = text.replace("---\ntitle: collections.Where\n", '+++\ntitle = "collections.Where"\n', 1)
        text = text.replace("description: Returns", 'description = "Returns', 1).replace(
            "condition.\ncategories: []", 'condition."\ncategories = []', 1
        )
        text = text.replace("keywords: []\nparams:\n  functions_and_methods:\n    aliases: [where]\n", "")
        text = text.replace("    returnType: any\n---\n", "+++\n", 1)
    chunks = chunks_of("functions/collections/Where.md", text, limit=200)
    assert [chunk.heading for chunk in chunks] == ["collections.Where"]
    read = chunks[0].embed_text
    assert read.startswith("collections.Where\ncollections.Where\nReturns the given collection")
    for raw in ("---", "+++", "title", "categories", "keywords", "returnType", "aliases"):
        assert raw not in chunks[0].text, raw
    assert chunks[0].start_line == 1  # still cited from the file's first line


def test_front_matter_that_does_not_parse_is_left_out_all_the_same():
    body = " ".join(f"w{n}" for n in range(20))
    text = "---\ntitle: [unclosed\nweight: 3\n---\n\n# Guide\n\n" + body + "\n"
    chunks = chunks_of("guide.md", text)
    assert [chunk.heading for chunk in chunks] == ["Guide"]
    assert "unclosed" not in chunks[0].text
    assert "weight" not in chunks[0].text


def test_link_definitions_never_form_a_chunk_nor_join_one():
    body = "Use [`collections.Append`] or [`collections.Merge`] to add elements.\n"
    definitions = "".join(f"[`collections.Name{n}`]: /functions/collections/name{n}/\n" for n in range(40))
    chunks = chunks_of("where.md", "# Where\n\n" + body + "\n" + definitions)
    assert len(chunks) == 1
    assert "/functions/collections" not in chunks[0].text
    assert chunks[0].text.startswith("# Where\n\nUse [`collections.Append`]")


def test_rst_targets_substitutions_and_docinfo_never_form_a_chunk():
    text = (
        ":orphan:\n:tocdepth: 2\n\n.. _install-guide:\n\nInstalling\n==========\n\n"
        + " ".join(f"w{n}" for n in range(20))
        + "\n\n.. |version| replace:: 7.2\n.. _pip: https://pip.pypa.io/\n__ https://example.org/\n"
    )
    chunks = chunks_of("install.rst", text)
    assert [chunk.heading for chunk in chunks] == ["Installing"]
    for hidden in ("orphan", "tocdepth", "install-guide", "replace::", "pip.pypa.io", "example.org"):
        assert hidden not in chunks[0].embed_text, hidden


def test_rst_only_directives_for_other_builders_are_not_read():
    """A page built for the web shows ``.. only::`` content whose tags hold for the HTML builder,
    and content for a tag no builder sets (a project's own) may show: the rest is another
    output's copy (a PDF's list of the same plugins), never read."""
    text = (
        "Plugins\n=======\n\n.. only:: not latex\n\n   web table of plugins\n\n"
        ".. only:: latex\n\n   printed list of plugins\n\n"
        ".. only:: man and not html\n\n   manual copy\n\n"
        ".. only:: not is_release\n\n   draft notes\n\n"
        ".. only:: not singlehtml\n\n   one page of many\n\n"
        ".. only:: latex and\n\n   unreadable expression\n\nAfter all of them.\n"
    )
    shown = "\n".join(parse_text("plugins.rst", text).lines)
    for seen in ("web table", "draft notes", "one page of many", "unreadable expression", "After all"):
        assert seen in shown, seen
    assert "printed list" not in shown and "manual copy" not in shown


DOCBOOK_PAGE = """<html><head><title>DROP TABLE</title></head><body>
<div class="navheader"><table summary="Navigation header"><tr><th colspan="5">DROP TABLE</th></tr>
<tr><td><a accesskey="p" href="sql-dropsubscription.html">Prev</a></td><td><a accesskey="u"
href="sql-commands.html">Up</a></td><th>SQL Commands</th><td><a accesskey="h" href="index.html">Home</a>
</td><td><a accesskey="n" href="sql-droptablespace.html">Next</a></td></tr></table><hr /></div>
<div class="refentry"><div class="refnamediv"><h2><span class="refentrytitle">DROP TABLE</span></h2>
<p>DROP TABLE — remove a table</p></div><div class="refsynopsisdiv"><h2>Synopsis</h2>
<pre class="synopsis">DROP TABLE [ IF EXISTS ] name [, ...] [ CASCADE | RESTRICT ]</pre></div>
<div class="refsect1"><h2>Description</h2><p>DROP TABLE removes tables from the database.</p></div></div>
<div class="navfooter"><hr /><table summary="Navigation footer"><tr><td><a accesskey="p"
href="sql-dropsubscription.html">Prev</a></td><td><a accesskey="u" href="sql-commands.html">Up</a></td>
<td><a accesskey="n" href="sql-droptablespace.html">Next</a></td></tr><tr><td>DROP SUBSCRIPTION</td>
<td><a accesskey="h" href="index.html">Home</a></td><td>DROP TABLESPACE</td></tr></table></div>
</body></html>
"""


def test_docbook_navigation_is_dropped_and_the_page_is_named_by_its_title():
    document = parse_text("sql-droptable.html", DOCBOOK_PAGE)
    text = " ".join(" ".join(document.lines).split())
    for navigation in ("Prev", "Up", "Next", "Home", "SQL Commands", "DROP SUBSCRIPTION", "TABLESPACE"):
        assert navigation not in text, navigation
    chunks = chunks_of("sql-droptable.html", DOCBOOK_PAGE, limit=200)
    assert len(chunks) == 1
    assert chunks[0].heading == "DROP TABLE"
    assert chunks[0].embed_text.startswith("DROP TABLE\n")


def test_a_page_of_several_h1_has_them_as_sections_under_its_title():
    page = (
        "<html><head><title>CREATE TRIGGER</title></head><body>\n"
        "<p>The CREATE TRIGGER statement adds triggers to the schema of a database.</p>\n"
        '<h1 id="syntax">1. Syntax</h1>\n'
        "<p>create-trigger-stmt: CREATE TEMP TRIGGER IF NOT EXISTS schema-name trigger-name</p>\n"
        '<h1 id="description">2. Description</h1>\n'
        "<p>A trigger runs when a row of its table is inserted, updated or deleted.</p>\n"
        "</body></html>\n"
    )
    headings = [chunk.heading for chunk in chunks_of("lang_createtrigger.html", page, limit=24)]
    assert headings == ["CREATE TRIGGER", "CREATE TRIGGER > 1. Syntax", "CREATE TRIGGER > 2. Description"]
    # one h1 names the page: its title (often with the site's name) is not added above it
    single = page.replace('<h1 id="description">2. Description</h1>', "<h2>2. Description</h2>")
    headings = [chunk.heading for chunk in chunks_of("lang_createtrigger.html", single, limit=24)]
    assert headings[1:] == ["1. Syntax", "1. Syntax > 2. Description"], headings


def test_a_headings_permalink_mark_is_no_part_of_its_title():
    page = (
        "<html><head><title>Configuration Files</title></head><body><h1>Configuration Files</h1>\n"
        '<h2 id="syntax">Syntax of the Configuration Files <a title="Permanent link" href="#syntax"'
        ' class="permalink">&para;</a></h2>\n<p>One directive per line.</p>\n'
        '<h2 id="modules"><a href="#modules">Modules</a> <a href="#modules">§</a></h2>\n<p>Load them.</p>\n'
        '<h2 id="usage">Usage <a href="#usage">⚓️</a></h2>\n<p>Start it.</p>\n'
        "</body></html>\n"
    )
    titles = [heading.title for heading in parse_text("configuring.html", page).headings]
    assert titles == ["Configuration Files", "Syntax of the Configuration Files", "Modules", "Usage"]
    # a letter, a link to another page, and a heading that is only a mark are a title's words
    kept = (
        '<html><body><h1>Operators</h1>\n<h2>Section <a href="#a">A</a></h2>\n'
        '<h2>Setup <a href="setup.html#s">¶</a></h2>\n<h2 id="plus"><a href="#plus">+</a></h2>\n'
        "</body></html>\n"
    )
    titles = [heading.title for heading in parse_text("operators.html", kept).headings]
    assert titles == ["Operators", "Section A", "Setup ¶", "+"]


def test_a_page_of_several_h1_is_named_by_the_one_that_begins_its_title():
    page = (
        "<html><head><title>Widgets - Acme Docs</title></head><body><div><h1>Acme Docs</h1></div>\n"
        "<h1>Widgets</h1>\n<p>A widget shows one value.</p>\n<h2>Styling</h2>\n<p>Colour it.</p>\n"
        "</body></html>\n"
    )
    titles = [(heading.level, heading.title) for heading in parse_text("widgets.html", page).headings]
    assert titles == [(1, "Acme Docs"), (1, "Widgets"), (2, "Styling")]


def test_an_html_list_whose_entries_are_links_to_other_pages_is_a_contents_list():
    # a generated keyword index, a cross-reference: each entry a name linking to the page about it
    kinds = ("blob", "double", "int", "null", "text", "value", "zeroblob")
    names = [f"sqlite3_bind_{kind}" for kind in kinds]
    index_page = (
        "<html><head><title>Website Keyword Index</title></head><body><h1>Keyword Index</h1>\n<ul>\n"
        + "".join(f'<li> <a href="c3ref/{name}.html">{name}</a> </li>\n' for name in names)
        + "<li>sqlite3_busy_handler &rarr;\n"
        + "".join(f'  <a href="{page}.html">{page}.html</a>\n' for page in ("backup", "wal", "pragma"))
        + "</li>\n</ul>\n</body></html>\n"
    )
    chunks = chunks_of("keyword_index.html", index_page, limit=200)
    assert chunks and all(chunk.is_contents for chunk in chunks), chunks
    # Doxygen's index of globals: each name, then a link to the header that declares it
    globals_page = "<html><body><h1>Globals</h1>\n<ul>\n" + "".join(
        f'<li>{name}&#160;:&#160;<a class="el" href="d6/sqlite3_8h.html#a{number}">sqlite3.h</a></li>\n'
        for number, name in enumerate(names)
    )
    chunks = chunks_of("globals_s.html", globals_page + "</ul>\n</body></html>\n", limit=200)
    assert chunks and all(chunk.is_contents for chunk in chunks), chunks
    # a cross-reference's entry: a term, then every page that links it, one a line (the spaces between
    # them are no words beside the links, however many)
    backlinks = "".join(f'    <a href="page{number}.html">page{number}.html</a>\n' for number in range(300))
    crossref = f"<html><body><h1>Backlinks</h1>\n<ul>\n<li>database connection &rarr;\n{backlinks}</li>\n"
    chunks = chunks_of("crossref.html", crossref + "</ul>\n</body></html>\n", limit=2000)
    assert chunks and all(chunk.is_contents for chunk in chunks), chunks
    # gtk-doc's index of symbols: each name, its kind and the section that documents it
    symbols_page = "<html><body><h1>Symbols</h1>\n<dl>\n" + "".join(
        f'<dt><a href="bind.html#{name}">{name}</a>, function in <a href="bind.html">Binding</a></dt>\n'
        for name in names
    )
    chunks = chunks_of("ix01.html", symbols_page + "</dl>\n</body></html>\n", limit=200)
    assert chunks and all(chunk.is_contents for chunk in chunks), chunks
    # a page's summary of its own sections, and entries that say something of the page they link,
    # are no list of other pages; nor is prose that links them
    own = "".join(f'<li><a href="#{name}">{name}</a></li>\n' for name in names)
    # (the link may be most of the entry's text: CHECK constraints work the same)
    said = "".join(f'<li><a href="{name}.html">{name}</a> works the same</li>\n' for name in names)
    prose = "".join(f'<p>Call <a href="{name}.html">{name}</a>.</p>\n' for name in names)
    # a site's menu, a word a line, beside a short page's text is a small part of what it says
    pages = ("home", "about", "docs", "download")
    menu = "".join(f'<li><a href="{page}.html">{page.title()}</a>\n' for page in pages)
    page_text = (
        "<p>This routine sets a busy handler that sleeps for a specified amount of time when a table is\n"
        "locked, until at least the given number of milliseconds of sleeping have accumulated.</p>\n"
    )
    scripted = "".join(f'<li><a href="javascript:void(0)">{name}</a></li>\n' for name in names)
    for body in (
        f"<ul>\n{own}</ul>",
        f"<ul>\n{said}</ul>",
        prose,
        f"<ul>\n{menu}</ul>\n{page_text}",
        f"<ul>\n{scripted}</ul>",
    ):
        page = f"<html><body><h1>Binding</h1>\n{body}\n</body></html>\n"
        chunks = chunks_of("binding.html", page, limit=200)
        assert chunks and not any(chunk.is_contents for chunk in chunks), body


def javadoc_page(kind: str, title: str, rows: str, generator: str = "javadoc/ClassUseWriter") -> str:
    """A page as javadoc (JDK 16 on) writes it: its kind declared by its body's class."""
    return (
        f'<html><head><title>{title} (Acme 1.0 API)</title>\n<meta name="generator" content="{generator}">'
        f'</head><body class="{kind}">\n'
        f'<main role="main"><h1 title="{title}">{title}</h1>\n<table>\n{rows}</table>\n</main>\n'
        "</body></html>\n"
    )


def test_a_page_whose_markup_declares_it_a_list_of_other_pages_names_is_a_contents_list():
    # javadoc's uses of a class: each row a method of another page and the sentence that says what
    # it does, too much beside its links for an entry of an index, but the page lists names
    rows = "".join(
        f'<tr><td><code><a href="../Widget.html">Widget</a></code></td><td><code><a href="../Shop.html#{verb}'
        f'(java.lang.String)">{verb}</a>(String name)</code></td><td>Returns the widget of that name, made '
        "fresh if the shop holds none under it yet.</td></tr>\n"
        for verb in ("find", "make", "order", "borrow", "fetch", "keep", "wrap", "ship")
    )
    uses = javadoc_page("class-use-page", "Uses of Class acme.Widget", rows)
    chunks = chunks_of("acme/class-use/Widget.html", uses, limit=120)
    assert len(chunks) > 1 and all(chunk.is_contents for chunk in chunks), chunks
    # javadoc before JDK 16: a comment names it, the content's container the page's kind
    old_uses = (
        "<html><head><!-- Generated by javadoc -->\n<title>Uses of Class acme.Widget</title></head>\n"
        f'<body><main role="main"><div class="header"><h2>Uses of Class acme.Widget</h2></div>\n'
        f'<div class="classUseContainer"><table>\n{rows}</table></div></main></body></html>\n'
    )
    chunks = chunks_of("acme/class-use/Widget.html", old_uses, limit=120)
    assert len(chunks) > 1 and all(chunk.is_contents for chunk in chunks), chunks
    by_hand = old_uses.replace("Generated by javadoc", "Built by hand")
    for unnamed in (by_hand, old_uses.replace("classUse", "")):
        chunks = chunks_of("acme/class-use/Widget.html", unnamed, limit=120)
        assert chunks and not any(chunk.is_contents for chunk in chunks), unnamed
    # the class's own page, with the same rows in its summary, is the page they list; a page of
    # the same class that javadoc does not name as its generator is a site's
    for kind, generator in (
        ("class-declaration-page", "javadoc/ClassWriterImpl"),
        ("package-declaration-page", "javadoc/PackageWriterImpl"),
        ("help-page", "javadoc/HelpWriter"),
        ("class-use", "javadoc/ClassUseWriter"),
        ("index-page", "Hugo 0.123.7"),
        ("index-page", ""),
    ):
        page = javadoc_page(kind, "Class Shop", rows, generator)
        chunks = chunks_of("acme/Shop.html", page, limit=120)
        assert chunks and not any(chunk.is_contents for chunk in chunks), kind


@pytest.mark.parametrize(
    ("around", "repeated", "repeats"),
    [
        ((b"", b""), b"<!-- <p>x</p>\n", 32_000),
        ((b"<h2>w ", b"</h2>"), b'<a href="#x">&para;</a> w ' * 1_000, 5),  # 5,000 permalinks, then 40,000
        ((b"<ul><li>", b"</li></ul>"), b'<a href="p.html">name</a> w <li>' * 1_000, 5),  # linked entries
    ],
    ids=["unclosed comments", "a heading of words and permalinks", "a list of links"],
)
def test_a_page_of_hostile_markup_is_read_in_time_linear_in_its_size(around, repeated, repeats):
    # html.parser looked for the end of every "<!--" over the rest of the page: a 240 KB page took
    # minutes; eight times the page must take about eight times as long, not sixty-four. Both pages
    # are large (450 KB, 3.6 MB: a 56 KB one reads from the CPU's cache, cheaper per line), and the
    # collector is off while timing (its full passes walk every object of the test session): with a
    # small page and the collector on, the ratio read 28-76 under pytest on a loaded machine. A
    # heading's permalink is told from its title by whether words came before it, not by joining
    # the title's words read so far at each link.
    def seconds(repeats: int) -> float:
        opening, closing = around
        page = (
            b"<html><body><p>Herons wade.</p>\n"
            + opening
            + repeated * repeats
            + closing
            + b"</body></html>\n"
        )
        best = math.inf
        for _ in range(5):  # the best of five: a shared machine's pauses only ever add time
            gc.disable()
            try:
                started = time.perf_counter()
                document = read_document("page.html", page)
                best = min(best, time.perf_counter() - started)
            finally:
                gc.enable()
        assert "Herons wade." in document.lines
        return best

    assert grows_linearly(seconds, repeats, 8 * repeats, 24)  # quadratic would be 64


# -- the names a page declares ------------------------------------------------------------------


def declared(path: str, text: str) -> set[str]:
    """Every name the reader of ``path`` finds declared in ``text``."""
    return {name for names in parse_text(path, text).definitions.values() for name in names}


def test_what_markup_declares_a_name_and_what_does_not():
    assert declared("api.rst", ".. py:function:: os.path.join(a, *p)\n.. option:: -o <dir>, --jobs=N\n") == {
        "os.path.join",
        "join",
        "-o",
        "--jobs",
    }
    assert declared("c.rst", ".. c:function:: int PyType_Ready(PyTypeObject *type)") == {"PyType_Ready"}
    assert declared("rst.rst", ".. rst:directive:: .. code-block:: [language]") == {"code-block"}
    # autodoc's directives define the object they document from its source
    autodoc = ".. autofunction:: pytest.approx\n\n.. autoclass:: pytest.LineMatcher()\n   :members:\n"
    assert declared("api.rst", autodoc) == {"pytest.approx", "approx", "pytest.LineMatcher", "LineMatcher"}
    assert declared("r.rst", ".. automodule:: werkzeug.routing\n") == {"werkzeug.routing", "routing"}
    assert declared("s.rst", ".. autosummary::\n   :toctree: api\n\n   pytest.approx\n") == set()
    assert declared("t.rst", ".. autofunction:: hidden\n   :no-index:\n") == set()
    # options of a directive, literal blocks, unindexed descriptions and plain directives: nothing
    assert declared("a.rst", ".. rst:directive:option:: caption: caption of ToC") == set()
    assert declared("b.rst", "Like this::\n\n   .. confval:: shown\n\nText.\n\n.. note:: Careful") == set()
    assert declared("c.rst", ".. code-block:: rst\n\n   .. confval:: shown\n") == set()
    assert declared("d.rst", ".. confval:: hidden\n   :type: int\n   :no-index:\n") == set()
    assert declared("e.rst", "Like this::\n\n   example\n\n.. confval:: after_it\n") == {"after_it"}
    wrapped = "NAME\n       getrlimit, setrlimit,\n       prlimit - get/set resource limits\n"
    for path in ("getrlimit.2.txt", "getrlimit.2"):
        assert declared(path, wrapped) == {"getrlimit", "setrlimit", "prlimit"}
        assert parse_text(path, wrapped).definitions.keys() == {2}
    # a NAME line whose entry never reaches the dash before a summary declares nothing
    assert declared("notes.txt", "NAME\n" + "    not a name entry\n" * 20) == set()


def test_a_title_of_one_code_span_and_a_remark_or_its_kind_declares_the_span():
    assert declared("sinks.md", "## `Sinks.list(...)` (capture all items)\n") == {"Sinks.list", "list"}
    assert declared("operators.adoc", "== `EXISTS` Operator\n") == {"EXISTS"}
    assert declared("cli.rst", "``hz-cluster-admin`` script\n==========================\n") == {
        "hz-cluster-admin"
    }
    assert declared("ops.md", "## `EXISTS` operator and more\n") == set()  # prose after it
    assert declared("cmds.md", "## `git commit` command\n") == set()  # a command shown, no name


def test_a_python_object_directive_declares_the_name_sphinx_gives_it():
    page = (
        "Client Reference\n================\n\n.. currentmodule:: aiohttp\n\n"
        ".. class:: ClientSession(base_url=None)\n\n   The session.\n\n"
        "   .. method:: get(url)\n\n      Perform a GET request.\n\n"
        "   .. attribute:: ClientSession.closed\n\n      Whether it is closed.\n\n"
        "Functions\n---------\n\n.. function:: request(method, url)\n\n"
        ".. method:: orphan()\n\n.. c:function:: int close(int fd)\n"
    )
    lines = page.split("\n")
    definitions = parse_text("client_reference.rst", page).definitions
    assert definitions[lines.index("   .. method:: get(url)") + 1] == (
        "aiohttp.ClientSession.get",
        "get",
        "ClientSession.get",
    )
    assert set(definitions[lines.index("   .. attribute:: ClientSession.closed") + 1]) == {
        "aiohttp.ClientSession.closed",
        "ClientSession.closed",
        "closed",
    }
    assert definitions[lines.index(".. function:: request(method, url)") + 1] == (
        "aiohttp.request",
        "request",
    )
    assert definitions[lines.index(".. method:: orphan()") + 1] == (
        "aiohttp.orphan",
        "orphan",
    )  # the class ended
    assert definitions[lines.index(".. c:function:: int close(int fd)") + 1] == ("close",)  # C's: as written
    unindexed = (
        ".. class:: A\n   :no-index:\n\n   .. method:: run()\n\n.. function:: go()\n   Does something.\n"
    )
    assert parse_text("a.rst", unindexed).definitions == {4: ("A.run", "run"), 6: ("go",)}
    machine = ".. module:: machine\n\n.. data:: machine.IDLE\n          machine.SLEEP\n\n   Power states.\n"
    assert parse_text("machine.rst", machine).definitions[3] == (
        "machine.IDLE",
        "IDLE",
        "machine.SLEEP",
        "SLEEP",
    )


def test_a_definition_opened_at_a_chunks_end_starts_the_next_chunk_with_its_description():
    """A directive's line and options are one block and its description another: where the two do
    not fit beside the text before them, the chunk that declares the setting is the one that holds
    what the manual says of it, not the one before it ending on its name."""
    lead = "Every setting below is read from the configuration file at start. " * 2
    page = (
        f"Settings\n========\n\n{lead}\n\n"
        ".. confval:: testpaths\n   :type: list\n\n"
        "   Directories searched for tests when no paths are given on the command line, "
        "relative to the root folder of the project.\n"
    )
    chunks = chunks_of("reference.rst", page, limit=40)
    assert len(chunks) == 2, [(chunk.start_line, chunk.end_line) for chunk in chunks]
    declaring = [chunk for chunk in chunks if chunk.names]
    assert [chunk.names for chunk in declaring] == [("testpaths",)]
    assert "Directories searched" in declaring[0].text and ".. confval:: testpaths" in declaring[0].text
    assert ".. confval::" not in chunks[0].text


@pytest.mark.parametrize(
    ("page", "limit"),
    [
        (  # a short tail taking the description from the chunk before would strand the directive
            "Settings\n========\n\nEvery setting below is read from the configuration file at start.\n\n"
            ".. confval:: testpaths\n   :type: list of names\n\n"
            "   Directories searched for tests when no paths are given on the command line.\n\n"
            "See the plugins page.\n",
            34,
        ),
        (  # a section's title carried into its directive's block: the two open the definition
            # (the limit leaves room for the heading ``Settings > testpaths``)
            "Intro\n=====\n\nRead this first.\n\nSettings\n========\n\n"
            ".. confval:: testpaths\n   :type: list\n\n   Directories searched for tests when no paths "
            "are given on the command line, relative to the root folder of the project, in the order "
            "given, each searched recursively for test files.\n",
            42,
        ),
        (  # a class and its first method, both opening: they move together to the description
            "API\n===\n\nEvery class below is importable from the package root and is stable.\n\n"
            ".. py:class:: Session\n\n   .. py:method:: close()\n\n"
            "      Closes every connection the session opened and releases the pool it holds now.\n",
            30,
        ),
    ],
)
def test_no_chunk_ends_on_a_definition_that_fits_beside_its_description(page, limit):
    chunks = chunks_of("reference.rst", page, limit=limit)
    for chunk in chunks:
        if chunk.names:
            assert chunk.text.rstrip().endswith(("files.", "line.", "now.")), [c.text for c in chunks]


def test_a_chunk_filled_past_two_thirds_does_not_end_on_a_definitions_line_at_a_cut_point():
    """Once a chunk is two thirds full it ends after any block whose text hash makes it a cut point
    (about one in three): never after a directive's line, whatever its name hashes to."""
    lead = "Every setting below is read from the configuration file at start of the run. " * 3
    for number in range(12):
        page = (
            f"Settings\n========\n\n{lead}\n\n.. confval:: setting_{number}\n   :type: int\n\n"
            "   How many times the runner tries again before it gives up on the test.\n\n"
            "The settings of the reporters, the plugins and the cache are on pages of their own, "
            "each under its section.\n"
        )
        chunks = chunks_of("settings.rst", page, limit=70)
        declaring = [chunk for chunk in chunks if chunk.names]
        assert len(declaring) == 1 and "gives up" in declaring[0].text, (number, [c.text for c in chunks])


def test_an_entry_that_is_one_block_stays_whole_where_a_chunk_ends():
    """An AsciiDoc term and the lines under it are the whole entry: the chunk it ends keeps it, and
    the next entry starts the next chunk, as any paragraphs would."""
    page = (
        "= tool-commit(1)\n\n== OPTIONS\n\nThe options below change what the commit records.\n\n"
        "--amend::\n\tReplace the tip of the current branch by a new commit.\n\n"
        "--all::\n\tStage every modified and deleted file before the commit is recorded.\n"
    )
    chunks = chunks_of("tool-commit.adoc", page, limit=30)
    assert len(chunks) == 2, [chunk.text for chunk in chunks]
    assert chunks[0].names == ("--amend",) and chunks[1].names == ("--all",)


def test_a_markdown_title_of_code_alone_declares_the_names_it_spells():
    page = (
        "# CLI\n\n## `--write`\n\n## `--config` and `--no-config`\n\n"
        "## `prettier.format(source [, options])`\n\n## [`Depends()`](#depends)\n\n"
        "## Using `--check`\n\n## `npm install prettier`\n\n## `--a`, `--b` or `--c`\n\n"
        "```\n## `--in-a-fence`\n```\n"
    )
    assert parse_text("cli.md", page).definitions == {
        3: ("--write",),
        5: ("--config", "--no-config"),
        7: ("prettier.format", "format"),
        9: ("Depends",),
        15: ("--a", "--b", "--c"),
    }
    # prose in the title, a command shown as code, and a fence's lines declare nothing
    assert declared("b.md", "## Using `--check` to verify\n\n## `npm install prettier`\n") == set()
    # an option's value after a space, a type in brackets after the code, a setting's key known by
    # the whole of it, a plain word in code; punctuation alone declares nothing
    assert declared(
        "c.md",
        "## `-o, --output <dir>`\n\n## `collectCoverage` \\[boolean]\n\n## `core.editor`\n\n## `json`\n",
    ) == {"-o", "--output", "collectCoverage", "core.editor", "json"}
    assert declared("d.md", "## `)`\n\n## `-`\n\n## `a.`\n") == set()


def test_a_title_that_is_one_name_spelt_as_code_declares_it_in_every_markup():
    """A config reference titles each key as it is typed, in code or not (``## server.strictPort``):
    an identifier's parts joined by a dot or an underscore are no prose. A plain word, a phrase, a
    product's or a file's name and a changelog's version declare nothing."""
    page = (
        "# Server Options\n\n## server.strictPort\n\n## max_connections\n\n## base\n\n"
        "## Server Options\n\n## v2.0.1\n\n## v2.0.0-beta.1\n\n## server.host, server.port\n\n"
        "## Node.js\n\n## macOS\n\n## README.md\n"
    )
    assert declared("options.md", page) == {
        "server.strictPort",
        "max_connections",
        "server.host",
        "server.port",
    }
    rst = "build.outDir\n============\n\ntext\n\nbase\n====\n\nmore\n"
    assert declared("options.rst", rst) == {"build.outDir"}
    html = "<html><body><h1>Options</h1>\n<h2>build.outDir</h2>\n<h2>base</h2>\n</body></html>\n"
    assert declared("options.html", html) == {"build.outDir"}


def test_a_markdown_list_of_links_alone_is_a_contents_list():
    """A README's table of contents (``- [Routing](#routing)``), nested or in one line, is a list of
    what other sections are about; an item that says something beside its link is the page's text."""
    words = ("routing", "binding", "rendering", "logging", "testing", "grouping", "middleware")
    entries = "".join(f"- [{word.title()}](#{word})\n  - [More on {word}](#{word}-more)\n" for word in words)
    page = f"# Gin\n\n## Contents\n\n{entries}\n## Routing\n\n" + "Routes map a path to a handler.\n" * 30
    chunks = chunks_of("README.md", page, limit=120)
    assert chunks[0].is_contents and not chunks[-1].is_contents, chunks
    said = "".join(f"- See [{word}](#{word}) for how {word} is matched against a request\n" for word in words)
    chunks = chunks_of("README.md", f"# Gin\n\n## Contents\n\n{said}", limit=400)
    assert not any(chunk.is_contents for chunk in chunks), chunks


def test_a_description_javadoc_copied_from_another_method_is_not_read():
    """javadoc repeats an overridden method's description under each override without its own,
    after a label naming the original (JDK 11's, 17's and 25's classes): the original's page says
    it. A description of the method's own, and a page javadoc did not make, are read."""
    description = "Get an absolute URL from a URL attribute that may be relative."
    for label_class in ("descfrmTypeLabel", "descfrm-type-label", "description-from-type-label"):
        javadoc = "<!-- Generated by javadoc -->"
        for made_by, own in ((javadoc, False), ("", False), (javadoc, True)):
            label = (
                f'<div class="block"><span class="{label_class}">Description copied from class:&nbsp;'
                '<code><a href="Node.html#absUrl(java.lang.String)">Node</a></code></span></div>\n'
            )
            if own:
                label = '<div class="block">Resolves it against the doctype\'s base URI.</div>\n'
            page = (
                f"<html><head>{made_by}<title>DocumentType</title></head><body><main>\n"
                '<section class="detail" id="absUrl(java.lang.String)"><h3>absUrl</h3>\n'
                f'<div class="member-signature">public String absUrl(String key)</div>\n{label}'
                f'<div class="block">{description}</div>\n<dl class="notes"><dt>Overrides:</dt></dl>\n'
                "</section></main></body></html>\n"
            )
            text = "\n".join(parse_text("DocumentType.html", page).lines)
            copied = bool(made_by) and not own
            assert (description not in text) == copied, (label_class, made_by, own)
            assert "absUrl" in text and "Overrides" in text


def test_a_heading_after_a_code_block_on_the_line_it_closes_is_a_heading():
    """Hugo's highlighter closes a block at the start of the line after its code and the next
    heading follows on that line (``</code></pre></div><h3 id=...>``): the line is the heading's,
    not the block's, so its section starts there. A line holding code and text stays code."""
    page = (
        "<html><body><h1>Dispatcher</h1>\n<h2>close</h2>\n<div><pre><code>a = 1\nb = 2\n"
        '</code></pre></div><h3 id="stream">stream</h3>\n<p>Streams the body.</p>\n'
        "<pre>\nc = 3</pre><p>after</p>\n</body></html>\n"
    )
    document = parse_text("dispatcher.html", page)
    assert document.literal == [(3, 4), (7, 8)]
    assert [chunk.start_line for chunk in chunks_of("dispatcher.html", page, limit=10)] == [1, 5]


def test_an_html_title_of_code_alone_declares_the_names_it_spells():
    """As a Markdown title of code alone does, in the page a site generator made of it (Hugo's,
    Docusaurus'), its permalink mark aside: the id spells the call's parameters too, so the
    anchor alone declares nothing."""
    page = (
        "<html><body><h1>Dispatcher</h1>\n"
        '<h3 id="dispatcherstreamoptions-factory-callback"><code>Dispatcher.stream(options, factory[, '
        "callback])</code></h3>\n<p>A faster version of request.</p>\n"
        '<h2 id="flags"><code>--config</code> and <code>--no-config</code>'
        '<a class="headerlink" href="#flags">¶</a></h2>\n'
        "<h2>Using <code>--check</code></h2>\n<h2><code>npm install undici</code></h2>\n"
        "<h2>Stream</h2>\n<pre>&lt;h2&gt;&lt;code&gt;shown&lt;/code&gt;&lt;/h2&gt;</pre>\n</body></html>\n"
    )
    assert parse_text("dispatcher.html", page).definitions == {
        2: ("Dispatcher.stream", "stream"),
        4: ("--config", "--no-config"),
    }
    # a code element's texts are one span, whatever elements lie in it: a link, a highlighter's or
    # Sphinx's spans; rustdoc's code of an impl is a phrase
    spanned = (
        '<h2><code><a href="Widget.html">Widget</a>.make(String name)</code></h2>\n'
        '<h2><code><span class="pre">--foo</span> <span class="pre">&lt;bar&gt;</span></code></h2>\n'
        '<h3 class="impl"><code class="in-band">impl <a href="a.html">Send</a> for <a href="b.html">Bytes</a>'
        "</code></h3>\n"
    )
    assert declared("spans.html", f"<html><body>\n{spanned}</body></html>\n") == {
        "Widget.make",
        "make",
        "--foo",
    }


def test_a_directive_without_content_before_a_title_defines_that_titles_section():
    """Scrapy writes ``.. setting:: NAME`` and then a section titled ``NAME``: the section is what
    the setting's directive defines, and its chunk holds the setting's default and description."""
    page = (
        "Settings\n========\n\n.. setting:: DOWNLOAD_DELAY\n   :type: float\n\n"
        "DOWNLOAD_DELAY\n--------------\n\nDefault: ``0``\n\n.. confval:: kept\n\n   Its own text.\n\n"
        ".. autoclass:: Crawler\n   :members:\n\nNext\n----\n\n.. option:: --last\n"
    )
    assert parse_text("settings.rst", page).definitions == {
        7: ("DOWNLOAD_DELAY",),
        12: ("kept",),
        16: ("Crawler",),  # a section titled otherwise is the page's next subject, not the class's
        22: ("--last",),
    }
    # a title in code is the name too; a field list after a blank line is the directive's content
    literal = ".. setting:: LOG_LEVEL\n\n``LOG_LEVEL``\n-------------\n\nDefault: ``INFO``\n"
    assert parse_text("log.rst", literal).definitions == {3: ("LOG_LEVEL",)}
    content = ".. function:: foo()\n\n   :returns: nothing\n\nfoo\n---\n\nText.\n"
    assert parse_text("foo.rst", content).definitions == {1: ("foo",)}


def test_a_markdown_table_row_keyed_by_options_declares_them():
    """A command's reference tabulates its options, one per row: the row's first cell, options in
    code (inside a link too), declares them; a first cell of values or other names declares nothing,
    nor does an option in another column or in the table's head."""
    page = (
        "# image ls\n\n| Name | Type | Description |\n|---|---|---|\n"
        "| [`--digests`](#digests) | `bool` | Show digests |\n"
        "| `--all`, `-a` | `bool` | Show all images |\n"
        "| `-f`, `--filter <filter>` | `filter` | Filter output |\n"
        "| `--quiet` or `-q` | | Only show image IDs |\n\n"
        "| Default | CLI override | API override |\n|---|---|---|\n"
        "| `true` | `--no-semi` | `semi: <bool>` |\n\n"
        "| Hook | Runs |\n|---|---|\n| `beforeAll` | once |\n| `--x` and more | twice |\n\n"
        "| `--in-the-head` | x |\n|---|---|\n| text | y |\n"
    )
    assert parse_text("image_ls.md", page).definitions == {
        5: ("--digests",),
        6: ("--all", "-a"),
        7: ("-f", "--filter"),
        8: ("--quiet", "-q"),
    }


def test_a_markdown_table_row_anchored_on_a_name_in_code_declares_it():
    """A generated options table (MkDocs') anchors each row on its key, ``<a id>`` around the key in
    code: the row is that key's definition, a dotted key declared whole. A cell anchored on prose or
    on two spans, a link with no id, and a name in code with no anchor declare nothing."""
    page = (
        "# ACME\n\n| Field | Description |\n|---|---|\n"
        '| <a id="opt-acme-certificatesDuration" href="#opt-acme-certificatesDuration">'
        "`acme.certificatesDuration`</a> | The certificates' duration. |\n"
        '| <a name="storage"></a>`storage` | Where to keep them. |\n'
        '| <span id="pair">`a`, `b`</span> | Two names. |\n'
        '| <a id="prose">The `email`</a> | Prose. |\n'
        '| <a href="#caServer">`acme.caServer`</a> | A link, no id. |\n'
        "| `acme.keyType` | No anchor. |\n"
        '| <a id="opt-acme-dnsChallenge"></a> `acme.dnsChallenge` | A space after the anchor. |\n'
    )
    assert parse_text("acme.md", page).definitions == {
        5: ("acme.certificatesDuration",),
        6: ("storage",),
        11: ("acme.dnsChallenge",),
    }


def test_a_markdown_list_item_keyed_by_options_declares_them():
    """A command's options listed one per item, options in code before a colon or a dash (or alone
    on the item's first line), declare them as a table keyed by them does: short forms in
    parentheses and slashes between the forms read as a manual writes them. An item whose code runs
    on into prose, whose first code is no option, or that is an option alone (a list of CSS
    classes), declares nothing. So does an item keyed by another name in code, where it is spelt as
    code (an environment variable, a key), not a plain word (a value)."""
    page = (
        "# Settings\n\n"
        "* `--port <int>` - Bind to a socket with this port.\n"
        "* `--help (-h)` : Display help information.\n"
        "* `-o/--output <file>`, `--out`: Where to write.\n"
        "* `--use-colors / --no-use-colors` \u2014 Colorize the log.\n"
        "* [`--linked`](#linked): An option with an anchor.\n"
        "* `--verbose`\n  Say more.\n"
        "* `--dry-run` is supported by every command.\n"
        "* `timeout`: a parameter, not an option.\n"
        "* Use `--force`: prose first.\n\n"
        "- `--loose` - An item of a loose list.\n\n  Its second paragraph.\n\n"
        "- `-c CONFIG`, `--config CONFIG`: argparse's placeholders.\n"
        "- `--color {auto,always,never}`: a choice.\n"
        "- `-j` / `--jobs`: forms a slash apart.\n"
        "- `--quiet` (`-q`): a short form in its own code.\n"
        "- `import { render }`: braces after a word that is no option.\n"
        "- `a/-b`: a slash after a word that is no option.\n\n"
        "- `-warning`\n- `-error`\n\n"
        "- `TAURI_ENV_PLATFORM` \u2014 a name spelt as code, described.\n"
        "- `build.target`: a key.\n"
        "- `auto`: a value, a plain word.\n"
        "- `MAX_SIZE`\n"
    )
    assert parse_text("settings.md", page).definitions == {
        3: ("--port",),
        4: ("--help", "-h"),
        5: ("-o", "--output", "--out"),
        6: ("--use-colors", "--no-use-colors"),
        7: ("--linked",),
        8: ("--verbose",),
        14: ("--loose",),
        18: ("-c", "--config"),
        19: ("--color",),
        20: ("-j", "--jobs"),
        21: ("--quiet", "-q"),
        28: ("TAURI_ENV_PLATFORM",),
        29: ("build.target",),
    }


def test_an_html_heading_block_in_markdown_is_a_heading():
    """A page may title a section with an HTML heading element (to give it an anchor or an
    alignment): the page renders it as that heading, of its level, with its text; a block holding
    more than one heading, or more than a heading, is none."""
    page = (
        "## FAQ\n\n"
        '<h3 name="config">\nHow do I configure ripgrep?\n</h3>\n\nSet RIPGREP_CONFIG_PATH.\n\n'
        '<H2 align="center">Size &amp; <b>limits</b></H2>\n\nText.\n\n'
        "<h1>a</h1><h2>b</h2>\n\n"
        "<div><h3>inside</h3></div>\n\n"
        "<h4>Title</h4>\nand text after it\n\n"
        "<h3>When I run <code>rg</code>, why<br>not?</h3>\n"
    )
    headings = parse_text("FAQ.md", page).headings
    assert [(heading.line, heading.level, heading.title) for heading in headings] == [
        (1, 2, "FAQ"),
        (3, 3, "How do I configure ripgrep?"),
        (9, 2, "Size & limits"),
        (20, 3, "When I run rg, why not?"),
    ]


def test_a_vitepress_page_s_script_setup_and_style_blocks_are_not_read_as_its_text():
    """A VitePress page opens with a ``<script setup>`` block (the Vue code of its demos, blank lines
    and all) and may close with a ``<style>``: the site runs them and shows neither, so the page's
    first chunk is its title and intro, not a headless chunk of JavaScript."""
    page = (
        "---\ntitle: Plugin - ElysiaJS\n---\n\n<script setup>\n"
        "import Playground from '../components/nearl/playground.vue'\n\n"
        "const demo1 = new Elysia()\n    .get('/', ({ plugin }) => plugin)\n\n"
        "const demo2 = new Elysia()\n    .use(plugin2)\n</script>\n\n"
        "# Plugin\n\nA plugin is a part that is **decoupled** from the main instance.\n\n"
        '<Playground :elysia="demo1" />\n\n'
        "<style scoped>\n.demo { color: red }\n\n.card { margin: 0 }\n</style>\n\n"
        "<script>let shown = 1</script> and the words after it on its line\n\n"
        "<script>a()</script> Words between two scripts <script>b()</script>\n"
    )
    lines = page.split("\n")
    document = parse_text("essential/plugin.md", page)
    script = range(lines.index("<script setup>") + 1, lines.index("</script>") + 2)
    style = range(lines.index("<style scoped>") + 1, lines.index("</style>") + 2)
    assert all(document.lines[number - 1] == "" for number in [*script, *style])
    assert document.lines[len(lines) - 4] == lines[-4], "a block with text after its end tag is kept"
    assert document.lines[len(lines) - 2] == lines[-2], "and one with text between two elements"
    words = lambda texts: [len(t.split()) for t in texts]  # noqa: E731
    chunks = chunk_document(document, words, ChunkSettings.for_limit(64))
    assert chunks[0].heading == "Plugin" and "Elysia()" not in "".join(chunk.text for chunk in chunks)


def test_an_html_anchor_that_spells_the_name_after_it_declares_that_name():
    """gtk-doc's and DocBook's anchors, javadoc's and Sphinx's ids: the id spells the name that
    follows it (case, ``-``, ``_`` and ``.`` aside; an id's ``:CAPS`` or ``(...)`` qualifier too); a
    link's text and an id that spells nothing after it define nothing."""
    page = (
        '<body><table class="navigation" id="top"><tr><td><a href="#">Top</a></td></tr></table>\n'
        '<div id="content">\n'
        '<a name="cairo-create"></a><h3>cairo_create ()</h3>\n'
        '<p>Creates a context; see <a href="#cairo-destroy">cairo_destroy</a>.</p>\n'
        '<table><tr><td><p><a name="CAIRO-FORMAT-A1:CAPS"></a>CAIRO_FORMAT_A1</p></td>\n'
        "<td><p>each pixel is a 1-bit quantity</p></td></tr></table>\n"
        '<section id="toString()"><h4>toString</h4><p>Returns a string.</p></section>\n'
        '<dt id="os.path.join"><code>os.path.</code><span>join</span>(a, *p)</dt>\n'
        '<h2 id="id-1.3.2">Drawing</h2>\n'
        "</div></body>"
    )
    document = parse_text("cairo-t.html", page)
    assert document.definitions == {
        3: ("cairo_create",),
        5: ("CAIRO_FORMAT_A1",),
        7: ("toString",),
        8: ("os.path.join", "join"),
    }


def test_a_rustdoc_item_is_declared_by_its_link_to_its_own_section():
    """rustdoc anchors each item's section by its kind and name (``method.freeze``) and links the
    name, or a mark before it, to that section: the item is the name in that link, or after the
    mark outside any link, on the line where the section's text starts. A section whose name links
    elsewhere (a trait's method on a type implementing it) or nowhere (the trait of an undocumented
    crate) declares nothing; nor does an id rustdoc numbers as the page's second of the name
    (``method.len-1``: a method shown again through ``Deref``, ``String``'s of ``str``), a link to
    the section from outside it or from a link inside the self-link, a plain id's link to itself
    (``id="top"``), nor a section with no link to itself whose title spells a word of its id
    (javadoc's ``method.summary`` over "Method Summary")."""
    page = (
        "<html><body><main>\n"
        '<section id="method.freeze"><a class="src" href="../src/b.rs.html#9">Source</a>\n'
        '<h4 class="code-header">pub fn <a href="#method.freeze" class="fn">freeze</a>(self) -&gt; '
        '<a href="struct.Bytes.html">Bytes</a></h4></section>\n'
        '<section id="variant.Off"><a href="#variant.Off" class="anchor">§</a>\n'
        '<h3 class="code-header">Off</h3></section>\n'
        '<section id="method.remaining"><a href="#method.remaining" class="anchor">§</a>\n'
        '<h4 class="code-header">fn <a href="trait.Buf.html#tymethod.remaining">remaining</a>(&amp;self)</h4>'
        "</section>\n"
        '<section id="method.greet"><a href="#method.greet" class="anchor">§</a>\n'
        '<h4 class="code-header">fn <a class="fn">greet</a>(&amp;self)</h4></section>\n'
        '<section id="method.summary"><h2>Method Summary</h2></section>\n'
        '<p>See <a href="#method.freeze">freeze</a> for more.</p>\n'
        '<section id="method.thaw"><a href="#method.thaw"><span><a href="o.html">thaw</a></span></a>'
        "</section>\n"
        '<div id="top"><p><a href="#top">Top</a></p></div>\n'
        '<section id="method.len-1"><h4><a href="#method.len-1">len</a>()</h4></section>\n'
        '<section id="variant.On"><a href="#variant.On">On</a></section>\n'
        "<p>Set how long a request may wait.</p>\n"
        "</main></body></html>"
    )
    assert parse_text("bytes/struct.BytesMut.html", page).definitions == {
        3: ("freeze",),
        4: ("Off",),
        15: ("On",),
    }


def test_a_docbook_manual_declares_its_settings_by_namespaced_ids_and_functions_by_their_tables():
    """PostgreSQL's manual anchors each setting under an id in a namespace (``GUC-WORK-MEM`` before
    ``work_mem``) and keys its function tables by signatures in code; a row of prose, a call that
    is not in code, a namespaced id spelling nothing after it, and one spelling a word of a
    chapter's title (prose, not code) declare nothing."""
    page = (
        "<html><body>\n"
        '<dl><dt id="GUC-WORK-MEM"><span class="term"><code class="varname">work_mem</code> '
        '(<code class="type">integer</code>)</span></dt><dd><p>Sets the memory.</p></dd></dl>\n'
        "<table><thead><tr><th>Function</th><th>Example</th></tr></thead><tbody>\n"
        '<tr><td><p class="func_signature"><a id="id-1.5.8" class="indexterm"></a>'
        '<code class="function">btrim</code> ( <code>string</code> text ) → text</p>'
        "<p>Removes the longest string.</p></td><td>x</td></tr>\n"
        "<tr><td><code>pg_catalog.length(s)</code></td><td>y</td></tr>\n"
        "<tr><td>Note (see below)</td><td>z</td></tr>\n"
        "<tr><td>lower (text) in prose</td><td>w</td></tr>\n"
        "<tr><td></td><td><code>upper(s)</code></td></tr>\n"
        "</tbody></table>\n"
        '<h2 id="SQL-CREATETABLE">Description</h2>\n'
        '<div id="chapter-gobject"><h2>The GObject base class</h2></div>\n'
        "</body></html>"
    )
    assert parse_text("functions.html", page).definitions == {
        2: ("work_mem",),
        4: ("btrim",),
        5: ("pg_catalog.length", "length"),
    }


def test_a_sphinx_signature_declares_the_name_its_markup_gives():
    """Sphinx's ids of options and settings spell the program or a prefix with the name
    (``cmdoption-mypy-strict``, ``confval-...``): the signature's ``descname`` is what names it. A
    Python method's short name (``join``) is many methods' name: its id, in full, names it."""
    page = (
        '<html><body><div role="main">\n'
        '<dl class="std option"><dt class="sig sig-object std" id="cmdoption-mypy-strict">\n'
        '<span class="sig-name descname"><span class="pre">--strict</span></span>'
        '<a class="headerlink" href="#cmdoption-mypy-strict">\u00b6</a></dt>\n'
        "<dd><p>Enable every optional check.</p></dd></dl>\n"
        '<dl class="std option"><dt class="sig sig-object std" id="cmdoption-stubgen-m">\n'
        '<span id="cmdoption-stubgen-module"></span><span class="sig-name descname">-m</span>'
        '<span class="sig-prename descclassname"> MODULE</span>'
        '<span class="sig-prename descclassname">, </span>'
        '<span class="sig-name descname">--module</span></dt><dd><p>A module.</p></dd></dl>\n'
        '<dl class="std confval"><dt class="sig sig-object std" id="confval-disallow_untyped_defs">\n'
        '<span class="sig-name descname"><span class="pre">disallow_untyped_defs</span></span></dt>\n'
        "<dd><p>Disallows defining functions without type annotations.</p></dd></dl>\n"
        '<p>A <span class="descname">--not-a-signature</span> outside one.</p>\n'
        '<dl class="py method"><dt class="sig sig-object py" id="multiprocessing.Process.join">\n'
        '<span class="sig-name descname">join</span>(timeout)</dt><dd><p>Wait.</p></dd></dl>\n'
        "</div></body></html>"
    )
    assert parse_text("command_line.html", page).definitions == {
        3: ("--strict",),
        6: ("-m", "--module"),
        8: ("disallow_untyped_defs",),
    }


def test_a_chunk_declares_the_names_its_own_lines_define():
    text = (
        "Settings\n========\n\n.. confval:: first_setting\n\n   " + "About the first. " * 40 + "\n\n"
        ".. confval:: second_setting\n\n   " + "About the second. " * 40 + "\n"
    )
    chunks = chunks_of("settings.rst", text, limit=120)
    assert len(chunks) >= 2
    declaring = {name: [chunk for chunk in chunks if name in chunk.names] for name in ("first_setting",)}
    assert [chunk.start_line for chunk in declaring["first_setting"]] == [chunks[0].start_line]
    second = [chunk for chunk in chunks if "second_setting" in chunk.names]
    assert len(second) == 1 and ".. confval:: second_setting" in second[0].text


@pytest.mark.slow
@pytest.mark.parametrize(
    "markup",
    [
        lambda repeats: "NAME\n" + "    indented line without the dash\n" * repeats,  # backtracked 2^n
        lambda repeats: "NAME\n" + " " * (40 * repeats) + "\n",  # one long line of spaces: cubic
        lambda repeats: "NAME\n    x\n" * repeats,
        lambda repeats: ".. confval:: x\n" + "   :opt:\n" * repeats,
        lambda repeats: ".. confval:: x\n\n" * repeats,  # the rest of the page read per directive
    ],
)
def test_reading_the_names_a_page_declares_takes_time_linear_in_its_size(markup):
    # the man-page NAME rule was a regular expression that backtracked exponentially over indented
    # lines: eight times the markup must take about eight times as long (see the linear-time test of
    # HTML comments above for why the pages are large, the best of five, and the collector off)
    def seconds(repeats: int) -> float:
        text = markup(repeats)
        best = math.inf
        for _ in range(5):
            gc.disable()
            try:
                started = time.perf_counter()
                parse_text("page.txt", text)
                best = min(best, time.perf_counter() - started)
            finally:
                gc.enable()
        return best

    assert grows_linearly(seconds, 20_000, 160_000, 24)  # quadratic would be 64


@pytest.mark.slow
@pytest.mark.parametrize(
    ("before", "repeated"),
    [
        ("", '<section id="method.m{0}"><h4>fn <a href="#method.m{0}">m{0}</a>()</h4></section>'),
        ('<span id="e{0}"></span>', '<section id="a.x{0}"><a href="#a.x{0}">x{0}</a></section>'),
        ('<span id="e{0}"></span>', "<tr><td></td></tr>"),
    ],
    ids=[
        "items named on one line",
        "ids waiting, then items named by links",
        "ids waiting, then empty cells",
    ],
)
def test_reading_many_named_items_on_a_page_takes_time_linear_in_their_number(before, repeated):
    # each line's names are kept once each, however many; an id waiting for words is passed over,
    # not searched for, when a link to it or a table's cell ends: eight times the items, eight times
    # as long (best of five, the collector off)
    def seconds(repeats: int) -> float:
        items = "".join(before.format(number) for number in range(repeats))
        items += "".join(repeated.format(number) for number in range(repeats))
        page = f"<html><body><main><table>{items}</table></main></body></html>"
        return fastest_seconds(lambda: parse_text("page.html", page))

    assert grows_linearly(seconds, 2_000, 16_000, 24)  # quadratic would be 64


@pytest.mark.slow
def test_reading_the_names_html_anchors_spell_takes_time_linear_in_their_number():
    # every id reads the text after it up to its block's end: ids waiting for words, and ids in one
    # long paragraph, each read a bounded text, so eight times the ids take about eight times as long
    def seconds(repeats: int) -> float:
        page = (
            "<html><body><p>" + '<span id="a"></span> <b id="b_c">b_c</b> ' * repeats + "</p></body></html>"
        )
        best = math.inf
        for _ in range(3):
            gc.disable()
            try:
                started = time.perf_counter()
                document = parse_text("page.html", page)
                best = min(best, time.perf_counter() - started)
            finally:
                gc.enable()
        assert document.definitions == {1: ("b_c",)}
        return best

    assert grows_linearly(seconds, 1_000, 8_000, 24)  # quadratic would be 64


HOOKS_PAGE = """---
title: "Backup Hooks"
layout: docs
---

## Backup Hooks

Velero runs hooks in a pod.

## Hook Example with fsfreeze

Freeze the file system.

### Annotations

Annotate the pod.
"""


def test_a_first_heading_repeating_the_title_heads_its_siblings_too():
    headings = read_document("backup-hooks.md", HOOKS_PAGE.encode()).headings
    assert [(heading.level, heading.title) for heading in headings] == [
        (1, "Backup Hooks"),
        (2, "Hook Example with fsfreeze"),
        (3, "Annotations"),
    ]
    alone = HOOKS_PAGE.split("## Hook Example")[0]  # the title's heading alone heads the page as it is
    assert [heading.level for heading in read_document("a.md", alone.encode()).headings] == [2]


def test_a_hugo_shortcode_shows_its_caption_title_or_alt_its_other_arguments_as_written_or_nothing():
    text = (
        "# Providers\n\n"
        '{{< table caption="Velero supported providers" >}}\n'
        "| Provider | Plugin |\n|---|---|\n| AWS | velero-plugin-for-aws |\n"
        "{{< /table >}}\n\n"
        'See {{< figure src="/img/setup.png" alt="The setup" width="100%">}} and '
        "{{% notice %}}this{{% /notice %}}.\n\n"
        'Written as {{</* table caption="x" */>}} on a page about shortcodes.\n\n'
        '{{< provider name="Amazon S3" home="https://aws.amazon.com/s3/" config="/s3/" >}}\n'
    )
    document = read_document("providers.md", text.encode())
    assert document.read_as[3] == "Velero supported providers"
    assert 7 in document.markup  # the closing call shows nothing
    assert document.read_as[9] == "See The setup and this."
    assert 11 not in document.read_as  # an escaped call is shown as written
    assert 13 not in document.read_as and 13 not in document.markup  # its arguments are what it shows
    assert formats.shown_text("providers.md", text).split("\n")[-3].startswith("Written as {{</*")


@pytest.mark.parametrize(
    "line",
    [
        '{% include "' + "x" * 200,
        '--8<-- "' + "a" * 200,
        "<" + "A" * 200 + " /",
        "{% include x %}",
        '--8<-- "a.md"',
    ],
    ids=["an unclosed directive", "an unclosed snippet", "an unclosed component", "directives", "snippets"],
)
@pytest.mark.slow
def test_a_markdown_page_of_include_lines_is_read_in_time_linear_in_its_size(line):
    def seconds(repeats: int) -> float:
        page = ("import Intro from './_intro.mdx';\n\n" + (line + "\n") * repeats).encode()
        return fastest_seconds(lambda: read_document("docs/page.mdx", page), repeats=3)

    assert grows_linearly(seconds, 2_000, 16_000, 24)  # quadratic would be 64
