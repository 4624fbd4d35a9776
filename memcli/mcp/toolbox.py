"""How a tool is declared, so every tool of `mem mcp` behaves the same way.

A feature adds its tools in its own module with a `register(box: Toolbox)` function (listed in
memcli/mcp/server.py) and declares each one with `@box.tool(...)`:

    @box.tool(Found, read_only=True)
    async def memory_search(query: Annotated[str, Field(description="...")]) -> CallToolResult:
        \"\"\"What it returns and when to use it, for a model choosing a tool.\"\"\"
        hits = await box.run(lambda mem: search(mem, query))
        return reply({"memories": [...]}, "one line per hit")

What the declaration gives every tool: an `outputSchema` from the TypedDict (the structured result is
checked against it before it leaves), annotations (read-only, destructive, idempotent; none of them
reach outside the store), arguments a client did not declare refused, argument errors worded as
plain sentences, and library errors (memcli.errors) as tool errors carrying their message alone.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ConfigDict, ValidationError


def reply(structured: dict[str, Any], *texts: str) -> CallToolResult:
    """A tool result: `structured` for programs (matching the tool's outputSchema), and the text blocks
    a model reads, written for it: compact lines, not the JSON again."""
    return CallToolResult(content=[TextContent(type="text", text=text) for text in texts if text],
                          structured_content=structured)


class Toolbox:
    """The tools of one server, and the worker their library calls run on."""

    def __init__(self, run: Callable):
        self.run = run  # `await box.run(lambda mem: ...)`: on the server's worker thread (server.Worker)
        self.tools: list[Tool] = []

    def tool(self, output: type, *, read_only: bool = False, destructive: bool = False,
             idempotent: bool = False, title: str | None = None):
        """Declare the decorated function as a tool whose structured result is an `output`."""
        def declare(fn: Callable) -> Callable:
            annotations = ToolAnnotations(title=title, read_only_hint=read_only,
                                          destructive_hint=None if read_only else destructive,
                                          idempotent_hint=True if read_only else idempotent,
                                          open_world_hint=False)
            tool = Tool.from_function(fn, description=inspect.cleandoc(fn.__doc__ or ""),
                                      annotations=annotations, structured_output=False)
            strict = type(f"{tool.name}Arguments", (tool.fn_metadata.arg_model,),
                          {"model_config": ConfigDict(extra="forbid", arbitrary_types_allowed=True)})
            tool.fn_metadata = FuncMetadata(arg_model=strict, output_model=output)
            tool.fn_metadata.output_schema = inlined(tool.fn_metadata.output_schema)
            tool.parameters = inlined(strict.model_json_schema(by_alias=True))
            self.tools.append(tool)
            return fn

        return declare


def inlined(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with each `$ref` into `$defs` replaced by the definition (ours are not recursive): a
    client reads and checks it without resolving references (the SDK's client checks every result
    against it, a third faster so), and clients that do not follow `$ref` read it whole."""
    definitions = schema.get("$defs", {})

    def resolve(node):
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return resolve({**definitions[ref.removeprefix("#/$defs/")],
                                **{key: value for key, value in node.items() if key != "$ref"}})
            return {key: resolve(value) for key, value in node.items() if key != "$defs"}
        if isinstance(node, list):
            return [resolve(item) for item in node]
        return node

    return resolve(schema)


def plain(error: ValidationError, accepted: list[str]) -> str:
    """Pydantic's report as sentences a model can act on: which argument, what is wrong with it."""
    sentences = []
    for item in error.errors():
        name = ".".join(str(part) for part in item["loc"]) or "the arguments"
        if item["type"] == "extra_forbidden":
            sentences.append(f"`{name}` is not an argument of this tool (it takes {', '.join(accepted)}).")
        elif item["type"] == "missing":
            sentences.append(f"`{name}` is required.")
        else:
            message = item["msg"][0].lower() + item["msg"][1:]
            sentences.append(f"`{name}`: {message}.")
    return " ".join(dict.fromkeys(sentences))


class Server(MCPServer):
    """MCPServer serving a Toolbox, whose tool errors read as plain sentences, without the SDK's
    "Error executing tool" prefix or validation dumps and links."""

    def __init__(self, box: Toolbox, **settings):
        super().__init__(tools=box.tools, **settings)
        self.accepted = {tool.name: list(tool.parameters.get("properties", {})) for tool in box.tools}

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(plain(cause, self.accepted.get(name, []))) from None
            if isinstance(cause, ToolError):
                raise ToolError(str(cause)) from None
            raise

    async def run_stdio_async(self) -> None:
        """stdio as the SDK serves it, except that a malformed line gets its JSON-RPC error (memcli/mcp/stdio.py)."""
        from memcli.mcp.stdio import answering_stdio_server

        async with answering_stdio_server() as (read_stream, write_stream):
            await self._lowlevel_server.run(read_stream, write_stream,
                                            self._lowlevel_server.create_initialization_options())


def client_name(ctx: Context) -> str:
    """`mcp:<name>` from the clientInfo the client sent when it connected: what its writes record."""
    params = ctx.session.client_params
    name = " ".join((params.client_info.name if params and params.client_info else "").split())
    return f"mcp:{name or 'unknown'}"
