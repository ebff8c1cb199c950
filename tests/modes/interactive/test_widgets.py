"""Widgets on their own, in a minimal host app (no session)."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult

from pi_tui.modes.interactive.bridge import SessionBridge
from pi_tui.modes.interactive.messages import AgentEventsBatched
from pi_tui.modes.interactive.widgets.assistant_message import AssistantMessageView
from pi_tui.modes.interactive.widgets.conversation import (
    HISTORY_BATCH,
    Conversation,
    EarlierMessages,
)
from pi_tui.modes.interactive.widgets.markdown_stream import (
    SEGMENT_CHARS,
    SettledMarkdown,
    StreamedMarkdown,
    split_markdown,
)
from pi_tui.modes.interactive.widgets.tool_call import ToolCallPanel


class Host(App[None]):
    def __init__(self, *children: Any) -> None:
        super().__init__()
        self._children = children

    def compose(self) -> ComposeResult:
        yield from self._children


def _turns(count: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for i in range(count):
        messages.append({"role": "user", "content": [{"type": "text", "text": f"question {i}"}], "timestamp": i})
        messages.append({
            "role": "assistant", "timestamp": i, "stopReason": "toolUse", "api": "x", "provider": "p", "model": "m",
            "usage": {}, "content": [{"type": "text", "text": f"answer {i}"},
                                     {"type": "toolCall", "id": f"c{i}", "name": "bash",
                                      "arguments": {"command": f"echo {i}"}}],
        })
        messages.append({"role": "toolResult", "toolCallId": f"c{i}", "toolName": "bash",
                         "content": [{"type": "text", "text": f"out {i}"}], "isError": False, "timestamp": i})
    return messages


def test_split_markdown_never_cuts_inside_a_code_fence():
    code = "```\n" + "\n\n".join(f"line {i}" for i in range(400)) + "\n```"
    text = "intro\n\n" + code + "\n\n" + "tail paragraph"
    parts = split_markdown(text, limit=100)
    assert "".join(parts).replace("\n", "") == text.replace("\n", "")
    assert all(part.count("```") % 2 == 0 for part in parts)


async def test_long_history_mounts_only_the_end_and_pairs_results_across_batches():
    conversation = Conversation()
    async with Host(conversation).run_test(size=(100, 30)) as pilot:
        await conversation.load_history(_turns(40))  # 80 shown messages
        await pilot.pause()
        views = conversation.query(AssistantMessageView)
        assert len(views) == HISTORY_BATCH // 2
        assert conversation.unrendered_count == 80 - HISTORY_BATCH
        assert isinstance(conversation.children[0], EarlierMessages)
        last_panel = conversation.tool_panels["c39"]
        assert last_panel.state.status == "ok" and last_panel.state.output == "out 39"
        await conversation.load_earlier()
        await pilot.pause()
        assert len(conversation.query(AssistantMessageView)) == HISTORY_BATCH
        first_shown = conversation.query(AssistantMessageView).first()
        assert "c24" in first_shown.panels  # earlier batch mounted above, in order


async def test_streamed_text_is_settled_in_segments():
    view = StreamedMarkdown()
    async with Host(view).run_test(size=(100, 30)) as pilot:
        paragraph = "word " * 100 + "\n\n"
        for _ in range(12):
            await view.write(paragraph)
        await view.finish()
        await pilot.pause()
        assert view.text == paragraph * 12
        settled = view.query(SettledMarkdown)
        assert len(settled) >= 2
        assert all(len(s.source) <= SEGMENT_CHARS + len(paragraph) for s in settled)
        assert "".join(s.source + "\n\n" for s in settled).split() == view.text.split()


async def test_tool_panel_states():
    panel = ToolCallPanel("c1", "bash", {"command": "make"})
    async with Host(panel).run_test(size=(100, 20)) as pilot:
        panel.start()
        panel.update_partial({"content": [{"type": "text", "text": "building"}]})
        await pilot.pause(0.1)
        assert panel.has_class("-running") and "building" in str(panel.render())
        panel.finish({"content": [{"type": "text", "text": "boom"}], "details": None}, is_error=True)
        assert panel.has_class("-error") and "✗ error" in str(panel.border_subtitle)


def test_bridge_batches_events_until_taken():
    class Target:
        def __init__(self) -> None:
            self.posted: list[Any] = []

        def post_message(self, message: Any) -> bool:
            self.posted.append(message)
            return True

    class Source:
        def subscribe(self, listener: Any) -> Any:
            self.listener = listener
            return lambda: None

    target, source = Target(), Source()
    bridge = SessionBridge(target)  # type: ignore[arg-type]
    bridge.attach(source)
    for i in range(3):
        source.listener({"type": "message_update", "i": i})
    assert len(target.posted) == 1 and isinstance(target.posted[0], AgentEventsBatched)
    batch = bridge.take(target.posted[0].events)
    assert [e["i"] for e in batch] == [0, 1, 2]
    source.listener({"type": "agent_end"})
    assert len(target.posted) == 2 and target.posted[1].events == [{"type": "agent_end"}]
