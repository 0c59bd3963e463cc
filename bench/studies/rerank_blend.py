"""How re-ranked candidates should be ordered: by the cross-encoder alone, or with the fused rank
weighed in (indexer.search.order_rules.FUSED_RANK_WEIGHT), for two token budgets and two candidate
counts.

Each question's hybrid top 20 is read once per budget (256 and 128 tokens) and the orders are
compared offline: ``alone`` (the logit), ``w=W`` (the logit less W x ln(fused rank)), and the fused
order. Prints the nDCG@10 (SciFact, a seeded subset of train over the whole corpus) or top-1 (the
sample corpus's written questions) of each. The index is the one bench_rerank.py builds.

    python bench/studies/rerank_blend.py [--set scifact|sample] [--questions 100]
"""

from __future__ import annotations

import argparse
import random
import sys

import bench_folder  # noqa: F401  (bench/ on sys.path: support/ and the suite's scripts)
import bench_ranking
import bench_rerank
import numpy as np

from indexer.backends.reranker import Reranker, passage_text
from indexer.eval import metrics

WEIGHTS = (0.0, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0)
BUDGETS = (256, 128)
DEPTHS = (10, 20)


def ordered(paths: list[str], logits: np.ndarray, weight: float | None, depth: int) -> list[str]:
    """The pages in the order ``weight`` gives the first ``depth`` (None: the fused order)."""
    if weight is None:
        return list(dict.fromkeys(paths))
    read = logits[:depth] - weight * np.log(np.arange(1, min(depth, len(paths)) + 1))
    order = sorted(range(len(read)), key=lambda place: (-read[place], place))
    return list(dict.fromkeys([paths[place] for place in order] + paths[depth:]))


def name(weight: float) -> str:
    return "alone" if weight == 0 else f"w={weight:g}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", default="scifact", choices=("scifact", "sample"))
    parser.add_argument("--questions", type=int, default=100)
    args = parser.parse_args()
    if args.set == "sample":
        found = bench_ranking.sample_collection()
    else:
        folder = bench_ranking.scifact_folder()
        if folder is None:
            raise SystemExit("no SciFact folder (set $SCIFACT)")
        found = bench_ranking.scifact_collection(folder)
    index = bench_rerank.opened(found.folder, found.index_path)
    index.store.expect_many_searches()
    real = [query for query in found.queries if query.kind in ("question", "scifact")]
    chosen = random.Random(bench_rerank.SEED).sample(real, min(args.questions, len(real)))
    rerankers = {budget: Reranker(pair_tokens=budget) for budget in BUDGETS}
    results: dict[tuple[int, int, float | None], list[float]] = {}
    for query in chosen:
        hits = index.search(query.text, k=max(DEPTHS), mode="hybrid", min_score=0)
        paths = [hit.path for hit in hits]
        passages = [passage_text(hit.heading, hit.text) for hit in hits]
        for budget, reranker in rerankers.items():
            logits = reranker.logits(query.text, passages).astype(np.float64)
            for depth in DEPTHS:
                for weight in (None, *WEIGHTS):
                    pages = ordered(paths, logits, weight, depth)
                    value = (
                        metrics.ndcg_at(pages, query.relevance)
                        if query.relevance
                        else float(bool(pages) and pages[0] in query.expected)
                    )
                    results.setdefault((budget, depth, weight), []).append(value)
    measure = "nDCG@10" if args.set == "scifact" else "top-1"
    print(f"{args.set}, {len(chosen)} questions, {measure} (fused: {np.mean(results[(256, 20, None)]):.3f})")
    for budget in BUDGETS:
        for depth in DEPTHS:
            cells = [f"{name(weight)} {np.mean(results[(budget, depth, weight)]):.3f}" for weight in WEIGHTS]
            print(f"{budget} tokens, top {depth}: " + "  ".join(cells))
    index.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
