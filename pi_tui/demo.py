"""``make demo``: the real TUI on the scripted provider, no API key needed.

A scratch project is created in a temp folder and a short tour plays by itself: a streamed answer
with thinking, tool calls with output, an edit shown as a diff, a manual compaction, and a move in
the session tree that leaves a branch summary behind. Then the app is yours: type anything (the
scripted model answers with a short note), try /tree, /context, /session, ctrl+o, ctrl+t.

``python -m pi_tui.demo --no-tour`` starts with the same project and script but plays nothing.
``--wire anthropic`` plays the same script over real HTTP through the strict local fake of
Anthropic's Messages API (``testing/fake_anthropic_server.py``) as ``anthropic/claude-sonnet-4-5``
with thinking on: pi-tui's own Anthropic client, signed thinking, cache markers and cache-billed
usage in the footer.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

DEMO_FILE = '''"""A tiny app the demo edits."""

import json
from pathlib import Path


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def main() -> None:
    config = load(Path("config.json"))
    print(f"Hello, {config['name']}!")


if __name__ == "__main__":
    main()
'''

TOUR_PROMPTS = [
    "Look around this project and make load() read the file as UTF-8.",
    "/compact keep the file names",
    "Now also add a test for load().",
]

_AGENT = {"has_tools": True}
_SUMMARY = {"last_user_contains": "<conversation>"}

SUMMARY_TEXT = """## Goal
UTF-8 reads in `load()` (app.py).

## Done
- `read_text(encoding="utf-8")`"""

BRANCH_TEXT = """## Goal
Add a test for load().

## Progress
- A test was started on the abandoned branch, not finished.

## Next Steps
1. Decide whether tests belong in tests/ first."""


def demo_script() -> list[dict[str, Any]]:
    edit_args = {
        "path": "app.py",
        "edits": [{"oldText": "    return json.loads(path.read_text())",
                   "newText": '    return json.loads(path.read_text(encoding="utf-8"))'}],
    }
    return [
        {"when": _AGENT, "chunk_size": 6, "chunk_delay_ms": 12,
         "thinking": "The user wants UTF-8 reads. First I should see what is in the project, "
                     "then read app.py to find the read_text call.",
         "text": "I'll start by looking at the project layout.",
         "tool_calls": [{"name": "bash", "arguments": {"command": "ls -la && wc -l app.py"}}]},
        {"when": _AGENT, "chunk_size": 6, "chunk_delay_ms": 12,
         "text": "There is one module. Let me read it.",
         "tool_calls": [{"name": "read", "arguments": {"path": "app.py"}}]},
        {"when": _AGENT, "chunk_size": 6, "chunk_delay_ms": 12,
         "text": "`load()` calls `read_text()` without an encoding, so it depends on the locale. Fixing it:",
         "tool_calls": [{"name": "edit", "arguments": edit_args}]},
        {"when": _AGENT, "chunk_size": 5, "chunk_delay_ms": 10,
         "text": "Done. `load()` now reads UTF-8 explicitly:\n\n"
                 "```python\ndef load(path: Path) -> dict:\n"
                 "    return json.loads(path.read_text(encoding=\"utf-8\"))\n```\n\n"
                 "- **Why:** the default encoding differs between machines\n"
                 "- **Risk:** none for ASCII files; non-UTF-8 files now fail loudly\n"},
        {"when": _SUMMARY, "text": SUMMARY_TEXT},
        {"when": _AGENT, "chunk_size": 6, "chunk_delay_ms": 12,
         "thinking": "A round-trip test with a non-ASCII name shows the encoding is explicit.",
         "text": "I'll add `tests/test_app.py` with a round-trip test for `load()`.",
         "tool_calls": [{"name": "write", "arguments": {
             "path": "tests/test_app.py",
             "content": "from pathlib import Path\n\nfrom app import load\n\n\n"
                        "def test_load_reads_utf8(tmp_path: Path) -> None:\n"
                        "    p = tmp_path / 'c.json'\n    p.write_text('{\"name\": \"é\"}', encoding='utf-8')\n"
                        "    assert load(p) == {'name': 'é'}\n"}}]},
        {"when": _AGENT, "text": "The test is written. Run it with `pytest -q`."},
        {"when": _SUMMARY, "text": BRANCH_TEXT},
        *[{"when": _AGENT, "chunk_size": 4, "chunk_delay_ms": 10,
           "text": "(demo) I'm the scripted provider, so my answers are canned. Try **/tree**, "
                   "**/context**, **/session**, **ctrl+o** (expand tools) or **ctrl+t** (thinking)."}
          for _ in range(20)],
    ]


def make_project(root: Path) -> Path:
    project = root / "demo-project"
    project.mkdir(parents=True, exist_ok=True)
    (project / "app.py").write_text(DEMO_FILE, encoding="utf-8")
    (project / "config.json").write_text('{"name": "pi-tui"}\n', encoding="utf-8")
    (project / "README.md").write_text("# demo project\n\nCreated by `make demo`.\n", encoding="utf-8")
    return project


class Tour:
    """Plays ``TOUR_PROMPTS`` one after the other, then moves back in the tree with a summary."""

    def __init__(self, app: Any, session: Any) -> None:
        self.app = app
        self.session = session
        self.steps: list[str] = list(TOUR_PROMPTS)

    def start(self) -> None:
        self.app.set_timer(0.6, self._next)

    async def _next(self) -> None:
        chat = self.app.chat
        if chat is None:
            return
        if self.steps:
            text = self.steps.pop(0)
            await chat.submit(text)
            self.app.set_timer(0.3, self._wait_idle)
            return
        await self._branch()

    async def _wait_idle(self) -> None:
        busy = any(w.is_running for w in self.app.chat.workers if w.group == "agent")
        if busy or self.session.state.is_streaming or self.session.state.is_compacting:
            self.app.set_timer(0.3, self._wait_idle)
        else:
            self.app.set_timer(1.0, self._next)

    async def _branch(self) -> None:
        """Go back to just before the last user message, summarizing the branch left behind."""
        from pi_tui.modes.interactive.messages import SessionReplaced

        branch = self.session.session_manager.get_branch()
        users = [e for e in branch if e.get("type") == "message" and e["message"].get("role") == "user"]
        if not users:
            return
        target = users[-1]["id"]
        result = await self.session.navigate_tree(target, summarize=True)
        text = getattr(result, "editor_text", None) if result is not None else None
        self.app.chat.post_message(SessionReplaced("Moved back in the tree; the abandoned branch was summarized",
                                                   text if isinstance(text, str) else None))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pi_tui.demo", description=__doc__.split("\n")[0])
    parser.add_argument("--no-tour", action="store_true", help="start without playing the tour")
    parser.add_argument("--dir", help="where to create the demo project (default: a temp folder)")
    parser.add_argument("--wire", choices=("scripted", "anthropic"), default="scripted",
                        help="scripted: in-process provider; anthropic: the local Anthropic fake over HTTP")
    args = parser.parse_args(argv)
    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="pi-tui-demo-"))
    project = make_project(root)
    agent_dir = root / "agent"
    agent_dir.mkdir(exist_ok=True)
    os.environ["PI_CODING_AGENT_DIR"] = str(agent_dir)
    os.chdir(project)

    from pi_tui.modes.interactive import build_app
    from pi_tui.sdk import create_agent_session
    from pi_tui.testing.scripted import ScriptedProvider

    # A small keep-recent budget so /compact has something to summarize in a short demo.
    settings = {"compaction": {"keepRecentTokens": 80}}
    server = None
    if args.wire == "anthropic":
        import json

        from pi_tui.testing.fake_anthropic_server import FakeAnthropicServer

        server = FakeAnthropicServer(demo_script(), api_key="sk-ant-demo").start()
        models = {"providers": {"anthropic": {"baseUrl": server.base_url, "apiKey": "sk-ant-demo"}}}
        (agent_dir / "models.json").write_text(json.dumps(models))
        session = create_agent_session(cwd=project, agent_dir=agent_dir, model="anthropic/claude-sonnet-4-5",
                                       settings=settings, load_extensions=False)
    else:
        session = create_agent_session(cwd=project, agent_dir=agent_dir, provider=ScriptedProvider(demo_script()),
                                       settings=settings, load_extensions=False)
    app = build_app(session, cwd=project, agent_dir=agent_dir, warm=False)
    if not args.no_tour:
        tour = Tour(app, session)
        app.after_first_frame.append(tour.start)
    try:
        code = app.run()
    finally:
        if server is not None:
            server.stop()
    sys.stdout.flush()
    sys.stderr.write(f"demo project left in {project}\n")
    return int(code or 0)


if __name__ == "__main__":
    raise SystemExit(main())
