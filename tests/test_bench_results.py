"""bench/RESULTS.md as bench/run.py writes it: the rows of the last runs (bench/results.json, as
checked in) in one table per subject, then the sections written by hand, kept as they are."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.fixture
def run(monkeypatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH))  # as `python bench/run.py` has it: support/ importable
    spec = importlib.util.spec_from_file_location("bench_run", BENCH / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def rows() -> list[dict]:
    return json.loads((BENCH / "results.json").read_text())


def test_a_written_results_file_keeps_the_sections_written_by_hand(run, rows, tmp_path):
    hand = run.hand_written(BENCH / "RESULTS.md")
    assert hand.startswith("\n## ") and "\n### " in hand
    written = tmp_path / "RESULTS.md"
    written.write_text(run.results_text("the last runs", rows, ["a script failed"], hand))
    assert run.hand_written(written) == hand
    text = written.read_text()
    assert text.index(run.RUNS_HEADING) < text.index("- problem: a script failed") < text.index(hand)


def test_the_rows_are_grouped_by_subject_in_order_and_a_new_script_goes_under_other(run, rows):
    newcomer = {**rows[0], "script": "bench_newcomer", "what": "a script no subject names yet"}
    text = run.by_subject([*rows, newcomer])
    headings = [line[4:] for line in text.splitlines() if line.startswith("### ")]
    subjects = [subject for subject in run.SUBJECTS if subject in headings]
    assert headings == [*subjects, run.OTHER]
    assert "| a script no subject names yet |" in text.split(f"### {run.OTHER}\n")[1]
    for line in rows:
        assert text.count(f"| {line['what'].replace('|', chr(92) + '|')} |") >= 1, line["what"]


def test_every_script_of_the_suite_has_a_subject(run):
    named = [name for names in run.SUBJECTS.values() for name in names]
    assert sorted(named) == sorted(run.SCRIPTS)


def test_the_checked_in_results_show_every_row_of_the_last_runs(rows):
    text = (BENCH / "RESULTS.md").read_text()
    missing = [line["what"] for line in rows if f"| {line['what']} |" not in text]
    assert missing == []
