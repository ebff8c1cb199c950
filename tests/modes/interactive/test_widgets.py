"""Widgets on their own, in a minimal host app (no session)."""

from __future__ import annotations

import asyncio
from typing import Any

from textual.app import App, ComposeResult

from pi_tui.modes.interactive.bridge import BATCH_SECONDS, SessionBridge, coalesce_deltas
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


class _Target:
    """Stands in for the chat screen: records what the bridge posts."""

    def __init__(self) -> None:
        self.posted: list[Any] = []

    def post_message(self, message: Any) -> bool:
        self.posted.append(message)
        return True


class _Source:
    """Stands in for the session: the test calls its listener."""

    def subscribe(self, listener: Any) -> Any:
        self.listener = listener
        return lambda: None


def _bridge_pair() -> tuple[_Target, _Source, SessionBridge]:
    target, source = _Target(), _Source()
    bridge = SessionBridge(target)  # type: ignore[arg-type]
    bridge.attach(source)
    return target, source, bridge


def test_bridge_batches_events_until_taken():
    target, source, bridge = _bridge_pair()
    for i in range(3):
        source.listener({"type": "message_update", "i": i})
    assert len(target.posted) == 1 and isinstance(target.posted[0], AgentEventsBatched)
    batch = bridge.take(target.posted[0].events)
    assert [e["i"] for e in batch] == [0, 1, 2]
    source.listener({"type": "agent_end"})
    assert len(target.posted) == 2 and target.posted[1].events == [{"type": "agent_end"}]


def _delta(kind: str, index: int, text: str, n: int = 0) -> dict[str, Any]:
    return {"type": "message_update", "n": n,
            "assistantMessageEvent": {"type": kind, "contentIndex": index, "delta": text}}


def test_coalesce_deltas_merges_runs_of_one_block_only():
    events = [_delta("text_delta", 0, "a", 1), _delta("text_delta", 0, "b", 2), _delta("thinking_delta", 1, "x", 3),
              _delta("text_delta", 0, "c", 4), {"type": "tool_execution_start"},
              _delta("text_delta", 0, "d", 5), _delta("text_delta", 0, "e", 6), _delta("text_delta", 2, "f", 7),
              {"type": "message_update", "assistantMessageEvent": {"type": "toolcall_delta", "contentIndex": 3}}]
    merged = coalesce_deltas(events)
    deltas = [(e.get("assistantMessageEvent") or {}).get("delta") for e in merged]
    assert deltas == ["ab", "x", "c", None, "de", "f", None]
    # The merged event is the run's last one (newest partial message), with the run's text.
    assert merged[0]["n"] == 2 and merged[4]["n"] == 6
    assert events[0]["assistantMessageEvent"]["delta"] == "a"  # the inputs are not mutated


async def test_bridge_gathers_a_burst_into_one_screen_message():
    target, source, bridge = _bridge_pair()
    for i in range(300):  # one token each, as a fast stream read on the UI loop delivers them
        source.listener(_delta("text_delta", 0, f"t{i} "))
    assert target.posted == []  # not posted yet: the batch waits for the next frame
    await asyncio.sleep(BATCH_SECONDS * 3)
    assert len(target.posted) == 1
    batch = bridge.take(target.posted[0].events)
    assert len(batch) == 1 and batch[0]["assistantMessageEvent"]["delta"] == "".join(f"t{i} " for i in range(300))


async def test_settled_segments_render_once_per_width_while_the_stream_grows(monkeypatch: Any):
    from pi_tui.modes.interactive.widgets import markdown_stream

    renders: list[str] = []
    original = markdown_stream._rich_markdown

    def counting(text: str) -> Any:
        renders.append(text[:12])
        return original(text)

    monkeypatch.setattr(markdown_stream, "_rich_markdown", counting)
    view = StreamedMarkdown()
    async with Host(view).run_test(size=(100, 30)) as pilot:
        paragraph = "word " * 100 + "\n\n"
        for i in range(12):
            await view.write(f"p{i:02d} " + paragraph)
            await view._flush()
            await pilot.pause()
        await view.finish()
        await pilot.pause()
        settled = view.query(SettledMarkdown)
        assert len(settled) == 12 and not any(s.live for s in settled)
        # Each segment was rendered while it was live (and once more if the width changed when
        # the scrollbar appeared), then never again however many frames later text caused.
        for i in range(11):
            key = (f"p{i:02d} " + paragraph)[:12]
            assert 1 <= renders.count(key) <= 2, (key, renders)


async def test_cached_markdown_follows_a_theme_change():
    block = SettledMarkdown("Some **bold** text and `code`.")
    host = Host(block)
    async with host.run_test(size=(60, 10)) as pilot:
        await pilot.pause()
        before = [str(segment.style) for strip in block.lines_for(block.size.width) for segment in strip]
        host.theme = "textual-light" if host.theme != "textual-light" else "nord"
        await pilot.pause()
        after = [str(segment.style) for strip in block.lines_for(block.size.width) for segment in strip]
        assert after != before  # the cached lines were rendered again in the new theme's colours


async def test_drained_events_are_not_handled_again_by_a_posted_batch():
    target, source, bridge = _bridge_pair()
    source.listener({"type": "message_start", "n": 1})
    await asyncio.sleep(BATCH_SECONDS * 3)
    assert len(target.posted) == 1  # posted, not yet handled by the screen
    source.listener({"type": "message_end", "n": 2})
    assert [e["n"] for e in bridge.drain()] == [1, 2]  # a session switch handles them first
    assert bridge.take(target.posted[0].events) == []  # the queued batch no longer carries them
    source.listener({"type": "agent_end", "n": 3})
    await asyncio.sleep(BATCH_SECONDS * 3)
    assert [e["n"] for e in bridge.take(target.posted[-1].events)] == [3]


async def test_crlf_answers_are_cut_into_segments_like_lf_ones():
    view = StreamedMarkdown()
    async with Host(view).run_test(size=(100, 30)) as pilot:
        paragraph = "word " * 100
        text = "\r\n\r\n".join(f"p{i} {paragraph}" for i in range(6))
        for i in range(0, len(text), 9):  # "\r" and "\n" arrive in different flushes too
            await view.write(text[i:i + 9])
            if i % 45 == 0:
                await view._flush()
        await view.finish()
        await pilot.pause()
        parts = [s.source for s in view.query(SettledMarkdown)]
        assert len(parts) >= 3
        assert "\n\n".join(parts) == text.replace("\r\n", "\n")
        assert view.text == text
    assert split_markdown(text) == parts


async def test_segments_are_one_blank_line_apart_whatever_block_starts_them():
    first, second, third = SettledMarkdown("Here is the plan:"), SettledMarkdown("- step one\n- step two"), \
        SettledMarkdown("```\ncode = 1\n```")
    async with Host(first, second, third).run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        for block in (first, second, third):
            lines = [strip.text.strip() for strip in block.lines_for(block.size.width)]
            assert lines[0] and lines[-1], (block.source, lines)  # no blank edge: the margin separates
        assert [s.text.strip() for s in second.lines_for(second.size.width)] == ["• step one", "• step two"]
        assert second.region.y == first.region.bottom + 1  # exactly the one-line margin between them
