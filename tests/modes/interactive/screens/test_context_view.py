"""ContextScreen: one row per part of the next request, its tokens, notes and text."""

from __future__ import annotations

from pathlib import Path

from pi_tui.core.context.convert import convert_to_llm
from pi_tui.core.context.preview import build_request_preview, request_fingerprints
from pi_tui.core.messages import user_message
from pi_tui.core.provider import CompletionRequest, ModelInfo, ToolSpec
from pi_tui.modes.interactive.screens.context_view import ContextScreen
from pi_tui.modes.interactive.screens.row_list import RowList
from tests.modes.interactive.screens.builders import ScreenHost, build_branched_session

TOOLS = [
    ToolSpec(name=name, description=f"The {name} tool.", parameters={"type": "object", "properties": {}})
    for name in ("read", "bash", "edit", "write")
]
SYSTEM = "You are an expert coding assistant operating inside pi, a coding agent harness."


def branched_preview(tmp_path: Path):
    session = build_branched_session(tmp_path, tmp_path / "sessions")
    manager = session.manager
    manager.branch(session.old_leaf)  # the compacted branch
    before = manager.build_session_context().messages
    request = CompletionRequest(model=ModelInfo(provider="fake", id="fake-model"), system_prompt=SYSTEM, messages=convert_to_llm(before), tools=TOOLS)
    manager.append_message(user_message("what changed since the compaction?"))
    return build_request_preview(
        system_prompt=SYSTEM,
        tools=TOOLS,
        messages=manager.build_session_context().messages,
        previous=request_fingerprints(request),
        model_ref="fake/fake-model",
        context_window=8000,
        last_cache_read_tokens=0,
    )


async def test_rows_tokens_and_detail(tmp_path: Path):
    preview = branched_preview(tmp_path)
    screen = ContextScreen(preview)
    app = ScreenHost(screen)
    async with app.run_test(size=(120, 40)) as pilot:
        rows = screen.query_one("#context-parts", RowList)
        assert rows.row_count == len(preview.parts) == 8
        lines = [str(screen.part_row(index)) for index in range(rows.row_count)]
        names = [part.name for part in preview.parts]
        assert names == [
            "System prompt",
            "Tools (4): read, bash, edit, write",
            "compaction summary",
            "user",  # the first kept entry
            "assistant",
            "user",
            "assistant",
            "user",  # the new prompt: the only part a prompt cache could not reuse
        ]
        assert preview.prefix_reuse_tokens == preview.total_tokens - preview.parts[-1].tokens
        for line, part in zip(lines, preview.parts, strict=True):
            assert line[5:41].rstrip() == part.name and line[41:50].strip() == f"{part.tokens:,}"
        assert lines[2].startswith("  1  compaction summary")
        assert lines[2].rstrip().endswith("compaction: replaces 1,496 tokens of earlier history")
        totals = str(screen.query_one("#context-title").render())
        assert f"{preview.total_tokens:,} of 8,000 tokens" in totals
        cache = str(screen.query_one("#context-cache").render())
        assert f"{preview.prefix_reuse_tokens:,} tokens" in cache
        await pilot.press("down", "down")
        assert screen.selected_index == 2
        detail = str(screen.query_one("#context-detail-text").render())
        assert detail.startswith("The conversation history before this point was compacted")
        await pilot.press("escape")
        assert app.results == [None]
