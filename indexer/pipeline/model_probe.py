"""The model an index's vectors came from, as the index records it.

Vectors of another model of the same dimension pass every check of
:mod:`indexer.backends.vector_check`, and mixed with the index's they make its searches compare
what cannot be compared. So the index records the probe its model was held to (:class:`ModelProbe`),
a backend whose model can change under it (a server's) is held to it from the start of each build,
and each group of files is committed only once the backend has confirmed that every vector it gave
since the last commit came from that model.
"""

from __future__ import annotations

from indexer.backends.base import ModelProbe
from indexer.store.contract import Metadata

#: Where an index records the probe its vectors' model was held to.
MODEL_PROBE_KEY = "model_probe"


def recorded_probe(store: Metadata) -> ModelProbe | None:
    """The probe the index recorded (None for an index without one: a new one, or an older one)."""
    return ModelProbe.from_json(store.get_meta(MODEL_PROBE_KEY))


def probe_meta(probe: ModelProbe) -> dict[str, str]:
    """What records ``probe`` in the index."""
    return {MODEL_PROBE_KEY: probe.as_json()}
