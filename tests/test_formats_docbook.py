"""DocBook XML manuals read at their source lines: what each line shows without its tags, sections
and reference pages as headings, literal elements as code, a page's names and its list's terms as
the names it defines; any other XML read as plain lines."""

from __future__ import annotations

import pytest
from helpers import HashBackend, fastest_seconds, grows_linearly

from indexer import Index, corpus
from indexer.chunking import ChunkSettings, chunk_document
from indexer.formats import UnreadableFile, read_document
from indexer.formats.docbook import read_docbook, read_xml

REFERENCE_PAGE = """<?xml version='1.0'?>
<!DOCTYPE refentry PUBLIC "-//OASIS//DTD DocBook XML V4.5//EN"
  "http://www.oasis-open.org/docbook/xml/4.5/docbookx.dtd" [
<!ENTITY % entities SYSTEM "custom-entities.ent" >
%entities;
]>
<!-- SPDX-License-Identifier: LGPL-2.1-or-later -->

<refentry id="systemd.service">
  <refentryinfo>
    <title>systemd.service</title>
    <productname>systemd</productname>
  </refentryinfo>

  <refmeta>
    <refentrytitle>systemd.service</refentrytitle>
    <manvolnum>5</manvolnum>
  </refmeta>

  <refnamediv>
    <refname>systemd.service</refname>
    <refpurpose>Service unit configuration</refpurpose>
  </refnamediv>

  <refsect1>
    <title>Options</title>

    <para>Units are read from <filename>&SYSTEM_DIR;</filename>, see
    <citerefentry><refentrytitle>systemd.unit</refentrytitle><manvolnum>5</manvolnum></citerefentry>.<indexterm><primary>unit</primary></indexterm></para>

    <variablelist>
      <varlistentry>
        <term><option>-t</option></term>
        <term><option>--type=</option><replaceable>TYPE</replaceable></term>
        <listitem><para>Limits the types &amp; states.<remark>say more</remark></para>
        <programlisting>ExecStart=/usr/bin/daemon --flag &lt;value&gt;

  continued</programlisting>
        </listitem>
      </varlistentry>
      <varlistentry>
        <term><varname>ExecStart=</varname></term>
        <listitem><para>Commands that run when this service is started.</para></listitem>
      </varlistentry>
      <varlistentry>
        <term><command>set-property <replaceable>UNIT</replaceable>
          <replaceable>PROPERTY</replaceable>=<replaceable>VALUE</replaceable>…</command></term>
        <term><command>list-units</command> <optional><replaceable>PATTERN</replaceable>…</optional></term>
        <listitem><para>Commands of <command>systemctl</command>.</para></listitem>
      </varlistentry>
      <varlistentry>
        <term>Default value</term>
        <listitem><para>Words, not a name.</para></listitem>
      </varlistentry>
    </variablelist>
  </refsect1>
</refentry>
"""

BOOK = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE book PUBLIC "-//OASIS//DTD DocBook XML V4.5//EN" "docbookx.dtd">
<book>
  <bookinfo><title>The Widget Manual</title></bookinfo>
  <chapter id="install">
    <title>Installing</title>
    <para>Run the installer.</para>
    <sect1>
      <title>From source</title>
      <para>Build it with <command>make</command>.</para>
      <sect2><title>The <function>widget_init</function> call</title>
        <funcsynopsis><funcprototype>
          <funcdef>int <function>widget_init</function></funcdef>
          <paramdef>int <parameter>flags</parameter></paramdef>
        </funcprototype></funcsynopsis>
      </sect2>
    </sect1>
  </chapter>
  <appendix><title>Troubleshooting</title><para>Ask.</para></appendix>
</book>
"""

ARTICLE = """<?xml version="1.0" encoding="utf-8"?>
<article xmlns="http://docbook.org/ns/docbook" xmlns:xlink="http://www.w3.org/1999/xlink" version="5.0">
  <info>
    <title>Getting Started</title>
  </info>
  <section xml:id="first">
    <info><title>First steps</title></info>
    <para>See <link xlink:href="https://example.org">the site</link> and <xref linkend="next"/>.</para>
    <screen>$ widget --start</screen>
  </section>
</article>
"""

CHAPTER_FRAGMENT = """<!-- doc/src/sgml/config.sgml -->

<chapter id="runtime-config">
 <title>Server Configuration</title>
 <para>&productname; reads its settings at start.</para>
 <variablelist>
  <varlistentry id="guc-work-mem" xreflabel="work_mem">
   <term><varname>work_mem</varname> (<type>integer</type>)
   <indexterm>
    <primary><varname>work_mem</varname> configuration parameter</primary>
   </indexterm>
   </term>
   <listitem><para>Sets the memory &version; uses.</para></listitem>
  </varlistentry>
 </variablelist>
 <table id="functions-string-other">
  <tgroup cols="1">
   <thead><row><entry role="func_table_entry"><para>Function</para></entry></row></thead>
   <tbody>
    <row>
     <entry role="func_table_entry"><para role="func_signature">
      <indexterm><primary>btrim</primary></indexterm>
      <function>btrim</function> ( <parameter>string</parameter> <type>text</type> )
      <returnvalue>text</returnvalue>
     </para>
     <para>Removes the longest string containing only characters.</para></entry>
     <entry><literal>ltrim(x)</literal> is another cell, naming nothing</entry>
    </row>
   </tbody>
  </tgroup>
 </table>
</chapter>
"""


def shown(document, number: int) -> str:
    """What line ``number`` shows: '' for a line of tags alone."""
    return document.lines[number - 1]


def line_of(source: str, start: str) -> int:
    """The number of the first line of ``source`` that starts with ``start``, blanks aside."""
    lines = source.splitlines()
    return next(number for number, line in enumerate(lines, 1) if line.strip().startswith(start))


def test_a_reference_page_is_read_line_for_line_as_its_man_page_shows_it():
    page = read_document("man/systemd.service.xml", REFERENCE_PAGE.encode())
    assert len(page.lines) == len(REFERENCE_PAGE.splitlines())  # cited by the file's own lines
    # what is stored, searched and shown is the text: the prolog, a comment, tags alone show nothing
    assert all(not shown(page, number) for number in (1, 2, 7, line_of(REFERENCE_PAGE, "<refentry ")))
    assert not any("<" in line for line in page.lines[7:] if "value>" not in line)
    assert shown(page, line_of(REFERENCE_PAGE, "<manvolnum>")) == "(5)"
    assert shown(page, line_of(REFERENCE_PAGE, "<citerefentry>")) == "systemd.unit(5)."  # no index term
    assert shown(page, line_of(REFERENCE_PAGE, "<para>Units")) == "Units are read from SYSTEM_DIR, see"
    assert shown(page, line_of(REFERENCE_PAGE, "<listitem><para>Limits")) == "Limits the types & states."
    assert shown(page, line_of(REFERENCE_PAGE, "<term><varname>")) == "ExecStart="


def test_a_reference_page_is_headed_by_its_names_and_purpose_and_declares_them():
    page = read_docbook(REFERENCE_PAGE)
    names_line = line_of(REFERENCE_PAGE, "<refname>")
    titles = [(heading.line, heading.level, heading.title) for heading in page.headings]
    assert titles == [
        (names_line, 1, "systemd.service — Service unit configuration"),
        (line_of(REFERENCE_PAGE, "<title>Options"), 2, "Options"),
    ]
    assert page.definitions[names_line] == ("systemd.service", "service")


def test_a_variable_list_s_terms_in_code_declare_their_names_and_prose_declares_nothing():
    page = read_docbook(REFERENCE_PAGE)
    assert page.definitions[line_of(REFERENCE_PAGE, "<term><option>-t")] == ("-t",)
    assert page.definitions[line_of(REFERENCE_PAGE, "<term><option>--type=")] == ("--type",)
    assert page.definitions[line_of(REFERENCE_PAGE, "<term><varname>ExecStart=")] == ("ExecStart",)
    assert page.definitions[line_of(REFERENCE_PAGE, "<term><command>set-property")] == ("set-property",)
    assert page.definitions[line_of(REFERENCE_PAGE, "<term><command>list-units")] == ("list-units",)
    assert shown(page, line_of(REFERENCE_PAGE, "<term><command>set-property") + 1) == "PROPERTY=VALUE…"
    assert line_of(REFERENCE_PAGE, "<term>Default value") not in page.definitions
    assert len(page.definitions) == 6  # and the page's name: nothing from its paragraphs or code


def test_a_program_listing_is_code_shown_as_written_without_its_escapes():
    page = read_docbook(REFERENCE_PAGE)
    first = line_of(REFERENCE_PAGE, "<programlisting>")
    assert page.literal == [(first, first + 2)]
    assert shown(page, first) == "ExecStart=/usr/bin/daemon --flag <value>"
    assert shown(page, first + 1) == ""  # a blank line in the code
    assert shown(page, first + 2) == "  continued"


def test_a_book_s_chapters_and_sections_nest_as_their_elements_do():
    book = read_document("manual.docbook", BOOK.encode())
    titles = [(heading.level, heading.title) for heading in book.headings]
    assert titles == [
        (1, "The Widget Manual"),
        (2, "Installing"),
        (3, "From source"),
        (4, "The widget_init call"),
        (2, "Troubleshooting"),
    ]
    assert [heading.line for heading in book.headings] == [
        line_of(BOOK, start)
        for start in ("<bookinfo>", "<title>Installing", "<title>From", "<sect2>", "<appendix>")
    ]
    synopsis = line_of(BOOK, "<funcsynopsis>")
    assert book.literal == [(synopsis, synopsis + 3)]
    assert book.definitions == {line_of(BOOK, "<funcdef>"): ("widget_init",)}


def test_a_namespaced_docbook_5_article_is_read_as_docbook_4_is():
    article = read_document("guide.xml", ARTICLE.encode())
    assert [heading.title for heading in article.headings] == ["Getting Started", "First steps"]
    assert shown(article, line_of(ARTICLE, "<para>See")) == "See the site and ."
    screen = line_of(ARTICLE, "<screen>")
    assert article.literal == [(screen, screen)] and shown(article, screen) == "$ widget --start"


def test_a_chapter_fragment_with_entities_it_does_not_define_is_read_with_their_names_and_settings():
    chapter = read_document("doc/src/sgml/config.sgml", CHAPTER_FRAGMENT.encode())
    assert [heading.title for heading in chapter.headings] == ["Server Configuration"]
    opening = line_of(CHAPTER_FRAGMENT, "<para>&productname;")
    assert shown(chapter, opening) == "productname reads its settings at start."
    term = line_of(CHAPTER_FRAGMENT, "<term>")
    called = line_of(CHAPTER_FRAGMENT, "<function>btrim")
    assert chapter.definitions == {term: ("work_mem",), called: ("btrim",)}  # the type after it aside
    assert shown(chapter, called) == "btrim ( string text )"
    assert shown(chapter, term) == "work_mem (integer)"
    assert not shown(chapter, line_of(CHAPTER_FRAGMENT, "<primary>"))  # an index term shows nothing


@pytest.mark.parametrize(
    "name, text",
    [
        ("pom.xml", '<?xml version="1.0"?>\n<project>\n  <artifactId>widget</artifactId>\n</project>\n'),
        (
            "res/layout/main.xml",
            '<LinearLayout xmlns:android="http://schemas.android.com/apk/res/android"/>\n',
        ),
        ("logo.xml", '<svg xmlns="http://www.w3.org/2000/svg"><title>Logo</title></svg>\n'),
        ("notes.sgml", "<!doctype linuxdoc system>\n<article><title>Not XML at all\n"),
        ("build.xml", "<project>\n</target>\n<unclosed>\n"),  # no DocBook: not damaged either
        # roots DocBook names too, in files holding no element only DocBook has
        (
            "res/animator/fade.xml",
            '<set xmlns:android="http://schemas.android.com/apk/res/android">\n'
            '  <objectAnimator android:duration="300"/>\n</set>\n',
        ),
        ("db.xml", '<section name="db">\n  <param key="host" value="localhost"/>\n</section>\n'),
        ("books.xml", "<book>\n  <author>Gambardella</author>\n  <title>XML Guide</title>\n</book>\n"),
    ],
)
def test_other_xml_is_read_as_the_plain_lines_it_was_read_as_before(name, text):
    document = read_document(name, text.encode())
    assert document.lines == text.splitlines()
    assert (document.headings, document.markup, document.read_as) == ([], frozenset(), {})


def test_the_walk_takes_docbook_files_by_their_extensions():
    assert all(corpus.is_text_name(name) for name in ("index.docbook", "book.dbk", "a.xml", "b.sgml"))


@pytest.mark.parametrize(
    "text",
    [
        "<chapter><title>T</title>\n<para>a</b> b</para>\n<para>the rest</para>\n</chapter>\n",
        "<article><para>a</para></section><para>the rest</para></article>\n",  # on one line
        "<article><para>a</para></article> <para>after the root</para>\n",
    ],
)
def test_a_file_libxml2_reads_only_in_part_is_damaged_alone(text):
    with pytest.raises(UnreadableFile, match="cannot be read as XML") as refused:
        read_document("broken.xml", text.encode())
    assert refused.value.status == "damaged"


def test_a_well_formed_file_is_read_whole_and_a_docbook_file_of_no_xml_is_damaged():
    assert read_docbook("<article>\n<para>a</para>\n</article\n>\n").lines == ["", "a", "", ""]
    with pytest.raises(UnreadableFile, match="cannot be read as XML"):
        read_document("notes.docbook", b"hello world\nsecond line\n")


def test_a_section_without_a_title_is_no_level_of_the_headings_in_it():
    text = (
        "<chapter><title>One</title>\n<section><title>A</title><para>a</para></section>\n"
        "<section>\n<section><title>Deep</title><para>d</para></section>\n</section>\n</chapter>\n"
    )
    levels = [(heading.level, heading.title) for heading in read_docbook(text).headings]
    assert levels == [(1, "One"), (2, "A"), (2, "Deep")]  # Deep is not under A


def test_a_synopsis_written_together_is_spaced_as_printed_and_old_mac_lines_are_lines():
    text = (
        "<refentry><refsynopsisdiv>\n<cmdsynopsis><command>ls</command><arg>-l</arg><arg>-a</arg>"
        "</cmdsynopsis>\n<funcsynopsis><funcprototype><funcdef>int <function>foo</function></funcdef>"
        "<paramdef>int <parameter>x</parameter></paramdef></funcprototype></funcsynopsis>\n"
        "</refsynopsisdiv></refentry>\n"
    )
    lines = read_docbook(text).lines
    assert lines[1].split() == ["ls", "-l", "-a"] and lines[2].split() == ["int", "foo", "int", "x"]
    assert read_docbook("<article>\r<para>first</para>\r<para>second</para>\r</article>\r").lines == [
        "",
        "first",
        "second",
        "",
    ]


def test_only_a_row_s_own_first_entry_declares_the_call_it_starts_with():
    text = (
        "<table><tgroup><tbody><row><entry><entrytbl><tbody><row><entry>inner</entry></row></tbody>"
        "</entrytbl></entry>\n<entry><function>second</function> ( x )</entry></row></tbody></tgroup>"
        "</table>\n"
    )
    assert read_docbook(f"<chapter><title>T</title><para>p</para>{text}</chapter>").definitions == {}


def test_an_empty_docbook_file_reads_as_nothing():
    assert read_docbook("").lines == [] and read_xml("\n\n").lines == ["", ""]


@pytest.mark.parametrize(
    "hostile",
    [
        # sections nested as deep as libxml2 reads (past its depth a file is damaged at once)
        lambda n: ("<section><title>a</title>" * 100 + "</section>" * 100) * (n // 100),
        lambda n: "<para>" + "<emphasis>b</emphasis> c " * n + "</para>",
        lambda n: '<para id="' + "a" * n + '">x</para>',
        lambda n: "<varlistentry><term><option>--a</option>\n" * n,
        lambda n: "&e;<!-- c\n -->" * n,
        lambda n: "<refentry><refnamediv><refname>a</refname>\n" * n,
        lambda n: "<title>" + "a <function>b</function>\n" * n,
        lambda n: "<table><row><entry>" + "<function>f</function> (\n" * n,
    ],
    ids=["sections", "inline", "attribute", "terms", "entities", "names", "title", "cells"],
)
@pytest.mark.slow
def test_reading_docbook_takes_time_linear_in_its_size_whatever_it_holds(hostile):
    def seconds(size: int) -> float:
        text = "<chapter>" + hostile(size) + "\n"

        def read() -> None:
            try:
                read_docbook(text)
            except UnreadableFile:
                pass

        return fastest_seconds(read, repeats=3)

    assert grows_linearly(seconds, 5_000, 40_000, 24)  # quadratic would be 64


@pytest.mark.heavy
def test_a_folder_of_docbook_pages_is_searched_by_its_words_and_names(tmp_path):
    folder = tmp_path / "man"
    folder.mkdir()
    (folder / "systemd.service.xml").write_text(REFERENCE_PAGE)
    (folder / "manual.docbook").write_text(BOOK)
    (folder / "pom.xml").write_text("<project><artifactId>widget</artifactId></project>\n")
    warnings: list[str] = []
    with Index.open(tmp_path / "index.db", backend=HashBackend(max_tokens=64)) as index:
        report = index.build(folder, warn=warnings.append)
        named = index.search("--type", k=3, mode="keyword", min_score=0)
        worded = index.search("installer", k=1, mode="keyword", min_score=0)
        setting = index.search("ExecStart=", k=3, mode="keyword")  # as systemd's pages write it
    assert report.files_added == 3 and warnings == []
    term = line_of(REFERENCE_PAGE, "<term><varname>ExecStart=")
    assert setting and setting[0].start_line <= term <= setting[0].end_line  # its entry, not its example
    assert named[0].path == "systemd.service.xml"
    assert "--type" in named[0].text and named[0].heading.startswith("systemd.service — Service unit")
    assert worded[0].path == "manual.docbook" and worded[0].heading.startswith("The Widget Manual")


SYNOPSIS_TERMS = """<refentry id="nmcli">
  <refnamediv><refname>nmcli</refname><refpurpose>control NetworkManager</refpurpose></refnamediv>
  <refsect1><title>Options</title>
    <variablelist>
      <varlistentry>
        <term><group choice='plain'>
          <arg choice='plain'><option>-s</option></arg>
          <arg choice='plain'><option>--show-secrets</option></arg>
        </group></term>
        <listitem><para>Show passwords.</para></listitem>
      </varlistentry>
      <varlistentry>
        <term><group choice='plain'><arg choice='plain'><option>-w</option></arg>
          <arg choice='plain'><option>--wait</option></arg></group>
          <arg choice='plain'><replaceable>seconds</replaceable></arg></term>
        <listitem><para>Wait.</para></listitem>
      </varlistentry>
      <varlistentry>
        <term><cmdsynopsis><command>set-indent-width</command>
          <arg choice="req">INTEGER width</arg></cmdsynopsis></term>
        <listitem><para>Sets the indentation width.</para></listitem>
      </varlistentry>
      <varlistentry>
        <term><userinput><command>kate</command> <option>-s</option>
          <parameter>name</parameter></userinput></term>
        <listitem><para>A command line, not a name.</para></listitem>
      </varlistentry>
    </variablelist>
  </refsect1>
</refentry>
"""


def test_a_synopsis_term_lists_its_options_apart_and_its_arguments_as_values():
    # a group's options are alternatives, each a name; an argument of no option is the value
    # after a command, as a manual writes ``set-indent-width <width>``; a command line declares none
    page = read_docbook(SYNOPSIS_TERMS)
    assert sorted(page.definitions.values()) == [
        ("-s", "--show-secrets"),
        ("-w", "--wait"),
        ("nmcli",),
        ("set-indent-width",),
    ]


GUI_CHAPTER = """<chapter id="menus">
  <title>Menus</title>
  <sect1 id="file-menu">
    <title>Account Tree - <guimenu><accel>F</accel>ile</guimenu> Menu</title>
    <para>See <xref linkend="file-menu"/> and <xref linkend="callouts"/>, not <xref linkend="other"/>.</para>
    <figure id="callouts" xreflabel="the callouts"><title>Main Window</title></figure>
  </sect1>
</chapter>
"""


def test_a_mnemonic_letter_splits_no_word_and_an_empty_cross_reference_reads_as_its_target():
    document = read_docbook(GUI_CHAPTER)
    assert [heading.title for heading in document.headings] == ["Menus", "Account Tree - File Menu"]
    # its target's title (or label) in the same file, as docbook-xsl words it; nothing for another file's
    assert document.lines[4] == "See Account Tree - File Menu and the callouts, not ."


TABLE_FRAGMENT = """<para>
  <table id="txf">
    <title>Detailed TXF Category Descriptions</title>
    <tgroup cols="2"><tbody>
      <row><entry>N256</entry><entry>Interest income</entry></row>
    </tbody></tgroup>
  </table>
</para>
"""


def test_a_fragment_s_table_is_headed_by_its_title_where_no_section_heads_it():
    document = read_docbook(TABLE_FRAGMENT)
    assert [(heading.line, heading.title) for heading in document.headings] == [
        (3, "Detailed TXF Category Descriptions")
    ]
    inside = read_docbook(f"<article><section><title>Taxes</title>{TABLE_FRAGMENT}</section></article>")
    assert [heading.title for heading in inside.headings] == ["Taxes"]  # a section's title heads it


#: Linux-PAM's guides: a section of the administrators' guide whose text is the module's man page,
#: XIncluded piece by piece.
GUIDE_SECTION = """<section xmlns="http://docbook.org/ns/docbook" version="5.0" xml:id="sag-pam_umask">
  <title>pam_umask - set the file mode creation mask</title>
  <cmdsynopsis sepchar=" ">
    <xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="../man/pam_umask.8.xml"
      xpointer='xpointer(id("pam_umask-cmdsynopsis")/*)'/>
  </cmdsynopsis>
  <section xml:id="sag-pam_umask-description">
    <xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="../man/pam_umask.8.xml"
      xpointer='xpointer(id("pam_umask-description")/*)'/>
  </section>
</section>
"""
MODULE_PAGE = """<refentry xmlns="http://docbook.org/ns/docbook" version="5.0" xml:id="pam_umask">
  <refmeta><refentrytitle>pam_umask</refentrytitle><manvolnum>8</manvolnum></refmeta>
  <refnamediv xml:id="pam_umask-name">
    <refname>pam_umask</refname>
    <refpurpose>PAM module to set the file mode creation mask</refpurpose>
  </refnamediv>
  <refsect1 xml:id="pam_umask-description">
    <title>DESCRIPTION</title>
    <para>pam_umask is a PAM module to set the file mode creation mask of the current
      environment. The umask affects the default permissions assigned to newly created files.</para>
  </refsect1>
</refentry>
"""


def test_a_guide_section_that_only_xincludes_a_man_page_stores_no_chunk_and_the_page_answers(tmp_path):
    """The section's title is all its own text: a chunk of it alone would come first for the
    questions its man page answers, holding nothing to read."""
    document = read_docbook(GUIDE_SECTION)
    assert document.includes == {5, 9}  # where each start tag ends, as libxml2 numbers it
    (tmp_path / "doc" / "sag").mkdir(parents=True)
    (tmp_path / "doc" / "man").mkdir()
    (tmp_path / "doc" / "sag" / "pam_umask.xml").write_text(GUIDE_SECTION)
    (tmp_path / "doc" / "man" / "pam_umask.8.xml").write_text(MODULE_PAGE)
    with Index.open(tmp_path / "index.db", backend=HashBackend(max_tokens=64)) as index:
        report = index.build(tmp_path / "doc")
        hits = index.search("pam_umask set the file mode creation mask", k=5, mode="keyword", min_score=0)
    assert report.files_added == 2
    assert {hit.path for hit in hits} == {"man/pam_umask.8.xml"}


def test_a_section_with_a_short_paragraph_beside_its_xinclude_is_stored():
    text = GUIDE_SECTION.replace("</title>\n", "</title>\n  <para>Sets the umask.</para>\n", 1)
    chunks = chunk_document(
        read_docbook(text), lambda texts: [len(t.split()) for t in texts], ChunkSettings.for_limit(64)
    )
    assert len(chunks) == 1 and "Sets the umask." in chunks[0].text
