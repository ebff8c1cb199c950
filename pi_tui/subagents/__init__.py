"""Context management by delegation: the ``task`` tool (a child ``AgentSession`` with a fresh
context whose final answer is all the parent sees), agent definitions, and the ``todo`` tool.

A room (ARCHITECTURE.md): it imports ``core``, ``agent``, ``providers``, ``tools`` and
``resources`` only. What it needs from above — a child session, the parent's session file and
events — it receives as the callables and protocols defined here, passed in by ``sdk.py``.
"""
