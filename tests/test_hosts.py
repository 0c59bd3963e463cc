"""DNS rebinding: `index serve` answers only requests whose Host names it (the address it serves,
loopback, or a name given with --allowed-host), on every route, the MCP one included; the others
get 421. Sent over raw sockets, so the Host header is exactly the one written."""

from __future__ import annotations

import json
import socket

import pytest
from serving import ServerProcess, build_sample, plugin_env, plugin_folder, run_index

from indexer.serving.hosts import HostRule, host_name

ROUTES = [
    ("GET", "/"),
    ("GET", "/docs"),
    ("GET", "/static/app.js"),
    ("GET", "/search?q=tyre"),
    ("GET", "/chunks/bicycle-repair/fixing-a-flat-tyre.md:1-5"),
    ("GET", "/status"),
    ("GET", "/health"),
    ("GET", "/openapi.json"),
    ("GET", "/page/settings"),
    ("POST", "/mcp"),
]
MCP_LIST_TOOLS = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, str]:
    return plugin_env(plugin_folder(tmp_path_factory.mktemp("plugins")))


@pytest.fixture(scope="module")
def server(tmp_path_factory, env):
    folder = tmp_path_factory.mktemp("hosts")
    db = build_sample(folder / "index.db", env)
    with ServerProcess(
        db, "--mcp", "--allowed-host", "Docs.Example", env=env, log=folder / "serve.log"
    ) as running:
        yield running


def status_of(port: int, method: str, path: str, host: str | None) -> int:
    """The status code of one request to 127.0.0.1:``port`` carrying exactly ``host`` as Host."""
    body = MCP_LIST_TOOLS.encode() if method == "POST" else b""
    # HTTP/1.1 without a Host is refused by uvicorn itself (400); 1.0 allows it, the check must not
    lines = [f"{method} {path} HTTP/{'1.1' if host is not None else '1.0'}"]
    if host is not None:
        lines.append(f"Host: {host}")
    lines += ["Connection: close", f"Content-Length: {len(body)}"]
    if method == "POST":
        lines += ["Content-Type: application/json", "Accept: application/json, text/event-stream"]
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        answer = b""
        while b"\r\n" not in answer:
            received = connection.recv(4096)
            if not received:
                break
            answer += received
    return int(answer.split(b" ", 2)[1])


@pytest.mark.heavy
@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_every_route_answers_its_own_names_and_refuses_a_foreign_host_with_421(server, method, path):
    port = server.address["port"]
    for host in (
        f"127.0.0.1:{port}",
        f"localhost:{port}",
        f"LOCALHOST:{port}",
        "docs.example",
        f"[::1]:{port}",
    ):
        assert status_of(port, method, path, host) == 200, host
    for host in ("attacker.example", f"attacker.example:{port}", f"127.0.0.1.attacker.example:{port}", None):
        assert status_of(port, method, path, host) == 421, host


@pytest.mark.heavy
def test_a_refused_host_gets_a_json_error_naming_the_way_to_allow_it(server):
    with socket.create_connection(("127.0.0.1", server.address["port"]), timeout=30) as connection:
        connection.sendall(b"GET /status HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n")
        answer = b""
        while received := connection.recv(4096):
            answer += received
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 421")
    assert b"content-security-policy" in head.lower()
    error = json.loads(body)["error"]
    assert "attacker.example" in error
    assert "--allowed-host" in error
    assert server.get("/status").json()["files"] > 0  # the server answers its own name still


@pytest.mark.heavy
def test_a_bad_allowed_host_is_a_usage_error(tmp_path, env):
    refused = run_index(
        "serve", "--db", str(tmp_path / "none.db"), "--allowed-host", "a/b", env=env, timeout=60
    )
    assert refused.returncode == 2
    assert "--allowed-host" in refused.stderr
    assert "'a/b'" in refused.stderr


def test_the_names_of_a_served_address():
    loopback = HostRule.serving("127.0.0.1", ["docs.example"])
    assert loopback.admits("127.0.0.1:8765")
    assert loopback.admits("localhost")
    assert loopback.admits("[::1]:1")
    assert loopback.admits("docs.example:9000")  # a tunnel or a proxy changes the port, not the name
    assert not loopback.admits("10.0.0.7:8765")  # not an address this server listens on
    assert not loopback.admits("localhost.attacker.example")
    assert not loopback.admits("")
    everywhere = HostRule.serving("0.0.0.0")
    assert everywhere.admits("192.0.2.10:8765")
    assert everywhere.admits("[2001:db8::1]:8765")
    assert not everywhere.admits("attacker.example:8765")
    assert HostRule.serving("::").any_address
    assert HostRule.serving("[::1]").admits("[::1]:80")
    assert HostRule.serving("192.0.2.10").admits("192.0.2.10:8765")
    assert loopback.admits_origin("http://localhost:8765")
    assert not loopback.admits_origin("http://attacker.example")
    assert not loopback.admits_origin("null")


@pytest.mark.parametrize(
    ("value", "name"),
    [
        ("Localhost:8765", "localhost"),
        ("[::1]:8765", "::1"),
        ("[::1]", "::1"),
        ("docs.example.", "docs.example."),
        ("docs.example:http", None),
        ("[nothost]:80", None),
        ("a b", None),
        ("", None),
        ("user@docs.example", None),
    ],
)
def test_the_name_in_a_host_header(value, name):
    assert host_name(value) == name
