"""`mem mcp`: the store served to AI assistants over MCP on stdio."""

from __future__ import annotations

import click

from memcli.cli.common import Env, pass_env


@click.command(name="mcp")
@pass_env
def mcp(env: Env) -> None:
    """Serve this store to AI assistants over MCP on stdin/stdout.

    Tools: memory_write, memory_search, memory_list, memory_get, memory_delete, memory_context,
    and for conversations thread_append, thread_context and thread_list.
    The models stay loaded between calls; each call first takes in what changed on disk (other
    processes, an editor, git). Logs go to stderr. Needs the `mcp` extra: pip install 'memcli[mcp]'.

    \b
    A desktop assistant's configuration (e.g. claude_desktop_config.json):
      {"mcpServers": {"mem": {"command": "mem", "args": ["mcp"]}}}
    """
    from memcli.mcp.server import serve

    serve(env.mem())


COMMANDS = [mcp]
