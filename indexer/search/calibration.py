"""The maps from a hit's evidence to the chance that it answers (:class:`Calibration`; a mode's
pair, :class:`ModeCalibration`; a model's, :class:`ModelCalibration`), the constants fitted for them
(:data:`KEYWORD_CALIBRATION`, :data:`CALIBRATIONS`), the thresholds and floors read on their scale,
and the rule that makes the scores fall in rank order (:func:`in_rank_order`).

Apart so that each calibration's constants live in one place: ``bench/studies/bench_scores.py --fit``
prints new maps, and this module is where they go.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from indexer.request import MODES
from indexer.search.evidence import Evidence


@dataclass(frozen=True)
class Calibration:
    """A fixed logistic map from a hit's evidence (:class:`Evidence`) to the chance that it answers
    the question (Platt scaling over the features of :class:`Evidence`), fitted by
    ``bench/studies/bench_scores.py --fit``."""

    strength: float
    gap: float
    margin: float
    offset: float
    known: float = 0.0
    together: float = 0.0

    def logit(self, evidence: Evidence) -> float:
        """The log-odds the map gives ``evidence``."""
        return (
            self.strength * evidence.strength
            + self.gap * evidence.gap
            + self.margin * evidence.margin
            + self.known * evidence.known
            + self.together * evidence.together
            + self.offset
        )

    def __call__(self, evidence: Evidence) -> float:
        return logistic(self.logit(evidence))


def logistic(logit: float) -> float:
    """The chance whose log-odds are ``logit``."""
    return 1.0 / (1.0 + math.exp(-min(max(logit, -50.0), 50.0)))


@dataclass(frozen=True)
class ModeCalibration:
    """A mode's two maps. ``answer`` judges the whole answer: the chance that the question has an
    answer here, from the evidence of its strongest hit, which scores that chance. ``hit`` judges
    each hit: the other hits score the whole answer's odds times their own odds of being an answer
    over the strongest hit's, so that the "nothing relevant here" decision (the strongest hit under
    :data:`DEFAULT_MIN_SCORE`) does not flatten the scores of the hits it keeps: a hit nearly as
    strong as the strongest scores nearly as high, one far below it little.

    A hit of a page listing names the question does not ask for (:attr:`Evidence.listed`) judges
    nothing, and scores no more than any hit before it that is no list: a changelog's or a list of
    contributors' words meet by chance (``when did the Berlin Wall fall`` and a "Wall of
    Contributors" naming Ash Berlin-Taylor), as the words of the pages it lists do not, and the rank
    order would lift every hit above it to its score. Only where every hit is such a list is the
    answer judged on one."""

    answer: Calibration
    hit: Calibration

    def scores(self, evidence: Sequence[Evidence], judged: float | None = None) -> list[float]:
        """The score of each hit with ``evidence``; ``judged``: the whole answer's log-odds when
        another judgment than this mode's own gives them (:func:`in_doubt`)."""
        if not evidence:
            return []
        strongest = self.hit.logit(self._strongest(evidence))
        whole = self.judged(evidence) if judged is None else judged
        odds, above = [], strongest  # above: the least odds of the hits before that are no lists
        for one in evidence:
            own = self.hit.logit(one)
            odds.append(min(own, above) if one.listed else own)
            above = above if one.listed else min(above, own)
        return [logistic(whole + own - strongest) for own in odds]

    def judged(self, evidence: Sequence[Evidence]) -> float:
        """The log-odds that the question has an answer here, from the evidence of the strongest hit
        by the ``hit`` map (that hit's score), lists of names aside."""
        return self.answer.logit(self._strongest(evidence))

    def _strongest(self, evidence: Sequence[Evidence]) -> Evidence:
        """The strongest hit by the ``hit`` map that is not of a list of names, if one is not."""
        judging = [one for one in evidence if not one.listed] or evidence
        return max(judging, key=self.hit.logit)


#: Keyword mode's maps: the same for every model, since no model takes part. Every map is fitted by
#: ``bench/studies/bench_scores.py --fit`` on collections of different kinds, others held out to check it
#: (bench/RESULTS.md, "Ranking quality"): each ``hit`` map by logistic regression of the top three
#: hits that answer against those that do not (off-topic questions' among them); each ``answer``
#: map by logistic regression of real questions against off-topic ones on their strongest hit, its
#: offset then set so that the default threshold leaves most off-topic questions without an answer.
KEYWORD_CALIBRATION = ModeCalibration(
    answer=Calibration(strength=0.912, gap=0.0, margin=0.575, offset=-4.322, known=2.974, together=3.674),
    hit=Calibration(strength=2.277, gap=0.0, margin=2.12, offset=-2.606),
)


@dataclass(frozen=True)
class ModelCalibration:
    """One model's maps for vector and hybrid mode (keyword mode's are :data:`KEYWORD_CALIBRATION`,
    every model's). Cosines run on another scale with every model, so a map fitted for one says
    nothing of another."""

    vector: ModeCalibration
    hybrid: ModeCalibration

    def of(self, mode: str) -> ModeCalibration:
        return {"keyword": KEYWORD_CALIBRATION, "vector": self.vector}.get(mode, self.hybrid)

    def describe(self) -> dict[str, dict[str, dict[str, float]]]:
        """Each mode's maps, for ``index status``: the weight of each feature and the offset."""
        return {mode: asdict(self.of(mode)) for mode in MODES}


#: Each packaged model's maps, under the name an index records for it, fitted as keyword mode's are
#: on that model's own indexes (a map fitted for one model says nothing of another). Other models'
#: scores still fall in rank order, through the default model's maps, but are not calibrated: no
#: default threshold applies in vector and hybrid mode, and ``index status`` says so.
CALIBRATIONS = {
    "all-MiniLM-L6-v2-int8": ModelCalibration(
        vector=ModeCalibration(
            answer=Calibration(strength=5.983, gap=0.0, margin=3.136, offset=-2.909),
            hit=Calibration(strength=3.66, gap=0.0, margin=2.887, offset=-3.04),
        ),
        hybrid=ModeCalibration(
            answer=Calibration(strength=6.177, gap=0.0, margin=2.481, offset=-2.786),
            hit=Calibration(strength=3.797, gap=0.0, margin=2.301, offset=-2.884),
        ),
    ),
    "bge-small-en-v1.5": ModelCalibration(
        vector=ModeCalibration(
            answer=Calibration(strength=5.971, gap=0.0, margin=2.383, offset=-4.217),
            hit=Calibration(strength=4.278, gap=0.078, margin=1.676, offset=-4.024),
        ),
        hybrid=ModeCalibration(
            answer=Calibration(strength=6.001, gap=0.0, margin=2.425, offset=-4.245),
            hit=Calibration(strength=4.105, gap=0.0, margin=1.877, offset=-3.837),
        ),
    ),
}
#: The model whose maps order the scores of a model with none.
CALIBRATED_MODEL = "all-MiniLM-L6-v2-int8"
#: The score under which a search's strongest hit says "nothing relevant here", and any hit is more
#: likely noise than an answer.
DEFAULT_MIN_SCORE = 0.5
#: The same for the re-ranker's probability, whatever model found the candidates. The cross-encoder
#: puts most off-topic questions' best candidates under this, but it also puts there the answers of
#: many long, paraphrased questions, which MS MARCO's short web searches did not teach it: a higher
#: cut would silence them too (bench/RESULTS.md, bench_rerank).
RERANK_MIN_SCORE = 0.01
#: The least score of a page named exactly as a one-name question asks (:func:`named_first`), and of
#: an entry of the version a question asks a list of (``version_entries_first``: its heading declares
#: that version): it is what the user typed, a strong hit whatever its words' evidence.
NAMED_PAGE_SCORE = 0.9


#: The chances of an answer between which keyword mode's judgment of the whole answer is in doubt:
#: odds under 4 to 1 either way. There keyword mode asks hybrid mode's judgment, which reads both
#: kinds of evidence (:func:`in_doubt`).
DOUBT = (0.2, 0.8)


def in_doubt(judged: float) -> bool:
    """Whether keyword evidence leaves the whole answer in doubt (``judged``: its log-odds,
    :data:`DOUBT`). It cannot tell a question on the collection's subject from one sharing a few of
    its words (a long question's words meet in many chunks by chance); where it is sure, it is right
    about as often as keyword and cosine together (bench/RESULTS.md, "Keyword mode asks both kinds
    of evidence ..."), so the model is asked only here: a keyword search sure of its answer never
    loads it."""
    low, high = DOUBT
    return log_odds(low) <= judged <= log_odds(high)


def log_odds(chance: float) -> float:
    """The log-odds of ``chance`` (the inverse of :func:`logistic`)."""
    return math.log(chance / (1.0 - chance))


def calibration_for(model: str | None) -> ModelCalibration | None:
    """The maps fitted for ``model`` (its recorded name), or None for a model with none."""
    return CALIBRATIONS.get(model or "")


def default_min_score(mode: str, model: str | None, rerank: bool = False) -> float | None:
    """The threshold every front end applies unless told otherwise: :data:`RERANK_MIN_SCORE` with
    re-ranking, :data:`DEFAULT_MIN_SCORE` where the scores are calibrated (keyword mode always; the
    others for a model with a calibration), none elsewhere, where a fixed threshold could drop good
    answers."""
    if rerank:
        return RERANK_MIN_SCORE
    return DEFAULT_MIN_SCORE if mode == "keyword" or calibration_for(model) else None


def under_named(scores: list[float], named: list[bool]) -> list[float]:
    """``scores`` with each hit that is not ``named``, when some are, scored under
    :data:`NAMED_PAGE_SCORE`: its score times that. In a one-name lookup the page named after the
    name or declaring it is the answer (:func:`named_first`), while the hits that only use the name
    hold it as strongly (a rare name's keyword evidence is near 1 in every chunk that holds it, and a
    bare name's cosine is high across a whole manual): such a hit answers only as far as the named
    thing is what was asked, which is what :data:`NAMED_PAGE_SCORE` says, and it is about that thing,
    which is what its own score says. Every hit that only uses a name then scores under every page
    named as asked, and those hits keep their order. A lookup's floor is applied after this
    (:func:`in_rank_order`), so the chunks that use the name most are still shown beside its
    definition at the default threshold."""
    if not any(named):
        return scores
    return [score if one else score * NAMED_PAGE_SCORE for score, one in zip(scores, named, strict=True)]


def in_rank_order(scores: list[float], floors: list[float]) -> list[float]:
    """``scores`` (each raised to its floor) made to fall in rank order: a hit scores as the
    strongest hit ranked at or below it. So the score shown is how likely an answer is here or
    further down the list, and a threshold cuts only the tail where none is likely, keeping the
    order and every hit strong on its own."""
    shown = [max(score, floor) for score, floor in zip(scores, floors, strict=True)]
    for place in range(len(shown) - 2, -1, -1):
        shown[place] = max(shown[place], shown[place + 1])
    return shown
