"""The bench's gate (bench/support/gate.py, bench/run.py --check), judged on the rows of the last bench
runs as checked in (bench/results.json) and the known misses as checked in
(bench/known_misses.json): a regression fails, a known miss fails only when it gets worse beyond
its noise, and one that passes says so."""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
RESULTS = BENCH / "results.json"


def load_gate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_gate", BENCH / "support" / "gate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


gate = load_gate()


@pytest.fixture
def rows() -> list[dict]:
    return json.loads(RESULTS.read_text())


@pytest.fixture
def known() -> list:
    return gate.read_known()


def a_known_miss(rows: list[dict], known: list, better: str) -> tuple[dict, object]:
    """A row of the saved results that is a known miss whose figure is better ``better``."""
    for line in rows:
        miss = gate.known_for(line, known)
        if line.get("pass") is False and miss is not None and miss.better == better and miss.noise > 0:
            return line, miss
    raise AssertionError(f"no known miss where {better} is better in {RESULTS.name}")


def test_the_last_runs_pass_the_gate_with_every_miss_stated(rows, known):
    verdicts = gate.judge_rows(rows, known)
    assert verdicts, "the saved results hold rows with targets"
    assert [v.line["what"] for v in verdicts if v.fails] == []
    missed = [v for v in verdicts if v.line["pass"] is False]
    assert missed and all(v.state == gate.KNOWN for v in missed)
    # each entry's figure is where its row stands: no entry reads as better than it stood
    assert [v.message for v in missed if v.message] == []


def test_every_known_miss_names_a_row_of_the_last_runs_and_gives_a_reason(rows, known):
    assert gate.unmatched(rows, known) == []
    for miss in known:
        named = [line for line in rows if miss.names(line)]
        assert named, miss.what
        assert all(line.get("pass") is False for line in named), f"{miss.what}: its row passes"
        assert len(miss.reason) > 40, f"{miss.what}: a reason says why the target is missed"


@pytest.mark.parametrize("better", ["higher", "lower"])
def test_a_known_miss_worse_beyond_its_noise_fails_and_within_it_is_known(rows, known, better):
    line, miss = a_known_miss(rows, known, better)
    sign = -1 if better == "higher" else 1
    for share, state in ((miss.noise * 0.9, gate.KNOWN), (miss.noise * 1.1, gate.WORSE)):
        moved = {**line, miss.figure: miss.stands_at * (1 + sign * share)}
        verdict = gate.judge(moved, known)
        assert verdict.state == state, (share, verdict)
        assert verdict.fails is (state == gate.WORSE)
    better_by_far = {**line, miss.figure: miss.stands_at * (1 - sign * miss.noise * 1.5)}
    verdict = gate.judge(better_by_far, known)
    assert verdict.state == gate.KNOWN and "raise stands_at" in verdict.message


@pytest.mark.heavy  # bench/run.py --check runs as a process
def test_a_miss_that_is_not_known_fails_as_a_regression(rows, known, tmp_path):
    passing = next(line for line in rows if line.get("pass") is True and gate.known_for(line, known) is None)
    regressed = {**passing, "pass": False}
    verdict = gate.judge(regressed, known)
    assert verdict.state == gate.FAIL and verdict.fails
    failed, lines = run_check(rows_with(rows, passing, regressed), tmp_path)
    assert failed == 1
    assert any(line.startswith("FAIL:") and passing["what"] in line for line in lines)


def test_a_known_miss_that_passes_says_its_entry_can_go(rows, known):
    line, _ = a_known_miss(rows, known, "lower")
    verdict = gate.judge({**line, "pass": True}, known)
    assert verdict.state == gate.PASS and not verdict.fails
    assert "now passes" in verdict.message


def test_a_known_miss_without_its_figure_fails(rows, known):
    line, miss = a_known_miss(rows, known, "higher")
    assert gate.judge({**line, miss.figure: None}, known).state == gate.WORSE


def test_a_vanished_row_leaves_its_known_miss_named(rows, known):
    line, miss = a_known_miss(rows, known, "lower")
    others = [other for other in rows if other is not line and not miss.names(other)]
    assert miss in gate.unmatched(others, known)


def test_the_longest_start_of_what_names_a_row(rows, known):
    line, miss = a_known_miss(rows, known, "higher")
    broad = gate.KnownMiss(**{**miss.__dict__, "what": miss.what[:5], "stands_at": 1e9})
    assert gate.known_for(line, [broad, miss]) is miss


@pytest.mark.heavy  # bench/run.py --check runs as a process
def test_run_check_exits_0_on_the_last_runs_and_1_when_a_known_miss_got_worse(rows, known, tmp_path):
    status, lines = run_check(rows, tmp_path)
    assert status == 0 and lines[-1].startswith("gate (known_misses.json): 0 FAIL, 0 WORSE")
    line, miss = a_known_miss(rows, known, "lower")
    worse = {**line, miss.figure: miss.stands_at * (1 + miss.noise * 2)}
    status, lines = run_check(rows_with(rows, line, worse), tmp_path)
    assert status == 1
    assert any(out.startswith("WORSE:") and line["what"] in out for out in lines)


def test_a_malformed_known_miss_is_named(tmp_path, known):
    entries = json.loads(gate.KNOWN_MISSES.read_text())
    broken = copy.deepcopy(entries)
    broken[2]["better"] = "smaller"
    path = tmp_path / "known_misses.json"
    path.write_text(json.dumps(broken))
    with pytest.raises(ValueError, match=r"known_misses.json entry 3 \(.*\): figure is"):
        gate.read_known(path)
    del broken[2]["better"]
    path.write_text(json.dumps(broken))
    with pytest.raises(ValueError, match="entry 3 .*expected the fields"):
        gate.read_known(path)


def rows_with(rows: list[dict], old: dict, new: dict) -> list[dict]:
    return [new if line is old else line for line in rows]


def run_check(rows: list[dict], folder: Path) -> tuple[int, list[str]]:
    """bench/run.py --check on these rows, as a user runs it: exit status and printed lines."""
    saved = folder / "results.json"
    saved.write_text(json.dumps(rows))
    done = subprocess.run(
        [sys.executable, str(BENCH / "run.py"), "--check", str(saved)], capture_output=True, text=True
    )
    assert done.stderr == ""
    return done.returncode, done.stdout.strip().splitlines()
