"""MCP servers (docs/mcp.md): configuration and trust (``config.py``, ``trust.py``), the client
manager that connects in the background (``manager.py``, ``connection.py``; the ``mcp`` SDK is
imported there only, and only once a server is configured), and their tools as registry tools
(``tools.py``, ``results.py``, ``names.py``). A room: it imports core, agent, providers, tools and
resources, never session, sdk, modes or extensions."""
