"""Secrets inside files: what a build stores and embeds has them replaced by ``[redacted]``.

A folder with secrets of many kinds planted where users leave them (notes, a README, a Kubernetes
Secret, compose and CI files, JSON config, a service-account file, Django settings, ``.env``-like
lines in a shell script and an INI file (a ``.env`` file itself is never read: see test_ignore),
the AWS console's CSV, a notebook: see ``support/planted_secrets.py``), built for real:
no query in any mode finds one, by its value, its prefix or its key's name; the keyword index, the
stored chunks and the index's own bytes (its file and its write-ahead log, read raw) hold none of
them; prose about tokens and passwords stays as written and every line keeps its number."""

from __future__ import annotations

import json
import subprocess
import time
from collections import Counter
from pathlib import Path

import apsw
import pytest
from conftest import write
from helpers import HashBackend, index_command
from planted_secrets import PROSE, planted_secrets, write_planted_folder

from indexer import Index
from indexer.redaction import REDACTED, find_secrets, redact_text

PLANTED = planted_secrets()
MODES = ("vector", "keyword", "hybrid")


def stored_pieces() -> list[bytes]:
    """Every planted secret as stored bytes could hold it."""
    return [piece.encode() for planted in PLANTED for piece in planted.pieces()]


def secrets_in(path: str) -> int:
    return sum(planted.path == path for planted in PLANTED)


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    return write_planted_folder(tmp_path / "billing", PLANTED)


def test_the_planted_folder_holds_twenty_kinds_in_every_kind_of_file_users_write():
    kinds = {planted.kind for planted in PLANTED}
    assert len(kinds) >= 20
    extensions = {planted.path.rsplit(".", 1)[-1] for planted in PLANTED}
    assert {"md", "yaml", "yml", "json", "py", "sh", "ini", "csv", "ipynb"} <= extensions


def test_no_planted_secret_reaches_the_index_file_its_journal_or_the_model(tmp_path, repository):
    index_path = tmp_path / "index" / "index.db"
    index_path.parent.mkdir()
    backend = HashBackend(max_tokens=256)
    index = Index.open(index_path, backend=backend)
    try:
        report = index.build(repository, warn=lambda message: None)
        assert report.exit_code == 0
        assert report.files_added == len({planted.path for planted in PLANTED}) + 1  # and rotating.md
        journal = index_path.with_name("index.db-wal")
        assert journal.exists()  # read while the index is open, before a checkpoint folds it in
        stored = [path.read_bytes() for path in index_path.parent.iterdir()]
        for piece in stored_pieces():
            assert not any(piece in data for data in stored), piece
    finally:
        index.close()
    embedded = "\n".join(backend.embedded).encode()
    assert REDACTED.encode() in embedded
    assert not any(piece in embedded for piece in stored_pieces())
    assert report.secrets_redacted == len(PLANTED)
    assert report.secrets_by_file == dict(Counter(planted.path for planted in PLANTED))
    for data in [path.read_bytes() for path in index_path.parent.iterdir()]:
        assert not any(piece in data for piece in stored_pieces())


@pytest.mark.heavy
def test_no_planted_secret_is_found_by_its_value_its_prefix_or_its_name_in_any_mode(tmp_path, repository):
    """Built with the real default model: every secret asked for by value, by the first characters
    of it as a prefix search (``word*``), and by its key's name, in the three modes; then the
    keyword index's vocabulary and the stored chunks read directly."""
    index_path = tmp_path / "index.db"
    with Index.open(index_path) as index:
        report = index.build(repository, warn=lambda message: None)
        assert report.secrets_redacted == len(PLANTED)
        found_redacted = False
        for planted in PLANTED:
            prefix = planted.value.replace("\\n", "\n")[:6].strip() + "*"
            for question in (planted.value, prefix, planted.name):
                for mode in MODES:
                    hits = index.search(question, k=20, mode=mode, min_score=0)
                    texts = [f"{hit.heading}\n{hit.text}" for hit in hits]
                    found_redacted |= any(REDACTED in text for text in texts)
                    for piece in planted.pieces():
                        assert not any(piece in text for text in texts), (planted.kind, question, mode)
        assert found_redacted  # the queries did reach the chunks that held the secrets
    connection = apsw.Connection(str(index_path))  # the store's own driver: its FTS5 reads the index
    try:
        connection.execute("CREATE VIRTUAL TABLE temp.terms USING fts5vocab(main, 'chunks_fts', 'row')")
        vocabulary = {term for (term,) in connection.execute("SELECT term FROM temp.terms")}
        stored = "\n".join(
            f"{heading}\n{text}" for heading, text in connection.execute("SELECT heading, text FROM chunks")
        )
        secret_terms = fts_terms(connection, [piece for planted in PLANTED for piece in planted.pieces()])
    finally:
        connection.close()
    assert REDACTED in stored
    assert not any(piece in stored for planted in PLANTED for piece in planted.pieces())
    assert vocabulary and not vocabulary & secret_terms


def fts_terms(connection: apsw.Connection, texts: list[str]) -> set[str]:
    """The keyword index's terms (tokenized as the index tokenizes) of the secrets that are secret
    material: with a digit, or long; not the words around them (``django``, ``insecure``)."""
    connection.execute(
        "CREATE VIRTUAL TABLE temp.probe USING fts5(text, "
        "tokenize = \"porter unicode61 remove_diacritics 2 tokenchars '_'\")"
    )
    connection.executemany("INSERT INTO temp.probe (text) VALUES (?)", [(text,) for text in texts])
    connection.execute("CREATE VIRTUAL TABLE temp.probe_terms USING fts5vocab(temp, 'probe', 'row')")
    terms = {term for (term,) in connection.execute("SELECT term FROM temp.probe_terms")}
    return {term for term in terms if len(term) >= 16 or (len(term) >= 6 and any(c.isdigit() for c in term))}


def test_a_secret_in_a_line_its_reader_reads_otherwise_never_reaches_the_model(tmp_path):
    """An AsciiDoc title is read without its marks and a link macro as its text (Document.read_as),
    from the line as written: a secret there is replaced in what the model reads too."""
    title, link = "ghp_" + "A1b2C3d4E5" * 3 + "f6G7h8", "ghp_" + "Z9y8X7w6V5" * 3 + "u4T3s2"
    folder = tmp_path / "docs"
    write(
        folder / "guide.adoc",
        f"= Guide\n\n== Deploy with {title}\n\nUse link:https://example.com[the key {link}] to deploy.\n",
    )
    backend = HashBackend(max_tokens=256)
    with Index.open(tmp_path / "index.db", backend=backend) as index:
        report = index.build(folder, warn=lambda message: None)
        stored = index.get("guide.adoc").text
    assert report.secrets_redacted == 2
    embedded = "\n".join(backend.embedded)
    assert REDACTED in embedded and "Deploy with" in embedded
    for secret in (title, link):
        assert secret not in embedded and secret not in stored
        assert secret[:12] not in embedded


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
        whole = index.get("deploy-notes.md")
        secret = index.get("secret.yaml")
    lines = (repository / "deploy-notes.md").read_text().split("\n")
    after = lines.index("After the key: restart nginx.") + 1
    begin = lines.index("-----BEGIN RSA PRIVATE KEY-----")
    key_lines = lines.index("-----END RSA PRIVATE KEY-----") - begin - 1
    assert hit.start_line <= after <= hit.end_line
    assert index_line(hit.text, hit.start_line, "After the key") == after
    stored = whole.text.split("\n")
    assert stored[after - 1] == "After the key: restart nginx."
    assert whole.end_line == len(lines) - 1  # as many lines as the file (its final newline ends the last)
    assert stored[begin + 1 : begin + 1 + key_lines] == [REDACTED] + [""] * (key_lines - 1)
    assert stored[begin + 1 + key_lines] == "-----END RSA PRIVATE KEY-----"
    assert secret.text.split("\n")[5:11] == [
        "data:",
        f"  password: {REDACTED}",
        f"  api-token: {REDACTED}",
        "stringData:",
        "  DATABASE_URL: |",
        REDACTED,
    ]


def index_line(text: str, start_line: int, starting: str) -> int:
    """The file line number of the line of a chunk's text that starts with ``starting``."""
    return start_line + next(
        number for number, line in enumerate(text.split("\n")) if line.startswith(starting)
    )


def test_allow_secret_indexes_a_file_as_it_is(tmp_path, repository):
    with Index.open(tmp_path / "index.db", backend=HashBackend(max_tokens=512)) as index:
        report = index.build(repository, allow_secrets=["settings.py"], warn=lambda message: None)
        settings = index.get("settings.py").text
        notes = index.get("deploy-notes.md").text
    kept = [planted for planted in PLANTED if planted.path == "settings.py"]
    assert kept and all(planted.value in settings for planted in kept)
    assert not any(piece in notes for planted in PLANTED for piece in planted.pieces())
    assert report.secrets_redacted == len(PLANTED) - len(kept)
    assert "settings.py" not in report.secrets_by_file


@pytest.mark.heavy
def test_the_build_says_how_many_secrets_it_redacted_in_which_files_and_lines(tmp_path, repository):
    db = str(tmp_path / "index.db")
    text = subprocess.run(
        [*index_command(), "build", str(repository), "--db", db], capture_output=True, text=True
    )
    assert text.returncode == 0, text.stderr
    assert f"{len(PLANTED)} secrets redacted; " in text.stdout
    lines = (repository / "settings.py").read_text().split("\n")
    where = [number for number, line in enumerate(lines, 1) if any(p.value in line for p in PLANTED)]
    assert (
        f"warning: settings.py: {secrets_in('settings.py')} secrets redacted (assigned-secret, openai-key, "
        f"slack-token) at lines {', '.join(map(str, where))}; index it as it is with --allow-secret\n"
    ) in text.stderr
    for piece in stored_pieces():
        assert piece.decode() not in text.stdout + text.stderr
    (repository / "deploy-notes.md").write_text("# Deploy notes\n\nNo keys here any more.\n")
    (repository / "config.json").write_text('{"api_key": "' + "Zq8vR2mX9tL4nP7wK3jH6gF1" + '"}')
    again = subprocess.run(
        [*index_command(), "build", str(repository), "--db", db, "--json"], capture_output=True, text=True
    )
    records = [json.loads(line) for line in again.stdout.splitlines()]
    summary = records[-1]
    assert summary["secrets_redacted"] == 1
    assert summary["secrets_by_file"] == {"config.json": 1}
    assert "1 secret redacted" in summary["message"]
    warned = [record for record in records if record["level"] == "warning"]
    assert [(record["path"], record["message"].split(" (")[0]) for record in warned] == [
        ("config.json", "1 secret redacted")
    ]


@pytest.mark.heavy
def test_an_index_made_by_older_rules_reads_every_file_again_and_loses_what_they_missed(
    tmp_path, repository, monkeypatch
):
    """As an index built before these rules: the same files, read when the rules found less."""
    from indexer import chunking, redaction

    index_path = tmp_path / "index.db"
    missed = next(planted for planted in PLANTED if planted.name == "DATABASE_URL")  # a Secret's block
    monkeypatch.setattr(chunking, "REDACTION_VERSION", redaction.REDACTION_VERSION - 1)
    monkeypatch.setattr(redaction, "_kubernetes_secret_data", lambda data: [])  # the older rules
    with Index.open(index_path, backend=HashBackend(max_tokens=256)) as index:
        index.build(repository, warn=lambda message: None)
        assert missed.value in index.get(missed.path).text
    monkeypatch.undo()
    warnings: list[str] = []
    with Index.open(index_path, backend=HashBackend(max_tokens=256)) as index:
        report = index.build(repository, warn=warnings.append)  # no file changed, no --rebuild
        text = index.get(missed.path).text
        hits = index.search(missed.value, k=20, mode="keyword", min_score=0)
    assert report.exit_code == 0
    assert report.files_changed == len({planted.path for planted in PLANTED}) + 1
    assert warnings[0].startswith(
        f"the chunker changed (chunking.redaction: {redaction.REDACTION_VERSION - 1} -> "
        f"{redaction.REDACTION_VERSION}): every file is read and cut again once"
    )
    assert missed.value not in text
    assert not any(missed.value in hit.text for hit in hits)
    connection = apsw.Connection(str(index_path))
    try:
        connection.execute("CREATE VIRTUAL TABLE temp.terms USING fts5vocab(main, 'chunks_fts', 'row')")
        vocabulary = {term for (term,) in connection.execute("SELECT term FROM temp.terms")}
        assert not vocabulary & fts_terms(connection, [missed.value])
    finally:
        connection.close()


@pytest.mark.parametrize(
    "text",
    [
        "aws_access_key_id = AKIAZ7QW3RTY5UIO9PLK",
        "AKIAZ7QW3RTY5UIO9PLK,wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8vR2mX9t",
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
        "DATABASE_URL=postgres://admin:Hunter2024!@db.example.com:5432/app",
        "SECRET_KEY = '(x9q$w@3e&r^t*y(u)i+o_p-a=s4d5f6g7h8j9k#2m!7z'",
        'DB_PASSWORD="Winter2024!"',
        "password: hunter2hunter2",
        "export PGPASSWORD='c0rrect-h0rse'",
        'settings["api_token"] = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"',
        "    api_key: SecretStr = 'Zq8vR2mX9tL4nP7wK3jH6gF1'",
        "Authorization: Basic ZGVwbG95OlMzY3VyZS1QYTU1",
        "kind: Secret\ndata:\n  tls.key: LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0t\n",
        "VAULT_TOKEN=hvs.CAESIJ" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5b" * 3,
        "AZURE_CLIENT_SECRET=Abc8Q~aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY",
        "age: AGE-SECRET-KEY-1QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF",
        'password = "kJ8s|Lm2x9QwZ"',  # a bar, as a type union writes one, in a quoted password
        'token = "aB3dE|fG6hI|jK9lM"',
        "DB_PASSWORD=?Xk9fj2lQ8zR",  # a question mark first, as a nullable type starts
    ],
)
def test_each_kind_of_secret_users_meet_is_redacted(text):
    redacted, count = redact_text(text)
    assert count == 1 + text.startswith("AKIA")  # the key ID and its secret key beside it
    assert REDACTED in redacted
    assert redacted.count("\n") == text.count("\n")


def test_a_password_in_typographic_quotes_is_redacted_up_to_them():
    assert redact_text("Log in with “password=Winter2024!”, then change it.") == (
        f"Log in with “password={REDACTED}”, then change it.", 1)  # fmt: skip


@pytest.mark.parametrize(
    "text",
    ["password=Blue/Sky", "db_password: correct/Horse/battery", "password=P4ss»word99",
     "password=”Winter2024!”", "PASSWORD=»Geheim2024«", "password=Winter2024’sX!",
     "api_key=AbCdEf123456’GhIjKl7890mnOPqr"],
)  # fmt: skip
def test_a_quote_or_a_slash_inside_a_secret_is_the_secret_s(text):
    redacted, count = redact_text(text)
    assert count == 1 and redacted.endswith(REDACTED)


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
        "password_min_length: 12",
        "token_type: bearer",
        "POSTGRES_PASSWORD: mysecretpassword",
        "postgres://user:password@localhost/app",
        "amqp://guest:guest@rabbit:5672/",
        "OPENAI_API_KEY=sk-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "password: {{ .Values.db.password }}",
        'password = "********"',
        "public_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGmKp2Vq0xQ0Vw3m1Yh2cJ7k9L3fN8rT6bD4sE5aW1uZ",
        "csrf_token = '8d1f0c4b7a2e9f6d3c5b8a1e4f7d0c3b'",
        "password_file: /run/secrets/db_password",
        "DB_PASSWORD: DB_PASSWORD",
        "The Basic authentication scheme sends the user name and password.",
        "primary_key: 'a1b2c3d4e5f6g7h8'",
        "key: value",
        "git commit 9fceb02d0ae598e95dc970b74767f19372d61af8 by AKIAIOSFODNN7EXAMPLE",
        "you can pass :class:`~pathlib.Path` objects",
        "then you can pass :option:`--log-file-mode=a` instead.",
        "pass {option}`--log-file-mode` as well",
        "‘--http-password=PASSWORD’",  # a manual's option, its value a placeholder in quotes
        "equivalent to ‘--http-password=STRING’.",  # and before the sentence's stop
        "like ‘--proxy-password=STRING’, or",
        "Set the password with --password=PASSWORD.",
        "ask_password = on/off",
        " *     password: string|null",  # PHPDoc's array shape: types, no values
        "password: ?string",
    ],
)
def test_code_and_prose_that_only_name_secrets_are_kept(text):
    assert redact_text(text) == (text, 0)


#: Text made to slow a scanner down: long runs of token characters, many assignments to secret names,
#: nested quotes, unfinished keys and URLs, many AWS key IDs, a Kubernetes Secret of many lines.
HOSTILE = {
    "a run of token characters": lambda n: "a" * n,
    "a token's prefix before a long run": lambda n: "sk-" + "Ab1" * (n // 3),
    "names assigned at every line": lambda n: "key=\n" * (n // 5),
    "names given values at every line": lambda n: "".join(f"api_key{i}=x{i}\n" for i in range(n // 16)),
    "secret names without a value": lambda n: "password" * (n // 8),
    "secret names and spaces": lambda n: "api_key " * (n // 8),
    "nested quotes": lambda n: "password = \"'" * (n // 13),
    "unfinished key blocks": lambda n: "-----BEGIN " + "A " * (n // 2),
    "URLs without a host": lambda n: "://a:" * (n // 5),
    "bearers without a credential": lambda n: "Bearer " * (n // 7),
    "AWS key IDs": lambda n: "AKIAZ7QW3RTY5UIO9PLK " * (n // 21),
    "a Kubernetes Secret": lambda n: "kind: Secret\ndata:\n" + "  k: |\n    v\n" * (n // 14),
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", HOSTILE)
def test_the_scanner_is_linear_in_hostile_text_and_keeps_its_lines(kind):
    small, large = (HOSTILE[kind](size).encode() for size in (256 * 1024, 1024 * 1024))
    seconds = scan_seconds([small, large], 3)
    # a quadratic scan takes minutes here; a linear one a second at most, four times the time of a
    # quarter of the text (three times that allowed for a loaded machine)
    assert seconds[1] < 20.0, f"{seconds[1]:.2f} s for a megabyte"
    assert seconds[1] < 4 * 3 * max(seconds[0], 0.01), seconds
    redacted, _ = redact_text(small.decode())
    assert redacted.count("\n") == small.count(b"\n")


def scan_seconds(texts: list[bytes], times: int) -> list[float]:
    """Each text's quickest of a few scans, the texts taking turns: a loaded machine slows one scan,
    not all, and a spell of load falls on every text alike instead of on the larger alone."""
    seconds: list[list[float]] = [[] for _ in texts]
    for _ in range(times):
        for text, taken in zip(texts, seconds, strict=True):
            started = time.perf_counter()
            find_secrets(text)
            taken.append(time.perf_counter() - started)
    return [min(taken) for taken in seconds]
