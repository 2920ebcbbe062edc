"""``foldmem mcp``: the memory as Model Context Protocol tools and resources, for agents
(Claude Desktop, Cursor, any MCP client), over an embedded data dir or a running API."""
