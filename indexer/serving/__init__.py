"""Serving an index to agents and applications: ``index serve`` (HTTP, and MCP over HTTP),
``index mcp`` (MCP on stdio), and how ``index query`` finds a running server.

The server's libraries (FastAPI, uvicorn, the MCP SDK) are the optional ``serve`` extra; only
:mod:`indexer.serving.discovery`, which the CLI imports, is standard library.
"""
