"""Helpers for the tests that run ``index serve`` and ``index mcp`` as real processes."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
from helpers import index_command

#: This folder, where the tests' support modules (and the plugin backend) live.
SUPPORT = Path(__file__).resolve().parent
REPO = SUPPORT.parent.parent


def plugin_folder(folder: Path) -> Path:
    """A folder that, on ``PYTHONPATH``, installs the ``hash-plugin`` backend the way a package does."""
    return install_backend(folder, "indexer-hash-plugin", "hash-plugin", "plugin_backend:PluginBackend")


def install_backend(folder: Path, distribution: str, kind: str, target: str) -> Path:
    """Install ``target`` ("module:Class") as backend ``kind`` in ``folder`` as a package does: a
    ``.dist-info`` whose ``entry_points.txt`` names it under ``indexer.backends``."""
    info = folder / f"{distribution.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[indexer.backends]\n{kind} = {target}\n")
    return folder


def plugin_env(plugins: Path | None, **extra: str) -> dict[str, str]:
    """The environment of a process that has the plugin installed (or not, with ``plugins`` None)."""
    env = {key: value for key, value in os.environ.items() if key not in ("INDEX_DB", "INDEX_TOKEN")}
    env["PYTHONPATH"] = os.pathsep.join([str(plugins), str(SUPPORT)] if plugins else [str(SUPPORT)])
    env.update(extra)
    return env


def run_index(*args: str, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*index_command(), *args], env=env, capture_output=True, text=True, timeout=timeout)


def build_sample(db: Path, env: dict[str, str], model: str = "plugin-v1") -> Path:
    """Index sample_corpus/ into ``db`` with the plugin backend, in a process of its own."""
    built = run_index(
        "build", str(REPO / "sample_corpus"), "--db", str(db), "--backend", "hash-plugin",
        "--model", model, "-q", env=env,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    return db


class ServerProcess:
    """``index serve --port 0`` in a subprocess (or ``command``, which serves ``db`` on a free port);
    ``url`` once its address file says it listens. ``open_files`` limits its file descriptors, as a
    desktop's default of 1,024 does."""

    def __init__(
        self,
        db: Path,
        *args: str,
        env: dict[str, str],
        log: Path,
        command: list[str] | None = None,
        open_files: int | None = None,
    ) -> None:
        self.db = db
        self.args = args
        self.env = env
        self.log = log
        self.command = command or [*index_command(), "serve", "--db", str(db), "--port", "0", *args]
        self.open_files = open_files
        self.address: dict = {}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.address['port']}"

    @property
    def serve_file(self) -> Path:
        return Path(os.path.realpath(self.db) + ".serve.json")

    def __enter__(self) -> ServerProcess:
        with open(self.log, "w") as log:
            self.process = subprocess.Popen(
                self.command, env=self.env, stdout=log, stderr=subprocess.STDOUT, preexec_fn=self._limit
            )
        deadline = time.monotonic() + 120
        while not self.serve_file.exists() or not self.serve_file.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"index serve did not start: {self.log.read_text()}")
            time.sleep(0.05)
        self.address = json.loads(self.serve_file.read_text())
        return self

    def _limit(self) -> None:
        if self.open_files is not None:
            hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
            resource.setrlimit(resource.RLIMIT_NOFILE, (self.open_files, hard))

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


class Impostor:
    """An HTTP server on loopback that answers every GET as ``index serve`` would (200, a planted hit,
    the instance header of the file it pretends to be) without knowing any secret, and records what
    it is sent: a stand-in for whoever planted an address file, or took a dead server's port."""

    HIT = {"path": "planted.md", "start_line": 1, "end_line": 1, "score": 1.0, "heading": "", "text": "x",
           "root": "/planted", "mode": "hybrid", "vector_score": None, "keyword_score": None,
           "locator": ""}  # fmt: skip

    def __init__(self, instance: str = "feedface") -> None:
        self.instance = instance
        self.requests: list[tuple[str, dict[str, str]]] = []

    def __enter__(self) -> Impostor:
        impostor = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
                impostor.requests.append((self.path, dict(self.headers)))
                body = json.dumps([impostor.HIT]).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("X-Indexer-Instance", impostor.instance)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def plant_address_file(db: Path, mode: int = 0o600, **fields: object) -> Path:
    """An address file beside ``db`` (a ServerAddress's fields, ``fields`` overriding), with ``mode``."""
    address = {"host": "127.0.0.1", "port": 9, "pid": os.getpid(), "instance": "feedface", "index": str(db),
               "token": True, "secret": "00" * 32, **fields}  # fmt: skip
    path = Path(os.path.realpath(db) + ".serve.json")
    path.unlink(missing_ok=True)
    path.write_text(json.dumps(address))
    path.chmod(mode)
    return path
