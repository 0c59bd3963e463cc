"""The embedded model's tokenizer and input limit with instant vectors: a build chunked as the
default model chunks it, at the cost of a hash per chunk instead of a model (for measuring what goes
in and what the pipeline costs around the model)."""

from __future__ import annotations

import numpy as np

from indexer import EmbeddingBackend
from indexer.backends.embedded import EmbeddedBackend
from support.instant import DIMENSION, instant_vectors


class TokenizerInstantBackend(EmbeddingBackend):
    """The embedded model's tokenizer and input limit, with instant vectors."""

    kind = "bench-instant"
    model_name = "instant-minilm-tokens"

    def __init__(self) -> None:
        self.model = EmbeddedBackend()
        self.max_tokens = self.model.max_tokens

    @property
    def dimension(self) -> int:
        return DIMENSION

    def count_tokens(self, texts: list[str]) -> list[int]:
        return self.model.count_tokens(texts)

    def embed(self, texts: list[str]) -> np.ndarray:
        return instant_vectors(texts)

    def describe(self) -> dict[str, object]:
        return {"backend": self.kind, "model": self.model_name, "dimension": DIMENSION}
