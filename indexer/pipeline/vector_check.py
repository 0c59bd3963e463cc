"""Stage 4: the vector check. Nothing reaches the store without passing it.

One bad row poisons every similarity search made against the index, so a batch is refused whole when
any vector in it is wrong: the wrong count, empty, the wrong dimension, a value that is not finite,
or a zero norm (cosine distance is undefined for it).

Vectors of another model of the same dimension pass every such check, and mixed with the index's
they make its searches compare what cannot be compared. So the index records the probe its model
was held to (:class:`ModelProbe`), a backend whose model can change under it (a server's) is held to
it from the start of each build, and each group of files is committed only once the backend has
confirmed that every vector it gave since the last commit came from that model.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from indexer.backends.base import ModelProbe
from indexer.errors import VectorCheckError
from indexer.store.contract import Metadata

#: Where an index records the probe its vectors' model was held to.
MODEL_PROBE_KEY = "model_probe"


def recorded_probe(store: Metadata) -> ModelProbe | None:
    """The probe the index recorded (None for an index without one: a new one, or an older one)."""
    return ModelProbe.from_json(store.get_meta(MODEL_PROBE_KEY))


def probe_meta(probe: ModelProbe) -> dict[str, str]:
    """What records ``probe`` in the index."""
    return {MODEL_PROBE_KEY: probe.as_json()}


def check_vectors(vectors: Any, expected_count: int, dimension: int | None) -> np.ndarray:
    """Return the batch as a float32 matrix of shape (expected_count, dimension), or raise.

    ``dimension`` is the index's; None means the index has none yet (its first batch fixes it).
    Raises :class:`VectorCheckError` naming the first thing wrong.

    A batch of well-formed rows (the usual case) is checked in one pass: each row's sum of squares
    is finite and above zero exactly when its values are finite and not all zero, so only a batch
    that fails that test (or whose squares overflow float32) is looked at row by row, to name what
    is wrong, with a few operations per batch rather than per row.
    """
    matrix = _uniform_matrix(vectors, expected_count, dimension)
    if matrix is not None:
        with np.errstate(over="ignore"):  # an overflow is judged row by row below
            squares = np.einsum("ij,ij->i", matrix, matrix)
        if np.isfinite(squares).all() and (squares > 0).all():
            return matrix
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


def _uniform_matrix(vectors: Any, expected_count: int, dimension: int | None) -> np.ndarray | None:
    """The batch as a float32 matrix when it is already one, or rows of one length and type (numpy
    float32 arrays, as base64 answers decode, or lists of floats, as JSON ones do), of the expected
    count and dimension; None for anything else, which the row-by-row check then judges."""
    if isinstance(vectors, np.ndarray):
        matrix = vectors if vectors.ndim == 2 else None
    elif isinstance(vectors, list) and vectors:
        first = vectors[0]
        kind, width = type(first), len(first) if isinstance(first, (list, np.ndarray)) else -1
        if width <= 0 or any(type(row) is not kind or len(row) != width for row in vectors):
            return None
        if kind is np.ndarray:
            if any(row.ndim != 1 or row.dtype != np.float32 for row in vectors):
                return None
            matrix = np.stack(vectors)
        else:
            try:
                matrix = np.array(vectors, dtype=np.float32)
            except (TypeError, ValueError):
                return None
    else:
        return None
    if matrix is None or matrix.shape[0] != expected_count or matrix.shape[1] in (0, None):
        return None
    if dimension is not None and matrix.shape[1] != dimension:
        return None
    return np.ascontiguousarray(matrix, dtype=np.float32)


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
