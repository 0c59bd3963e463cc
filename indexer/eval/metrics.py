"""The retrieval measures both evaluations report, written once: nDCG, recall and MRR at a cutoff.

``ranked`` is what a search returned, best first, as keys (document ids, or the expected items of a
fixture each hit found); ``relevant`` maps each key a question should find to its gain (1 when the
judgments are binary).
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def ndcg_at(ranked: Sequence[str], relevant: dict[str, int], cutoff: int = 10) -> float:
    """nDCG with linear gains, as trec_eval's ndcg_cut (which BEIR reports)."""
    dcg = sum(relevant.get(doc, 0) / math.log2(rank + 2) for rank, doc in enumerate(ranked[:cutoff]))
    ideal = sorted(relevant.values(), reverse=True)[:cutoff]
    best = sum(gain / math.log2(rank + 2) for rank, gain in enumerate(ideal))
    return dcg / best if best > 0 else 0.0


def recall_at(ranked: Sequence[str], relevant: dict[str, int], cutoff: int = 100) -> float:
    """The share of ``relevant`` found in the first ``cutoff``."""
    return len(set(ranked[:cutoff]) & set(relevant)) / len(relevant) if relevant else 0.0


def mrr_at(ranked: Sequence[str], relevant: dict[str, int], cutoff: int = 10) -> float:
    """1 / the rank of the first relevant key, 0 when none is in the first ``cutoff``."""
    for rank, doc in enumerate(ranked[:cutoff], start=1):
        if doc in relevant:
            return 1.0 / rank
    return 0.0
