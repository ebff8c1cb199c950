"""What stands between launch and the first frame: only Textual and the chat screen itself."""

from __future__ import annotations

import json
import subprocess
import sys


def test_the_app_module_loads_neither_the_engine_nor_litellm_nor_markdown():
    code = (
        "import json, sys\n"
        "import pi_tui.modes.interactive.app\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    modules = set(json.loads(out.stdout.strip().splitlines()[-1]))
    heavy = {m for m in modules if m.split(".")[0] in ("litellm", "openai", "markdown_it", "tiktoken")}
    engine = {m for m in modules if m.startswith(("pi_tui.sdk", "pi_tui.session", "pi_tui.agent", "pi_tui.tools"))}
    assert heavy == set()
    assert engine == set()
