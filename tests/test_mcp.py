"""`index mcp` driven by the MCP SDK's own client over stdio, and `index serve --mcp` over
streamable HTTP: list the tools, search, then read a returned citation with `get`."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from helpers import index_command
from hostile import FILES, holds_raw, make_hostile_folder, write_copy
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from serving import ServerProcess, build_sample, plugin_env, plugin_folder, run_index

#: every test starts `index mcp` or `index serve` as a process (make test-fast leaves them out)
pytestmark = pytest.mark.heavy


@pytest.fixture(scope="module")
def plugins(tmp_path_factory) -> Path:
    return plugin_folder(tmp_path_factory.mktemp("plugins"))


@pytest.fixture(scope="module")
def sample_db(tmp_path_factory, plugins) -> Path:
    db = tmp_path_factory.mktemp("mcp") / "index.db"
    return build_sample(db, plugin_env(plugins), model="m")


async def search_then_get(session: ClientSession) -> tuple[list, dict, dict]:
    """What an agent does: list the tools, search, read the first hit's citation."""
    await session.initialize()
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    searched = await session.call_tool("search", {"query": "puncture", "k": 3, "mode": "keyword"})
    assert not searched.is_error, searched.content
    hits = searched.structured_content["result"]
    passage = await session.call_tool("get", {"citation": hits[0]["citation"]})
    assert not passage.is_error, passage.content
    missing = await session.call_tool("get", {"citation": "no/such/file.md"})
    assert missing.is_error
    assert "not in the index" in missing.content[0].text
    return list(tools.values()), hits, passage.structured_content


def check_answers(tools: list, hits: list[dict], passage: dict) -> None:
    by_name = {tool.name: tool for tool in tools}
    assert set(by_name) == {"search", "get", "status"}
    assert "citation" in by_name["search"].description
    assert "paths" in by_name["search"].description
    assert set(by_name["search"].input_schema["properties"]) >= {
        *("query", "k", "mode", "paths", "types", "roots", "min_score", "rerank", "rerank_top")
    }
    assert by_name["search"].input_schema["required"] == ["query"]
    assert 1 <= len(hits) <= 3
    assert all("puncture" in hit["text"].lower() for hit in hits)
    first = hits[0]
    assert first["citation"] == f"{first['path']}:{first['start_line']}-{first['end_line']}"
    assert passage["text"] == first["text"]
    assert passage["path"] == first["path"]


def test_index_mcp_over_stdio_with_the_sdk_client(sample_db, plugins):
    command, *args = index_command()
    server = StdioServerParameters(
        command=command, args=[*args, "mcp", "--db", str(sample_db)], env=plugin_env(plugins)
    )

    async def session() -> tuple[list, dict, dict]:
        async with stdio_client(server) as (read, write), ClientSession(read, write) as client:
            answers = await search_then_get(client)
            status = await client.call_tool("status", {})
            assert status.structured_content["chunks"] > 0
            assert json.loads(status.content[0].text)["model"] == "m"
            return answers

    check_answers(*anyio.run(session))


def test_index_serve_mounts_mcp_over_streamable_http(sample_db, plugins, tmp_path):
    with ServerProcess(sample_db, "--mcp", env=plugin_env(plugins), log=tmp_path / "serve.log") as server:

        async def session() -> tuple[list, dict, dict]:
            async with streamable_http_client(server.url + "/mcp") as streams:
                async with ClientSession(streams[0], streams[1]) as client:
                    return await search_then_get(client)

        check_answers(*anyio.run(session))
        assert server.get("/health").status_code == 200


def test_bad_arguments_are_a_tool_error_in_one_line_and_many_filters_are_answered(sample_db, plugins):
    """What the HTTP API answers 422 to is a tool error saying what is wrong, not an opaque one."""
    command, *args = index_command()
    server = StdioServerParameters(
        command=command, args=[*args, "mcp", "--db", str(sample_db)], env=plugin_env(plugins)
    )
    guide = "bicycle-repair/fixing-a-flat-tyre.md"
    refused = [
        ("search", {"query": "ty\0re"}, "the question 'ty\\x00re' holds a NUL byte"),
        ("search", {"query": "tyre", "paths": ["a\0"]}, "path 'a\\x00' holds a NUL byte"),
        ("search", {"query": "tyre", "types": ["m\0d"]}, "type 'm\\x00d' holds a NUL byte"),
        ("get", {"citation": f"{guide}:5-1"}, f"{guide}:5-1 runs backwards: ask for {guide}:1-5"),
        ("get", {"citation": guide, "root": "/x\0"}, "root '/x\\x00' holds a NUL byte"),
    ]
    many = [f"nowhere{number}/*" for number in range(600)] + ["cooking/*"]

    async def session() -> tuple[list, list]:
        async with stdio_client(server) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            errors = []
            for tool, arguments, _ in refused:
                answer = await client.call_tool(tool, arguments)
                errors.append(answer.content[0].text if answer.is_error else None)
            pizza = {"query": "best pizza in naples", "mode": "keyword"}
            assert (await client.call_tool("search", pizza)).structured_content["result"] == []
            lowered = await client.call_tool("search", {**pizza, "min_score": 0})
            assert lowered.structured_content["result"]
            filtered = await client.call_tool("search", {"query": "tyre", "paths": many, "k": 3})
            assert not filtered.is_error, filtered.content
            return errors, filtered.structured_content["result"]

    errors, hits = anyio.run(session)
    for error, (_, _, message) in zip(errors, refused, strict=True):
        assert error is not None
        assert message in error
        assert "\n" not in error
    assert hits
    assert {hit["path"].split("/")[0] for hit in hits} == {"cooking"}


def test_an_agent_reads_hostile_names_and_text_as_visible_escapes(plugins, tmp_path):
    folder = make_hostile_folder(tmp_path / "docs")
    copy = write_copy(folder)
    db = tmp_path / "hostile.db"
    env = plugin_env(plugins)
    built = run_index(
        "build", str(folder), "--db", str(db), "--backend", "hash-plugin", "--model", "m", env=env
    )
    assert built.returncode == 0, built.stderr
    command, *args = index_command()
    server = StdioServerParameters(command=command, args=[*args, "mcp", "--db", str(db)], env=env)

    async def session() -> tuple[list, dict, str]:
        async with stdio_client(server) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            question = {"query": "espresso", "mode": "keyword", "min_score": 0, "k": 10}
            searched = await client.call_tool("search", question)
            passage = await client.call_tool("get", {"citation": "new\nline.md:1-3"})
            missing = await client.call_tool("get", {"citation": "gone\x1b]0;x\x07.md"})
            return searched.structured_content["result"], passage.structured_content, missing.content[0].text

    hits, passage, missing = anyio.run(session)
    assert len(hits) == len(FILES)  # the copy is folded into the note it copies
    assert holds_raw(json.dumps(hits, ensure_ascii=False)) == []
    shown = {hit["path"]: hit for hit in hits}["new\\x0aline.md"]
    assert [copy_["citation"] for copy_ in shown["copies"]] == [copy]
    assert shown["copies"][0]["root"] == shown["root"]
    assert shown["heading"] == "Title \\x1b]0;pwned\\x07 | piped"
    assert "txt.\\u202eexe" in shown["snippet"] and "\n" in shown["text"]
    assert passage["path"] == "new\\x0aline.md" and "\\x1b[2J cleared\\x0dhidden" in passage["text"]
    assert holds_raw(missing) == [] and "gone\\x1b]0;x\\x07.md is not in the index" in missing
