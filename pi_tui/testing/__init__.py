"""Test doubles for every wire: the room the product never imports.

- ``script`` — the script format (turns, ``when``, faults) every double reads;
  ``script_faults`` — the ways a reply breaks (cuts, stalls, garbage, slow drips).
- ``scripted.ScriptedProvider`` — the in-process provider (no socket) for tests and the SDK.
- ``fake_server`` (OpenAI-compatible), ``fake_anthropic_server`` (Messages API),
  ``responses_fake`` (OpenAI Responses), ``gemini_fake`` (Gemini): strict local HTTP fakes on
  127.0.0.1 built on ``fake_base``; ``fake_cli`` is their shared ``python -m`` command line.

Who may import this room: ``tests/``, ``bench/``, ``examples/`` and the demo entry
(``pi_tui/demo.py``, ``make demo``); no other module of ``pi_tui`` (tests/architecture says so).
The real wires and these doubles share only the failure wording in ``providers/stream_failures``.

The wheel ships neither this package nor the demo (pyproject.toml excludes both): they run from a
checkout (``make demo``, the README's "try it offline"), and an installed pi-tui carries no fakes.
"""
