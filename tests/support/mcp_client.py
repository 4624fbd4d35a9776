"""The MCP package's own client against `mem mcp` run as a subprocess on the fake models
(tests/support/fake_mem.py): what the MCP tests and others that talk to the server share."""

from __future__ import annotations

import os
import sys

import anyio
import jsonschema
from locations import FAKE_MEM, ROOT
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import Implementation


def server_env() -> dict[str, str]:
    env = {key: os.environ[key] for key in ("MEM_DIR", "MEM_MODELS_DIR", "MEM_CONFIG_DIR")}
    return env | {"PYTHONPATH": str(ROOT)}


def session(scenario, *, client: str = "test-assistant", mode: str = "auto"):
    """Run `scenario(client)` against a fresh `mem mcp` subprocess; returns what the scenario returns."""
    async def main():
        params = StdioServerParameters(command=sys.executable, args=[str(FAKE_MEM), "mcp"], env=server_env())
        async with Client(params, client_info=Implementation(name=client, version="1.0"), mode=mode,
                          read_timeout_seconds=60) as connected:
            return await scenario(connected)

    return anyio.run(main)


async def schemas(client) -> dict:
    if not hasattr(client, "schemas"):
        client.schemas = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
    return client.schemas


async def call(client, tool: str, **arguments) -> dict:
    """The structured result, checked against the tool's outputSchema; the text block is compact lines."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    jsonschema.validate(result.structured_content, (await schemas(client))[tool])
    assert all(not block.text.lstrip().startswith("{") for block in result.content)
    return result.structured_content


async def text_of(client, tool: str, **arguments) -> str:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    return "".join(block.text for block in result.content)


async def error(client, tool: str, **arguments) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    return result.content[0].text
