"""Configuration and data files read by the keys and tables that open their parts
(indexer/formats/data.py): a chunk is headed by the file's path and the keys above it."""

from __future__ import annotations

import json

import pytest
from helpers import HashBackend, fastest_seconds, grows_linearly

from indexer import Index
from indexer.chunking import ChunkSettings, chunk_document
from indexer.formats import parse_text, read_extensions
from indexer.formats.data import declared_format


def words(texts: list[str]) -> list[int]:
    return [len(text.split()) for text in texts]


def headings(path: str, text: str) -> list[tuple[int, int, str]]:
    return [(heading.line, heading.level, heading.title) for heading in parse_text(path, text).headings]


WORKFLOW = """\
name: CI
on:
  push:
    branches: [main]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - name: Checkout
        uses: actions/checkout@v4
      - run: |
          pytest -q
          cache: pip
    env:
      PYTHON: "3.12"
  "lint job":   # a quoted key
    runs-on: ubuntu-latest
---
services:
  web:
    ports:
      - "8080:80"
    healthcheck:
      test: curl -f http://localhost
"""


def test_a_yaml_file_is_headed_by_its_path_and_the_keys_that_open_its_parts():
    """A key with nothing after its colon opens a part; a key and its value on one line
    (``runs-on: ubuntu-latest``) is content; a block scalar's lines (``cache: pip`` under
    ``run: |``) are its text, never keys; a list's item is content; ``---`` starts a new
    document; keys deeper than three levels head nothing."""
    assert headings(".github/workflows/ci.yml", WORKFLOW) == [
        (1, 1, ".github/workflows/ci.yml"),
        (2, 2, "on"),
        (3, 3, "push"),
        (5, 2, "jobs"),
        (6, 3, "test"),
        (8, 4, "steps"),
        (14, 4, "env"),
        (16, 3, "lint job"),
        (18, 1, ".github/workflows/ci.yml"),  # a new document: back at the file
        (19, 2, "services"),
        (20, 3, "web"),
        (21, 4, "ports"),
        (23, 4, "healthcheck"),
    ]


def test_a_line_after_a_nested_part_is_under_its_parent_again():
    """``replicas: 2`` after ``logging:``'s lines is the controller's, and ``"license"`` after the
    ``"scripts"`` object the package's: where a part ends, its parent heads the lines again (the
    file at the top). A list written at its key's indentation is in the key's part."""
    values = (
        "controller:\n  logging:\n    level: info\n  replicas: 2\n"
        "repos:\n- repo: https://example.org/hooks\n  hooks:\n  - id: ruff\n- repo: local\ntop: 1\n"
    )
    assert headings("values.yaml", values) == [
        (1, 1, "values.yaml"),
        (1, 2, "controller"),
        (2, 3, "logging"),
        (4, 2, "controller"),
        (5, 2, "repos"),
        (7, 3, "hooks"),
        (9, 2, "repos"),
        (10, 1, "values.yaml"),
    ]
    package = json.dumps({"scripts": {"test": "jest"}, "license": "MIT", "files": ["a"]}, indent=2)
    assert headings("package.json", package) == [
        (1, 1, "package.json"),
        (2, 2, "scripts"),
        (5, 1, "package.json"),  # "license", not the closing brace's line
        (6, 2, "files"),
    ]


def test_json_with_comments_and_a_yaml_block_scalar_after_an_anchor_or_a_tag_head_no_false_part():
    tsconfig = (
        '{\n  // the compiler\'s options { [\n  "compilerOptions": {\n    /* a { comment\n'
        '    "fake": { */\n    "strict": true\n  },\n  "include": ["src"]\n}\n'
    )
    assert headings("tsconfig.json", tsconfig) == [
        (1, 1, "tsconfig.json"),
        (3, 2, "compilerOptions"),
        (8, 2, "include"),
    ]
    steps = (
        "build:\n  run: &steps |\n    lint:\n      fix\n  tagged: !!str >-\n    test:\n  deploy:\n    x: 1\n"
    )
    assert headings("ci.yaml", steps) == [(1, 1, "ci.yaml"), (1, 2, "build"), (7, 3, "deploy")]


def test_a_toml_file_is_headed_by_its_tables_and_not_by_what_its_strings_hold():
    text = (
        '[project]\nname = "demo"\ndescription = """\n[not.a.table]\n"""\n'
        "[tool.ruff.lint]\nselect = [\n  'E',\n]\n[[bin]] # a binary\nname = 'x'\n"
        '[servers."alpha.example"]\nip = "10.0.0.1"\n'
    )
    assert headings("pyproject.toml", text) == [
        (1, 1, "pyproject.toml"),
        (1, 2, "project"),
        (6, 2, "tool.ruff.lint"),
        (10, 2, "bin"),
        (12, 2, 'servers."alpha.example"'),
    ]


def test_an_ini_file_is_headed_by_its_sections():
    text = '; settings\n[metadata]\nname = demo\n\n[remote "origin"]  # git\nurl = x\n[not a section\n'
    assert headings("setup.cfg", text) == [(1, 1, "setup.cfg"), (2, 2, "metadata"), (5, 2, 'remote "origin"')]


NGINX_CONF = """\
proxy_cache_path /tmp/cache keys_zone=cache:10m;

server {
  listen 80;

  location / {
    proxy_pass http://backend;
  }

  location /cache-me {  # cached for 30s
    proxy_cache_valid 200 30s;
    return 200 "{ not a block";
  }
  add_header X-Frame-Options '}';
}
"""


def test_a_conf_file_is_headed_by_the_blocks_its_braces_open():
    assert headings("default.conf", NGINX_CONF) == [
        (1, 1, "default.conf"),
        (3, 2, "server"),
        (6, 3, "location /"),
        (10, 3, "location /cache-me"),
        (14, 2, "server"),  # back in the server block, after its locations
    ]
    named = 'options {\n  directory "/var/cache/bind";\n};\nzone "example.org" IN {\n  type master;\n};\n'
    assert headings("named.conf", named) == [
        (1, 1, "named.conf"),
        (1, 2, "options"),
        (4, 2, 'zone "example.org" IN'),
    ]
    assert headings("settings.conf", "[server]\nport = 80\n") == [(1, 1, "settings.conf"), (1, 2, "server")]


def test_a_json_file_is_headed_by_the_members_that_open_objects_and_arrays():
    """Depth is counted by the brackets open before a line, whatever its indentation, with the
    brackets inside strings left out; members deeper than three levels, and a minified file's
    one line, head nothing."""
    data = {
        "name": "demo",
        "scripts": {"test": "jest {a}"},
        "packages": {"node_modules/lodash": {"version": "4", "engines": {"node": ">=4", "deep": {"x": 1}}}},
        "files": ["a]", "b"],
    }
    text = json.dumps(data, indent=2)
    assert headings("package.json", text) == [
        (1, 1, "package.json"),
        (3, 2, "scripts"),
        (6, 2, "packages"),
        (7, 3, "node_modules/lodash"),
        (9, 4, "engines"),
        (17, 2, "files"),
    ]
    assert headings("package.json", json.dumps(data)) == [(1, 1, "package.json")]


def test_a_chunk_of_a_data_file_is_headed_by_the_keys_above_its_first_line():
    services = "".join(
        f"  {name}:\n    image: {name}:latest\n    environment:\n"
        + "".join(f"      VARIABLE_{n}: value {n} for {name}\n" for n in range(12))
        for name in ("postgres", "redis", "worker")
    )
    document = parse_text("compose.yaml", "version: '3'\nservices:\n" + services)
    chunks = chunk_document(document, words, ChunkSettings(max_tokens=60, overlap_tokens=0))
    heads = {chunk.heading for chunk in chunks}
    assert "compose.yaml > services > redis > environment" in heads
    redis = next(chunk for chunk in chunks if "value 11 for redis" in chunk.text)
    assert redis.heading == "compose.yaml > services > redis > environment"


def test_data_formats_are_read_by_their_reader_and_walked():
    assert {"yaml", "yml", "toml", "ini", "cfg", "conf", "json"} <= read_extensions()


def test_a_built_index_finds_a_setting_under_its_part(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "deploy.yaml").write_text(WORKFLOW)
    with Index.open(tmp_path / "index.db", backend=HashBackend()) as index:
        assert index.build(tmp_path / "docs").exit_code == 0
        hits = index.search("healthcheck curl localhost", k=3, mode="keyword")
    assert hits[0].path == "deploy.yaml"
    assert hits[0].heading.startswith("deploy.yaml")


@pytest.mark.parametrize(
    ("path", "line"),
    [
        ("big.yaml", "a:" + " " * 50 + "b\n"),
        ("big.yaml", "  - key" + " " * 50 + ": \n"),
        ("big.json", '"' + "\\" * 40 + '": {' + "[" * 20 + "\n"),
        ("big.toml", "[" + "a." * 15 + "b" + " " * 40 + "\n"),
        ("big.ini", "[" + "x" * 100 + "\n"),
        ("big.json", '"\\"' * 20 + "\n"),  # quotes no quote closes
        ("big.yaml", " " * 200 + "a: |\n"),  # a block scalar's key deep in spaces
        ("big.conf", "a" * 60 + " " * 60 + "{ } " * 20 + "\n"),
        ("big.conf", "a" + " " * 40 + "}{"),  # one line of them, its blanks before braces
        ("big.conf", '"\\"' * 20 + "'" + "{" * 20 + "\n"),  # quotes no quote closes
    ],
)
def test_a_data_file_is_read_in_time_linear_in_its_size(path, line):
    def seconds(repeats: int) -> float:
        text = "top:\n" + line * repeats
        return fastest_seconds(lambda: parse_text(path, text), repeats=3)

    assert grows_linearly(seconds, 2_000, 16_000, 24)  # quadratic would be 64


def test_a_table_s_rows_are_headed_by_the_columns_its_first_row_names():
    """A chunk of rows far down a CSV or TSV file is read with what its values are."""
    rows = "".join(f"2024-01-{day:02},Tesco,groceries,{day}.10\n" for day in range(1, 29)) * 20
    text = "date,payee,category,amount\n" + rows
    assert [(h.line, h.level, h.title) for h in parse_text("money/expenses.csv", text).headings] == [
        (1, 1, "money/expenses.csv"),
        (1, 2, "date, payee, category, amount"),
    ]
    document = parse_text("money/expenses.csv", text)
    last = chunk_document(document, words, ChunkSettings(max_tokens=60, overlap_tokens=0))[-1]
    assert last.heading == "money/expenses.csv > date, payee, category, amount"
    tsv = parse_text("genes.tsv", 'gene\t"full name"\tchromosome\nBRCA1\tbreast cancer 1\t17\n')
    assert tsv.headings[-1].title == "gene, full name, chromosome"


def test_a_table_s_long_first_row_heads_it_with_its_first_columns_read_in_bounded_time():
    from indexer.formats.data import MAX_KEY_CHARS, columns

    wide = ",".join(f"column_{number}" for number in range(2000))
    title = columns(wide, ",")
    assert title.startswith("column_0, column_1, ") and title.endswith(", …")
    assert len(title) <= MAX_KEY_CHARS + 3
    assert columns('"' + "x" * 1_000_000, ",") == ""  # one cell that long is a value, no name
    assert columns(",,,", ",") == "" and columns("", "\t") == ""
    assert parse_text("empty.csv", "").headings == []


INVENTORY = """\
# The site's servers, by what they do
[webservers]
web1
web2 http_port=8080

[dbservers]
db1 ansible_host=10.0.0.5
"""


def test_an_ansible_inventory_named_without_an_extension_is_headed_by_its_groups():
    groups = [(2, 2, "webservers"), (6, 2, "dbservers")]
    assert headings("lamp/hosts", INVENTORY) == [(1, 1, "lamp/hosts"), *groups]
    assert headings("lamp/hosts.example", INVENTORY)[1:] == groups


def test_a_systemd_unit_and_a_yum_repository_are_headed_by_their_sections():
    unit = "[Unit]\nDescription=Nightly backup\n\n[Timer]\nOnCalendar=daily\n"
    assert headings("backup.timer", unit) == [(1, 1, "backup.timer"), (1, 2, "Unit"), (4, 2, "Timer")]
    repo = "; the EPEL packages\n[epel]\nname=Extra Packages\nbaseurl=http://example.org/epel\n"
    assert headings("files/epel.repo", repo)[1:] == [(2, 2, "epel")]


def test_ansible_group_variables_named_without_an_extension_are_read_as_yaml():
    variables = "# Variables for the load balancer\nhaproxy:\n  balance: roundrobin\n  listenport: 8888\n"
    expected = [(1, 1, "lamp/group_vars/lbservers"), (2, 2, "haproxy")]
    assert headings("lamp/group_vars/lbservers", variables) == expected
    assert headings("host_vars/web1/main", variables)[1:] == [(2, 2, "haproxy")]
    vault = "$ANSIBLE_VAULT;1.1;AES256\n6231336437\n"  # ciphertext: plain lines, no keys
    assert headings("group_vars/all", vault) == []


def test_a_file_whose_first_line_declares_no_format_is_read_as_plain_lines():
    assert headings("hosts", "127.0.0.1 localhost\n[not a section]\n") == []
    patch = "--- a/setup.cfg\n+++ b/setup.cfg\n@@ -1 +1 @@\n-[metadata]\n+[options]\n"
    assert headings("debian/patches/fix-setup", patch) == []
    assert headings("notes", "---\ntitle: Notes\nowner:\n  name: me\n")[1:] == [(3, 2, "owner")]
    # a test's JSON on one line, a value or an array, is no section: no heading made of its values
    for fixture in ("[1.23e47, 0.1, 0.3]\n", '["\\u0000"]\n', "[true]\n", "[true]\n\n# end\n"):
        assert declared_format("test/suites/valid/real-exponent/output", fixture) is None
    assert declared_format("hosts", "[webservers]\nweb1\n") == "ini"


#: Debian's opendkim package's ``/etc/default/opendkim``, its first lines.
DEFAULTS = """# NOTE: This is a legacy configuration file. It is not used by the opendkim
# systemd service. Please use the corresponding configuration parameters in
# /etc/opendkim.conf instead.
#
#DAEMON_OPTS=""
# Change to /var/spool/postfix/run/opendkim to use a Unix socket with
# postfix in a chroot:
#RUNDIR=/var/spool/postfix/run/opendkim
RUNDIR=/run/opendkim
#
# Uncomment to specify an alternate socket
SOCKET=local:$RUNDIR/opendkim.sock
USER=opendkim
PIDFILE=$RUNDIR/$NAME.pid
EXTRAAFTER=
"""


def test_a_file_of_shell_variables_named_without_an_extension_is_read_as_configuration():
    """Debian's ``/etc/default`` files (Red Hat's ``/etc/sysconfig``, ``os-release``) are shell
    variables, one assignment a line: read, headed by their path; a key file's base64 line, whose
    padding ends in ``=``, declares nothing."""
    assert declared_format("etc/default/opendkim", DEFAULTS) == "conf"
    assert declared_format("etc/os-release", 'export NAME="Debian GNU/Linux"\n') == "conf"
    assert headings("etc/default/opendkim", DEFAULTS) == [(1, 1, "etc/default/opendkim")]
    for key in ("c2VjcmV0IGtleWZpbGU=\n", "Zm9vYmFy==\n", "EMPTY=\n", "127.0.0.1 localhost\n"):
        assert declared_format("etc/default/secret", key) is None
    # elsewhere a file of assignments is as often a dotenv under another name: not read
    for path in ("secrets", "env", "deploy/prod"):
        assert declared_format(path, DEFAULTS) is None


def test_a_long_first_line_is_read_for_its_format_in_linear_time():
    def seconds(size: int) -> float:
        line = "[" + "x" * size
        return fastest_seconds(lambda: parse_text("hosts", line + "]\n" + INVENTORY), repeats=3)

    assert grows_linearly(seconds, 12_500, 100_000, 24)  # quadratic would be 64
    assert headings("hosts", "#" * 100_000 + "\n" + INVENTORY) == []  # its first section past the head read
