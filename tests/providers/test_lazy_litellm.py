"""litellm costs seconds to import: only a real model call may load it (ARCHITECTURE.md rule 3)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest


def _heavy_modules_after(code: str, env_home: Path) -> list[str]:
    script = code + "\nimport sys, json\nprint(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('litellm', 'openai'))))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         env={"HOME": str(env_home), "PATH": "/usr/bin:/bin", "PI_CODING_AGENT_DIR": str(env_home / "agent")})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "code",
    [
        # importing every provider module, the adapter included, must not import litellm
        "import pi_tui.providers.models, pi_tui.testing.fake_server, pi_tui.testing.scripted, "
        "pi_tui.providers.litellm_provider, pi_tui.providers.litellm_convert, pi_tui.providers.litellm_encode, pi_tui.core.overflow, "
        "pi_tui.providers.gemini_http, pi_tui.testing.gemini_fake, pi_tui.providers.anthropic_http, pi_tui.providers.responses_http",
        # resolving models and reading litellm's catalog
        "from pi_tui.providers.models import ModelRegistry\n"
        "r = ModelRegistry(None, env={})\nassert r.resolve('anthropic/claude-sonnet-4-5').context_window == 200000",
        # a whole scripted stream
        "import asyncio\nfrom pi_tui.testing.scripted import ScriptedProvider\n"
        "from pi_tui.core.provider import CompletionRequest, ModelInfo\nfrom pi_tui.core.messages import user_message\n"
        "async def main():\n"
        "    async for _ in ScriptedProvider([{'text': 'hi'}]).stream(CompletionRequest(model=ModelInfo(provider='f', id='m'), "
        "system_prompt='', messages=[user_message('x')])):\n        pass\nasyncio.run(main())",
        # the fake server answering a request
        "import json, urllib.request\nfrom pi_tui.testing.fake_server import FakeServer\n"
        "with FakeServer([{'text': 'hi'}]) as s:\n"
        "    urllib.request.urlopen(urllib.request.Request(s.base_url + '/chat/completions', data=b'{}')).read()",
        # --list-models
        "import io, contextlib\nfrom pi_tui.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n    main(['--list-models'])",
    ],
    ids=["imports", "resolve", "scripted", "fake-server", "list-models"],
)
def test_litellm_is_not_loaded(code: str, tmp_path: Path) -> None:
    assert _heavy_modules_after(code, tmp_path) == []


def test_preloading_litellm_sets_the_safety_switches_first(tmp_path: Path) -> None:
    code = (
        "import os\nfrom pi_tui.providers.litellm_provider import is_loaded, load_litellm, preload\n"
        "assert not is_loaded()\npreload().join()\nassert is_loaded()\nm = load_litellm()\n"
        "assert os.environ['LITELLM_OFFLINE_MODE'] == 'true', 'offline'\n"
        "assert os.environ['LITELLM_MODE'] == 'PRODUCTION', 'mode'\n"
        "assert m.suppress_debug_info is True\n"
        "assert os.path.isdir(os.environ['TIKTOKEN_CACHE_DIR'])\n"
    )
    assert "litellm" in _heavy_modules_after(code, tmp_path)
