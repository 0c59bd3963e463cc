"""The prefixes some embedding models were trained with to tell a search query from a document.

Such a model gives noticeably worse results without them, and a wrong or missing prefix fails silently,
so the known models get theirs by default. A backend records the resolved prefixes in its config and
description; the pipeline puts :attr:`Prefixes.document` before every chunk and the search puts
:attr:`Prefixes.query` before the question. The backends never add them themselves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Prefixes:
    """The text to put before a search query and before a document."""

    query: str = ""
    document: str = ""


_RETRIEVAL_INSTRUCTION = "Represent this sentence for searching relevant passages: "
_E5_INSTRUCT = "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: "

#: Model families and their prefixes, matched against :func:`model_base_name`; the first match wins,
#: so the narrower patterns come first.
KNOWN_PREFIXES: tuple[tuple[re.Pattern[str], Prefixes], ...] = tuple(
    (re.compile(pattern), prefixes)
    for pattern, prefixes in (
        (r"^nomic-embed-text", Prefixes("search_query: ", "search_document: ")),
        (r"^embeddinggemma", Prefixes("task: search result | query: ", "title: none | text: ")),
        # The instruction-tuned E5 models take an instruction on queries and nothing on documents.
        (r"^e5-mistral|^multilingual-e5-.*instruct", Prefixes(_E5_INSTRUCT, "")),
        (r"^(multilingual-)?e5-", Prefixes("query: ", "passage: ")),
        (r"^mxbai-embed-large", Prefixes(_RETRIEVAL_INSTRUCTION, "")),
        # Ollama's "bge-large" is BAAI/bge-large-en-v1.5.
        (r"^bge-(small|base|large)-en-v1\.5$|^bge-large$", Prefixes(_RETRIEVAL_INSTRUCTION, "")),
        (r"^snowflake-arctic-embed-?2|^snowflake-arctic-embed-[a-z]+-v2", Prefixes("query: ", "")),
        (r"^snowflake-arctic-embed", Prefixes(_RETRIEVAL_INSTRUCTION, "")),
    )
)


def model_base_name(model: str) -> str:
    """The model's own name without owner, registry, tag or packaging.

    ``nomic-ai/nomic-embed-text-v1.5`` → ``nomic-embed-text-v1.5``; ``embeddinggemma:300m`` →
    ``embeddinggemma``; ``hf.co/user/bge-small-en-v1.5-GGUF:Q8_0`` → ``bge-small-en-v1.5``.
    """
    name = model.strip().lower().rsplit("/", 1)[-1].split(":", 1)[0]
    return name.removesuffix("-gguf")


def known_prefixes(model: str) -> Prefixes | None:
    """The prefixes ``model`` was trained with, or None when it is not a model we know to need them."""
    name = model_base_name(model)
    for pattern, prefixes in KNOWN_PREFIXES:
        if pattern.search(name):
            return prefixes
    return None


def resolve_prefixes(model: str, query_prefix: str | None, document_prefix: str | None) -> Prefixes:
    """The prefixes to use: each one given explicitly (an empty string included) wins over the table."""
    known = known_prefixes(model) or Prefixes()
    return Prefixes(
        query=known.query if query_prefix is None else query_prefix,
        document=known.document if document_prefix is None else document_prefix,
    )
