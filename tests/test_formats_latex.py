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
    assert [heading.title for heading in slides.headings] == ["Overview", "Why this"]
    assert (
        slides.read_as[1] == "Overview" and 3 in slides.markup
    )  # a slide's title is text, a table's columns no


def test_breaks_logos_and_verbatim_text_read_as_typeset():
    assert inline_text(r"\LaTeXe\ for authors\\ current") == "LaTeX2e for authors  current"
    assert inline_text(r"Use \verb|%| to comment. % a note") == "Use % to comment. "
    assert inline_text(r"% all comment \verb|x|") == ""


MANUAL_CHAPTER = r"""% !TeX root = userguide.tex
\section{Repeating a Frame}
In this case, the |\againframe| command is useful.

\begin{command}{\againframe\sarg{overlay specification}\oarg{options}\marg{name}}
  Resumes a frame created using |\frame| with the option |label=|\meta{name}.
\end{command}

\begin{environment}{{columns}\sarg{action specification}\oarg{options}}
  \item[|onlytextwidth|] Sets the total width.
\end{environment}

\begin{classoption}{aspectratio=169}
\begin{element}{palette primary}\no\yes\no
\begin{minipage}{\linewidth}
A norm $|x|$ and |y|.
\end{minipage}
"""


def test_a_manual_entry_reads_as_its_signature_line_and_declares_what_it_documents():
    document = read_latex(MANUAL_CHAPTER)
    lines = MANUAL_CHAPTER.split("\n")
    entry = (
        lines.index(r"\begin{command}{\againframe\sarg{overlay specification}\oarg{options}\marg{name}}") + 1
    )
    assert document.read_as[entry] == r"\againframe <⟨overlay specification⟩> [⟨options⟩] {⟨name⟩}"
    assert document.definitions[entry] == ("againframe",)
    columns = lines.index(r"\begin{environment}{{columns}\sarg{action specification}\oarg{options}}") + 1
    assert document.read_as[columns] == "columns <⟨action specification⟩> [⟨options⟩]"
    assert document.definitions[columns] == ("columns",)
    assert document.definitions[columns + 1] == ("onlytextwidth",)  # a label in short verbatim is code
    assert document.definitions[lines.index(r"\begin{classoption}{aspectratio=169}") + 1] == ("aspectratio",)
    palette = lines.index(r"\begin{element}{palette primary}\no\yes\no") + 1
    assert document.read_as[palette] == "palette primary" and palette not in document.definitions  # a phrase
    assert lines.index(r"\begin{minipage}{\linewidth}") + 1 in document.markup  # a width, no entry


def test_ltxdoc_entries_and_descriptions_declare_their_argument():
    document = read_latex(
        "\\documentclass{ltxdoc}\n\\begin{document}\n\\begin{macro}{\\@startsection}\n"
        "\\begin{environment}{thebibliography}\n\\DescribeMacro{\\maketitle} makes |\\title| a title.\n"
        "\\DescribeEnv{abstract} sets an abstract.\n\\end{document}\n"
    )
    assert document.definitions == {
        3: ("@startsection",),
        4: ("thebibliography",),
        5: ("maketitle",),
        6: ("abstract",),
    }
    assert document.read_as[5] == r"\maketitle makes \title a title."
    library = read_latex(
        "\\begin{docCommand}{tcbset}{\\marg{options}}\n\\begin{docKey}{colback}{=\\meta{color}}{}\n"
    )
    assert library.definitions == {1: ("tcbset",), 2: ("colback",)}  # tcolorbox's documentation library
    assert library.read_as[1] == r"\tcbset {⟨options⟩}"


def test_short_verbatim_is_code_where_the_document_makes_it_so():
    chapter = read_latex(MANUAL_CHAPTER)  # no declaration of its own: its ``|\againframe|`` shows it
    lines = MANUAL_CHAPTER.split("\n")
    assert chapter.read_as[3] == r"In this case, the \againframe command is useful."
    assert chapter.read_as[6] == r"Resumes a frame created using \frame with the option label=⟨name⟩."
    assert chapter.read_as[lines.index("A norm $|x|$ and |y|.") + 1] == "A norm $|x|$ and y."  # math aside
    declared = read_latex('\\usepackage{shortvrb}\\MakeShortVerb{\\"}\nType "\\x" or "y|z".\n')
    assert declared.read_as[2] == r"Type \x or y|z."
    paper = read_latex(
        "\\section{Norms}\nThe norm |x| of $v$.\n\\begin{align}\n|\\alpha| = 1\n\\end{align}\n"
    )
    assert 2 not in paper.read_as  # no short verbatim: ``|`` is a bar, math's ``|\alpha|`` no evidence
    assert readable_text("chapter.tex", "the |\\againframe| command") == r"the \againframe command"
    # inferred, not declared: bars around words stay bars; display math is math
    mixed = read_latex("Use |\\frame|.\n\nA pipe x | y and a|b, P(A|B).\n\nThe norm \\[ |v| \\] and |w|.\n")
    assert 3 not in mixed.read_as
    assert mixed.read_as[5] == r"The norm \[ |v| \] and w."


def test_a_slide_title_and_a_title_on_its_next_line_head_what_follows():
    slides = read_latex(
        "\\title[Short Paper Title] % (optional)\n{Title As It Is}\n\\begin{document}\n"
        "\\begin{frame}<beamer>[fragile]{Make Titles Informative.}{Subtitles are optional.}\nText.\n"
        "\\end{frame}\n"
    )
    assert [(heading.level, heading.title) for heading in slides.headings] == [
        (0, "Title As It Is"),
        (5, "Make Titles Informative."),
    ]
    assert slides.read_as[4] == "Make Titles Informative. Subtitles are optional."


@pytest.mark.parametrize(
    "hostile",
    [
        lambda n: "{" * n,
        lambda n: "\\" * n,
        lambda n: "\\section{" + "a{" * n,
        lambda n: "\\item[" * n,
        lambda n: "|\\a " + "|" * n,
        lambda n: "|\\a| $|" * n,
        lambda n: "\\begin{command}{" * n,
        lambda n: "\\begin{tabular}{" + "{" * n,
    ],
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
