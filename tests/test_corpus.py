"""Walking a folder: what is taken, what is skipped, links, odd names."""

from __future__ import annotations

import fnmatch
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import write
from helpers import HashBackend
from hostile import FILES, make_hostile_folder
from runs import build, cli, integrity

from indexer import Index, corpus
from indexer.errors import UnreadableFile
from indexer.formats import extension_of, file_type, read_document, read_extensions, type_globs
from indexer.ignore import WalkRules


def paths(folder: Path) -> list[str]:
    return [source.path for source in corpus.walk(folder).files]


def test_text_files_are_taken_and_hidden_vendor_and_venv_folders_skipped(tmp_path):
    write(tmp_path / "a.md", "x")
    write(tmp_path / "src" / "main.py", "x")
    write(tmp_path / "conf" / "app.yaml", "x")
    write(tmp_path / "Makefile", "x")
    write(tmp_path / "page.html", "x")
    write(tmp_path / ".git" / "config.md", "x")
    write(tmp_path / ".hidden" / "n.md", "x")
    write(tmp_path / ".github" / "workflows" / "ci.yml", "x")  # a code host's: the project's own
    write(tmp_path / ".github" / "CONTRIBUTING.md", "x")
    write(tmp_path / "node_modules" / "pkg" / "readme.md", "x")
    write(tmp_path / ".venv" / "lib" / "x.py", "x")
    write(tmp_path / "venv" / "pyvenv.cfg", "home = /usr/bin")
    write(tmp_path / "venv" / "lib" / "x.py", "x")
    (tmp_path / "image.png").write_bytes(b"\x89PNG\x00")
    result = corpus.walk(tmp_path)
    assert [s.path for s in result.files] == [
        ".github/CONTRIBUTING.md",
        ".github/workflows/ci.yml",
        "Makefile",
        "a.md",
        "conf/app.yaml",
        "page.html",
        "src/main.py",
    ]
    assert result.skipped == [corpus.SkippedFile("image.png", ".png", "not a file type indexer reads")]


def test_odd_file_names_work(tmp_path):
    for name in ["with space.md", "new\nline.md", "crème brûlée.md", "日本語.txt"]:
        write(tmp_path / name, "text")
    # a newline is stored escaped (indexer.names), so every front end can print and cite it
    assert sorted(paths(tmp_path)) == sorted(
        ["with space.md", "new\\x0aline.md", "crème brûlée.md", "日本語.txt"]
    )


def test_links_out_of_the_folder_are_not_followed(tmp_path):
    root = tmp_path / "root"
    outside = tmp_path / "outside"
    write(outside / "secret.md", "secret")
    write(root / "inside.md", "fine")
    os.symlink(outside, root / "link-to-outside")
    os.symlink(outside / "secret.md", root / "secret-link.md")
    os.symlink("/etc", root / "etc")
    result = corpus.walk(root)
    assert [s.path for s in result.files] == ["inside.md"]
    links = {(skipped.path, skipped.kind) for skipped in result.skipped}
    assert links >= {("link-to-outside", "link"), ("secret-link.md", "link")}
    assert "etc" in {s.path for s in result.skipped}


def test_links_inside_the_folder_are_followed_and_a_loop_ends_only_itself(tmp_path):
    write(tmp_path / "real" / "doc.md", "x")
    os.symlink(tmp_path / "real", tmp_path / "alias")
    os.symlink(tmp_path, tmp_path / "real" / "loop")
    os.symlink(tmp_path / "real" / "doc.md", tmp_path / "doc-link.md")
    write(tmp_path / "zzz.md", "after the loop")
    found = paths(tmp_path)
    assert "real/doc.md" in found
    assert "doc-link.md" in found
    assert "zzz.md" in found
    assert len(found) == len(set(found))
    assert not any(path.startswith("real/loop/") for path in found)


def test_a_folder_met_through_a_link_before_its_own_name_is_stored_under_its_own_name(tmp_path):
    # a book's link to the shared modules sorts before them: the modules keep the paths they cite
    write(tmp_path / "docs" / "modules" / "proc-install.adoc", "= Installing\n")
    write(tmp_path / "docs" / "book" / "master.adoc", "include::modules/proc-install.adoc[]\n")
    os.symlink("../modules", tmp_path / "docs" / "book" / "modules")
    # a folder the walk reaches only through a link is still read, under the link's name
    write(tmp_path / "node_modules" / "widget" / "guide.md", "# Guide\n")
    os.symlink("node_modules/widget", tmp_path / "widget-docs")
    found = paths(tmp_path)
    assert found.count("docs/modules/proc-install.adoc") == 1
    assert not any(path.startswith("docs/book/modules/") for path in found)
    assert "widget-docs/guide.md" in found


def test_lock_files_and_minified_scripts_are_left_out_and_their_manifests_read(tmp_path):
    # npm's lock file is JSON, pnpm's YAML: read as data, each dependency would be a chunk that
    # outranks the code using it on the package's name
    write(tmp_path / "web" / "package.json", '{"dependencies": {"axios": "^1.6.0"}}\n')
    write(tmp_path / "web" / "package-lock.json", '{"lockfileVersion": 3, "packages": {}}\n')
    write(tmp_path / "web" / "pnpm-lock.yaml", "lockfileVersion: '9.0'\n")
    write(tmp_path / "web" / "static" / "vendor.min.js", "!function(e){return e}(1);\n")
    write(tmp_path / "web" / "static" / "site.MIN.CSS", "a{color:red}\n")
    write(tmp_path / "web" / "static" / "app.js", "export const ready = true;\n")
    write(tmp_path / "Cargo.lock", "# This file is automatically @generated by Cargo.\n")
    found = corpus.walk(tmp_path)
    assert [source.path for source in found.files] == ["web/package.json", "web/static/app.js"]
    kinds = {skipped.path: skipped.kind for skipped in found.skipped}
    assert kinds == {
        "Cargo.lock": "lock file",
        "web/package-lock.json": "lock file",
        "web/pnpm-lock.yaml": "lock file",
        "web/static/site.MIN.CSS": "minified",
        "web/static/vendor.min.js": "minified",
    }
    reasons = {skipped.path: skipped.reason for skipped in found.skipped}
    assert reasons["Cargo.lock"] == "a package manager's lock file, written for machines"
    # ``index watch`` asks the same question of each changed path
    watched = corpus.WalkFilter(tmp_path, WalkRules())
    assert not watched.takes("web/package-lock.json")
    assert watched.takes("web/package.json")


def test_a_type_no_reader_takes_is_counted_by_its_extension():
    names = ["a/b.XLSX", "logo.png", "LICENSE-x", "3.10.0", "x.7z", ".bashrc"]
    labels = [corpus.type_label(name) for name in names]
    assert labels == [".xlsx", ".png", "no extension", "no extension", ".7z", "no extension"]


# -- what may be read: size, links, and files replaced after the walk ------------------------------


def test_a_file_over_the_size_cap_is_left_out_unread_with_its_size(tmp_path):
    write(tmp_path / "small.md", "x")
    with open(tmp_path / "huge.txt", "wb") as huge:
        huge.truncate(3 << 30)  # sparse: 3 GB that take no disk
    found = corpus.walk(tmp_path)
    assert [source.path for source in found.files] == ["small.md"]
    assert found.skipped == [
        corpus.SkippedFile("huge.txt", "too-large", "larger (3 GB) than the cap on file size, 64 MB")
    ]
    assert found.skipped[0].size == 3 << 30
    raised = corpus.walk(tmp_path, WalkRules(max_file_size=4 << 30))
    assert [source.path for source in raised.files] == ["huge.txt", "small.md"]


@pytest.mark.heavy
def test_a_huge_binary_file_is_found_binary_from_its_first_block_within_a_memory_limit(tmp_path):
    folder = tmp_path / "docs"
    write(folder / "notes.md", "# Notes\n\nAbout egrets.\n")
    with open(folder / "disk-image.txt", "wb") as image:
        image.truncate(3 << 30)  # zeros: binary from the first byte
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent / 'support')!r})\n"
        "from helpers import HashBackend\n"
        "from indexer import Index\n"
        "with Index.open(sys.argv[1]) as index:\n"
        "    report = index.build(sys.argv[2], backend=HashBackend(), max_file_size=4 << 30, warn=print)\n"
        "print(report.files_added, report.skipped_by_kind())\n"
    )
    limit = 1536 << 20  # less than half the file: reading it whole would fail

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "index.db"), str(folder)],
        capture_output=True,
        text=True,
        preexec_fn=limited,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "disk-image.txt: skipped, binary file (contains NUL bytes)" in done.stdout
    assert done.stdout.splitlines()[-1] == "1 {'binary': 1}"


def test_every_extension_a_reader_reads_is_walked():
    unwalked = {extension for extension in read_extensions() if not corpus.is_text_name(f"file.{extension}")}
    assert unwalked == set()


def test_an_asciidoc_book_in_asc_files_is_built_and_an_openpgp_key_beside_it_is_skipped(tmp_path):
    book = tmp_path / "book"
    write(
        book / "ch01-getting-started.asc", "== Getting Started\n\n=== Installing Git\n\nRun the installer.\n"
    )
    write(book / "credentials.asc", "=== Credential Storage\n\nGit caches your password for you.\n")
    write(
        book / "KEYS.asc",
        "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBGZ0x2kBEAC7\n-----END PGP PUBLIC KEY BLOCK-----\n",
    )
    warnings: list[str] = []
    with Index.open(tmp_path / "index.db") as index:
        report = index.build(book, backend=HashBackend(), warn=warnings.append)
        found = {hit.path: hit.heading for hit in index.search("installer", mode="keyword", min_score=0)}
        cached = [hit.path for hit in index.search("password", mode="keyword", min_score=0)]
    assert found == {"ch01-getting-started.asc": "Getting Started > Installing Git"}
    assert cached == ["credentials.asc"]
    assert report.skipped_by_kind() == {"no-text": 1}
    assert warnings == ["KEYS.asc: skipped, an OpenPGP key or signature (ASCII armor), not AsciiDoc"]


def test_a_script_is_walked_by_its_first_line_and_read_in_its_interpreter_s_language(tmp_path):
    write(tmp_path / "bin" / "deploy", '#!/usr/bin/env python3\n\ndef rollout():\n    """Roll out."""\n')
    write(tmp_path / "bin" / "data", "rollout 1 2 3\n")  # no extension, no #!: not a type we read
    write(tmp_path / "examples" / "oauth2.py.README", "How to set up OAuth2 with rollout.\n")
    write(tmp_path / "examples" / "Pine.rc", "set rollout=yes\n")
    found = corpus.walk(tmp_path)
    assert [source.path for source in found.files] == [
        "bin/deploy",
        "examples/Pine.rc",
        "examples/oauth2.py.README",
    ]
    assert [skipped.path for skipped in found.skipped] == ["bin/data"]
    with Index.open(tmp_path / "index.db") as index:
        index.build(tmp_path, backend=HashBackend())
        hits = index.search("rollout", mode="keyword", min_score=0)
    assert {hit.path: hit.heading for hit in hits}["bin/deploy"] == "bin/deploy > rollout"


def test_configuration_named_without_an_extension_is_walked_by_the_format_it_declares(tmp_path):
    web = "".join(f"web{number} http_port=80{number}\n" for number in range(300))  # more than one chunk
    write(tmp_path / "lamp" / "hosts", f"# by role\n[dbservers]\ndb1\n\n[webservers]\n{web}")
    write(tmp_path / "lamp" / "group_vars" / "lbservers", "# the balancer\nbalance: roundrobin\n")
    write(tmp_path / "lamp" / "files" / "epel.repo", "[epel]\nname=Extra Packages\n")
    write(tmp_path / "lamp" / "files" / "proxy", "\ufeff[proxy]\nport=3128\n")  # as Notepad saves it
    write(tmp_path / "lamp" / "files" / "ftpd-wrapper", "#!/usr/bin/perl\nprint 'ftp';\n")
    write(tmp_path / "lamp" / "files" / "setup.run", "#!/bin/sh\ntail -n +3 $0 | tar x\n")  # a payload
    write(tmp_path / "lamp" / "files" / ".hgrc", "[auth]\nhost.password = hunter2\n")  # a tool's own
    write(tmp_path / "lamp" / "files" / "secret", "c2VjcmV0IGtleWZpbGU=\n")  # no format declared
    write(tmp_path / "lamp" / "files" / "default", "# the daemon\nRUNDIR=/run/app\nUSER=app\n")  # shell's
    write(tmp_path / "lamp" / "files" / "gpg-key-epel", "-----BEGIN PGP PUBLIC KEY BLOCK-----\n")
    (tmp_path / "lamp" / "files" / "app.war").write_bytes(b"PK\x03\x04\x00\x00[epel]\n")
    found = corpus.walk(tmp_path)
    assert [source.path for source in found.files] == [
        "lamp/files/default",
        "lamp/files/epel.repo",
        "lamp/files/ftpd-wrapper",
        "lamp/files/proxy",
        "lamp/group_vars/lbservers",
        "lamp/hosts",
    ]
    left_out = [
        "lamp/files/.hgrc",
        "lamp/files/app.war",
        "lamp/files/gpg-key-epel",
        "lamp/files/secret",
        "lamp/files/setup.run",
    ]
    assert [skipped.path for skipped in found.skipped] == left_out
    with Index.open(tmp_path / "index.db") as index:
        index.build(tmp_path, backend=HashBackend())
        hits = {hit.path: hit.heading for hit in index.search("web299", mode="keyword", min_score=0)}
    assert hits == {"lamp/hosts": "lamp/hosts > webservers"}


def test_a_document_named_without_an_extension_is_walked_in_a_documentation_folder(tmp_path):
    howto = tmp_path / "usr" / "share" / "doc" / "logwatch" / "HOWTO-Customize-LogWatch.gz"
    howto.parent.mkdir(parents=True)
    howto.write_bytes(gzip.compress(b"Customizing\n===========\n\nSet Pre_Ignore to filter lines.\n"))
    write(tmp_path / "docs" / "examples" / "proxy-sample", "Put the proxy in front.\n")
    write(tmp_path / "src" / "proxy-sample", "not in a documentation folder\n")
    found = corpus.walk(tmp_path)
    assert [source.path for source in found.files] == [
        "docs/examples/proxy-sample",
        "usr/share/doc/logwatch/HOWTO-Customize-LogWatch.gz",
    ]
    assert [skipped.path for skipped in found.skipped] == ["src/proxy-sample"]


def test_a_ruby_dsl_named_without_an_extension_is_walked_and_read_as_ruby(tmp_path):
    write(tmp_path / "Podfile", "def shared_pods\n  pod 'Alamofire'\nend\n")
    write(tmp_path / "Gemfile.lock", "GEM\n  specs:\n    shared_pods (1.0)\n")
    found = corpus.walk(tmp_path)
    assert [source.path for source in found.files] == ["Podfile"]  # Bundler's lock file is no Ruby
    with Index.open(tmp_path / "index.db") as index:
        index.build(tmp_path, backend=HashBackend())
        hits = index.search("shared_pods", mode="keyword", min_score=0)
    assert {hit.path: hit.heading for hit in hits} == {"Podfile": "Podfile > shared_pods"}


def test_a_link_to_a_credentials_file_is_left_out_as_the_file_itself_is(tmp_path):
    write(tmp_path / ".env", "API_KEY=not-for-the-index\n")
    write(tmp_path / "config" / "server.pem", "-----BEGIN PRIVATE KEY-----\n")
    os.symlink(".env", tmp_path / "notes.md")
    os.symlink("config/server.pem", tmp_path / "cert.txt")
    found = corpus.walk(tmp_path)
    assert found.files == []
    secrets = {skipped.path: skipped.reason for skipped in found.skipped if skipped.kind == "secret"}
    assert secrets == {
        ".env": corpus.SECRET_REASON,
        "config/server.pem": corpus.SECRET_REASON,
        "notes.md": "a link to .env, whose name says it holds credentials",
        "cert.txt": "a link to config/server.pem, whose name says it holds credentials",
    }
    allowed = corpus.walk(tmp_path, WalkRules(allow_secrets=(".env",)))
    assert sorted(source.path for source in allowed.files) == [".env", "notes.md"]
    assert all(source.secrets_allowed for source in allowed.files)


@pytest.fixture
def private_file(tmp_path: Path) -> Path:
    """A file of the user's outside the folder being indexed, readable by them alone."""
    private = write(tmp_path / "private" / "notes.md", "My bank PIN is 4921.\n")
    private.chmod(0o600)
    return private


def test_a_file_replaced_by_a_link_after_the_walk_is_not_read_through_it(tmp_path, private_file):
    root = tmp_path / "docs"
    write(root / "notes.md", "# Notes\n\nOrdinary notes.\n")
    (source,) = corpus.walk(root).files
    (root / "notes.md").unlink()
    os.symlink(private_file, root / "notes.md")  # a link outside, where the walk saw a file
    with pytest.raises(UnreadableFile, match="replaced by a symbolic link since the walk") as refused:
        corpus.read_bytes(source, 1 << 20)
    assert refused.value.status == "link"


def test_a_folder_replaced_by_a_link_after_the_walk_is_not_read_through_it(tmp_path, private_file):
    root = tmp_path / "docs"
    write(root / "sub" / "notes.md", "# Notes\n\nOrdinary notes.\n")
    (source,) = corpus.walk(root).files
    shutil.rmtree(root / "sub")
    os.symlink(private_file.parent, root / "sub")  # the file is now the private one, through the folder
    with pytest.raises(UnreadableFile, match="now resolves outside the folder"):
        corpus.read_bytes(source, 1 << 20)


def test_a_link_repointed_at_a_credentials_file_after_the_walk_is_not_read(tmp_path):
    root = tmp_path / "docs"
    write(root / "real.md", "# Real\n\nOrdinary notes.\n")
    write(root / ".env", "API_KEY=not-for-the-index\n")
    os.symlink("real.md", root / "alias.md")
    source = next(source for source in corpus.walk(root).files if source.path == "alias.md")
    (root / "alias.md").unlink()
    os.symlink(".env", root / "alias.md")
    with pytest.raises(UnreadableFile, match="now resolves to .env, whose name says") as refused:
        corpus.read_bytes(source, 1 << 20)
    assert refused.value.status == "secret"


def test_a_build_stores_nothing_of_a_file_swapped_for_a_link_after_the_walk(
    tmp_path, private_file, monkeypatch
):
    root = tmp_path / "docs"
    write(root / "notes.md", "# Notes\n\nOrdinary notes.\n")
    write(root / "other.md", "# Other\n\nAbout egrets.\n")
    found = corpus.walk(root)
    (root / "notes.md").unlink()
    os.symlink(private_file, root / "notes.md")
    monkeypatch.setattr(corpus, "walk", lambda root, rules: found)  # as the walk saw it, before the swap
    warnings: list[str] = []
    index_path = tmp_path / "index" / "index.db"
    index_path.parent.mkdir()
    with Index.open(index_path, backend=HashBackend()) as index:
        report = index.build(root, warn=warnings.append)
    assert report.exit_code == 0
    assert report.files_added == 1
    assert "notes.md: skipped, replaced by a symbolic link since the walk" in warnings
    for path in index_path.parent.iterdir():  # the index, its journal
        assert b"4921" not in path.read_bytes(), path.name


@pytest.mark.heavy
def test_file_names_that_are_not_utf8_are_indexed_under_an_escaped_name(tmp_path, docs):
    latin1 = docs / os.fsdecode(b"caf\xe9.md")
    latin1.write_text("# Caf\u00e9\n\nCr\u00e8me br\u00fbl\u00e9e and espresso.\n")
    (docs / os.fsdecode(b"bad\xffname.md")).write_text("# Odd\n\nA name no codec reads.\n")
    index_path = tmp_path / "index.db"
    result = cli("build", str(docs), "--db", str(index_path), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["files_added"] == 5
    assert report["files_failed"] == 0
    hits = json.loads(cli("query", "espresso", "--mode", "keyword", "--db", str(index_path), "--json").stdout)
    assert hits[0]["path"] == "caf\\xe9.md"
    with Index.open(index_path, create=False) as index:
        assert index.status()["builds"][0]["files_added"] == 5
    latin1.unlink()
    again = json.loads(cli("build", str(docs), "--db", str(index_path), "--json").stdout)
    assert (again["files_removed"], again["files_unchanged"]) == (1, 4)
    assert integrity(index_path) == []


def test_a_file_replaced_by_a_fifo_after_the_walk_is_skipped_without_hanging(tmp_path, docs, monkeypatch):
    found = corpus.walk(docs)
    fifo_name = found.files[0].path
    (docs / fifo_name).unlink()
    os.mkfifo(docs / fifo_name)
    monkeypatch.setattr(corpus, "walk", lambda root, rules: found)  # as the walk saw it, before the swap
    warnings: list[str] = []
    started = time.monotonic()
    with Index.open(tmp_path / "index.db") as index:
        report = index.build(docs, backend=HashBackend(), warn=warnings.append)
    assert time.monotonic() - started < 30
    assert report.exit_code == 0
    assert report.files_added == 2
    assert any(f"{fifo_name}: skipped, not a regular file" in warning for warning in warnings)


@pytest.mark.slow
def test_folders_a_thousand_deep_are_walked(tmp_path):
    folder = tmp_path / "deep"
    current = folder
    for _ in range(1000):  # os.makedirs would itself recurse too deep
        current = current / "d"
        current.mkdir(parents=current == folder / "d")
    write(current / "bottom.md", "# Bottom\n\nThe deepest file of all.\n")
    write(folder / "top.md", "# Top\n\nA file at the top.\n")
    try:
        report = build(tmp_path / "index.db", folder)
    finally:  # shutil.rmtree, as pytest cleans up, would recurse too deep
        (current / "bottom.md").unlink()
        while current != folder:
            current.rmdir()
            current = current.parent
    assert report.exit_code == 0
    assert report.files_added == 2


def test_a_dangling_symlink_is_reported_as_dangling(tmp_path, docs):
    (docs / "gone.md").symlink_to(tmp_path / "nowhere.md")
    warnings: list[str] = []
    with Index.open(tmp_path / "index.db") as index:
        index.build(docs, backend=HashBackend(), warn=warnings.append)
    assert any("gone.md: skipped, dangling symbolic link" in warning for warning in warnings)


def test_a_name_that_is_not_utf8_and_a_file_named_with_its_escaped_spelling_stay_two_files(tmp_path):
    folder = make_hostile_folder(tmp_path / "docs")
    index_path = tmp_path / "index.db"
    first = build(index_path, folder)
    assert (first.files_added, first.exit_code) == (len(FILES), 0)
    again = build(index_path, folder)
    assert (again.files_added, again.files_changed, again.files_unchanged) == (0, 0, len(FILES))
    with Index.open(index_path, create=False, backend=HashBackend()) as index:
        assert index.status()["files"] == len(FILES)
        assert "roasted" in index.get("caf\\xe9.md").text  # as a hit shows it
        assert "roasted" in index.get(os.fsdecode(b"caf\xe9.md:1-3")).text  # as the file system names it
        assert "descaling" in index.get("caf\\\\xe9.md").text
        assert "descaling" in index.get("caf\\xe9.md".replace("\\", "\\\\") + ":3").text
        assert "cleared" in index.get("new\\x0aline.md:1-3").text
        assert "cleared" in index.get("new\nline.md:1-3").text
    assert integrity(index_path) == []


def test_a_jinja_template_is_walked_and_read_as_the_format_it_renders(tmp_path):
    # cookiecutter's test templates, and the README a project template renders
    write(tmp_path / "templates" / "base-requirements.jinja", "pip\n{% block dependencies %}{% endblock %}\n")
    write(
        tmp_path / "templates" / "README.md.jinja",
        "# {{ cookiecutter.project_name }}\n\n## Usage\n\nRun it.\n",
    )
    write(tmp_path / "templates" / "index.html.j2", "<h1>{{ title }}</h1>{% if a %}<p>Hi</p>{% endif %}\n")
    write(tmp_path / "templates" / "logo.png.j2", "not text")
    walked = sorted(source.path for source in corpus.walk(tmp_path).files)
    assert walked == [
        "templates/README.md.jinja",
        "templates/base-requirements.jinja",
        "templates/index.html.j2",
    ]
    readme = read_document("README.md.jinja", (tmp_path / "templates" / "README.md.jinja").read_bytes())
    assert [heading.title for heading in readme.headings] == ["{{ cookiecutter.project_name }}", "Usage"]
    page = read_document("index.html.j2", (tmp_path / "templates" / "index.html.j2").read_bytes())
    assert [heading.title for heading in page.headings] == ["{{ title }}"]
    assert read_document("base-requirements.jinja", b"pip\n").lines == ["pip"]


def test_an_example_copy_of_a_file_is_walked_and_read_as_the_file_it_stands_for(tmp_path):
    """A Debian package's ``examples/opendkim.conf.sample`` documents every setting of the file a
    user copies it to; ``setup.lua.sample`` is Lua, ``phpunit.xml.dist`` XML: each is read so."""
    examples = tmp_path / "usr" / "share" / "doc" / "opendkim" / "examples"
    write(
        examples / "opendkim.conf.sample",
        "## Canonicalization relaxed/simple\n#Canonicalization simple/simple\n",
    )
    write(examples / "setup.lua.sample", "-- a setup script\nfunction odkim_setup(ctx)\n  return nil\nend\n")
    write(tmp_path / "phpunit.xml.dist", '<?xml version="1.0"?>\n<phpunit colors="true"/>\n')
    write(tmp_path / "logo.png.sample", "not text")
    # copies of credentials, of machine-written files, of files no reader takes: left out as those are
    write(tmp_path / ".netrc.sample", "machine api.example.com login bob password hunter22\n")
    write(tmp_path / "server.key.example", "-----BEGIN PRIVATE KEY-----\n")
    write(tmp_path / ".htpasswd.dist", "bob:$apr1$x$y\n")
    write(tmp_path / "package-lock.json.dist", "{}\n")
    write(tmp_path / "app.bin.dist", "\0\0")
    write(tmp_path / "notes.foo.sample", "text of no known format\n")
    walked = sorted(source.path for source in corpus.walk(tmp_path).files)
    assert walked == [
        "phpunit.xml.dist",
        "usr/share/doc/opendkim/examples/opendkim.conf.sample",
        "usr/share/doc/opendkim/examples/setup.lua.sample",
    ]
    assert extension_of("examples/opendkim.conf.sample") == "conf"
    assert any(fnmatch.fnmatchcase("examples/opendkim.conf.sample", glob) for glob in type_globs("conf"))
    script = read_document("examples/setup.lua.sample", (examples / "setup.lua.sample").read_bytes())
    assert script.definitions == {2: ("odkim_setup",)}, "read by Lua's grammar"


def test_a_sphinx_part_named_rst_inc_is_walked_and_read_as_restructured_text(tmp_path):
    # Borg's usage pages: each command's reference is generated into NAME.rst.inc, which the page
    # `.. include::`s; the reference is those parts, so a question about an option is answered there
    write(
        tmp_path / "usage" / "prune.rst",
        ".. include:: prune.rst.inc\n\nExamples\n~~~~~~~~\n\nKeep 7 dailies.\n",
    )
    write(
        tmp_path / "usage" / "prune.rst.inc",
        ".. _borg_prune:\n\nborg prune\n----------\n\n"
        "options\n    -d, --keep-daily      number or time interval of daily archives to keep\n\n"
        "Description\n~~~~~~~~~~~\n\nThe prune command prunes a repository by soft-deleting archives.\n",
    )
    write(tmp_path / "asm" / "defs.inc", "SYS_EXIT equ 60\n")  # an include of no format a reader names
    walked = sorted(source.path for source in corpus.walk(tmp_path).files)
    assert walked == ["usage/prune.rst", "usage/prune.rst.inc"]
    part = read_document("usage/prune.rst.inc", (tmp_path / "usage" / "prune.rst.inc").read_bytes())
    assert [(heading.level, heading.title) for heading in part.headings] == [
        (1, "borg prune"),
        (2, "Description"),
    ]
    assert (file_type("usage/prune.rst.inc"), file_type("asm/defs.inc")) == ("rst", "inc")
    assert any(fnmatch.fnmatchcase("usage/prune.rst.inc", glob) for glob in type_globs("rst"))  # --types rst


def test_a_reader_reads_a_file_beside_its_own_inside_the_root_and_nothing_outside_it(tmp_path):
    root, outside = tmp_path / "docs", tmp_path / "outside"
    (root / "book" / "dtd").mkdir(parents=True)
    outside.mkdir()
    (root / "book" / "entities.ent").write_text('<!ENTITY app "Widget">\n')
    (root / "book" / "dtd" / "inner.ent").write_text("")
    (root / ".env").write_text("TOKEN=x\n")
    (outside / "secret.ent").write_text('<!ENTITY app "Leaked">\n')
    os.symlink(outside / "secret.ent", root / "book" / "link.ent")
    os.symlink(root / "book" / "entities.ent", root / "book" / "alias.ent")
    files = corpus.RootFiles(root, max_size=1024)
    assert files.read("book/./dtd/../entities.ent") == b'<!ENTITY app "Widget">\n'
    assert files.read("book/alias.ent") == b'<!ENTITY app "Widget">\n'  # a link that stays inside
    for name in ("book/link.ent", "../outside/secret.ent", str(outside / "secret.ent"), ".env", "book"):
        assert files.read(name) is None, name
    assert corpus.RootFiles(root, max_size=8).read("book/entities.ent") is None  # past the cap
    (root / ".git").mkdir()
    (root / ".git" / "config.ent").write_text('<!ENTITY app "Hidden">\n')
    (root / "node_modules").mkdir()
    (root / "node_modules" / "x.ent").write_text('<!ENTITY app "Dependency">\n')
    for name in (".git/config.ent", "node_modules/x.ent", "book/entities.ent\0.txt"):
        assert files.read(name) is None, name  # where the walk never goes; no name at all
