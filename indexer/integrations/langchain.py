"""A LangChain retriever over an open :class:`indexer.Index` (``pip install 'indexer-search[langchain]'``).

    from indexer import Index
    from indexer.integrations.langchain import IndexRetriever

    retriever = IndexRetriever(index=Index.open("index.db"), k=5, paths=["docs/*"])
    documents = retriever.invoke("how do I rotate keys")      # or: await retriever.ainvoke(...)

Each ``Document`` holds a hit's text; its metadata has ``citation``, ``path``, ``start_line``,
``end_line``, ``heading``, ``root``, ``score``, ``locator`` and ``mode``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from indexer.api import Index
from indexer.integrations import hit_metadata, search_options
from indexer.search import MAX_K, MODES


class IndexRetriever(BaseRetriever):
    """The ``k`` chunks of ``index`` that best match the query, with the filters of
    :meth:`indexer.Index.search` (``mode``, ``paths``, ``types``, ``roots``, ``min_score``)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: Index
    k: int = Field(default=5, ge=1, le=MAX_K)
    mode: str = Field(default="hybrid", pattern="^(" + "|".join(MODES) + ")$")
    paths: list[str] = Field(default_factory=list)
    types: list[str] = Field(default_factory=list)
    roots: list[str] = Field(default_factory=list)
    min_score: float | None = None

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return self._documents(query)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        # the search blocks (SQLite, the model): on a worker thread, the event loop goes on
        return await asyncio.to_thread(self._documents, query)

    def _documents(self, query: str) -> list[Document]:
        options: dict[str, Any] = search_options(
            self.mode, self.paths, self.types, self.roots, self.min_score
        )
        return [
            Document(page_content=hit.text, metadata=hit_metadata(hit), id=f"{hit.root}/{hit.citation}")
            for hit in self.index.search(query, k=self.k, **options)
        ]
