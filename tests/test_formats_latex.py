"""LaTeX sources read by the structure their commands declare: sections as headings, verbatim
environments as code, the preamble, comments and lines of commands alone as markup, each line read
as its typeset text."""

from __future__ import annotations

import pytest
from helpers import HashBackend, fastest_seconds, grows_linearly

from indexer import Index
from indexer.formats.latex import inline_text, read_latex
from indexer.snippets import readable_text

PAPER = r"""\documentclass{article}
\usepackage{listings}
\newcommand{\tool}{\texttt{frob}}
\title{A \emph{Short} Guide to \LaTeX}
\begin{document}
\maketitle
% a comment line
\chapter{Basics}
\section{The \texttt{ls} command}\label{sec:ls}
Use \texttt{ls -l} to list files, see Section~\ref{sec:x} and \cite{knuth}. 50\% done % a note
\begin{description}
\item[\texttt{--verbose}] Say more.
\item[Plain words] Not a name.
\end{description}
\begin{lstlisting}[language=sh]
ls -la % not a comment in code
\end{lstlisting}
\subsection*{Links}
See \href{https://example.org}{the site}.
\begin{comment}
Never typeset.
\end{comment}
\end{document}
"""
LINES = PAPER.split("\n")


def _number(text: str) -> int:
    return LINES.index(text) + 1


def test_sections_are_headings_read_as_their_text():
    document = read_latex(PAPER)
    assert [(heading.level, heading.title) for heading in document.headings] == [
        (0, "A Short Guide to LaTeX"),
        (2, "Basics"),
        (3, "The ls command"),
        (4, "Links"),
    ]
    assert len(document.lines) == len(PAPER.rstrip("\n").split("\n"))


def test_code_preamble_comments_and_commands_alone_are_what_the_source_says():
    document = read_latex(PAPER)
    assert document.literal == [(_number("ls -la % not a comment in code"),) * 2]
    markup = [r"\documentclass{article}", r"\newcommand{\tool}{\texttt{frob}}", r"\maketitle",
              "% a comment line", r"\begin{description}", r"\begin{lstlisting}[language=sh]",
              "Never typeset.", r"\end{document}"]  # fmt: skip
    assert [line for line in markup if _number(line) not in document.markup] == []
    line = r"Use \texttt{ls -l} to list files, see Section~\ref{sec:x} and \cite{knuth}. 50\% done % a note"
    assert document.read_as[_number(line)] == "Use ls -l to list files, see Section and . 50% done"
    assert document.read_as[_number(r"See \href{https://example.org}{the site}.")] == "See the site."


def test_an_item_labelled_in_typewriter_type_declares_its_name():
    assert read_latex(PAPER).definitions == {_number(r"\item[\texttt{--verbose}] Say more."): ("--verbose",)}


def test_a_snippet_shows_the_typeset_text():
    assert readable_text("a.tex", "% note\n\\emph{Stress} on \\texttt{--fast}.") == "Stress on --fast."
    assert inline_text(r"\endgroup words") == " words"  # a command named as \end begins is no \end{...}


def test_one_line_verbatim_a_document_shown_in_a_chapter_and_slides_are_read_as_written():
    one_line = read_latex("\\begin{verbatim}x % y\\end{verbatim}\n\\section{After}\n")
    assert [heading.title for heading in one_line.headings] == ["After"] and one_line.literal == [(1, 1)]
    chapter = read_latex(
        "\\chapter{Getting started}\ntext\n\\begin{verbatim}\n\\documentclass{article}\n"
        "\\begin{document}\n\\end{verbatim}\nmore\n"
    )  # an example of a whole document is no preamble
    assert [heading.title for heading in chapter.headings] == ["Getting started"]
    assert chapter.literal == [(4, 5)] and 2 not in chapter.markup
    slides = read_latex("\\begin{frame}{Overview}\n\\frametitle{Why \\emph{this}}\n\\begin{tabular}{|l|l|}\n")
    assert [heading.title for heading in slides.headings] == ["Why this"]
    assert (
        slides.read_as[1] == "Overview" and 3 in slides.markup
    )  # a slide's title is text, a table's columns no


def test_breaks_logos_and_verbatim_text_read_as_typeset():
    assert inline_text(r"\LaTeXe\ for authors\\ current") == "LaTeX2e for authors  current"
    assert inline_text(r"Use \verb|%| to comment. % a note") == "Use % to comment. "
    assert inline_text(r"% all comment \verb|x|") == ""


@pytest.mark.parametrize(
    "hostile",
    [lambda n: "{" * n, lambda n: "\\" * n, lambda n: "\\section{" + "a{" * n, lambda n: "\\item[" * n],
)
@pytest.mark.slow
def test_reading_latex_takes_time_linear_in_its_size(hostile):
    def seconds(size: int) -> float:
        text = "\\section{A}\n" + hostile(size) + "\n"
        return fastest_seconds(lambda: read_latex(text), repeats=3)

    assert grows_linearly(seconds, 5_000, 40_000, 24)  # quadratic would be 64


@pytest.mark.heavy
def test_a_latex_folder_is_searched_by_its_sections(tmp_path):
    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "main.tex").write_text(PAPER)
    with Index.open(tmp_path / "index.db", backend=HashBackend(max_tokens=48)) as index:
        index.build(tmp_path / "paper", warn=lambda message: None)
        hits = index.search("list files", k=1, mode="keyword", min_score=0)
    assert hits[0].heading.endswith("The ls command")
    assert "documentclass" not in hits[0].heading
