"""Plain text read as lines, with the structure plain text declares: titles underlined as Markdown's
setext headings and reStructuredText write them, a FAQ's questions opening its blocks."""

from __future__ import annotations

import gzip

import pytest
from helpers import fastest_seconds, grows_linearly

from indexer.formats import read_document
from indexer.formats.text import read_plain

#: lftp's README, as its Debian package ships it (``README.gz``), shortened.
README = """\
This package `lftp' contains the following components:

   lftp
      sophisticated command line file transfer program.

lftp
~~~~
lftp is sophisticated file transfer program with command line interface.

Where to get
~~~~~~~~~~~~
Check the web site.

Internals
=========
The core is a cooperative-threaded model.
"""

#: lftp's FAQ (``doc/lftp/FAQ``), shortened: questions and answers at column 0.
FAQ = """\
Q: I have compile/link problems.
A: Some common installation problems are described in the INSTALL file.

Q: Why doesn't `mirror' download files starting with a dot (or re-uploads
   them all the time)? I can see the files on the server using `ls -a'.
A: Try `set ftp:list-options -a'.
Q: lftp hangs in "Making data connection" state.
A: Try "set ftp:prefer-epsv no".
"""


def test_titles_underlined_as_long_as_they_are_are_headings_by_their_character():
    document = read_document("README.gz", gzip.compress(README.encode()))
    assert [(heading.line, heading.level, heading.title) for heading in document.headings] == [
        (6, 1, "lftp"),
        (10, 1, "Where to get"),
        (14, 2, "Internals"),
    ]
    assert document.headings[0].lines == range(6, 8)
    assert {7, 11, 15} <= document.markup


@pytest.mark.parametrize(
    "text",
    [
        "Results of the run were fine today\n-----\n",  # a rule under a sentence of another length
        "name  size\n----  ----\nls    12\n",  # a table's rule
        "step one\nstep two\n--------\n",  # a line under a paragraph's last line
    ],
)
def test_a_rule_that_underlines_no_title_makes_no_heading(text):
    assert read_plain(text, "utf-8").headings == []


def test_a_faq_s_questions_open_blocks_that_hold_their_answers():
    assert read_plain(FAQ, "utf-8").block_starts == [1, 4, 7]
    assert read_plain(FAQ, "utf-8").headings == []
    assert read_plain("Q: a question alone\nA: answered\n", "utf-8").block_starts == []


@pytest.mark.parametrize(
    "hostile",
    [lambda n: "a\n=\n" * n, lambda n: "Q: x\n" * n + "A: y\n", lambda n: ("~" * 80 + "\n") * n],
    ids=["titles", "questions", "underlines"],
)
@pytest.mark.slow
def test_reading_plain_text_takes_time_linear_in_its_size_whatever_it_holds(hostile):
    def seconds(repeats: int) -> float:
        text = hostile(repeats)
        return fastest_seconds(lambda: read_plain(text, "utf-8"), repeats=3)

    assert grows_linearly(seconds, 10_000, 80_000, 24)  # quadratic would be 64
