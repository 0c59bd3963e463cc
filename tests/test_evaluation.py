"""`index eval` on a tiny hand-made BEIR collection whose answers are known."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write
from helpers import HashBackend

from indexer import ConfigError, Index
from indexer.cli import main
from indexer.eval.beir import load_collection
from indexer.eval.metrics import mrr_at, ndcg_at, recall_at


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


@pytest.mark.heavy
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


@pytest.mark.heavy
def test_a_copied_eval_cache_scores_its_own_documents_once(tmp_path):
    """A cache folder copied elsewhere still records its documents under the old path: the eval
    drops that folder rather than search every document twice."""
    folder = tiny_collection(tmp_path / "tiny")
    runner = CliRunner()
    first = runner.invoke(main, ["eval", str(folder), "--cache", str(tmp_path / "cache"), "--json"])
    shutil.copytree(tmp_path / "cache", tmp_path / "moved")
    moved = runner.invoke(main, ["eval", str(folder), "--cache", str(tmp_path / "moved"), "--json"])
    assert moved.exit_code == 0, moved.output
    metrics = ("ndcg@10", "recall@100", "mrr@10")
    for mode, scores in json.loads(first.stdout).items():
        assert {name: json.loads(moved.stdout)[mode][name] for name in metrics} == {
            name: scores[name] for name in metrics
        }
    assert "0 chunks embedded" in moved.stderr  # the vectors were re-used, not embedded again
    with Index.open(tmp_path / "moved" / "index.db") as index:
        roots = [root["path"] for root in index.status()["roots"]]
    assert roots == [str((tmp_path / "moved" / "documents").resolve())]


@pytest.mark.heavy
def test_index_eval_per_query_says_which_questions_fail(tmp_path):
    folder = tiny_collection(tmp_path / "tiny")
    args = ["eval", str(folder), "--cache", str(tmp_path / "cache"), "--mode", "keyword", "--per-query"]
    scores = json.loads(CliRunner().invoke(main, [*args, "--json"]).stdout)
    rows = {row["id"]: row for row in scores["keyword"]["queries"]}
    assert rows["q3"]["first_relevant_rank"] == 2
    assert rows["q1"]["first_relevant_rank"] == 1
    assert rows["q3"]["ndcg@10"] == pytest.approx(1 / math.log2(3), abs=1e-4)
    assert rows["q3"]["top"][0] == "d3"
    text = CliRunner().invoke(main, args).stdout
    assert re.search(r"^\s+2 0\.631  apple  -> d3$", text, re.MULTILINE), text


@pytest.fixture
def checked_index(tmp_path):
    """A small index and a fixture file of the user's own questions."""
    docs = tmp_path / "docs"
    write(
        docs / "tyres.md", "# Tyres\n\nPatch the puncture.\n\n## Valves\n\nPresta valves need an adapter.\n"
    )
    write(docs / "brakes.md", "# Brakes\n\nAdjust the brake cable tension.\n")
    with Index.open(tmp_path / "index.db") as index:
        assert index.build(docs, backend=HashBackend(), warn=lambda message: None).exit_code == 0
    return tmp_path / "index.db"


def fixture_file(path, lines) -> str:
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return str(path)


def test_index_eval_runs_your_own_questions_on_an_existing_index_and_fails_under_a_floor(
    checked_index, tmp_path
):
    questions = fixture_file(
        tmp_path / "questions.jsonl",
        [
            {"query": "puncture", "expected": ["tyres.md"]},
            {"query": "presta adapter", "expected": ["tyres.md:5-7"]},
            {"query": "cable tension", "expected": ["tyres.md"]},  # wrong on purpose: brakes.md answers
        ],
    )
    base = ["eval", "--fixture", questions, "--db", str(checked_index), "--mode", "keyword"]
    result = CliRunner().invoke(main, [*base, "--json", "--per-query"])
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)["keyword"]
    assert scores["recall@10"] == pytest.approx(2 / 3, abs=1e-4)
    assert [row["first_relevant_rank"] for row in scores["queries"]] == [1, 1, None]
    assert scores["queries"][2]["top"][0].startswith("brakes.md:")
    failed = CliRunner().invoke(main, [*base, "--min-recall", "0.9"])
    assert failed.exit_code == 1
    assert "recall@10 0.6667 < 0.9 (keyword)" in failed.stderr
    assert CliRunner().invoke(main, [*base, "--min-recall", "0.6", "--min-ndcg", "0.5"]).exit_code == 0


def test_a_fixture_line_that_is_not_a_question_is_named(checked_index, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "puncture", "expected": ["tyres.md"]}\n{"query": "no answers"}\n')
    result = CliRunner().invoke(main, ["eval", "--fixture", str(bad), "--db", str(checked_index)])
    assert result.exit_code == 2
    assert 'bad.jsonl line 2: needs an "expected" list' in result.stderr
    neither = CliRunner().invoke(main, ["eval"])
    assert neither.exit_code == 2
    assert "BEIR FOLDER or --fixture" in neither.output


def test_an_expected_file_shown_as_a_hits_copy_is_found_right_after_that_hit(tmp_path):
    docs = tmp_path / "docs"
    tyres = "# Tyres\n\nPatch the puncture with a presta valve adapter and a tyre lever.\n"
    write(docs / "tyres.md", tyres)
    write(docs / "archive" / "tyres.md", tyres)  # the same page kept twice: one hit, citing both
    write(docs / "brakes.md", "# Brakes\n\nAdjust the brake cable tension.\n")
    with Index.open(tmp_path / "index.db") as index:
        assert index.build(docs, backend=HashBackend(), warn=lambda message: None).exit_code == 0
        hits = index.search("presta adapter", k=5, mode="keyword", min_score=0)
    assert len(hits[0].copies) == 1
    shown, folded = hits[0].path, hits[0].copies[0].citation.rpartition(":")[0]
    questions = fixture_file(
        tmp_path / "q.jsonl",
        [
            {"query": "presta adapter", "expected": [folded]},
            {"query": "presta adapter", "expected": [shown, folded]},
        ],
    )
    base = ["eval", "--fixture", questions, "--db", str(tmp_path / "index.db"), "--mode", "keyword"]
    result = CliRunner().invoke(main, [*base, "--json", "--per-query"])
    assert result.exit_code == 0, result.output
    copy_alone, both = json.loads(result.stdout)["keyword"]["queries"]
    assert copy_alone["first_relevant_rank"] == 2  # right after the hit that shows it
    assert both["first_relevant_rank"] == 1 and both["recall@10"] == 1.0 and both["ndcg@10"] == 1.0


@pytest.mark.heavy
def test_a_judged_document_whose_text_another_holds_is_ranked_where_that_one_is(tmp_path):
    folder = tiny_collection(tmp_path / "tiny")
    documents = (folder / "corpus.jsonl").read_text()
    copy = {"_id": "d5", "title": "Volcanoes", "text": "Magma rises through the crust and erupts as lava."}
    (folder / "corpus.jsonl").write_text(documents + json.dumps(copy) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td5\t1\n")
    args = ["eval", str(folder), "--cache", str(tmp_path / "cache"), "--mode", "keyword", "--json"]
    scores = json.loads(CliRunner().invoke(main, [*args, "--per-query"]).stdout)["keyword"]
    # d1 and d5 are one hit: both are found first, as a user sees them on the first line
    assert scores["ndcg@10"] == pytest.approx(1.0, abs=1e-4)
