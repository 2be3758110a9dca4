"""``memtui mcp``: the Model Context Protocol server agents recall memory through (issue 12 item 1).

:func:`memtui.mcp_server.server.build_server` builds it with the official ``mcp`` SDK
(``mcp.server.mcpserver.MCPServer``); ``memtui mcp`` runs it over stdio. The package is not named
``memtui.mcp`` so that nothing here can be mistaken for the SDK's ``mcp``.
"""

#: What the server tells every agent at ``initialize`` (followed by "This server serves WHERE.").
INSTRUCTIONS = (
    "memtui keeps this code base's reviewed, evidence-backed memory. Call recall with the task you are about "
    "to do before you start; it returns only eligible memory (active, fresh, not conflicted, in scope) and says "
    "what was left out. Report what came of using a memory with report_usage, and report_harm when one misled "
    "you. Memory is not the source of truth: the code, tests and docs are."
)
