"""The length a build's vectors must have: the index's when it has one, else the first batch's.

The index's dimension is fixed by its first commit, not its first batch, so a misbehaving answer
that stores nothing fixes nothing. Vectors of another length than the index's mean the model
changed: a settings change (``--rebuild``), not a bad batch.
"""

from __future__ import annotations

from typing import Any

from indexer.backends.vector_check import check_vectors
from indexer.errors import SettingsChangedError, VectorCheckError


class Dimensions:
    """Checks every batch (:func:`indexer.backends.vector_check.check_vectors`) and its vectors' length."""

    def __init__(self, recorded: int | None) -> None:
        self.recorded = recorded
        #: the dimension of this build's vectors, once a batch has passed; the first commit records it
        self.found: int | None = recorded

    def check(self, vectors: Any, count: int) -> list[bytes]:
        """A batch's vectors as float32 blobs, or an error saying what is wrong with them."""
        matrix = check_vectors(vectors, count, None)
        width = matrix.shape[1]
        if self.recorded is not None and width != self.recorded:
            raise SettingsChangedError(
                f"the backend now returns vectors of dimension {width}, the index holds "
                f"{self.recorded} (the model changed?)",
                f"dimension: {self.recorded} -> {width}",
            )
        if self.found is None:
            self.found = width
        elif width != self.found:
            raise VectorCheckError(
                f"backend returned vectors of dimension {width}, earlier batches had {self.found}"
            )
        return [row.tobytes() for row in matrix]
