"""litellm's import starts as early as it can, and only for models litellm carries.

Print/JSON/RPC mode start it on a thread at process start (``modes/litellm_warmup.py``); the TUI
starts it, with litellm's first-call work, after its first frame. Everything runs in a fresh
interpreter, where "is litellm loaded?" means something.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pi_tui.modes.interactive.app import LoadedSession, PiApp
from pi_tui.sdk import create_agent_session
from pi_tui.testing.fake_server import FakeServer
from pi_tui.testing.scripted import ScriptedProvider
from tests.modes.interactive.conftest import wait_for

GEMINI = {"google": {"baseUrl": "http://127.0.0.1:9/v1beta", "api": "google-generative-ai", "apiKey": "gk",
                     "models": [{"id": "gemini-2.5-flash", "reasoning": True}]}}


def _run(code: str, agent: Path, cwd: Path, *, force_litellm: bool = False) -> dict[str, object]:
    env = {"HOME": str(agent.parent), "PATH": "/usr/bin:/bin", "PI_CODING_AGENT_DIR": str(agent)}
    if force_litellm:  # Gemini has its own client now; forced, it is a litellm-carried model again
        env["PI_TUI_FORCE_LITELLM"] = "1"
    out = subprocess.run([sys.executable, "-c", code + "\nimport json, sys\nprint(json.dumps(RESULT))"], capture_output=True,
                         text=True, timeout=180, env=env, cwd=cwd)
    assert out.returncode == 0, out.stderr
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _agent(tmp_path: Path, providers: dict[str, object]) -> tuple[Path, Path]:
    agent, cwd = tmp_path / "agent", tmp_path / "project"
    agent.mkdir()
    cwd.mkdir()
    (agent / "models.json").write_text(json.dumps({"providers": providers}))
    return agent, cwd


EARLY = (
    "import argparse, sys\n"
    "from pi_tui.modes.litellm_warmup import start_early_litellm_import\n"
    "thread = start_early_litellm_import(argparse.Namespace(model={model!r}, provider=None))\n"
    "thread.join(120)\n"
    "RESULT = {{'thread': thread.name, 'loaded': 'litellm' in sys.modules}}\n"
)


def test_print_mode_starts_litellms_import_for_a_litellm_carried_model(tmp_path: Path) -> None:
    agent, cwd = _agent(tmp_path, GEMINI)
    assert _run(EARLY.format(model="google/gemini-2.5-flash"), agent, cwd, force_litellm=True) == {
        "thread": "litellm-early-import", "loaded": True}
    assert _run(EARLY.format(model="groq/llama-3.1-8b-instant"), agent, cwd) == {"thread": "litellm-early-import", "loaded": True}


@pytest.mark.parametrize("model", ["fake/fake-model", "google/gemini-2.5-flash", "gemini/gemini-2.5-flash", None, "nonexistent/what"],
                         ids=["openai-completions", "google-generative-ai", "gemini-builtin", "no-model", "bad-model"])
def test_no_early_import_when_our_own_client_carries_the_model_or_there_is_none(tmp_path: Path, model: str | None) -> None:
    agent, cwd = _agent(tmp_path, {"fake": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "k",
                                            "models": [{"id": "fake-model"}]}, **GEMINI})
    if model is None:
        (agent / "models.json").unlink()
    assert _run(EARLY.format(model=model), agent, cwd)["loaded"] is False


def test_a_whole_print_run_on_an_openai_completions_model_never_imports_litellm(tmp_path: Path) -> None:
    with FakeServer([{"text": "hi there"}]) as server:
        agent, cwd = _agent(tmp_path, {"fake": {"baseUrl": server.base_url, "api": "openai-completions", "apiKey": "k",
                                                "models": [{"id": "fake-model"}]}})
        code = (
            "import sys, threading\nfrom pi_tui.cli import build_parser\nfrom pi_tui.modes.print_mode import run_print_mode\n"
            "from pi_tui.modes.litellm_warmup import start_early_litellm_import\n"
            "args = build_parser().parse_args(['-p', 'say hi', '--model', 'fake/fake-model'])\n"
            "early = start_early_litellm_import(args)\n"
            "code = run_print_mode(args, hard_exit=False)\nearly.join(30)\n"
            "RESULT = {'code': code, 'loaded': sorted(m for m in sys.modules if m.split('.')[0] in ('litellm', 'openai'))}\n"
        )
        assert _run(code, agent, cwd) == {"code": 0, "loaded": []}


def test_the_tuis_warm_up_imports_litellm_and_pays_its_first_call(tmp_path: Path) -> None:
    agent, cwd = _agent(tmp_path, GEMINI)
    code = (
        "import sys\nfrom pathlib import Path\nfrom pi_tui.modes.interactive import load_session\nfrom pi_tui.cli import build_parser\n"
        "loaded = load_session(build_parser().parse_args(['--model', 'google/gemini-2.5-flash']), Path.cwd(), Path(sys.argv[0]).parent)\n"
        "before = 'litellm' in sys.modules\n"
        "thread = loaded.warm_up()\nthread.join(120)\n"
        "RESULT = {'before': before, 'thread': thread.name, 'loaded': 'litellm' in sys.modules,\n"
        "          'first_call_done': 'litellm.llms.gemini.chat.transformation' in sys.modules}\n"
    )
    code = code.replace("Path(sys.argv[0]).parent", f"Path({str(agent)!r})")
    assert _run(code, agent, cwd, force_litellm=True) == {"before": False, "thread": "litellm-preload", "loaded": True, "first_call_done": True}


def test_the_tui_has_no_warm_up_for_a_model_our_own_client_carries(tmp_path: Path) -> None:
    from pi_tui.core.provider import ModelInfo
    from pi_tui.modes.interactive import _litellm_warm_up

    native = ModelInfo(provider="fake", id="m", api="openai-completions", base_url="http://127.0.0.1:9/v1")
    gemini = ModelInfo(provider="google", id="gemini-2.5-flash", api="google-generative-ai", litellm_model="gemini/gemini-2.5-flash")
    groq = ModelInfo(provider="groq", id="llama-3.1-8b-instant", litellm_model="groq/llama-3.1-8b-instant")
    assert _litellm_warm_up(native) is None and _litellm_warm_up(None) is None and _litellm_warm_up(gemini) is None
    assert callable(_litellm_warm_up(groq))


async def test_the_tui_runs_the_warm_up_after_its_first_frame(project: Path, agent_dir: Path) -> None:
    calls: list[object] = []

    def loader() -> LoadedSession:
        session = create_agent_session(cwd=project, agent_dir=agent_dir, provider=ScriptedProvider([]), settings={},
                                       load_extensions=False)
        return LoadedSession(session, warm_up=lambda: calls.append(app.first_frame_at))

    app = PiApp(None, cwd=project, agent_dir=agent_dir, session_loader=loader)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: bool(calls))
    assert calls[0] is not None  # the frame was already on screen when the warm-up started
