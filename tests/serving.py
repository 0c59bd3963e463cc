"""Helpers for the tests that run ``index serve`` and ``index mcp`` as real processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import httpx
from helpers import index_command

TESTS = Path(__file__).resolve().parent


def plugin_folder(folder: Path) -> Path:
    """A folder that, on ``PYTHONPATH``, installs the ``hash-plugin`` backend the way a package does:
    a ``.dist-info`` whose ``entry_points.txt`` names it under ``indexer.backends``."""
    info = folder / "indexer_hash_plugin-1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: indexer-hash-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[indexer.backends]\nhash-plugin = plugin_backend:PluginBackend\n")
    return folder


def plugin_env(plugins: Path | None, **extra: str) -> dict[str, str]:
    """The environment of a process that has the plugin installed (or not, with ``plugins`` None)."""
    env = {key: value for key, value in os.environ.items() if key not in ("INDEX_DB", "INDEX_TOKEN")}
    env["PYTHONPATH"] = os.pathsep.join([str(plugins), str(TESTS)] if plugins else [str(TESTS)])
    env.update(extra)
    return env


def run_index(*args: str, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*index_command(), *args], env=env, capture_output=True, text=True, timeout=timeout)


def build_sample(db: Path, env: dict[str, str], model: str = "plugin-v1") -> Path:
    """Index sample_corpus/ into ``db`` with the plugin backend, in a process of its own."""
    built = run_index(
        "build", str(TESTS.parent / "sample_corpus"), "--db", str(db), "--backend", "hash-plugin",
        "--model", model, "-q", env=env,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    return db


class ServerProcess:
    """``index serve --port 0`` in a subprocess; ``url`` once its address file says it listens."""

    def __init__(self, db: Path, *args: str, env: dict[str, str], log: Path) -> None:
        self.db = db
        self.args = args
        self.env = env
        self.log = log
        self.address: dict = {}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.address['port']}"

    @property
    def serve_file(self) -> Path:
        return Path(os.path.realpath(self.db) + ".serve.json")

    def __enter__(self) -> ServerProcess:
        command = [*index_command(), "serve", "--db", str(self.db), "--port", "0", *self.args]
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(command, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while not self.serve_file.exists() or not self.serve_file.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"index serve did not start: {self.log.read_text()}")
            time.sleep(0.05)
        self.address = json.loads(self.serve_file.read_text())
        return self

    def get(self, path: str, **options) -> httpx.Response:
        return httpx.get(self.url + path, timeout=30, **options)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=30)

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def output(self) -> str:
        return self.log.read_text()
