"""Stage 4: the vector check. Nothing reaches the store without passing it.

One bad row poisons every similarity search made against the index, so a batch is refused whole when
any vector in it is wrong: the wrong count, empty, the wrong dimension, a value that is not finite,
or a zero norm (cosine distance is undefined for it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from indexer.errors import VectorCheckError


def check_vectors(vectors: Any, expected_count: int, dimension: int | None) -> np.ndarray:
    """Return the batch as a float32 matrix of shape (expected_count, dimension), or raise.

    ``dimension`` is the index's; None means the index has none yet (its first batch fixes it).
    Raises :class:`VectorCheckError` naming the first thing wrong.
    """
    rows = _as_rows(vectors)
    if len(rows) != expected_count:
        raise VectorCheckError(f"backend returned {len(rows)} vectors for {expected_count} inputs")
    if expected_count == 0:
        return np.zeros((0, dimension or 0), dtype=np.float32)
    lengths = {len(row) for row in rows}
    if 0 in lengths:
        position = next(i for i, row in enumerate(rows) if len(row) == 0)
        raise VectorCheckError(f"backend returned an empty vector for input {position}")
    if len(lengths) > 1:
        raise VectorCheckError(f"backend returned vectors of different lengths {sorted(lengths)}")
    width = lengths.pop()
    if dimension is not None and width != dimension:
        raise VectorCheckError(f"backend returned vectors of dimension {width}, the index has {dimension}")
    try:
        matrix = np.asarray(rows, dtype=np.float32)
    except (TypeError, ValueError) as error:
        raise VectorCheckError(f"backend returned values that are not numbers ({error})") from error
    finite = np.isfinite(matrix).all(axis=1)
    if not finite.all():
        raise VectorCheckError(
            f"backend returned a vector with NaN or infinity for input {int(np.argmin(finite))}"
        )
    norms = np.linalg.norm(matrix, axis=1)
    if not (norms > 0).all():
        raise VectorCheckError(f"backend returned a zero vector for input {int(np.argmin(norms > 0))}")
    return matrix


def _as_rows(vectors: Any) -> list[Any]:
    """Split what a backend returned into rows without trusting its shape."""
    if isinstance(vectors, np.ndarray):
        if vectors.ndim != 2:
            raise VectorCheckError(f"backend returned an array of {vectors.ndim} dimensions, expected 2")
        return list(vectors)
    if not isinstance(vectors, (list, tuple)):
        raise VectorCheckError(f"backend returned {type(vectors).__name__}, expected a list of vectors")
    rows = list(vectors)
    for position, row in enumerate(rows):
        if isinstance(row, np.ndarray):
            if row.ndim != 1:
                raise VectorCheckError(f"backend returned a malformed vector for input {position}")
        elif not isinstance(row, (list, tuple)):
            raise VectorCheckError(
                f"backend returned {type(row).__name__} for input {position}, not a vector"
            )
    return rows
