"""`index eval` on a tiny hand-made BEIR collection whose answers are known."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write

from indexer import ConfigError
from indexer.cli import main
from indexer.evaluation import load_collection, mrr_at, ndcg_at, recall_at


def tiny_collection(folder: Path) -> Path:
    documents = [
        {"_id": "d1", "title": "Volcanoes", "text": "Magma rises through the crust and erupts as lava."},
        {"_id": "d2", "title": "Glaciers", "text": "Ice sheets carve valleys over thousands of years."},
        {"_id": "d3", "title": "Apples", "text": "apple apple apple orchard harvest in autumn."},
        {"_id": "d/4", "title": "Bananas", "text": "banana plants grow in the tropics; apple trees do not."},
    ]
    queries = [
        {"_id": "q1", "text": "magma lava"},
        {"_id": "q2", "text": "glaciers carve valleys"},
        {"_id": "q3", "text": "apple"},
        {"_id": "q-unjudged", "text": "nothing"},
    ]
    write(folder / "corpus.jsonl", "\n".join(json.dumps(d) for d in documents) + "\n")
    write(folder / "queries.jsonl", "\n".join(json.dumps(q) for q in queries) + "\n")
    write(folder / "qrels" / "test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq3\td/4\t1\n")
    return folder


def test_metrics_match_hand_computed_values():
    relevant = {"b": 1, "z": 1}
    ranked = ["a", "b", "c"]
    assert ndcg_at(ranked, relevant) == pytest.approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)))
    assert recall_at(ranked, relevant) == 0.5
    assert mrr_at(ranked, relevant) == 0.5
    assert mrr_at(["x"] * 10 + ["b"], relevant) == 0.0


def test_load_collection_keeps_judged_queries_and_joins_title_and_text(tmp_path):
    collection = load_collection(tiny_collection(tmp_path / "tiny"), "test")
    assert set(collection.queries) == {"q1", "q2", "q3"}
    assert collection.documents["d1"] == "Volcanoes Magma rises through the crust and erupts as lava."
    with pytest.raises(ConfigError, match="qrels/train.tsv"):
        load_collection(tmp_path / "tiny", "train")


def test_index_eval_scores_a_tiny_collection_and_reuses_its_cache(tmp_path):
    folder = tiny_collection(tmp_path / "tiny")
    runner = CliRunner()
    args = ["eval", str(folder), "--cache", str(tmp_path / "cache"), "--json"]
    first = runner.invoke(main, args)
    assert first.exit_code == 0, first.output
    scores = json.loads(first.stdout)
    assert set(scores) == {"vector", "keyword", "hybrid"}
    # keyword: q1 and q2 find their document first; for q3 "apple" d3 (three apples) outranks d/4
    expected_keyword_ndcg = (1 + 1 + 1 / math.log2(3)) / 3
    assert scores["keyword"]["ndcg@10"] == pytest.approx(expected_keyword_ndcg, abs=1e-4)
    assert scores["keyword"]["mrr@10"] == pytest.approx((1 + 1 + 0.5) / 3, abs=1e-4)
    assert scores["keyword"]["recall@100"] == 1.0
    assert scores["vector"]["ndcg@10"] >= 2 / 3  # the model finds the volcano and glacier documents first
    second = runner.invoke(main, args)
    assert second.exit_code == 0
    assert "0 chunks embedded" in second.stderr
