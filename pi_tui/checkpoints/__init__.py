"""Checkpoints (issue 20): the private git store of the project's files, snapshots and their
restore, and the binding of snapshots to session tree entries.

A room (ARCHITECTURE.md, docs/internals.md "Rooms"): it imports ``core``, ``agent``,
``providers``, ``tools`` and ``resources`` only — never ``session``, ``sdk``, ``modes``,
``extensions``, ``testing`` nor the other wave-3 rooms. What it needs from above it receives as a
Protocol or a callable defined here, passed in by ``session/`` or ``sdk.py``
(tests/architecture checks it)."""
