"""A backend another package would ship: registered under the ``indexer.backends`` entry point group
by :func:`serving.plugin_folder`, so the CLI can name it (``--backend hash-plugin``) and a server or a
later query finds it again from the index's record."""

from __future__ import annotations

import os
import time

from helpers import HashBackend


class PluginBackend(HashBackend):
    """Hash vectors; ``$PLUGIN_BACKEND_DELAY`` seconds per batch make a build last (for tests that
    search during one)."""

    kind = "hash-plugin"

    def __init__(self, model: str = "plugin-v1") -> None:
        super().__init__(dimension=32, max_tokens=64, model_name=model)
        self.delay = float(os.environ.get("PLUGIN_BACKEND_DELAY", "0"))

    def embed(self, texts: list[str]):
        time.sleep(self.delay)
        return super().embed(texts)

    def config(self) -> dict[str, object]:
        return {"backend": self.kind, "model": self.model_name}
