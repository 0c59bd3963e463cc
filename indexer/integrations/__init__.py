"""Retrievers for application frameworks, each in its own module and optional extra, so the core
never imports a framework: ``indexer.integrations.langchain`` (``pip install 'indexer-search[langchain]'``)
and ``indexer.integrations.llama_index`` (``pip install 'indexer-search[llamaindex]'``)."""

from __future__ import annotations

from typing import Any

from indexer.request import SearchRequest
from indexer.search.hit import Hit


def hit_metadata(hit: Hit) -> dict[str, Any]:
    """What a framework's document carries besides its text: where it is, how well it matched, and
    where else the same text is (its ``copies``)."""
    return {
        "citation": hit.citation,
        "path": hit.path,
        "start_line": hit.start_line,
        "end_line": hit.end_line,
        "heading": hit.heading,
        "root": hit.root,
        "score": hit.score,
        "locator": hit.locator,
        "mode": hit.mode,
        "copies": [{"citation": copy.citation, "root": copy.root} for copy in hit.copies],
    }


def search_request(query: str, options: object) -> SearchRequest:
    """The request for ``query`` with the options a retriever holds, as attributes named as
    :class:`SearchRequest`'s fields (``k``, ``mode``, ``paths``, ``types``, ``roots``, ``min_score``,
    ``rerank``, ``rerank_top``)."""
    return SearchRequest(query, **{name: getattr(options, name) for name in SearchRequest.options()})
