"""Markdown, read by a CommonMark parser (pulldown-cmark, through pyromark).

The parser decides what is a heading, so a ``#`` line inside a fenced or indented code block, an
HTML comment or YAML front matter is never one, and setext headings (a title underlined with ``===``
or ``---``) are. Code blocks become literal ranges. pulldown-cmark is the CommonMark parser of rustdoc
and mdBook; pyromark gives its events with byte ranges, from which the line numbers come.

Why pyromark rather than markdown-it-py: on the pipeline benchmark's Markdown, markdown-it-py parsed
3 MB/s (block rules only, inline off), which alone would add about 3 s to a 3.2 s build of 2,000 files;
pyromark parsed 121 MB/s, with the same headings and code blocks.
"""

from __future__ import annotations

import bisect

from indexer.formats.document import Document, Heading, split_lines

LEVELS = {"H1": 1, "H2": 2, "H3": 3, "H4": 4, "H5": 5, "H6": 6}
TITLE_EVENTS = ("Text", "Code", "InlineMath", "DisplayMath")


def read_markdown(text: str, encoding: str = "utf-8") -> Document:
    """A Markdown file's lines with the headings and code blocks its parser found."""
    headings, literal = markdown_structure(text)
    return Document(lines=split_lines(text), headings=headings, literal=literal, encoding=encoding)


def markdown_structure(text: str) -> tuple[list[Heading], list[tuple[int, int]]]:
    """Headings and code blocks (as 1-based inclusive line ranges) of Markdown ``text``."""
    # imported here, so that `index query` does not load a parser it never uses
    import pyromark

    source = text.encode("utf-8")
    line_starts = [0]
    position = source.find(b"\n")
    while position != -1:
        line_starts.append(position + 1)
        position = source.find(b"\n", position + 1)

    def line_of(offset: int) -> int:
        return bisect.bisect_right(line_starts, offset)

    headings: list[Heading] = []
    literal: list[tuple[int, int]] = []
    title: list[str] | None = None
    options = pyromark.Options.ENABLE_YAML_STYLE_METADATA_BLOCKS | pyromark.Options.ENABLE_TABLES
    # events are dicts ({"Start": tag}, {"Text": "..."}) or bare strings ("SoftBreak"); a tag with
    # fields is a dict ({"Heading": {...}}), a bare tag a string ("Paragraph"): most are skipped on sight
    for event, span in pyromark.events_with_range(text, options=options):
        if type(event) is not dict:
            continue
        if title is not None:
            end = event.get("End")
            if type(end) is dict and "Heading" in end:
                level = LEVELS[end["Heading"]]
                headings.append(Heading(line_of(span["start"]), level, " ".join("".join(title).split())))
                title = None
            else:
                title.extend(event[kind] for kind in TITLE_EVENTS if kind in event)
            continue
        start = event.get("Start")
        if type(start) is not dict:
            continue
        if "Heading" in start:
            title = []
        elif "CodeBlock" in start or "MetadataBlock" in start:
            literal.append((line_of(span["start"]), line_of(max(span["start"], span["end"] - 1))))
    return headings, literal
