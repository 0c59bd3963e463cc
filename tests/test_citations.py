"""Citations: the grammar every front end writes hits in and reads passages back by."""

from __future__ import annotations

import pytest
from helpers import HashBackend

from indexer import Index, NotInIndexError
from indexer.citations import Span, parse_citation


def test_lines_and_parts_are_read_from_the_last_colon_and_the_whole_text_stays_a_path():
    assert parse_citation("notes.md:12-30") == [("notes.md", Span(12, 30)), ("notes.md:12-30", Span())]
    assert parse_citation("manual.pdf:pages 3-4")[0] == ("manual.pdf", Span(3, 4, "page"))
    assert parse_citation("a:b.md") == [("a:b.md", Span())]


@pytest.mark.parametrize("where", ["9" * 5_000, "1-" + "9" * 5_000, "page " + "9" * 5_000])
def test_a_number_longer_than_any_line_number_is_read_as_part_of_a_path_never_an_error(where, tmp_path):
    """Python refuses to read an integer of more than 4,300 digits: such a citation, sent to the
    server's /chunks or the MCP read tool, ended in a ValueError (a 500 and a traceback)."""
    assert parse_citation(f"notes.md:{where}") == [(f"notes.md:{where}", Span())]
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "notes.md").write_text("# Notes\n\nThe kettle boils water.\n", encoding="utf-8")
    with Index.open(tmp_path / "index.db", backend=HashBackend()) as index:
        assert index.build(folder).exit_code == 0
        assert index.get("notes.md:3").text == "The kettle boils water."
        with pytest.raises(NotInIndexError, match="is not in the index"):
            index.get(f"notes.md:{where}")
