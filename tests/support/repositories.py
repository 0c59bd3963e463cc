"""A small repository as a new user's real one looks: nested ignore files with negations, a secret
in ``.env``, a lockfile, minified and generated files, a virtual environment, a notebook with an
image output, a docs folder named ``env``. Shared by the walk, build and command-line tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import write
from documents import make_notebook

#: The fake key in the repository's ``.env`` and private key: it must never reach an index or output.
FAKE_KEY = "sk-live-7Qx9Zt4Lm2Wv8Kp3Rn6Yb1Hc5Jd0Fg"

#: What a default build indexes of it, exactly.
INDEXED = [
    "README.md",
    "analysis.ipynb",
    "docs/env/setup.md",
    "docs/guide.rst",
    "docs/important.tmp.md",
    "keep.txt",
    "package.json",
    "src/app.js",
]
#: What it leaves out by name or type, with the kind the report gives (ignored paths are only counted).
SKIPPED = {
    ".env.example": "secret",
    "config/server.pem": "secret",
    "logo.png": ".png",
    "report.xlsx": ".xlsx",
}
#: What the ignore files pass over (a folder once): .env, build/, generated/, package-lock.json,
#: src/app.min.js, notes.txt, docs/drafts/, docs/notes.tmp.md, scratch.md (in .git/info/exclude).
IGNORED = 9


def write_repository(folder: Path) -> Path:
    """The repository described above, made a git repository (so ``.git/info/exclude`` is git's)."""
    folder.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    with open(folder / ".git" / "info" / "exclude", "a", encoding="utf-8") as exclude:
        exclude.write("scratch.md\n")
    write(folder / ".gitignore", ".env\nbuild/\ngenerated/\n*.min.js\npackage-lock.json\n*.txt\n!keep.txt\n")
    write(folder / "README.md", "# Demo\n\nThe database password is kept in .env, never in the docs.\n")
    write(folder / ".env", f"DATABASE_PASSWORD={FAKE_KEY}\n")
    write(folder / ".env.example", "DATABASE_PASSWORD=changeme\n")
    write(
        folder / "config" / "server.pem",
        f"-----BEGIN PRIVATE KEY-----\n{FAKE_KEY}\n-----END PRIVATE KEY-----\n",
    )
    write(folder / "package.json", '{"name": "demo", "version": "1.0.0"}\n')
    write(folder / "package-lock.json", '{"lockfileVersion": 3, "packages": {}}\n')
    write(folder / "src" / "app.js", "export function add(a, b) {\n  return a + b;\n}\n")
    write(folder / "src" / "app.min.js", "export function add(a,b){return a+b}\n")
    write(folder / "build" / "guide.md", "# Built copy\n\nA generated page.\n")
    write(folder / "generated" / "api.md", "# Generated API\n\nAutomatic.\n")
    write(folder / "notes.txt", "Ignored notes.\n")
    write(folder / "keep.txt", "Notes kept by a negation.\n")
    write(folder / "scratch.md", "# Scratch\n\nPersonal, excluded in .git/info/exclude.\n")
    write(folder / "docs" / ".gitignore", "drafts/\n*.tmp.md\n!important.tmp.md\n")
    write(folder / "docs" / "guide.rst", "Guide\n-----\n\nIntro.\n\nInstall\n^^^^^^^\n\nRun pip.\n")
    write(folder / "docs" / "drafts" / "wip.md", "# Work in progress\n")
    write(folder / "docs" / "notes.tmp.md", "# Temporary\n")
    write(folder / "docs" / "important.tmp.md", "# Important\n\nKept by a negation in docs/.gitignore.\n")
    write(folder / "docs" / "env" / "setup.md", "# Setting up\n\nA docs folder named env is read.\n")
    write(folder / "venv" / "pyvenv.cfg", "home = /usr/bin\n")
    write(folder / "venv" / "lib" / "site.py", "print('a virtual environment')\n")
    write(folder / "conda" / "conda-meta" / "history", "==> 2024 <==\n")
    write(folder / "conda" / "lib" / "module.py", "print('a conda environment')\n")
    write(folder / "analysis.ipynb", make_notebook([("markdown", "# Analysis"), ("code", "plot(data)")]))
    (folder / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (folder / "report.xlsx").write_bytes(b"PK\x03\x04 a spreadsheet")
    return folder
