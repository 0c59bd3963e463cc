"""A DocBook manual's entities read as the texts its DTDs declare: those of its internal subset and
of the DTD files inside the indexed folder its doctype names or includes, never a file outside it nor
the network, and within bounds whatever a hostile DTD declares."""

from __future__ import annotations

import os

import pytest
from helpers import HashBackend, fastest_seconds, grows_linearly

from indexer import Index, corpus
from indexer.formats import read_document
from indexer.formats.entities import MAX_ENTITY_CHARS, expand_entities

#: GnuCash's layout: chapters in ``C/manual`` name a DTD that a catalog finds in ``docbook/``; that
#: DTD includes the files beside it, and defines its menus' labels by parameter entities.
GUI_DTD = """<!-- labels, translated -->
<!ENTITY % gm.file "<guimenu><accel>F</accel>ile</guimenu>">
<!ENTITY % gnc-gui-struct SYSTEM "gnc-gui-struct.dtd">
%gnc-gui-struct;
<!ENTITY % gnc-docbookx SYSTEM "gnc-docbookx.dtd">
%gnc-docbookx;
"""
STRUCT_DTD = """<!ENTITY gm.file "%gm.file;">
"""
DOCBOOKX_DTD = """<!ENTITY % orig-docbook PUBLIC "-//OASIS//DTD DocBook XML V4.5//EN"
                               "http://www.oasis-open.org/docbook/xml/4.5/docbookx.dtd">
%orig-docbook;
<!ENTITY appname "GnuCash">
<!ENTITY app "<application>&appname;</application>">
<!ENTITY app-cli "<application>gnucash-cli</application>">
<!ENTITY tip-col-sel '<tip><para>You can customize the
  columns displayed.</para></tip>'>
"""
CHAPTER = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE chapter SYSTEM "gnc-gui-C.dtd">
<chapter id="finance-quote">
  <title>Using &app-cli; for Testing</title>
  <para>&app; reads quotes. Open the &gm.file; menu.
  &tip-col-sel;
  It&rsquo;s &unknown; here.</para>
</chapter>
"""


def manual(root, dtds: str = "docbook"):
    (root / dtds).mkdir(parents=True, exist_ok=True)
    (root / dtds / "gnc-gui-C.dtd").write_text(GUI_DTD)
    (root / dtds / "gnc-gui-struct.dtd").write_text(STRUCT_DTD)
    (root / dtds / "gnc-docbookx.dtd").write_text(DOCBOOKX_DTD)
    (root / "C" / "manual").mkdir(parents=True, exist_ok=True)
    (root / "C" / "manual" / "ch_quotes.docbook").write_text(CHAPTER)


def read(root, name):
    return read_document(name, (root / name).read_bytes(), corpus.RootFiles(root, 1 << 20))


def test_a_chapter_reads_the_entities_of_the_dtd_in_a_folder_above_it_not_of_one_beside_it(tmp_path):
    """A DTD named by the doctype is found where its name says, relative to the chapter, or by its
    name in the chapter's folder or one above it; one only a catalog finds in another folder
    (GnuCash's ``docbook/`` beside ``C/``) is not looked for."""
    manual(tmp_path)
    beside = read(tmp_path, "C/manual/ch_quotes.docbook")
    assert beside.headings[0].title == "Using app-cli for Testing"
    manual(tmp_path, dtds="C")
    document = read(tmp_path, "C/manual/ch_quotes.docbook")
    assert [heading.title for heading in document.headings] == ["Using gnucash-cli for Testing"]
    assert document.lines[4] == "GnuCash reads quotes. Open the File menu."
    assert document.lines[5] == "You can customize the columns displayed."  # a value's lines, on one line
    assert document.lines[6] == "It’s unknown here."  # an undeclared entity shows its name, as before
    assert len(document.lines) == len(CHAPTER.splitlines())


def test_without_its_dtd_a_chapter_shows_the_entities_names_as_before(tmp_path):
    manual(tmp_path)
    document = read_document("ch_quotes.docbook", CHAPTER.encode())
    assert document.headings[0].title == "Using app-cli for Testing"
    assert document.lines[4] == "app reads quotes. Open the gm.file menu."


def test_the_internal_subset_is_read_first_and_wins_and_no_reference_in_markup_is_touched():
    text = """<?xml version="1.0"?>
<!DOCTYPE article SYSTEM "missing.dtd" [
  <!-- <!ENTITY product "Commented"> -->
  <!ENTITY product "Widget &amp; Co &#x2026;">
  <!ENTITY product "Second">
]>
<article><title>&product;</title>
<para><![CDATA[&product;]]> <!-- &product; --> <ulink url="a?b=1&amp;c=&product;">x</ulink></para>
</article>
"""
    expanded = expand_entities(text, "article.docbook", None)
    assert "<title>Widget &amp; Co …</title>" in expanded
    assert '<![CDATA[&product;]]> <!-- &product; --> <ulink url="a?b=1&amp;c=&product;">' in expanded
    document = read_document("article.docbook", text.encode())
    assert document.headings[0].title == "Widget & Co …"


def test_an_undeclared_entity_reads_as_a_letter_or_a_docbook_character_else_as_its_name():
    """``&ccaron;`` (ISO Latin 2) and ``&rsquo;`` read as their characters; KDE's own ``&eg;`` and
    ``&Tab;``, which HTML 5 also names (a symbol, a control), show their names when the manual's
    entities are not found."""
    text = (
        '<?xml version="1.0"?>\n<article><title>The &Tab; Key</title>\n'
        "<para>Dvo&ccaron;&aacute;k&rsquo;s tools, &eg; the &krusader; panel.</para>\n</article>\n"
    )
    document = read_document("keyboard.docbook", text.encode())
    assert document.headings[0].title == "The Tab Key"
    assert document.lines[2] == "Dvočák’s tools, eg the krusader panel."


HOSTILE_DTD = """<!ENTITY secret "TOPSECRET">
"""


def test_no_file_outside_the_folder_nor_a_link_out_of_it_nor_a_secret_is_read(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "doc").mkdir(parents=True)
    outside.mkdir()
    (outside / "x.ent").write_text(HOSTILE_DTD)
    (root / ".env").write_text(HOSTILE_DTD)
    os.symlink(outside / "x.ent", root / "doc" / "link.ent")
    text = """<?xml version="1.0"?>
<!DOCTYPE article SYSTEM "../../outside/x.ent" [
<!ENTITY % a SYSTEM "link.ent"> %a;
<!ENTITY % b SYSTEM "../.env"> %b;
<!ENTITY % c SYSTEM "/etc/passwd"> %c;
<!ENTITY % d SYSTEM "file:///etc/passwd"> %d;
<!ENTITY % e SYSTEM "http://example.com/x.ent"> %e;
]>
<article><title>T &secret;</title><para>&c;</para></article>
"""
    (root / "doc" / "page.docbook").write_text(text)
    files = corpus.RootFiles(root, 1 << 20)
    assert files.read("doc/link.ent") is None and files.read("../outside/x.ent") is None
    assert files.read(".env") is None and files.read("/etc/passwd") is None
    document = read(root, "doc/page.docbook")
    assert document.headings[0].title == "T secret"
    assert "TOPSECRET" not in "".join(document.lines) and "root:" not in "".join(document.lines)


def billion_laughs(references: int, entity: str = "lol2") -> str:
    levels = ['<!ENTITY lol0 "lol">'] + [
        f'<!ENTITY lol{level} "{f"&lol{level - 1};" * 10}">' for level in range(1, 10)
    ]
    return f"""<?xml version="1.0"?>
<!DOCTYPE article [
{chr(10).join(levels)}
<!ENTITY % p "%p;"> %p;
<!ENTITY cycle "a &cycle; b">
]>
<article><para>{f"&{entity}; " * references} &lol9;</para><title>&lol4; &cycle;</title></article>
"""


def test_a_billion_laughs_is_read_in_bounded_text_and_time():
    document = read_document("bomb.docbook", billion_laughs(100).encode())
    assert document.headings[0].title == "lol4 a cycle b"  # past the longest text: its name
    shown = document.lines[-1]
    assert shown.startswith("lol" * 100 + " ") and len(shown) < 100 * 301 + MAX_ENTITY_CHARS

    def seconds(size: int) -> float:
        text = billion_laughs(size, "lol0")
        return fastest_seconds(lambda: expand_entities(text, "bomb.docbook", None), repeats=3)

    assert grows_linearly(seconds, 5_000, 40_000, 24)  # quadratic would be 64


@pytest.mark.heavy
def test_a_build_reads_the_entities_of_a_dtd_inside_the_folder(tmp_path):
    manual(tmp_path / "docs", dtds="C")
    with Index.open(tmp_path / "index.db", backend=HashBackend(max_tokens=64)) as index:
        index.build(tmp_path / "docs")
        hits = index.search("GnuCash", k=1, mode="keyword", min_score=0)
    assert hits[0].path == "C/manual/ch_quotes.docbook" and "gnucash-cli" in hits[0].heading


BOOK_OF_CHAPTERS = """<?xml version="1.0"?>
<!DOCTYPE book SYSTEM "http://www.oasis-open.org/docbook/xml/4.5/docbookx.dtd" [
<!ENTITY ch01 SYSTEM "ch01-fundamental-concepts.xml">
<!ENTITY ch02 PUBLIC "-//Example//Basic Usage" "ch02-basic-usage.xml">
<!ENTITY product "Subversion">
]>
<book id="svn">
  <title>Version Control with &product;</title>
  <part id="svn.intro">
    <title>Getting to Know &product;</title>
    &ch01;
    &ch02;
  </part>
</book>
"""


def test_a_book_s_external_entities_include_their_chapters_and_show_nothing():
    """Subversion's book is its chapters, each an external entity: a reference is where that file's
    text stands (read as the file it is), not a word of the book's (``ch01``)."""
    document = read_document("book.xml", BOOK_OF_CHAPTERS.encode())
    assert [heading.title for heading in document.headings] == [
        "Version Control with Subversion",
        "Getting to Know Subversion",
    ]
    assert not any("ch0" in line for line in document.lines)
    assert document.includes == {11, 12}
    expanded = expand_entities(BOOK_OF_CHAPTERS, "book.xml", None)
    assert 'href="ch01-fundamental-concepts.xml"/>' in expanded and "&ch01;" not in expanded
