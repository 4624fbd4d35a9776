"""`mem mcp`: the store as an MCP server on stdio (server.py), its tools declared one way (toolbox.py)."""
