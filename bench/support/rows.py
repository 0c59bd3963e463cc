"""The row every benchmark script reports, defined once, and the ways to show rows.

bench/run.py gathers every script's rows into one table (bench/RESULTS.md, and bench/results.json), so
each script makes its rows with :func:`row` and prints them with :func:`print_rows`. A row holds:

- ``what``: what was measured, against what, in which unit;
- ``ours``: the project's figure (None when it could not be measured: ``reference`` says why);
- ``reference``: the same figure for the reference, measured in the same run (every figure is judged
  against one, because the machines this runs on are shared and noisy); a string saying why it was
  not measured; or None when there is none;
- ``ratio``: ours against the reference, in the sense ``what`` says; None when there is none;
- ``target``: what the issue asks of the figure, as text; None when nothing is asked;
- ``pass``: true or false when there is a target, absent otherwise;
- ``note``: on a missed target only: why it is missed, and what would meet it.
"""

from __future__ import annotations

import json
import sys

COLUMNS = ("what", "ours", "reference", "ratio", "target", "pass")


def row(
    what: str,
    ours: object,
    reference: object = None,
    ratio: object = None,
    *,
    target: str | None = None,
    passed: bool | None = None,
    note: str = "",
) -> dict[str, object]:
    """One row of the table. ``passed`` is the verdict on ``target`` (each script judges the figure
    the target is about: the ratio, ours, a difference), so both come together or not at all.
    ``note`` is kept only when the target is missed."""
    if (target is None) != (passed is None):
        raise ValueError(f"row {what!r}: a target needs a verdict (passed), and a verdict a target")
    line: dict[str, object] = {
        "what": what,
        "ours": ours,
        "reference": reference,
        "ratio": ratio,
        "target": target,
    }
    if passed is not None:
        line["pass"] = bool(passed)  # a comparison of numpy numbers gives numpy's bool, not JSON's
        if not passed and note:
            line["note"] = note
    return line


def cell(line: dict[str, object], column: str) -> str:
    """How one value of a row shows in a table: PASS or FAIL for a verdict (or the state bench/support/gate.py
    gave it: KNOWN, WORSE), nothing for None."""
    value = line.get(column)
    if column == "pass" and "verdict" in line:
        return str(line["verdict"])
    if column == "pass" and isinstance(value, bool):
        return "PASS" if value else "FAIL"
    return "" if value is None else str(value)


def table(rows: list[dict[str, object]]) -> str:
    """The rows in aligned columns for a terminal, then the notes of the missed targets."""
    cells = [list(COLUMNS)] + [[cell(line, column) or "-" for column in COLUMNS] for line in rows]
    widths = [max(len(texts[position]) for texts in cells) for position in range(len(COLUMNS))]
    lines = [
        " | ".join(text.ljust(width) for text, width in zip(texts, widths, strict=True)).rstrip()
        for texts in cells
    ]
    lines.insert(1, "-+-".join("-" * width for width in widths))
    lines += [f"note on {line['what']}: {line['note']}" for line in rows if line.get("note")]
    return "\n".join(lines)


def print_rows(rows: list[dict[str, object]], as_json: bool, details: str = "") -> None:
    """Print the rows for people: the table, then ``details`` (how the figures came about). With
    ``as_json`` (a script's ``--json``): the rows as one line of JSON, the last line of stdout, which
    bench/run.py reads; ``details`` then go to stderr."""
    if as_json:
        if details:
            print(details, file=sys.stderr)
        print(json.dumps(rows))
        return
    print(table(rows))
    if details:
        print()
        print(details)
