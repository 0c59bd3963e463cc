"""Secrets inside files: what a build stores and embeds has them replaced by ``[redacted]``.

A repository with 20 secrets planted where users leave them (a config file, notes, a pasted key, a
settings module, a service-account file, a notebook, CI and compose files), built for real; the
index's own bytes (its file and its write-ahead log, read raw) must hold none of them, while prose
about tokens and passwords stays as written and every line keeps its number."""

from __future__ import annotations

import json
import random
import string
import subprocess
from pathlib import Path

import pytest
from conftest import write
from documents import make_notebook
from helpers import HashBackend, index_command

from indexer import Index
from indexer.redaction import REDACTED, redact_text

_RANDOM = random.Random(26)


def token(alphabet: str, length: int) -> str:
    return "".join(_RANDOM.choice(alphabet) for _ in range(length))


ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
BASE64 = ALNUM + "+/"
PEM_BODY = [token(BASE64, 64) for _ in range(6)] + [token(BASE64, 20) + "=="]

#: Each planted secret, as it is written in the files below: none may reach the index.
SECRETS = {
    "config.json api_key": token(HEX, 32),
    "config.json password": token(ALNUM, 10) + "!" + token(ALNUM, 5),
    "notes.md aws access key": "AKIA" + token(string.ascii_uppercase + string.digits, 16),
    "notes.md aws secret key": token(BASE64, 40),
    "notes.md github token": "ghp_" + token(ALNUM, 36),
    "notes.md heading hugging face token": "hf_" + token(string.ascii_letters, 34),
    "pasted-key.txt private key": "\n".join(PEM_BODY),
    "settings.py SECRET_KEY": "django-insecure-" + token(ALNUM + "#!@%^&*", 40),
    "settings.py stripe key": "sk_live_" + token(ALNUM, 24),
    "settings.py database password": token(ALNUM, 14),
    "service-account.json private_key_id": token(HEX, 40),
    "service-account.json private_key": "\\n".join(PEM_BODY),
    "analysis.ipynb openai key": "sk-proj-" + token(ALNUM + "_-", 56),
    "analysis.ipynb output slack token": "xoxb-" + token(string.digits, 12) + "-" + token(ALNUM, 24),
    "deploy.yaml gitlab token": "glpat-" + token(ALNUM + "_-", 20),
    "deploy.yaml slack webhook": f"T{token(ALNUM, 10)}/B{token(ALNUM, 10)}/{token(ALNUM, 24)}",
    "README.rst bearer jwt": ".".join(
        ["eyJhbGciOiJIUzI1NiJ9", "eyJ" + token(ALNUM, 40), token(ALNUM + "_-", 43)]
    ),
    "docker-compose.yml postgres password": token(ALNUM, 20),
    "app.js slack bot token": "xoxb-" + token(string.digits, 11) + "-" + token(ALNUM, 24),
    "pyproject.toml pypi token": "pypi-AgEIcHlwaS5vcmc" + token(ALNUM + "_-", 70),
}
#: Prose and code about secrets that holds none: stored as written.
PROSE = """# Rotating credentials

The token is valid for one hour; pass the password to the login form, never in a URL.
Secret: keep API keys out of the repository, and rotate each access key every 90 days.
Password: at least 12 characters.

    password = os.environ["DB_PASSWORD"]
    token = client.fetch_token(scope="read")
    tokenizer_path = "models/bert-base-v2"
    max_tokens = 4096
    api_key: <your-api-key>
    postgres://user:password@localhost/app
"""


def write_secrets_repository(folder: Path) -> Path:
    """The files users leave secrets in, each secret of :data:`SECRETS` planted once."""
    s = SECRETS
    write(
        folder / "config.json",
        json.dumps(
            {
                "service": "billing",
                "api_key": s["config.json api_key"],
                "db": {"password": s["config.json password"]},
            },
            indent=2,
        ),
    )
    write(
        folder / "notes.md",
        "# Deploy notes\n\n"
        f"The AWS key for the staging bucket is {s['notes.md aws access key']}, with\n"
        f"aws_secret_access_key = {s['notes.md aws secret key']}\n\n"
        f"## Tokens ({s['notes.md heading hugging face token']})\n\n"
        f"CI pushes with my token {s['notes.md github token']} until the bot account exists.\n",
    )
    write(
        folder / "pasted-key.txt",
        "Pasted from the server, to copy to the new one:\n\n-----BEGIN RSA PRIVATE KEY-----\n"
        + s["pasted-key.txt private key"]
        + "\n-----END RSA PRIVATE KEY-----\n\nAfter the key: restart nginx.\n",
    )
    write(
        folder / "settings.py",
        "import os\n\nDEBUG = False\n"
        f'SECRET_KEY = "{s["settings.py SECRET_KEY"]}"\n'
        f"STRIPE_API_KEY = '{s['settings.py stripe key']}'\n"
        f'DATABASE_URL = "postgres://billing:{s["settings.py database password"]}@db.internal/billing"\n',
    )
    write(
        folder / "service-account.json",
        json.dumps(
            {
                "type": "service_account",
                "project_id": "billing-prod",
                "private_key_id": s["service-account.json private_key_id"],
                "private_key": "-----BEGIN PRIVATE KEY-----\n"
                + s["service-account.json private_key"].replace("\\n", "\n")
                + "\n-----END PRIVATE KEY-----\n",
                "client_email": "billing@billing-prod.iam.gserviceaccount.com",
                "token_uri": "https://oauth2.googleapis.com/token",
            },
            indent=2,
        ),
    )
    notebook = json.loads(
        make_notebook(
            [
                ("markdown", "# Churn analysis"),
                ("code", f'import openai\nopenai.api_key = "{s["analysis.ipynb openai key"]}"'),
            ]
        )
    )
    notebook["cells"][1]["outputs"] = [
        {"output_type": "stream", "name": "stdout", "text": [s["analysis.ipynb output slack token"]]}
    ]
    write(folder / "analysis.ipynb", json.dumps(notebook, indent=1))
    write(
        folder / "deploy.yaml",
        "deploy:\n"
        f"  gitlab_token: {s['deploy.yaml gitlab token']}\n"
        f"  notify: https://hooks.slack.com/services/{s['deploy.yaml slack webhook']}\n",
    )
    write(
        folder / "README.rst",
        "Billing\n=======\n\nCall the API with::\n\n"
        f"    curl -H 'Authorization: Bearer {s['README.rst bearer jwt']}' https://billing.internal/v1\n",
    )
    write(
        folder / "docker-compose.yml",
        "services:\n  db:\n    image: postgres:16\n    environment:\n"
        f"      POSTGRES_PASSWORD: {s['docker-compose.yml postgres password']}\n",
    )
    write(folder / "app.js", f'const slack = new WebClient({{ token: "{s["app.js slack bot token"]}" }});\n')
    write(folder / "pyproject.toml", f'[tool.publish]\npypi_token = "{s["pyproject.toml pypi token"]}"\n')
    write(folder / "rotating.md", PROSE)
    return folder


def secret_pieces() -> list[bytes]:
    """Every secret as stored bytes could hold it: whole, and a private key line by line."""
    pieces = []
    for value in SECRETS.values():
        pieces.extend(value.replace("\\n", "\n").split("\n"))
    return [piece.encode() for piece in pieces]


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    return write_secrets_repository(tmp_path / "billing")


def test_twenty_planted_secrets_never_reach_the_index_file_or_its_journal(tmp_path, repository):
    assert len(SECRETS) == 20
    index_path = tmp_path / "index" / "index.db"
    index_path.parent.mkdir()
    index = Index.open(index_path, backend=HashBackend(max_tokens=256))
    try:
        report = index.build(repository, warn=lambda message: None)
        assert report.exit_code == 0
        assert report.files_added == 12
        journal = index_path.with_name("index.db-wal")
        assert journal.exists()  # read while the index is open, before a checkpoint folds it in
        stored = [path.read_bytes() for path in index_path.parent.iterdir()]
        for piece in secret_pieces():
            assert not any(piece in data for data in stored), piece
        texts = [hit.text for hit in index.search("token password key", k=100, mode="keyword", min_score=0)]
    finally:
        index.close()
    assert any(REDACTED in text for text in texts)
    # 19 redacted: the 20th, in the notebook's output, is never read at all
    assert report.secrets_redacted == 19
    for data in [path.read_bytes() for path in index_path.parent.iterdir()]:
        assert not any(piece in data for piece in secret_pieces())


def test_prose_about_tokens_and_passwords_is_stored_as_written(tmp_path):
    folder = tmp_path / "docs"
    write(folder / "rotating.md", PROSE)
    with Index.open(tmp_path / "index.db", backend=HashBackend(max_tokens=512)) as index:
        report = index.build(folder, warn=lambda message: None)
        passage = index.get("rotating.md")
    assert report.secrets_redacted == 0
    assert passage.text == PROSE.rstrip("\n")


def test_redacted_files_keep_their_line_numbers_and_citations(tmp_path, repository):
    with Index.open(tmp_path / "index.db", backend=HashBackend(max_tokens=48)) as index:
        index.build(repository, warn=lambda message: None)
        (hit,) = index.search('"restart nginx"', k=1, mode="keyword")
        whole = index.get("pasted-key.txt")
        settings = index.get("settings.py:5-6")
    lines = (repository / "pasted-key.txt").read_text().split("\n")
    after = lines.index("After the key: restart nginx.") + 1
    assert hit.start_line <= after <= hit.end_line
    assert index_line(hit.text, hit.start_line, "After the key") == after
    assert whole.text.split("\n")[after - 1] == "After the key: restart nginx."
    assert whole.end_line == len(lines) - 1  # as many lines as the file (its final newline ends the last)
    assert whole.text.split("\n")[3:10] == [REDACTED, "", "", "", "", "", ""]
    assert (
        settings.text
        == f"STRIPE_API_KEY = '{REDACTED}'\nDATABASE_URL = \"postgres://billing:{REDACTED}@db.internal/billing\""
    )


def index_line(text: str, start_line: int, starting: str) -> int:
    """The file line number of the line of a chunk's text that starts with ``starting``."""
    return start_line + next(
        number for number, line in enumerate(text.split("\n")) if line.startswith(starting)
    )


def test_allow_secret_indexes_a_file_as_it_is(tmp_path, repository):
    with Index.open(tmp_path / "index.db", backend=HashBackend(max_tokens=512)) as index:
        report = index.build(repository, allow_secrets=["settings.py"], warn=lambda message: None)
        settings = index.get("settings.py").text
        notes = index.get("notes.md").text
    assert SECRETS["settings.py stripe key"] in settings
    assert SECRETS["notes.md github token"] not in notes
    assert report.secrets_redacted == 16


def test_the_build_summary_counts_the_secrets_redacted_and_names_their_lines(tmp_path, repository):
    db = str(tmp_path / "index.db")
    text = subprocess.run(
        [*index_command(), "build", str(repository), "--db", db], capture_output=True, text=True
    )
    assert text.returncode == 0, text.stderr
    assert "19 secrets redacted; " in text.stdout
    assert (
        "warning: notes.md: 4 secrets redacted (assigned-secret, aws-access-key, github-token, "
        "huggingface-token) at lines 3, 4, 6, 8; index it as it is with --allow-secret\n"
    ) in text.stderr
    for piece in secret_pieces():
        assert piece.decode() not in text.stdout + text.stderr
    (repository / "notes.md").write_text("# Deploy notes\n\nNo keys here any more.\n")
    again = subprocess.run(
        [*index_command(), "build", str(repository), "--db", db, "--json"], capture_output=True, text=True
    )
    summary = json.loads(again.stdout.splitlines()[-1])
    assert summary["secrets_redacted"] == 0
    assert "secrets redacted" not in summary["message"]


@pytest.mark.parametrize(
    "text",
    [
        "aws_access_key_id = AKIAZ7QW3RTY5UIO9PLK",
        "export GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "github_pat_11ABCDEFG0123456789abcdefghijklmnopqrstuvwxyz",
        "runner: glrt-Xy9_kLmN3pQr7sTuVw1zAb",
        "SLACK=xoxp-2048-4096-aB3dE5fG7hJ9kL1mN3pQ",
        "stripe.api_key = 'rk_live_4eC39HqLyjWDarjtT1zdp7dc'",
        "key=AIzaSyD4fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5b",
        "OPENAI_API_KEY=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk6lMn9o",
        "NPM_TOKEN=npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
        "SENDGRID=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",
        "bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw7",
        "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=" + "aB3dE5fG7hJ9kL1m" * 5 + "N3pQ5rS7==;",
        'clientSecret: "Zq8vR2mX9tL4nP7w"',
        "-----BEGIN EC PRIVATE KEY-----\n"
        "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oqQ3vFNyZoXDoAoGCCqGSM49\n"
        "-----END EC PRIVATE KEY-----",
    ],
)
def test_each_kind_of_secret_users_meet_is_redacted(text):
    redacted, count = redact_text(text)
    assert count == 1
    assert REDACTED in redacted
    assert redacted.count("\n") == text.count("\n")


@pytest.mark.parametrize(
    "text",
    [
        "AWS documents its sample key AKIAIOSFODNN7EXAMPLE.",
        "let secret_number = rand::thread_rng().gen_range(1..=100);",
        "token_stream: AtomicU32,",
        "if password == 'letmein123':",
        "secret_santa_date: 2024-12-24",
        "password: ${DB_PASSWORD}",
        "const password = 'Password used to generate key';",
        "api_key = settings.STRIPE_API_KEY",
        "See `TokenStream::from_str` for the details.",
    ],
)
def test_code_and_prose_that_only_name_secrets_are_kept(text):
    assert redact_text(text) == (text, 0)
