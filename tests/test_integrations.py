"""The LangChain and LlamaIndex retrievers, against the real langchain-core and llama-index-core."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import time

import pytest
from conftest import SAMPLE_CORPUS
from helpers import HashBackend

from indexer import Index

#: every test searches sample_corpus/, whose PDF is read by a worker process (make test-fast leaves them out)
pytestmark = pytest.mark.heavy

METADATA = {
    "citation", "path", "start_line", "end_line", "heading", "root", "score", "locator", "mode", "copies"
}  # fmt: skip


class SlowBackend(HashBackend):
    """Takes ``delay`` seconds to embed, as a real model on a busy machine might."""

    delay = 0.0

    def embed(self, texts: list[str]):
        time.sleep(self.delay)
        return super().embed(texts)


@contextlib.contextmanager
def slowed_backend(delay: float = 0.3):
    """The shared index's backend takes ``delay`` seconds per call inside the block."""
    SlowBackend.delay = delay
    try:
        yield
    finally:
        SlowBackend.delay = 0.0


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    backend = SlowBackend()
    with Index.open(tmp_path_factory.mktemp("frameworks") / "index.db", backend=backend) as opened:
        opened.build(SAMPLE_CORPUS)
        yield opened


async def while_ticking(work) -> tuple[object, int]:
    """Run ``work`` while another task ticks every 10 ms: a blocked event loop gets no ticks."""
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.create_task(tick())
    try:
        return await work, ticks
    finally:
        ticker.cancel()


def test_langchain_retriever_returns_documents_with_citation_metadata(index):
    from langchain_core.documents import Document

    from indexer.integrations.langchain import IndexRetriever

    retriever = IndexRetriever(index=index, k=3, mode="keyword", paths=["bicycle-repair/*"])
    documents = retriever.invoke("puncture tube")
    hits = index.search("puncture tube", k=3, mode="keyword", paths=["bicycle-repair/*"])
    assert documents
    assert all(isinstance(document, Document) for document in documents)
    assert [document.page_content for document in documents] == [hit.text for hit in hits]
    first = documents[0].metadata
    assert set(first) == METADATA
    assert first["path"].startswith("bicycle-repair/")
    assert first["score"] == hits[0].score
    assert first["citation"] == f"{first['path']}:{first['start_line']}-{first['end_line']}"
    assert first["copies"] == [{"citation": copy.citation, "root": copy.root} for copy in hits[0].copies]


def test_langchain_async_retrieval_leaves_the_event_loop_free(index):
    from indexer.integrations.langchain import IndexRetriever

    retriever = IndexRetriever(index=index, k=2, types=["md"])
    with slowed_backend():
        documents, ticks = asyncio.run(while_ticking(retriever.ainvoke("fix a flat tyre")))
    assert len(documents) == 2
    assert all(d.metadata["path"].endswith(".md") for d in documents)
    assert ticks >= 10


def test_langchain_retriever_refuses_bad_settings(index):
    from pydantic import ValidationError

    from indexer.integrations.langchain import IndexRetriever

    with pytest.raises(ValidationError):
        IndexRetriever(index=index, k=0)
    with pytest.raises(ValidationError):
        IndexRetriever(index=index, mode="fuzzy")
    with pytest.raises(ValidationError):
        IndexRetriever(index=index, rerank_top=0)


def test_llama_index_retriever_returns_scored_nodes(index):
    from llama_index.core.schema import NodeWithScore

    from indexer.integrations.llama_index import IndexRetriever

    retriever = IndexRetriever(index=index, k=3, mode="keyword", types=["md"])
    nodes = retriever.retrieve("puncture tube")
    hits = index.search("puncture tube", k=3, mode="keyword", types=["md"])
    assert nodes
    assert all(isinstance(node, NodeWithScore) for node in nodes)
    assert [node.node.get_content() for node in nodes] == [hit.text for hit in hits]
    assert [node.score for node in nodes] == [hit.score for hit in hits]
    assert set(nodes[0].node.metadata) == METADATA
    assert nodes[0].node.metadata["root"] == str(SAMPLE_CORPUS.resolve())


def test_llama_index_async_retrieval_leaves_the_event_loop_free(index):
    from indexer.integrations.llama_index import IndexRetriever

    retriever = IndexRetriever(index=index, k=2, paths=["cooking/*"])
    with slowed_backend():
        nodes, ticks = asyncio.run(while_ticking(retriever.aretrieve("bread dough")))
    assert len(nodes) == 2
    assert all(node.node.metadata["path"].startswith("cooking/") for node in nodes)
    assert ticks >= 10


def test_both_retrievers_apply_the_default_threshold_and_can_lower_it(index):
    from indexer.integrations.langchain import IndexRetriever as LangChainRetriever
    from indexer.integrations.llama_index import IndexRetriever as LlamaIndexRetriever

    # keyword mode is calibrated with any model: nothing in the index answers this question
    assert LangChainRetriever(index=index, mode="keyword").invoke("best pizza in naples") == []
    assert LlamaIndexRetriever(index, mode="keyword").retrieve("best pizza in naples") == []
    assert LangChainRetriever(index=index, mode="keyword", min_score=0).invoke("best pizza in naples")
    assert LlamaIndexRetriever(index, mode="keyword", min_score=0).retrieve("best pizza in naples")


def test_both_retrievers_rerank_when_asked(index):
    from indexer.integrations.langchain import IndexRetriever as LangChainRetriever
    from indexer.integrations.llama_index import IndexRetriever as LlamaIndexRetriever

    options = {"k": 2, "rerank": True, "rerank_top": 3, "min_score": 0}
    hits = index.search("puncture repair", **options)
    documents = LangChainRetriever(index=index, **options).invoke("puncture repair")
    nodes = LlamaIndexRetriever(index, **options).retrieve("puncture repair")
    assert [document.metadata["score"] for document in documents] == [hit.score for hit in hits]
    assert [node.score for node in nodes] == [hit.score for hit in hits]
    assert hits[0].score >= hits[1].score


def test_the_core_imports_no_framework():
    frameworks = ("langchain_core", "llama_index", "fastapi", "mcp")
    probe = (
        "import sys, indexer, indexer.api, indexer.cli\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {frameworks!r}))"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
