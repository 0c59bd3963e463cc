"""Whether a bench run may pass: every missed target is either a stated, known miss no worse than
it stood, or a regression.

A target the project has not met yet (the re-ranker's speed on 2 cores, a build's scaling on a
shared machine) would fail every run, and a run that always fails cannot tell a regression from a
miss everybody knows. So each standing miss is written down in bench/known_misses.json with the
reason it is missed and the figure it stands at, and a run is judged against that file:

- a row that meets its target passes; if it was a known miss, the run says so (its entry can go);
- a row that misses its target and is not a known miss fails the run: a regression, or a new
  target, which then needs a reason in the file;
- a known miss fails the run when its figure is worse than it stood by more than the entry's
  noise (a share of the figure, in the direction the entry says is better); within the noise it
  is shown as KNOWN; better than that, the run says the entry's figure can be raised.

An entry names the row by its script and the start of its ``what`` (some ``what`` carry figures of
their own, which change from run to run); it applies to every row of that script whose ``what``
starts so, and the longest such start wins when several entries do.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

KNOWN_MISSES = Path(__file__).resolve().parent.parent / "known_misses.json"

#: The states of a judged row, as the table shows them; the first two fail a run.
FAIL, WORSE, KNOWN, PASS = "FAIL", "WORSE", "KNOWN", "PASS"
STATES = (FAIL, WORSE, KNOWN, PASS)
FIELDS = ("script", "what", "figure", "better", "stands_at", "noise", "reason")


@dataclass(frozen=True)
class KnownMiss:
    """A target a row misses, on purpose or for now: why, and where its figure stands."""

    script: str
    what: str
    figure: str  # the row's field the target judges: "ours" or "ratio"
    better: str  # "higher" or "lower"
    stands_at: float
    noise: float  # how far the figure may move either way and be the same, as a share of stands_at
    reason: str

    def worse(self, value: float) -> bool:
        """Whether ``value`` is worse than the figure stood by more than the noise."""
        margin = abs(self.stands_at) * self.noise
        if self.better == "higher":
            return value < self.stands_at - margin
        return value > self.stands_at + margin

    def better_than_stated(self, value: float) -> bool:
        """Whether ``value`` is better than the figure stood by more than the noise."""
        margin = abs(self.stands_at) * self.noise
        if self.better == "higher":
            return value > self.stands_at + margin
        return value < self.stands_at - margin

    def names(self, line: dict) -> bool:
        return line.get("script") == self.script and str(line.get("what", "")).startswith(self.what)


@dataclass(frozen=True)
class Verdict:
    """One row with a target, judged: its state and, where there is one, what to do about it."""

    line: dict
    state: str
    message: str = ""

    @property
    def fails(self) -> bool:
        return self.state in (FAIL, WORSE)


def read_known(path: Path = KNOWN_MISSES) -> list[KnownMiss]:
    """The known misses of ``path``; a malformed entry stops the run with one line naming it."""
    entries = json.loads(path.read_text())
    misses = []
    for number, entry in enumerate(entries, start=1):
        where = f"{path.name} entry {number} ({entry.get('script')}: {entry.get('what')!r})"
        missing = [field for field in FIELDS if field not in entry]
        if missing or set(entry) - set(FIELDS):
            raise ValueError(f"{where}: expected the fields {', '.join(FIELDS)}")
        if entry["figure"] not in ("ours", "ratio") or entry["better"] not in ("higher", "lower"):
            raise ValueError(f'{where}: figure is "ours" or "ratio", better is "higher" or "lower"')
        if not entry["reason"].strip() or not entry["what"].strip():
            raise ValueError(f"{where}: a known miss needs a reason and the start of a row's what")
        misses.append(KnownMiss(**{**entry, "stands_at": float(entry["stands_at"])}))
    return misses


def known_for(line: dict, known: list[KnownMiss]) -> KnownMiss | None:
    """The entry that names this row (the longest matching start of ``what``), or None."""
    matching = [miss for miss in known if miss.names(line)]
    return max(matching, key=lambda miss: len(miss.what), default=None)


def judge(line: dict, known: list[KnownMiss]) -> Verdict:
    """The verdict on one row with a target (a row without one is not judged)."""
    miss = known_for(line, known)
    if line["pass"]:
        if miss is None:
            return Verdict(line, PASS)
        return Verdict(line, PASS, f"a known miss now passes: delete its entry in {KNOWN_MISSES.name}")
    if miss is None:
        return Verdict(line, FAIL, f"missed, and not a known miss in {KNOWN_MISSES.name}")
    value = line.get(miss.figure)
    if not isinstance(value, (int, float)):
        return Verdict(line, WORSE, f"a known miss without its figure ({miss.figure}: {value!r})")
    stood = f"{miss.figure} {value:g}, stands at {miss.stands_at:g} ({miss.better} is better)"
    if miss.worse(value):
        return Verdict(line, WORSE, f"a known miss got worse beyond its noise of {miss.noise:.0%}: {stood}")
    if miss.better_than_stated(value):
        return Verdict(line, KNOWN, f"better than it stood, beyond the noise: {stood}; raise stands_at")
    return Verdict(line, KNOWN)


def judge_rows(rows: list[dict], known: list[KnownMiss]) -> list[Verdict]:
    """The verdicts on every row with a target (a verdict of true or false: rows of older runs may
    hold an empty one)."""
    return [judge(line, known) for line in rows if isinstance(line.get("pass"), bool)]


def unmatched(rows: list[dict], known: list[KnownMiss]) -> list[KnownMiss]:
    """Known misses of the scripts that ran that name no row (a row renamed, or a target gone)."""
    scripts = {line.get("script") for line in rows}
    return [miss for miss in known if miss.script in scripts and not any(miss.names(line) for line in rows)]
