"""``/template`` in the TUI (a picker, or ``/template NAME args`` expanded like ``/NAME args``) and
the slash-completion rows, which stay one line with their source tag visible."""

from __future__ import annotations

from pathlib import Path

import pytest

from pi_tui.modes.interactive.screens.template_picker import TemplatePickerScreen
from pi_tui.modes.interactive.widgets.chat_items import ErrorBlock
from pi_tui.modes.interactive.widgets.completion import CompletionMenu
from pi_tui.modes.interactive.widgets.editor import PromptEditor
from pi_tui.testing.scripted import ScriptedProvider
from tests.modes.interactive.conftest import ready, settle, wait_for

LONG_DESCRIPTION = ("Write focused tests for a module: read it first, find the behaviour worth pinning, "
                    "then cover the edge cases one by one")


def _templates(project: Path) -> None:
    prompts = project / ".pi" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "greet.md").write_text("---\ndescription: Greet someone\nargument-hint: <name>\n---\nSay hello to $1.\n")
    (prompts / "zz-long.md").write_text(
        f"---\ndescription: \"{LONG_DESCRIPTION}\"\nargument-hint: \"<module path> [behaviour to focus on first]\"\n---\n"
        "Test $1.\n")


async def _type(pilot, text: str) -> None:
    await ready(pilot)
    pilot.app.screen.query_one(PromptEditor).insert(text)
    await pilot.pause()


async def _send(pilot, text: str) -> None:
    await _type(pilot, text)
    await pilot.press("enter")
    await settle(pilot.app, pilot)


async def test_template_alone_opens_a_picker_that_fills_the_editor(make_app, project):
    _templates(project)
    provider = ScriptedProvider([])
    app, _ = make_app(provider=provider)
    async with app.run_test(size=(100, 30)) as pilot:
        await _send(pilot, "/template")
        await wait_for(pilot, lambda: isinstance(app.screen, TemplatePickerScreen))
        picker = app.screen
        names = [t.name for t in picker.shown]
        assert names[:2] == ["greet", "zz-long"]  # project templates, then the built-in ones
        row = picker.template_row(0).plain
        assert row.startswith("/greet") and "<name>" in row and "Greet someone" in row and row.endswith("[project]")
        await pilot.press(*"long")
        assert [t.name for t in picker.shown] == ["zz-long"]
        long_row = picker.template_row(0).plain
        assert "…" in long_row and long_row.endswith("  [project]")  # cut, tag kept
        await pilot.press("enter")
        await wait_for(pilot, lambda: type(app.screen).__name__ == "ChatScreen")
        assert app.screen.query_one(PromptEditor).text == "/zz-long "
        assert provider.requests == []  # nothing was sent


async def test_template_name_and_args_expand_like_the_template_itself(make_app, project):
    _templates(project)
    provider = ScriptedProvider([{"text": "Hello, Ada!"}])
    app, _ = make_app(provider=provider)
    async with app.run_test(size=(100, 30)) as pilot:
        await _send(pilot, "/template greet Ada")
        request = provider.requests[0]
        assert request.messages[-1]["content"] == [{"type": "text", "text": "Say hello to Ada."}]
        await _send(pilot, "/template gret Ada")
        errors = [e.message for e in app.screen.query(ErrorBlock)]
        assert any("No prompt template named 'gret'. Templates: " in e and "greet" in e for e in errors)
        assert len(provider.requests) == 1  # the typo was not sent


async def test_the_picker_keeps_descriptions_readable_on_a_narrow_terminal(make_app, project):
    """The picker is for finding a template without knowing its name, so at 60 columns the
    description keeps a readable part and the argument hint gives way first (it kept 30 cells
    and left the description 4: '/zz-long  <module path> [behaviour to fo…  Wri…  [project]')."""
    _templates(project)
    app, _ = make_app([])
    async with app.run_test(size=(60, 30)) as pilot:
        await _send(pilot, "/template")
        await wait_for(pilot, lambda: isinstance(app.screen, TemplatePickerScreen))
        await pilot.pause()
        row = app.screen.template_row(app.screen.shown.index(
            next(t for t in app.screen.shown if t.name == "zz-long"))).plain
        assert row.startswith("/zz-long") and row.endswith("  [project]") and len(row) <= 60
        assert "<module" in row  # the hint is cut, not dropped
        assert "Write focused tests" in row, row


@pytest.mark.parametrize("width", [80, 60])
async def test_completion_rows_stay_one_line_with_the_source_visible(make_app, project, width):
    _templates(project)
    app, _ = make_app([])
    async with app.run_test(size=(width, 30)) as pilot:
        await _type(pilot, "/zz")
        menu = app.screen.query_one(CompletionMenu)
        await wait_for(pilot, lambda: menu.display and bool(menu.items))
        await pilot.pause()
        assert menu.virtual_size.height == len(menu.items) == 1  # no row wrapped onto a second line
        line = menu.render_line(0).text.rstrip()
        assert line.lstrip().startswith("/zz-long") and "…" in line and line.endswith("[template]")
        await pilot.press("backspace", "backspace")
        await pilot.pause()
        assert menu.virtual_size.height == len(menu.items) > 1


def test_a_part_cut_to_nothing_is_dropped_not_left_as_a_lone_ellipsis():
    """At some widths the description had room only for its two separating spaces and one cell:
    it became a bare ``…`` glued to the hint's own ``…`` (``<module pa……  [template]``). A part
    cut that far is dropped; a part that is kept shows at least one character before its ``…``."""
    from pi_tui.modes.interactive.widgets.completion import CompletionItem, item_prompt

    item = CompletionItem(label="/test", replacement="/test ", source="template",
                          hint="<module path> [behaviour to focus on first]", description=LONG_DESCRIPTION)
    for width in range(40, 81):
        row = item_prompt(item, 27, width).plain
        assert len(row) <= width and row.endswith("  [template]"), (width, row)
        assert "……" not in row and " …" not in row, (width, row)
