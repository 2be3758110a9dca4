"""``memtui mcp``: the Model Context Protocol server agents recall memory through (issue 12 item 1).

:func:`memtui.mcp_server.server.build_server` builds it with the official ``mcp`` SDK
(``mcp.server.mcpserver.MCPServer``); ``memtui mcp`` runs it over stdio. The package is not named
``memtui.mcp`` so that nothing here can be mistaken for the SDK's ``mcp``.
"""
