"""What every front end shows of indexed text: nothing a terminal, a spreadsheet or a Markdown
table acts on."""

from __future__ import annotations

import csv
import io
import json

from indexer.display import csv_cell, json_safe, markdown_cell, visible

ATTACK = "a\x1b]0;pwned\x07b\x1b[2Jc\rd\be\u202ef\u2066g\u2069h\x85i\x7fj"


def test_escapes_and_controls_are_shown_never_sent():
    shown = visible(ATTACK)
    assert shown == "a\\x1b]0;pwned\\x07b\\x1b[2Jc\\x0dd\\x08e\\u202ef\\u2066g\\u2069h\\u0085i\\x7fj"
    assert shown.isprintable()


def test_a_passage_keeps_its_lines_and_tabs_unless_asked_to_be_one_line():
    assert visible("one\n\ttwo\x1b", lines=True) == "one\n\ttwo\\x1b"
    assert visible("one\ntwo") == "one\\x0atwo"


def test_json_stays_exact_and_printable():
    data = {"text": ATTACK, "path": "caf\\xe9.md"}
    encoded = json_safe(json.dumps(data, ensure_ascii=False))
    assert json.loads(encoded) == data
    assert encoded.isprintable()


def test_csv_cells_a_spreadsheet_would_evaluate_are_escaped():
    cells = ["=1+1", "+SUM(A1)", "-2+3", "@SUM(A1)", "\tx", "\rx", "plain", "a=b"]
    buffer = io.StringIO()
    csv.writer(buffer).writerow([csv_cell(cell) for cell in cells])
    read = next(csv.reader(io.StringIO(buffer.getvalue())))
    assert read[:6] == ["'=1+1", "'+SUM(A1)", "'-2+3", "'@SUM(A1)", "'\tx", "'\\x0dx"]
    assert read[6:] == ["plain", "a=b"]
    assert not any(cell.startswith(("=", "+", "-", "@", "\t", "\r")) for cell in read)


def test_a_markdown_cell_stays_in_its_cell():
    cell = markdown_cell("Install | Upgrade\nnext line\x1b[31m")
    assert cell == "Install \\| Upgrade next line\\x1b[31m"
    row = f"| {cell} | x |"
    assert row.replace("\\|", "").count("|") == 3
