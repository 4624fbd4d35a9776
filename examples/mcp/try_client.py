"""Start the MCP server the way a desktop assistant would, from its configuration file, and use it.

    python examples/mcp/try_client.py [examples/mcp/claude_desktop_config.json]

It reads `mcpServers.mem` from the file, launches that command (over stdio, as the assistant does),
lists the tools, writes one memory, searches for it and asks for a 40-token context block. It uses the
store that `mem path` names (set MEM_DIR to try it on a scratch store). Set MEM to the command to
run instead of `mem` (e.g. MEM=".venv/bin/mem"). Needs the MCP package: pip install 'memcli[mcp]'.
"""

import json
import os
import shlex
import sys
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import Implementation


def server_parameters(config_file: Path) -> StdioServerParameters:
    entry = json.loads(config_file.read_text())["mcpServers"]["mem"]
    command = shlex.split(os.environ["MEM"]) if os.environ.get("MEM") else [entry["command"]]
    # The assistant passes only what the entry's "env" says; MEM_* settings are passed on here too.
    env = {key: value for key, value in os.environ.items() if key.startswith("MEM_")} | entry.get("env", {})
    return StdioServerParameters(command=command[0], args=command[1:] + entry.get("args", []), env=env)


async def main(config_file: Path) -> None:
    params = server_parameters(config_file)
    print(f"server: {shlex.join([params.command, *params.args])}")
    async with Client(params, client_info=Implementation(name="try-client", version="1.0")) as client:
        tools = (await client.list_tools()).tools
        print("tools:", ", ".join(tool.name for tool in tools))
        written = await client.call_tool("memory_write", {
            "content": "The design review for the billing service is on Tuesday at 10:00", "tags": ["billing"]})
        memory = written.structured_content
        print(f"memory_write -> {memory['id']} written_by={memory['written_by']} duplicate={memory['duplicate']}")
        found = await client.call_tool("memory_search", {"query": "when is the billing design review", "limit": 1})
        for hit in found.structured_content["memories"]:
            print(f"memory_search -> {hit['id']} score={hit['score']:.3f}: {hit['content']}")
        packed = await client.call_tool("memory_context", {"query": "billing review", "budget": 40})
        print(f"memory_context -> {packed.structured_content['tokens']} of 40 tokens:")
        print(packed.structured_content["text"], end="")
        missing = await client.call_tool("memory_get", {"id": "0000000000"})
        print(f"memory_get of an unknown id -> error: {missing.content[0].text}")


if __name__ == "__main__":
    default = Path(__file__).with_name("claude_desktop_config.json")
    anyio.run(main, Path(sys.argv[1]) if len(sys.argv) > 1 else default)
