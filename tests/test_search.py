"""Search over sample_corpus/ with the embedded model: right answers first, filters, modes.

Every test runs on both stores: SQLite, and PostgreSQL with pgvector (HNSW) and tsvector keywords."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO, SAMPLE_CORPUS, STORES, new_database

from indexer import Index

QUERIES = json.loads((REPO / "tests" / "fixtures" / "sample_queries.json").read_text())
HYBRID = json.loads((REPO / "tests" / "fixtures" / "hybrid_queries.json").read_text())


@pytest.fixture(scope="module", params=STORES)
def index(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus") / "sample"
    shutil.copytree(SAMPLE_CORPUS, folder)
    if request.param == "postgres":
        location = new_database(request.getfixturevalue("postgres_server"))
    else:
        location = folder.parent / "index.db"
    with Index.open(location) as opened:
        report = opened.build(folder, warn=lambda message: None)
        assert report.exit_code == 0
        opened.folder = folder
        yield opened


@pytest.mark.parametrize("case", QUERIES, ids=[case["expected"] for case in QUERIES])
def test_expected_file_comes_first(index, case):
    hits = index.search(case["query"], k=3, mode="vector")
    assert hits[0].path == case["expected"], [hit.path for hit in hits]
    assert case["expected"] in [hit.path for hit in index.search(case["query"], k=3, mode="hybrid")]


@pytest.mark.parametrize("case", HYBRID["keyword"], ids=[case["query"] for case in HYBRID["keyword"]])
def test_keyword_search_finds_exact_rare_tokens(index, case):
    assert index.search(case["query"], k=1, mode="keyword")[0].path == case["expected"]
    assert case["expected"] in [hit.path for hit in index.search(case["query"], k=3, mode="hybrid")]


@pytest.mark.parametrize("case", HYBRID["vector"], ids=[case["expected"] for case in HYBRID["vector"]])
def test_vector_search_finds_paraphrases(index, case):
    assert index.search(case["query"], k=1, mode="vector")[0].path == case["expected"]
    assert case["expected"] in [hit.path for hit in index.search(case["query"], k=3, mode="hybrid")]


def test_each_mode_finds_what_the_other_misses(index):
    keyword_case, vector_case = HYBRID["keyword_only"][0], HYBRID["vector"][0]
    assert index.search(keyword_case["query"], k=1, mode="keyword")[0].path == keyword_case["expected"]
    # the model cannot read an opaque token: its best chunk is not the one that holds it
    assert keyword_case["query"] not in index.search(keyword_case["query"], k=1, mode="vector")[0].text
    assert index.search(vector_case["query"], k=1, mode="vector")[0].path == vector_case["expected"]
    keyword_hits = index.search(vector_case["query"], k=1, mode="keyword")
    assert not keyword_hits or keyword_hits[0].path != vector_case["expected"]


def test_path_filter_returns_exactly_k_hits_inside_the_filter(index):
    for mode in ("vector", "keyword", "hybrid"):
        hits = index.search("how do I fix it", k=10, mode=mode, paths=["bicycle-repair/*"])
        assert len(hits) == 10, mode
        assert all(hit.path.startswith("bicycle-repair/") for hit in hits)


def test_type_filter_and_repeated_globs(index):
    hits = index.search("notes", k=50, mode="vector", types=["txt"])
    assert hits and all(hit.path.endswith(".txt") for hit in hits)
    both = index.search("recipe", k=50, mode="vector", paths=["cooking/*", "gardening/*"])
    assert {hit.path.split("/")[0] for hit in both} == {"cooking", "gardening"}


def test_min_score_drops_weak_hits(index):
    hits = index.search("how do I fix a puncture", k=20, mode="vector", min_score=0.45)
    assert hits and all(hit.score >= 0.45 for hit in hits)
    assert len(hits) < 20


def test_a_deleted_file_is_gone_from_both_indexes(index):
    target = index.folder / "networking" / "tls-certificates.md"
    token = HYBRID["keyword"][0]["query"]
    assert index.search(token, k=1, mode="keyword")[0].path == "networking/tls-certificates.md"
    target.unlink()
    report = index.build(index.folder, warn=lambda message: None)
    assert report.files_removed == 1
    assert index.search(token, k=5, mode="keyword") == []
    everything = index.search("TLS certificate expiry and renewal", k=100, mode="vector")
    assert all(hit.path != "networking/tls-certificates.md" for hit in everything)


def test_hits_are_typed_and_cite_their_source(index):
    hit = index.search("compost pile too wet and smelly", k=1)[0]
    lines = (index.folder / hit.path).read_text().split("\n")
    assert hit.citation == f"{hit.path}:{hit.start_line}-{hit.end_line}"
    assert hit.text.split("\n")[0] == lines[hit.start_line - 1]
    assert isinstance(hit.score, float) and hit.mode == "hybrid"
    assert Path(hit.root).name == "sample"
