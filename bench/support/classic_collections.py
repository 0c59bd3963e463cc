"""Classic test collections (Cranfield, CACM, CISI, Vaswani) from their SMART- or TREC-format files to the
BEIR layout that ``index eval`` and bench/studies/bench_scores.py read, and SciFact's test judgments
beside its corpus.

The files are not shipped: copies of the originals sit in many public course repositories (see
bench/data/README.md). Each collection's relevance codes become BEIR grades:

- Cranfield: ``cranqrel`` codes 1 (a complete answer) to 4 (of minimum interest) become grades 4 to 1;
  5 and -1 (no interest) are left out. Its query numbers are the queries' order in ``cran.qry``, not
  their ``.I`` numbers (a known quirk of the collection);
- CACM: every listed pair is relevant (grade 1);
- CISI (the Glasgow collection: 1,460 library-science abstracts, 76 judged queries): every listed pair
  is relevant (grade 1). A genuine ``CISI.REL`` line is ``query document 0 0.000000``; copies exist
  whose ``CISI.REL`` is a retrieval run (a score in the fourth field), which the converter refuses;
- Vaswani (NPL, 11,429 physics abstracts, 93 queries, in the TREC layout Terrier ships in
  ``share/vaswani_npl``): every listed pair is relevant (grade 1).

    python bench/support/classic_collections.py RAW OUT
        RAW/cran/{cran.all.1400,cran.qry,cranqrel}, RAW/cacm/{cacm.all,query.text,qrels.text},
        RAW/cisi/{CISI.ALL,CISI.QRY,CISI.REL},
        RAW/vaswani/{doc-text.trec,query-text.trec,qrels},
        RAW/scifact-test.tsv (TREC layout) with $SCIFACT (default ../shared/eval/scifact)
        -> OUT/{cranfield,cacm,cisi,vaswani,scifact}
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path


def smart_records(path: Path) -> list[dict[str, str]]:
    """The records of a SMART file: ``.I id`` starts one, ``.X`` (a field name) starts a field."""
    records: list[dict[str, str]] = []
    field = ""
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith(".I"):
            records.append({"id": line[2:].strip()})
            field = ""
        elif len(line) >= 2 and line[0] == "." and line[1].isalpha() and line[2:].strip() == "":
            field = line[1]
            records[-1].setdefault(field, "")
        elif records and field:
            records[-1][field] += line.strip() + " "
    return records


def write(
    out: Path, documents: list[dict], queries: dict[str, str], qrels: list[tuple[str, str, int]]
) -> None:
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    with open(out / "corpus.jsonl", "w", encoding="utf-8") as corpus:
        for document in documents:
            corpus.write(json.dumps(document) + "\n")
    with open(out / "queries.jsonl", "w", encoding="utf-8") as lines:
        for query_id, text in queries.items():
            lines.write(json.dumps({"_id": query_id, "text": text.strip()}) + "\n")
    with open(out / "qrels" / "test.tsv", "w", encoding="utf-8") as judged:
        judged.write("query-id\tcorpus-id\tscore\n")
        for query_id, doc_id, grade in qrels:
            if query_id in queries:
                judged.write(f"{query_id}\t{doc_id}\t{grade}\n")


def documents_of(path: Path) -> list[dict]:
    return [
        {"_id": record["id"], "title": record.get("T", "").strip(), "text": record.get("W", "").strip()}
        for record in smart_records(path)
    ]


def cranfield(raw: Path, out: Path) -> None:
    queries = {
        str(order): record.get("W", "") for order, record in enumerate(smart_records(raw / "cran.qry"), 1)
    }
    qrels = []
    for line in (raw / "cranqrel").read_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].lstrip("-").isdigit() and 1 <= int(parts[2]) <= 4:
            qrels.append((parts[0], parts[1], 5 - int(parts[2])))
    write(out, documents_of(raw / "cran.all.1400"), queries, qrels)


def number(text: str) -> str:
    """A document or query number without leading zeros, as every corpus here names it: CACM's
    ``qrels.text`` writes documents under 1000 as ``0756``, its ``cacm.all`` as ``.I 756``, and a
    judgment must name the document as the corpus does. Anything else is kept as it is."""
    return str(int(text)) if text.isdigit() else text


def pairs(path: Path) -> list[tuple[str, str, int]]:
    """The judged (query, document) pairs of a SMART or TREC judgments file, both as :func:`number`s."""
    return [
        (number(parts[0]), number(parts[1]), 1)
        for parts in (line.split() for line in path.read_text().splitlines())
        if len(parts) >= 2
    ]


def cacm(raw: Path, out: Path) -> None:
    queries = {record["id"]: record.get("W", "") for record in smart_records(raw / "query.text")}
    write(out, documents_of(raw / "cacm.all"), queries, pairs(raw / "qrels.text"))


def cisi(raw: Path, out: Path) -> None:
    """CISI's documents (title and abstract), queries and judgments. Its judgments file gives every
    pair a zero fourth field; a file with scores there is a retrieval run, and read as judgments every
    document it ranks would count as an answer."""
    for line in (raw / "CISI.REL").read_text().splitlines():
        parts = line.split()
        if len(parts) == 4 and float(parts[3]) != 0:
            raise ValueError(
                f"{raw / 'CISI.REL'} scores its pairs ({line.strip()!r}): a retrieval run, not judgments"
            )
    queries = {record["id"]: record.get("W", "") for record in smart_records(raw / "CISI.QRY")}
    write(out, documents_of(raw / "CISI.ALL"), queries, pairs(raw / "CISI.REL"))


#: A TREC document (``<DOC><DOCNO>id</DOCNO> text </DOC>``) and topic (``<num>id</num><title> text``).
_TREC_DOCUMENT = re.compile(r"<DOC>\s*<DOCNO>\s*(\d+)\s*</DOCNO>(.*?)</DOC>", re.DOTALL)
_TREC_TOPIC = re.compile(r"<num>\s*(\d+)\s*</num>\s*<title>(.*?)</title>", re.DOTALL)


def vaswani(raw: Path, out: Path) -> None:
    text = (raw / "doc-text.trec").read_text(encoding="utf-8", errors="replace")
    documents = [
        {"_id": number(doc_id), "title": "", "text": " ".join(body.split())}
        for doc_id, body in _TREC_DOCUMENT.findall(text)
    ]
    topics = (raw / "query-text.trec").read_text(encoding="utf-8", errors="replace")
    queries = {query_id: " ".join(title.split()).lower() for query_id, title in _TREC_TOPIC.findall(topics)}
    qrels = [
        (parts[0], number(parts[2]), 1)
        for parts in (line.split() for line in (raw / "qrels").read_text().splitlines())
        if len(parts) == 4 and parts[3] != "0"
    ]
    write(out, documents, queries, qrels)


def scifact(raw: Path, out: Path) -> None:
    """SciFact's corpus and queries where they are, with the test judgments."""
    source = Path(os.environ.get("SCIFACT", Path(__file__).resolve().parents[3] / "shared/eval/scifact"))
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    for name in ("corpus.jsonl", "queries.jsonl"):
        target = out / name
        if not target.exists():
            target.symlink_to(source / name)
    with open(out / "qrels" / "test.tsv", "w", encoding="utf-8") as judged:
        judged.write("query-id\tcorpus-id\tscore\n")
        for line in (raw / "scifact-test.tsv").read_text().splitlines():
            parts = line.split()
            if len(parts) == 4 and parts[0].isdigit():
                judged.write(f"{parts[0]}\t{parts[2]}\t{parts[3]}\n")


def main() -> int:
    raw, out = Path(sys.argv[1]), Path(sys.argv[2])
    makers = {
        "cranfield": (cranfield, "cran"),
        "cacm": (cacm, "cacm"),
        "cisi": (cisi, "cisi"),
        "vaswani": (vaswani, "vaswani"),
    }
    for name, (make, folder) in makers.items():
        if (raw / folder).is_dir():
            make(raw / folder, out / name)
    if (raw / "scifact-test.tsv").is_file():
        scifact(raw, out / "scifact")
    return 0


if __name__ == "__main__":
    sys.exit(main())
