"""bench/support/classic_collections.py: a classic collection's judgments name each document as its
corpus does, so a judged answer is found as an answer."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.fixture
def classic() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "classic_collections", BENCH / "support" / "classic_collections.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cacm_judgments_name_documents_under_1000_as_the_corpus_does(classic, tmp_path):
    raw = tmp_path / "raw" / "cacm"
    raw.mkdir(parents=True)
    # CACM writes document numbers with leading zeros in qrels.text, without them in cacm.all
    (raw / "cacm.all").write_text(
        ".I 7\n.T\nStochastic processes applied\n.W\nA survey.\n.I 1410\n.T\nParallel sorting\n"
    )
    (raw / "query.text").write_text(".I 1\n.W\nApplied stochastic processes\n")
    (raw / "qrels.text").write_text("01 0007  0 0\n01 1410  0 0\n")
    classic.cacm(raw, tmp_path / "out")
    documents = {
        json.loads(line)["_id"] for line in (tmp_path / "out" / "corpus.jsonl").read_text().splitlines()
    }
    judged = [
        line.split("\t") for line in (tmp_path / "out" / "qrels" / "test.tsv").read_text().splitlines()[1:]
    ]
    assert [(query, document) for query, document, _ in judged] == [("1", "7"), ("1", "1410")]
    assert {document for _, document, _ in judged} <= documents
