"""The cut-off point between the pipeline and whatever computes vectors.

A backend turns a batch of texts into one vector per text. Everything else (batching, checking the
vectors, storing them) is the pipeline's job, so a backend stays small. The base class refuses to
embed: a backend that cannot embed must say so by raising, never by returning empty vectors.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: Counts the tokens of each text, as :meth:`EmbeddingBackend.count_tokens` does.
TokenCounter = Callable[[list[str]], list[int]]


def estimate_tokens(texts: list[str]) -> list[int]:
    """A conservative token count for a model whose tokenizer is not at hand: one per 3 bytes."""
    return [len(text.encode("utf-8")) // 3 + 1 for text in texts]


@dataclass(frozen=True)
class ModelProbe:
    """A text and the vector a model gave it (float32, little-endian): what a backend whose model
    can change under it (a server's) holds every answer to. An index records the one its vectors
    were made with, so that a later build holds its servers to that model."""

    text: str
    vector: bytes

    def as_json(self) -> str:
        return json.dumps({"text": self.text, "vector": base64.b64encode(self.vector).decode("ascii")})

    @classmethod
    def from_json(cls, recorded: str | None) -> ModelProbe | None:
        """The probe an index recorded; None when it recorded none (or one that cannot be read:
        the build then records a new one)."""
        if recorded is None:
            return None
        try:
            fields = json.loads(recorded)
            return cls(str(fields["text"]), base64.b64decode(fields["vector"], validate=True))
        except (ValueError, KeyError, TypeError, binascii.Error):
            return None


class EmbeddingBackend:
    """Base class for embedding backends.

    Subclasses override :meth:`embed` and set :attr:`model_name`. Optional hooks let the pipeline
    do better work: :meth:`count_tokens` lets the chunker measure chunks in the model's own tokens,
    :attr:`max_tokens` is the model's input limit, and :meth:`describe` names everything that
    changes a vector so the index can fingerprint the build.
    """

    #: Short name of the backend kind ("embedded", "ollama", "openai", ...).
    kind: str = "base"
    #: The model that computes the vectors; recorded in the index.
    model_name: str = ""
    #: The longest input, counted as :meth:`count_tokens` counts (special tokens excluded), that is
    #: embedded whole; the chunker keeps every chunk at or under it.
    max_tokens: int = 512
    #: Batches this backend handles well at once (the pipeline keeps this many in flight).
    default_concurrency: int = 1
    #: Prefixes some models need to tell a search query from a document.
    query_prefix: str = ""
    document_prefix: str = ""
    #: The server settings ``index build`` may give this kind besides ``--model`` (the fields of the
    #: CLI's server options: ``base_url``, ``api_key``, ``dimensions``, ``query_prefix``,
    #: ``document_prefix``), handed to :meth:`from_command_line`; any other is a usage error.
    command_line_options: tuple[str, ...] = ()
    #: Whether ``index build --backend KIND`` must name a model.
    needs_model: bool = False
    #: Whether the vectors are computed away from this machine's cores (by servers): a build may
    #: then give every core but one to reading and chunking (``BuildOptions.workers``).
    embeds_remotely: bool = False

    def embed(self, texts: list[str]) -> Any:
        """Return one vector per text, in input order (a list of lists or a 2-D numpy array).

        Raise :class:`indexer.errors.BackendError` (or a subclass) when the batch cannot be embedded.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot embed text")

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Number of tokens each text costs; the default is a conservative estimate (one per 3 bytes)."""
        return estimate_tokens(texts)

    def token_counter(self) -> TokenCounter | None:
        """:meth:`count_tokens` as a function that can be sent (pickled) to a worker process, which
        reads and chunks files there; None when it cannot leave this process: the build then reads
        and chunks in this process. A backend that overrides :meth:`count_tokens` overrides this too
        to let its files be chunked by workers."""
        return estimate_tokens if type(self).count_tokens is EmbeddingBackend.count_tokens else None

    @property
    def dimension(self) -> int | None:
        """The vector length when known before the first call, else None (learned from the first batch)."""
        return None

    def config(self) -> dict[str, Any]:
        """JSON-safe settings that recreate this backend with :func:`indexer.backends.make_backend`.

        Recorded in the index so a query embeds with the same model. Never holds a secret.
        """
        return {"backend": self.kind, "model": self.model_name}

    @classmethod
    def from_command_line(cls, model: str | None, **options: Any) -> EmbeddingBackend:
        """The backend ``index build --backend KIND --model MODEL`` names, with the given
        :attr:`command_line_options`; by default made as its recorded config would be."""
        return cls.from_config({"model": model, **options} if model is not None else dict(options))

    @classmethod
    def from_config(cls, options: dict[str, Any], one_shot: bool = False) -> EmbeddingBackend:
        """The backend that :meth:`config` recorded as ``options`` (its keys but ``backend``).

        ``one_shot`` says the process will embed a text or two (a one-off query); a backend that can
        start faster for that, or whose options need more than keyword arguments, overrides this.
        """
        return cls(**options)

    def describe(self) -> dict[str, Any]:
        """Everything about this backend that changes the vectors it makes (goes into the fingerprint)."""
        return {"backend": self.kind, "model": self.model_name}

    def hold_to_model(self, probe: ModelProbe | None) -> None:
        """From now on, refuse answers of another model than the one that gave ``probe`` (the one
        the index recorded; None: this build's first answer sets it). The default, for a backend
        whose model cannot change under it (the in-process model), has nothing to check."""

    def confirm_model(self) -> ModelProbe | None:
        """Make sure every vector returned since the last call came from the model held to, before
        the pipeline stores them: raises :class:`indexer.errors.BackendUnreachableError` (a server
        switched models) or :class:`indexer.errors.SettingsChangedError` (the index's model is no
        longer served). Returns the probe held to, for the index to record (None: none)."""
        return None

    def usage(self) -> dict[str, int]:
        """Requests and tokens spent since the backend was made (for the build report)."""
        return {"requests": 0, "tokens": 0}

    def requests_by_server(self) -> dict[str, int]:
        """Requests sent to each server since the backend was made, by the server's URL (without
        credentials); empty for a backend without servers."""
        return {}

    def close(self) -> None:
        """Release connections or sessions; the default has nothing to release."""

    def __enter__(self) -> EmbeddingBackend:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
