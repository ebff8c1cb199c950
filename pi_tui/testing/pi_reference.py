"""Where pi 0.73.1 — the agent pi-tui is measured against — is installed for side-by-side tests.

``make pi-ref`` installs it from the npm registry into ``.pi-ref/`` at the repository root, from the
committed lock in ``tests/pi_ref/`` (``.ci/run`` does this, so the interop tests run in CI). ``PI_REF``
names another install folder (one holding ``node_modules/@mariozechner/pi-coding-agent``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

PI_VERSION = "0.73.1"
_REPO_ROOT = Path(__file__).resolve().parents[2]
PI_REF = Path(os.environ.get("PI_REF") or _REPO_ROOT / ".pi-ref")
PI_PACKAGE = PI_REF / "node_modules/@mariozechner/pi-coding-agent"
PI_BIN = Path(os.environ.get("PI_REF_BIN") or PI_REF / "node_modules/.bin/pi")
PI_CLI = PI_PACKAGE / "dist/cli.js"
PI_INDEX = PI_PACKAGE / "dist/index.js"


def pi_missing_reason() -> str | None:
    """Why the side-by-side tests cannot run here, or None when pi and node are both present."""
    if shutil.which("node") is None:
        return "node is not on PATH: pi 0.73.1 cannot run (.ci/run installs nodejs)"
    if not PI_CLI.is_file():
        return f"pi {PI_VERSION} is not installed at {PI_REF}: run `make pi-ref` (or set PI_REF)"
    return None
