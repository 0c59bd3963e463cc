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

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, model_validator

from indexer.api import Index
from indexer.integrations import hit_metadata, search_request
from indexer.request import HELP, MAX_K, MAX_RERANK_TOP, MODES, RERANK_TOP


class IndexRetriever(BaseRetriever):
    """The ``k`` chunks of ``index`` that best match the query, with the options of
    :class:`indexer.request.SearchRequest` (``mode``, ``paths``, ``types``, ``roots``, ``min_score``,
    ``rerank``, ``rerank_top``) and the same default threshold as every front end."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: Index
    k: int = Field(default=5, ge=1, le=MAX_K, description=HELP["k"])
    mode: str = Field(default="hybrid", pattern="^(" + "|".join(MODES) + ")$", description=HELP["mode"])
    paths: list[str] = Field(default_factory=list, description=HELP["paths"])
    types: list[str] = Field(default_factory=list, description=HELP["types"])
    roots: list[str] = Field(default_factory=list, description=HELP["roots"])
    min_score: float | None = Field(default=None, description=HELP["min_score"])
    rerank: bool = Field(default=False, description=HELP["rerank"])
    rerank_top: int = Field(default=RERANK_TOP, ge=1, le=MAX_RERANK_TOP, description=HELP["rerank_top"])

    @model_validator(mode="after")
    def _checked(self) -> IndexRetriever:
        search_request("", self)  # the request's own checks, at construction
        return self

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
        return [
            Document(page_content=hit.text, metadata=hit_metadata(hit), id=f"{hit.root}/{hit.citation}")
            for hit in self.index.search(search_request(query, self))
        ]
