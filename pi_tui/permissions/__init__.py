"""Permissions (issue 21): modes, rules (Claude Code syntax, a real shell parser), the bubblewrap
sandbox and its preflight, the network proxy. It asks the user only through a callable the
session hands it (dialog, RPC, ACP), never by importing a mode.

A room (ARCHITECTURE.md, docs/internals.md "Rooms"): it imports ``core``, ``agent``,
``providers``, ``tools`` and ``resources`` only — never ``session``, ``sdk``, ``modes``,
``extensions``, ``testing`` nor the other wave-3 rooms (tests/architecture checks it)."""
