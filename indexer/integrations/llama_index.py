"""A LlamaIndex retriever over an open :class:`indexer.Index` (``pip install 'indexer-search[llamaindex]'``).

    from indexer import Index
    from indexer.integrations.llama_index import IndexRetriever

    retriever = IndexRetriever(index=Index.open("index.db"), k=5, paths=["docs/*"])
    nodes = retriever.retrieve("how do I rotate keys")        # or: await retriever.aretrieve(...)

Each ``NodeWithScore`` holds a ``TextNode`` with a hit's text and the hit's score; the node's
metadata has ``citation``, ``path``, ``start_line``, ``end_line``, ``heading``, ``root``, ``score``,
``locator`` and ``mode``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from types import SimpleNamespace

from llama_index.core.callbacks import CallbackManager
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from indexer.api import Index
from indexer.integrations import hit_metadata, search_request
from indexer.request import RERANK_TOP


class IndexRetriever(BaseRetriever):
    """The ``k`` chunks of ``index`` that best match the query, with the options of
    :class:`indexer.request.SearchRequest` (``mode``, ``paths``, ``types``, ``roots``, ``min_score``,
    ``rerank``, ``rerank_top``) and the same default threshold as every front end."""

    def __init__(
        self,
        index: Index,
        k: int = 5,
        mode: str = "hybrid",
        paths: Sequence[str] = (),
        types: Sequence[str] = (),
        roots: Sequence[str] = (),
        min_score: float | None = None,
        rerank: bool = False,
        rerank_top: int = RERANK_TOP,
        callback_manager: CallbackManager | None = None,
    ) -> None:
        super().__init__(callback_manager=callback_manager)
        self.index = index
        self.options = search_request(
            "",
            SimpleNamespace(
                k=k,
                mode=mode,
                paths=paths,
                types=types,
                roots=roots,
                min_score=min_score,
                rerank=rerank,
                rerank_top=rerank_top,
            ),
        )

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [
            NodeWithScore(
                node=TextNode(text=hit.text, id_=f"{hit.root}/{hit.citation}", metadata=hit_metadata(hit)),
                score=hit.score,
            )
            for hit in self.index.search(replace(self.options, text=query_bundle.query_str))
        ]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        # the search blocks (SQLite, the model): on a worker thread, the event loop goes on
        return await asyncio.to_thread(self._retrieve, query_bundle)
