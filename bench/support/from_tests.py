"""Modules of the test suite that benchmarks use too: tests/support/postgres_server.py (a
throw-away PostgreSQL with pgvector) and tests/support/loopback.py (servers speaking Ollama's and
OpenAI's protocols).

tests/support/ is neither a package nor installed: pytest puts the folder on ``sys.path`` for the
tests. A benchmark loads the module it needs from there by its file path, here and nowhere else,
rather than putting the folder on its own ``sys.path``, where the suite's ``helpers`` would come
along. So a module loaded this way may import installed packages only, not its neighbours.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SUPPORT = Path(__file__).resolve().parents[2] / "tests" / "support"


def load(name: str) -> ModuleType:
    """tests/support/``name``.py as a module, loaded once per process."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, SUPPORT / f"{name}.py")
    if spec is None or spec.loader is None:
        raise ImportError(f"no module {name} in {SUPPORT}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before it runs, as an import does: dataclasses look their module up there
    spec.loader.exec_module(module)
    return module
