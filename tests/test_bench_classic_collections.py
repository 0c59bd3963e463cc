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


def write_cisi(raw: Path, judgments: str) -> None:
    raw.mkdir(parents=True)
    (raw / "CISI.ALL").write_text(
        ".I 1\n.T\n18 Editions of the Dewey Decimal Classifications\n.A\nComaromi, J.P.\n.W\n"
        "   The present study is a history of the DEWEY Decimal\nClassification.\n.X\n1\t5\t1\n"
        ".I 2\n.T \nUse Made of Technical Libraries\n.A \nSlater, M.\n.W\nThis report is an analysis.\n"
    )
    (raw / "CISI.QRY").write_text(".I 1\n.W\nWhat problems are there in making up descriptive titles?\n")
    (raw / "CISI.REL").write_text(judgments)


def test_cisi_judgments_become_grades_of_the_corpus_documents(classic, tmp_path):
    raw = tmp_path / "raw" / "cisi"
    write_cisi(raw, "     1      2\t0\t0.000000\n")
    classic.cisi(raw, tmp_path / "out")
    documents = [json.loads(line) for line in (tmp_path / "out" / "corpus.jsonl").read_text().splitlines()]
    judged = (tmp_path / "out" / "qrels" / "test.tsv").read_text().splitlines()[1:]
    assert [(d["_id"], d["title"]) for d in documents] == [
        ("1", "18 Editions of the Dewey Decimal Classifications"),
        ("2", "Use Made of Technical Libraries"),
    ]
    assert "Comaromi" not in documents[0]["text"] and documents[0]["text"].startswith("The present study")
    assert judged == ["1\t2\t1"]


def test_cisi_refuses_a_retrieval_run_in_place_of_judgments(classic, tmp_path):
    raw = tmp_path / "raw" / "cisi"
    # a run found under the same name: every retrieved document listed, with its score
    write_cisi(raw, "    1     1 0   0.000000\n    1     2 1  10.620731\n")
    with pytest.raises(ValueError, match="retrieval run"):
        classic.cisi(raw, tmp_path / "out")
    assert not (tmp_path / "out").exists()
