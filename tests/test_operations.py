"""The re-index job as an operator runs and watches it: status with dates and durations, logs a
machine can read, progress that moves, removing a folder, and the CLI conventions of git and grep."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import REPO, write
from helpers import HashBackend, index_command, write_corpus
from loopback import OllamaServer

from indexer import Index
from indexer.cli import main
from indexer.progress import Progress

SUPPORT = Path(__file__).resolve().parent / "support"
ISO_TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d"


def cli(*args: str, input: str | None = None):
    return CliRunner().invoke(main, list(args), input=input)


def build(index_path, folder, **options):
    with Index.open(index_path) as index:
        return index.build(folder, backend=HashBackend(), warn=lambda message: None, **options)


def as_in_a_terminal() -> None:
    """Run in the child before it starts: Ctrl-C delivered as to a command typed at a terminal, even
    when the tests themselves run as a background job (which starts its children ignoring SIGINT,
    and the CLI rightly keeps ignoring it then)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def ollama_build(folder: Path, index_path: Path, server: OllamaServer, *extra: str) -> subprocess.Popen:
    command = [*index_command(), "build", str(folder), "--db", str(index_path), "--backend", "ollama"]
    command += ["--model", "nomic-embed-text", "--base-url", server.url, "--batch-size", "2", *extra]
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=as_in_a_terminal
    )


# -- status ---------------------------------------------------------------------------------------


def test_status_shows_when_each_build_ran_how_long_and_the_size_of_the_index(tmp_path, docs):
    index_path = tmp_path / "index.db"
    build(index_path, docs)
    build(index_path, docs)
    text = cli("status", "--db", str(index_path))
    assert text.exit_code == 0, text.output
    assert re.search(r"index\s+\S+index\.db \(\d+\.\d MB\)", text.stdout)
    assert re.search(rf"build #2 {ISO_TIME}  [\d.]+ s  ok: \+0 ~0 -0 files", text.stdout)
    assert re.search(rf"root\s+{re.escape(str(docs))}  \(3 files, \d+ chunks\)", text.stdout)
    info = json.loads(cli("status", "--db", str(index_path), "--json").stdout)
    assert info["size_bytes"] > 0
    assert info["roots"][0]["files"] == 3
    newest = info["builds"][0]
    assert datetime.fromisoformat(newest["finished_at"]) >= datetime.fromisoformat(newest["started_at"])
    assert 0 <= newest["seconds"] < 60


@pytest.mark.heavy
def test_a_build_killed_shows_as_interrupted_at_once_to_any_reader(tmp_path):
    folder = write_corpus(tmp_path / "docs", 200, paragraphs=1)
    index_path = tmp_path / "index.db"
    worker = subprocess.Popen(
        [sys.executable, str(SUPPORT / "build_worker.py"), str(index_path), str(folder), "--delay", "0.05"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert worker.stdout.readline().strip() == "started"
    running = json.loads(cli("status", "--db", str(index_path), "--json").stdout)["builds"][0]
    assert running["outcome"] == "running"
    assert running["pid"] == worker.pid
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    after = json.loads(cli("status", "--db", str(index_path), "--json").stdout)["builds"][0]
    assert after["outcome"] == "interrupted"  # no other build needed to notice


@pytest.mark.heavy
def test_a_killed_builds_duration_ends_when_it_was_last_seen_alive(tmp_path, any_index):
    folder = write_corpus(tmp_path / "docs", 200, paragraphs=1)
    command = [sys.executable, str(SUPPORT / "build_worker.py"), str(any_index), str(folder)]
    launched = time.monotonic()
    worker = subprocess.Popen(
        [*command, "--delay", "0.05", "--commit-seconds", "0.1"], stdout=subprocess.PIPE
    )
    assert worker.stdout.readline().strip() == b"started"
    time.sleep(1.0)
    worker.send_signal(signal.SIGKILL)
    worker.wait()
    lived = time.monotonic() - launched
    with Index.open(any_index, create=False) as index:
        killed = index.status()["builds"][0]
        time.sleep(1.0)
        later = index.status()["builds"][0]
    assert killed["outcome"] == later["outcome"] == "interrupted"
    assert killed["finished_at"] is None
    assert 0.9 <= killed["seconds"] <= lived  # from its start to its last commit, a tenth of a second apart
    assert later["seconds"] == killed["seconds"]  # not the time since it started


def build_stopped_by(tmp_path: Path, sent: signal.Signals) -> tuple[subprocess.Popen, str, Path]:
    """A CLI build against a slow server, sent ``sent`` once its first batch is asked for: the
    process (ended), its stderr and its index."""
    folder = write_corpus(tmp_path / "docs", 40)
    index_path = tmp_path / "index.db"
    with OllamaServer(latency=0.2) as server:
        builder = ollama_build(folder, index_path, server)
        deadline = time.monotonic() + 60
        while not server.requests and time.monotonic() < deadline:
            time.sleep(0.02)
        builder.send_signal(sent)
        _, stderr = builder.communicate(timeout=60)
    return builder, stderr, index_path


@pytest.mark.heavy
def test_sigterm_stops_a_build_that_records_it_was_interrupted(tmp_path):
    builder, stderr, index_path = build_stopped_by(tmp_path, signal.SIGTERM)
    assert builder.returncode == 128 + signal.SIGTERM
    assert stderr.strip() == "error: interrupted (SIGTERM)"
    info = json.loads(cli("status", "--db", str(index_path), "--json").stdout)
    assert info["builds"][0]["outcome"] == "interrupted"
    assert info["builds"][0]["finished_at"]


@pytest.mark.heavy
def test_ctrl_c_stops_a_build_with_130_and_a_plain_message(tmp_path):
    builder, stderr, _ = build_stopped_by(tmp_path, signal.SIGINT)
    assert builder.returncode == 128 + signal.SIGINT
    assert stderr.strip() == "error: interrupted (Ctrl-C)"


# -- logs a machine can read ----------------------------------------------------------------------


def readme_cron_line() -> str:
    """The command of the cron recipe in docs/operations.md (after the five schedule fields)."""
    line = next(
        line
        for line in (REPO / "docs" / "operations.md").read_text().splitlines()
        if line.strip().startswith("*/10")
    )
    return line.split(None, 5)[5]


def run_cron_line(site: Path) -> list[dict]:
    """The manual's cron command with /srv/wiki as ``site``, in an empty environment, as cron runs it."""
    command = readme_cron_line().replace("/srv/wiki/.venv/bin/index", shlex.join(index_command()))
    command = command.replace("/srv/wiki", str(site))
    subprocess.run(["env", "-i", "PATH=/usr/bin:/bin", "sh", "-c", command], check=False, timeout=120)
    return [json.loads(line) for line in (site / "index.log").read_text().splitlines()]


@pytest.mark.heavy
def test_the_readme_cron_line_writes_json_lines_only_even_when_the_backend_fails(tmp_path):
    site = tmp_path / "wiki"
    write_corpus(site / "docs", 5)
    with OllamaServer() as server:
        first = ollama_build(site / "docs", site / "index.db", server)
        assert first.wait(timeout=60) == 0, first.stderr.read()
        ok = run_cron_line(site)
    write(site / "docs" / "new.md", "# New\n\nA page added while the server is down.\n")
    failed = run_cron_line(site)[len(ok) :]  # the server is gone: the backend is unreachable
    assert ok[-1]["exit_code"] == 0
    assert ok[-1]["files_unchanged"] == 5
    assert failed[-1]["exit_code"] == 4
    assert failed[-1]["level"] == "info"
    assert any(line["level"] == "error" and line["path"] == "new.md" for line in failed)
    for line in ok + failed:
        assert re.fullmatch(ISO_TIME, line["time"])
        assert line["level"] in ("info", "warning", "error")
    summary = failed[-1]
    assert re.fullmatch(ISO_TIME, summary["started_at"])
    assert summary["seconds"] >= 0


def test_a_configuration_error_with_json_is_a_json_line_and_stderr_stays_empty(tmp_path):
    result = CliRunner().invoke(
        main, ["build", str(tmp_path / "typo"), "--db", str(tmp_path / "i.db"), "--json"]
    )
    assert result.exit_code == 2
    assert result.stderr == ""
    line = json.loads(result.stdout)
    assert line["level"] == "error"
    assert "typo" in line["message"]
    assert line["exit_code"] == 2
    assert list(tmp_path.iterdir()) == []  # a typo creates nothing


@pytest.mark.heavy
def test_watch_json_lines_carry_a_time_and_sigterm_ends_it_with_one(tmp_path, docs):
    command = [*index_command(), "watch", str(docs), "--db", str(tmp_path / "index.db"), "--json"]
    watcher = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = json.loads(watcher.stdout.readline())
    watcher.send_signal(signal.SIGTERM)
    rest, stderr = watcher.communicate(timeout=60)
    assert re.fullmatch(ISO_TIME, first["time"])
    assert first["files_added"] == 3
    assert first["exit_code"] == 0
    last = json.loads(rest.splitlines()[-1])
    assert last["level"] == "error"
    assert last["message"] == "interrupted (SIGTERM)"
    assert stderr == ""
    assert watcher.returncode == 128 + signal.SIGTERM


@pytest.mark.heavy
@pytest.mark.parametrize(
    ("signal_number", "name"),
    [(signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "Ctrl-C")],
    ids=["sigterm", "ctrl-c"],
)
def test_watch_waiting_for_changes_ends_with_143_on_sigterm_and_130_on_ctrl_c(
    tmp_path, docs, signal_number, name
):
    command = [*index_command(), "watch", str(docs), "--db", str(tmp_path / "index.db")]
    watcher = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=as_in_a_terminal
    )
    assert "3 files indexed" in watcher.stdout.readline()
    time.sleep(1.0)  # past the build: waiting for file events
    watcher.send_signal(signal_number)
    _, stderr = watcher.communicate(timeout=60)
    assert watcher.returncode == 128 + signal_number
    assert stderr.strip() == f"error: interrupted ({name})"


# -- progress -------------------------------------------------------------------------------------


def test_progress_off_a_terminal_is_a_line_at_most_every_interval_with_time_left(tmp_path):
    stream = io.StringIO()
    progress = Progress(stream, terminal=False, interval=0.0)
    folder = write_corpus(tmp_path / "docs", 30)
    build(tmp_path / "index.db", folder, batch_size=4, progress=progress)
    lines = stream.getvalue().splitlines()
    assert lines
    assert all(line.startswith("indexing: ") for line in lines)
    assert re.search(
        r"\d+ of ~\d+ chunks embedded, \d+ of 30 files done, [\d.]+ s so far, about .* left",
        stream.getvalue(),
    )
    quiet = io.StringIO()
    build(tmp_path / "other.db", folder, progress=Progress(quiet, terminal=False))  # under 30 s: silent
    assert quiet.getvalue() == ""


def test_the_chunks_to_embed_are_estimated_from_bytes_read_so_a_large_last_file_is_foreseen(tmp_path):
    folder = tmp_path / "docs"
    paragraph = "A paragraph about {topic} with enough words to fill a small chunk of its own here."
    for number in range(10):  # ten small files first, then one ten times their size
        write(
            folder / f"a{number}.md", "\n\n".join(paragraph.format(topic=f"{number}.{n}") for n in range(3))
        )
    write(folder / "z.md", "\n\n".join(paragraph.format(topic=f"part {n}") for n in range(300)))
    stream = io.StringIO()
    progress = Progress(stream, terminal=False, interval=0)
    report = build(tmp_path / "index.db", folder, batch_size=512, chunk_tokens=16, progress=progress)
    lines = stream.getvalue().splitlines()
    estimates = [
        int(found.replace(",", "")) for found in re.findall(r"of ~([\d,]+) chunks", "\n".join(lines))
    ]
    truth = report.chunks_embedded
    assert truth > 100
    assert len(estimates) == len(lines) > 10
    # from the second file on, every estimate is near the truth (counting files, 33 after 10 of 11)
    assert all(abs(estimate - truth) < truth / 4 for estimate in estimates[1:])
    assert ", 0 of 11 files done, " in lines[0]
    assert ", 11 of 11 files done, " in lines[-1]


def test_warnings_print_above_the_bar_on_a_terminal(tmp_path):
    stream = io.StringIO()
    progress = Progress(stream, terminal=True)
    folder = write_corpus(tmp_path / "docs", 3)
    write(folder / "empty.md", "\n")
    with Index.open(tmp_path / "index.db") as index:
        index.build(
            folder,
            backend=HashBackend(),
            progress=progress,
            warn=lambda line: progress.write(f"warning: {line}"),
        )
    assert "warning: empty.md: skipped, empty file\n" in stream.getvalue()


# -- remove ---------------------------------------------------------------------------------------


def test_remove_drops_one_folder_of_the_index_and_keeps_the_others(tmp_path):
    first, second = write_corpus(tmp_path / "first", 4), write_corpus(tmp_path / "second", 3, version="v2")
    index_path = tmp_path / "index.db"
    build(index_path, first)
    build(index_path, second)
    result = cli("remove", str(first), "--db", str(index_path))
    assert result.exit_code == 0
    assert result.stdout.strip() == f"removed {first}: 4 files"
    with Index.open(index_path, create=False, backend=HashBackend()) as index:
        assert [root["path"] for root in index.status()["roots"]] == [str(second)]
        assert all(hit.root == str(second) for hit in index.search("paragraph of file", k=20, min_score=0))
        assert index.store.integrity_problems() == []
    unknown = cli("remove", str(first), "--db", str(index_path))
    assert unknown.exit_code == 2
    assert f"holds no folder {first}" in unknown.stderr


# -- CLI conventions ------------------------------------------------------------------------------


@pytest.mark.heavy
def test_query_reads_the_question_from_stdin_and_refuses_an_empty_one(tmp_path, docs):
    index_path = tmp_path / "index.db"
    assert cli("build", str(docs), "--db", str(index_path), "-q").exit_code == 0
    piped = cli("query", "-", "--db", str(index_path), "--mode", "keyword", input="rivers and lakes\n")
    assert piped.exit_code == 0
    assert "sub/deep.md" in piped.stdout
    for empty in ("", "   "):
        refused = cli("query", empty, "--db", str(index_path))
        assert refused.exit_code == 2
        assert "the question is empty" in refused.output
    assert cli("query", "-", "--db", str(index_path), input="\n").exit_code == 2


def test_h_is_help_everywhere():
    for command in ([], ["build"], ["query"], ["status"], ["remove"], ["watch"], ["eval"]):
        result = cli(*command, "-h")
        assert result.exit_code == 0
        assert "Usage:" in result.stdout


@pytest.mark.heavy
def test_a_build_of_a_missing_folder_creates_nothing(tmp_path):
    env = dict(os.environ)
    result = subprocess.run(
        [*index_command(), "build", "typo_folder"], cwd=tmp_path, capture_output=True, text=True, env=env
    )
    assert result.returncode == 2
    assert "typo_folder" in result.stderr
    assert list(tmp_path.iterdir()) == []
