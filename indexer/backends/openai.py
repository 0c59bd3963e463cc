"""Embeddings from OpenAI's API or any server that speaks it (TEI, llama.cpp, vLLM, mistral.rs, LM Studio...).

``POST {base_url}/embeddings`` with the whole batch. Vectors come back as float lists or, by default, as
base64 little-endian float32 (fewer bytes, and exact). Items are put back in input order by
their ``index``; an answer whose indexes are not each of 0..n-1 exactly once is refused, since storing
a vector under the wrong chunk would corrupt the index without a trace.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from indexer.backends.http import HttpClient, HttpSettings, recorded_url
from indexer.backends.kinds import BUILTIN_CONCURRENCY
from indexer.backends.remote import HttpBackend, as_recorded, url_list
from indexer.errors import BackendError, ConfigError, VectorCheckError

DEFAULT_OPENAI_URL = "https://api.openai.com/v1"
ENCODING_FORMATS = ("base64", "float")


class OpenAIBackend(HttpBackend):
    """Embed with an OpenAI-compatible ``/embeddings`` endpoint.

    Args:
        model: The model name the server knows, for example ``text-embedding-3-small``.
        base_url: The API root, for example ``http://127.0.0.1:8080/v1``, or a list of API roots that
            serve the same model: batches go to whichever has room (see
            :mod:`indexer.backends.servers`), a question to the first that answers. Each may carry its
            own ``user:password@`` or key in its query string. Default: ``OPENAI_BASE_URL``, else
            ``https://api.openai.com/v1``.
        api_key: Sent as a bearer token; default: the environment variable named by ``api_key_env``.
            Local servers usually need none. Never recorded, logged or shown.
        dimensions: Ask for shorter vectors (models that support it, such as text-embedding-3-*).
        encoding_format: ``"base64"`` (default) or ``"float"``, for servers that refuse base64.
        query_prefix, document_prefix: Override the prefixes known for the model ("" means none).
        api_key_env: The environment variable that holds the key; recorded instead of the key.
        max_tokens: The longest chunk the chunker may make for this model (default 512).
        http: Timeouts and retries (:class:`HttpSettings`).
    """

    kind = "openai"
    default_concurrency = BUILTIN_CONCURRENCY["openai"]
    default_http = HttpSettings()
    command_line_options = ("base_url", "api_key", "dimensions", "query_prefix", "document_prefix")
    needs_model = True

    def __init__(
        self,
        model: str,
        base_url: str | Sequence[str] | None = None,
        api_key: str | None = None,
        *,
        dimensions: int | None = None,
        encoding_format: str = "base64",
        query_prefix: str | None = None,
        document_prefix: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        max_tokens: int | None = None,
        http: HttpSettings = default_http,
    ) -> None:
        if encoding_format not in ENCODING_FORMATS:
            raise ConfigError(
                f"encoding_format must be one of {', '.join(ENCODING_FORMATS)}, not {encoding_format!r}"
            )
        if dimensions is not None and (not isinstance(dimensions, int) or dimensions < 1):
            raise ConfigError(f"dimensions must be a positive whole number, not {dimensions!r}")
        self._setup(model, query_prefix, document_prefix, max_tokens)
        self.dimensions = dimensions
        self.encoding_format = encoding_format
        self.api_key_env = api_key_env
        key = api_key if api_key is not None else os.environ.get(api_key_env)
        urls = url_list(base_url, "base_url") or [os.environ.get("OPENAI_BASE_URL") or DEFAULT_OPENAI_URL]
        self._connect(
            urls,
            http,
            headers={"Authorization": f"Bearer {key}"} if key else None,
            secrets=[key] if key else [],
        )
        #: The API roots as recorded: without credentials, nor secrets in their query strings.
        self.base_urls = tuple(recorded_url(str(client.url)) for client in self.pool.clients)

    @property
    def dimension(self) -> int | None:
        """The vector length asked for with ``dimensions``, else unknown until the first batch."""
        return self.dimensions

    def _embed_on(self, client: HttpClient, texts: list[str]) -> list[Any]:
        """One request for the batch; the vectors in input order."""
        payload: dict[str, Any] = {
            "model": self.model_name,
            "input": texts,
            "encoding_format": self.encoding_format,
        }
        if self.dimensions is not None:
            payload["dimensions"] = self.dimensions
        answer = client.post("/embeddings", payload)
        url = client.endpoint("/embeddings")
        if not isinstance(answer, dict) or not isinstance(answer.get("data"), list):
            raise client.error(BackendError, "answer has no `data` list", url)
        _count_tokens(client, answer.get("usage"))
        return _in_input_order(client, answer["data"], len(texts), url)

    def _vector_options(self) -> dict[str, Any]:
        return {"dimensions": self.dimensions}

    def _server_options(self) -> dict[str, Any]:
        """The key itself is never among them, only ``api_key_env``, the variable it is read from."""
        return {
            "base_url": as_recorded(self.base_urls),
            "encoding_format": self.encoding_format,
            "api_key_env": self.api_key_env,
        }


def _in_input_order(
    client: HttpClient, items: list[Any], count: int, url: str
) -> list[list[float] | np.ndarray]:
    """The items' vectors ordered by their ``index``, which must be each of 0..count-1 exactly once."""
    vectors: dict[int, list[float] | np.ndarray] = {}
    problems: list[str] = []
    for position, item in enumerate(items):
        if not isinstance(item, dict) or "embedding" not in item:
            raise client.error(BackendError, f"answer item {position} has no `embedding`", url)
        index = item.get("index", position)
        if type(index) is not int or not 0 <= index < count:
            problems.append(f"unexpected index {index!r}")
        elif index in vectors:
            problems.append(f"duplicated index {index}")
        else:
            vectors[index] = _decode(client, item["embedding"], position, url)
    problems += [f"missing index {index}" for index in range(count) if index not in vectors]
    if problems:
        shown = ", ".join(problems[:5]) + (f" and {len(problems) - 5} more" if len(problems) > 5 else "")
        raise client.error(VectorCheckError, f"{count} inputs, but the answer has {shown}", url)
    return [vectors[index] for index in range(count)]


def _count_tokens(client: HttpClient, usage: Any) -> None:
    if not isinstance(usage, dict):
        return
    tokens = usage.get("prompt_tokens", usage.get("total_tokens"))
    if isinstance(tokens, int):
        client.add_tokens(tokens)


def _decode(client: HttpClient, embedding: Any, position: int, url: str) -> list[float] | np.ndarray:
    """A float list as it came; a base64 string as the little-endian float32 values it holds."""
    if isinstance(embedding, list):
        return embedding
    if isinstance(embedding, str):
        try:
            raw = base64.b64decode(embedding, validate=True)
        except (binascii.Error, ValueError):
            raw = None
        if raw is not None and len(raw) % 4 == 0:
            return np.frombuffer(raw, dtype="<f4")
    raise client.error(BackendError, f"answer item {position} has an undecodable `embedding`", url)
