"""Where streamed assistant text is cut into segments: never inside a fenced code block, and
nothing lost or doubled, however the text arrives."""

from __future__ import annotations

from typing import Any

import pytest
from markdown_it import MarkdownIt
from textual.app import App, ComposeResult

from pi_tui.modes.interactive.widgets.markdown_stream import (
    SEGMENT_CHARS,
    SettledMarkdown,
    StreamedMarkdown,
    split_markdown,
)

CODE = "".join(f"line_{i} = {i}\n" for i in range(40))  # longer than a segment, no blank line

# Each text has a fenced block in which a blank line comes more than SEGMENT_CHARS into the
# segment, followed by a line that does not look indented: a cut there would show the rest of the
# code as prose and the prose after it as code.
FENCED = {
    "info string inside a fence is code": "intro\n\n```text\n```python\n" + CODE + "\nfoo\n```\n\nafter\n",
    "backticks inside a tilde fence": "intro\n\n~~~\n```\n" + CODE + "\nfoo\n~~~\n\nafter\n",
    "shorter fence inside a longer one": "intro\n\n````md\n```\n" + CODE + "\nfoo\n````\n\nafter\n",
    "fence opened on a list item line": (
        "intro\n\n- ```bash\n  echo 1\n  ```\n\nPara\n\n```python\n" + CODE + "\ny = 2\n```\n\nafter\n"),
    "fence in a block quote": "intro\n\n> ```\n> quoted\n> ```\n\n```python\n" + CODE + "\nz = 3\n```\n\nafter\n",
}


def _fence_lines(text: str) -> list[tuple[int, int]]:
    """The line ranges of every fenced block, as CommonMark (markdown-it) parses ``text``."""
    tokens = MarkdownIt("commonmark").parse(text)
    return [tuple(t.map) for t in tokens if t.type == "fence" and t.map]  # type: ignore[misc]


def _cut_lines(text: str, parts: list[str]) -> list[int]:
    """The line number of the blank line at each cut between ``parts``."""
    lines, offset = [], 0
    for part in parts[:-1]:
        offset = text.index(part, offset) + len(part)
        lines.append(text.count("\n", 0, offset) + 1)
    return lines


@pytest.mark.parametrize("name", FENCED)
def test_finished_text_is_never_cut_inside_a_fenced_block(name: str):
    text = FENCED[name]
    parts = split_markdown(text)
    for line in _cut_lines(text, parts):
        assert not any(start < line < end for start, end in _fence_lines(text)), (line, parts)
    assert "\n\n".join(parts) == text


class Host(App[None]):
    def __init__(self, child: Any) -> None:
        super().__init__()
        self.child = child

    def compose(self) -> ComposeResult:
        yield self.child


@pytest.mark.parametrize("name", FENCED)
async def test_streamed_text_is_never_cut_inside_a_fenced_block(name: str):
    text = FENCED[name]
    view = StreamedMarkdown()
    async with Host(view).run_test(size=(100, 40)) as pilot:
        for start in range(0, len(text), 7):  # small fragments, each shown before the next
            await view.write(text[start:start + 7])
            await view._flush()
        await view.finish()
        await pilot.pause()
        parts = [s.source for s in view.query(SettledMarkdown)]
        assert "\n\n".join(parts) == text
        for line in _cut_lines(text, parts):
            assert not any(start < line < end for start, end in _fence_lines(text)), (line, parts)
        assert len(text) > SEGMENT_CHARS


async def test_assistant_text_can_be_selected_with_the_mouse():
    block = SettledMarkdown("中文 **beta** gamma delta.\n\nSecond paragraph here.")
    async with Host(block).run_test(size=(60, 10)) as pilot:
        await pilot.pause()
        region = block.content_region
        await pilot.mouse_down(offset=(region.x + 5, region.y))  # "中文 " is five cells wide
        await pilot.hover(offset=(region.x + 14, region.y))
        await pilot.mouse_up(offset=(region.x + 14, region.y))  # inclusive
        await pilot.pause()
        assert block.app.screen.get_selected_text() == "beta gamma"
        # The selected cells are painted as selected.
        selected_style = block.app.screen.get_component_rich_style("screen--selection")
        painted = block.render_line(0)
        assert any(selected_style.bgcolor == segment.style.bgcolor for segment in painted if segment.text.strip())
