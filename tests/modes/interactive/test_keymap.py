from __future__ import annotations

import json

from pi_tui.modes.interactive.keymap import Keymap, to_textual_key


def test_defaults_follow_pi():
    km = Keymap.defaults()
    assert km.keys_for("app.interrupt") == ("escape",)
    assert km.keys_for("app.clear") == ("ctrl+c",)
    assert km.keys_for("app.thinking.cycle") == ("shift+tab",)
    assert km.keys_for("app.model.select") == ("ctrl+l",)
    assert km.keys_for("app.tools.expand") == ("ctrl+o",)
    assert km.keys_for("app.thinking.toggle") == ("ctrl+t",)
    assert km.keys_for("app.message.followUp") == ("alt+enter",)
    assert km.keys_for("app.message.dequeue") == ("alt+up",)
    assert "shift+enter" in km.keys_for("tui.input.newLine")


def test_pi_key_spelling_is_translated():
    assert to_textual_key("esc") == "escape"
    assert to_textual_key("shift+ctrl+p") == "ctrl+shift+p"


def test_keybindings_json_overrides_by_namespaced_id_or_old_name(agent_dir):
    (agent_dir / "keybindings.json").write_text(json.dumps({"app.tools.expand": "ctrl+e", "selectModel": ["f5", "ctrl+l"],
                                                            "app.session.togglePath": "ctrl+x"}))
    km = Keymap.load(agent_dir)
    assert km.keys_for("app.tools.expand") == ("ctrl+e",)
    assert km.keys_for("app.model.select") == ("f5", "ctrl+l")
    assert km.diagnostics == []
    binding_keys = {(b.key, b.action) for b in km.screen_bindings()}
    assert ("ctrl+e", "toggle_tools") in binding_keys and ("ctrl+o", "toggle_tools") not in binding_keys


def test_a_broken_keybindings_file_is_reported_not_fatal(agent_dir):
    (agent_dir / "keybindings.json").write_text("{not json")
    km = Keymap.load(agent_dir)
    assert km.keys_for("app.interrupt") == ("escape",)
    assert len(km.diagnostics) == 1 and "keybindings.json" in km.diagnostics[0]
    (agent_dir / "keybindings.json").write_text(json.dumps({"app.interrupt": 5}))
    km = Keymap.load(agent_dir)
    assert km.keys_for("app.interrupt") == ("escape",) and "app.interrupt" in km.diagnostics[0]


PI_SECTION_8_2_IDS = {
    # id: pi's default keys (pi-behaviour.md §8.2), in pi's spelling
    "app.interrupt": ("escape",), "app.clear": ("ctrl+c",), "app.exit": ("ctrl+d",),
    "app.suspend": ("ctrl+z",), "app.thinking.cycle": ("shift+tab",),
    "app.model.cycleForward": ("ctrl+p",), "app.model.cycleBackward": ("shift+ctrl+p",),
    "app.model.select": ("ctrl+l",), "app.tools.expand": ("ctrl+o",), "app.thinking.toggle": ("ctrl+t",),
    "app.editor.external": ("ctrl+g",), "app.message.followUp": ("alt+enter",),
    "app.message.dequeue": ("alt+up",), "app.session.new": (), "app.session.tree": (),
    "app.session.fork": (), "app.session.resume": (),
    "tui.editor.cursorUp": ("up",), "tui.editor.cursorDown": ("down",),
    "tui.editor.cursorLeft": ("left", "ctrl+b"), "tui.editor.cursorRight": ("right", "ctrl+f"),
    "tui.editor.cursorWordLeft": ("alt+left", "ctrl+left", "alt+b"),
    "tui.editor.cursorWordRight": ("alt+right", "ctrl+right", "alt+f"),
    "tui.editor.cursorLineStart": ("home", "ctrl+a"), "tui.editor.cursorLineEnd": ("end", "ctrl+e"),
    "tui.editor.jumpForward": ("ctrl+]",), "tui.editor.jumpBackward": ("ctrl+alt+]",),
    "tui.editor.pageUp": ("pageUp",), "tui.editor.pageDown": ("pageDown",),
    "tui.editor.deleteCharBackward": ("backspace",), "tui.editor.deleteCharForward": ("delete", "ctrl+d"),
    "tui.editor.deleteWordBackward": ("ctrl+w", "alt+backspace"),
    "tui.editor.deleteWordForward": ("alt+d", "alt+delete"),
    "tui.editor.deleteToLineStart": ("ctrl+u",), "tui.editor.deleteToLineEnd": ("ctrl+k",),
    "tui.editor.yank": ("ctrl+y",), "tui.editor.yankPop": ("alt+y",), "tui.editor.undo": ("ctrl+-",),
    "tui.input.newLine": ("shift+enter", "ctrl+j"), "tui.input.submit": ("enter",), "tui.input.tab": ("tab",),
    "tui.select.up": ("up",), "tui.select.down": ("down",), "tui.select.pageUp": ("pageUp",),
    "tui.select.pageDown": ("pageDown",), "tui.select.confirm": ("enter",), "tui.select.cancel": ("escape",),
}


def test_every_action_of_pi_section_8_2_has_its_id_and_default_keys():
    km = Keymap.defaults()
    for action_id, keys in PI_SECTION_8_2_IDS.items():
        assert km.spelled[action_id] == keys, action_id
    assert km.keys_for("app.model.cycleBackward") == ("ctrl+shift+p",)
    assert km.keys_for("tui.editor.jumpForward") == ("ctrl+right_square_bracket",)
    assert km.keys_for("tui.editor.jumpBackward") == ("alt+ctrl+right_square_bracket",)
    assert km.keys_for("tui.editor.undo") == ("ctrl+minus", "ctrl+underscore")


def test_every_bound_action_names_a_real_handler():
    from pi_tui.modes.interactive.chat_screen import ChatScreen
    from pi_tui.modes.interactive.keymap import ACTIONS
    from pi_tui.modes.interactive.widgets.editor import PromptEditor

    for action in ACTIONS:
        owner = {"app": ChatScreen, "editor": PromptEditor}.get(action.scope)
        if owner is not None:
            name = action.handler.split("(")[0]  # "cursor_left(True)": a handler with arguments
            assert callable(getattr(owner, f"action_{name}", None)), action.id


def test_key_spelling_follows_textual_names_and_modifier_order():
    assert to_textual_key("ctrl+alt+]") == "alt+ctrl+right_square_bracket"
    assert to_textual_key("Ctrl+-") == "ctrl+minus"
    assert to_textual_key("pageUp") == "pageup"
    assert to_textual_key("ctrl++") == "ctrl+plus"
    assert to_textual_key("alt+shift+ctrl+x") == "alt+ctrl+shift+x"


def test_old_short_names_work_and_the_namespaced_id_wins(agent_dir):
    (agent_dir / "keybindings.json").write_text(json.dumps({
        "cursorWordLeft": "ctrl+h", "tui.editor.yank": "ctrl+x", "yank": "alt+z", "externalEditor": "f4",
    }))
    km = Keymap.load(agent_dir)
    assert km.keys_for("tui.editor.cursorWordLeft") == ("ctrl+h",)
    assert km.keys_for("tui.editor.yank") == ("ctrl+x",)
    assert km.keys_for("app.editor.external") == ("f4",)
    assert km.diagnostics == []


def test_a_rebinding_replaces_the_default_in_the_editor_bindings(agent_dir):
    (agent_dir / "keybindings.json").write_text(json.dumps({
        "tui.editor.cursorLineStart": "ctrl+x", "tui.editor.deleteCharForward": [],
    }))
    km = Keymap.load(agent_dir)
    bindings = {(b.key, b.action) for b in km.editor_bindings()}
    assert ("ctrl+x", "cursor_line_start") in bindings
    assert ("home", "cursor_line_start") not in bindings and ("ctrl+a", "cursor_line_start") not in bindings
    assert not any(action == "delete_right" for _, action in bindings)
    assert km.describe()[[row[1] for row in km.describe()].index("tui.editor.deleteCharForward")][0] == "(unbound)"


def test_bad_entries_are_diagnostics_naming_the_file_and_the_entry(agent_dir):
    path = agent_dir / "keybindings.json"
    path.write_text(json.dumps({"app.tools.expand": "ctrl+e", "tui.editor.nope": "ctrl+x",
                                "tui.editor.yank": {"key": "ctrl+y"}, "app.clear": ["ctrl+c", 3],
                                "app.clipboard.pasteImage": "ctrl+v"}))
    km = Keymap.load(agent_dir)
    assert km.keys_for("app.tools.expand") == ("ctrl+e",)
    assert km.keys_for("tui.editor.yank") == ("ctrl+y",) and km.keys_for("app.clear") == ("ctrl+c",)
    assert len(km.diagnostics) == 3, km.diagnostics
    assert all(line.startswith(f"{path}: ") for line in km.diagnostics)
    text = "\n".join(km.diagnostics)
    assert "unknown action 'tui.editor.nope'" in text
    assert 'tui.editor.yank must be a key or a list of keys, not {"key": "ctrl+y"}' in text
    assert 'app.clear must be a key or a list of keys, not ["ctrl+c", 3]' in text


async def test_keybinding_problems_show_as_startup_notices(make_app, agent_dir):
    from pi_tui.modes.interactive.widgets.chat_items import Notice
    from tests.modes.interactive.conftest import ready

    (agent_dir / "keybindings.json").write_text(json.dumps({"app.nothing": "ctrl+x"}))
    app, _ = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.pause()
        notices = [n.text for n in app.screen.query(Notice)]
        assert any("keybindings.json" in n and "app.nothing" in n for n in notices), notices


def test_docs_keybindings_lists_every_id_with_its_default_keys():
    import re
    from pathlib import Path

    from pi_tui.modes.interactive.keymap import ACTIONS

    doc = (Path(__file__).parents[3] / "docs" / "keybindings.md").read_text()
    rows = dict(re.findall(r"^\| `([\w.]+)` \| ([^|]+) \|", doc, flags=re.MULTILINE))
    for action in ACTIONS:
        assert action.id in rows, action.id
        assert rows[action.id].strip() == (", ".join(f"`{k}`" for k in action.defaults) or "(unbound)"), action.id


def test_the_docs_example_file_loads_cleanly(agent_dir):
    import re
    from pathlib import Path

    doc = (Path(__file__).parents[3] / "docs" / "keybindings.md").read_text()
    example = re.search(r"```json\n(.*?)```", doc, flags=re.DOTALL)
    assert example is not None
    (agent_dir / "keybindings.json").write_text(example.group(1))
    km = Keymap.load(agent_dir)
    assert km.diagnostics == []
    assert km.keys_for("tui.editor.cursorLineStart") == ("ctrl+x",)
    assert km.keys_for("tui.editor.jumpBackward") == ()
    assert km.keys_for("app.tools.expand") == ("ctrl+e",)


def test_a_key_given_to_another_action_leaves_its_default_owner(agent_dir):
    # ctrl+p is app.model.cycleForward's default; bound by the user to the model picker, the
    # picker gets it (before, the default owner came first and the user's binding never ran).
    (agent_dir / "keybindings.json").write_text(json.dumps({"app.model.select": "ctrl+p",
                                                            "tui.editor.yank": "ctrl+k"}))
    km = Keymap.load(agent_dir)
    assert km.keys_for("app.model.select") == ("ctrl+p",)
    assert km.keys_for("app.model.cycleForward") == ()
    assert km.keys_for("tui.editor.deleteToLineEnd") == ()
    assert [b.action for b in km.screen_bindings() if b.key == "ctrl+p"] == ["select_model"]
    assert [b.action for b in km.editor_bindings() if b.key == "ctrl+k"] == ["yank"]
    rows = {row[1]: row[0] for row in km.describe()}
    assert rows["app.model.cycleForward"] == "(unbound)"
    assert km.diagnostics == []


def test_two_actions_the_user_binds_to_one_key_are_reported(agent_dir):
    path = agent_dir / "keybindings.json"
    path.write_text(json.dumps({"app.model.select": "f5", "app.tools.expand": ["f5", "ctrl+o"]}))
    km = Keymap.load(agent_dir)
    assert km.diagnostics == [
        f"{path}: f5 is bound to both app.model.select and app.tools.expand; app.model.select wins"]
    assert [b.action for b in km.screen_bindings() if b.key == "f5"] == ["select_model", "toggle_tools"]


def test_keys_shared_by_design_are_no_conflict(agent_dir):
    # ctrl+d quits an empty editor and deletes forward in a non-empty one (both defaults).
    (agent_dir / "keybindings.json").write_text(json.dumps({"tui.editor.deleteCharForward": ["delete", "ctrl+d"]}))
    km = Keymap.load(agent_dir)
    assert km.keys_for("app.exit") == ("ctrl+d",)
    assert km.keys_for("tui.editor.deleteCharForward") == ("delete", "ctrl+d")
    assert km.diagnostics == []


def test_every_id_and_old_name_of_pis_own_list_is_accepted():
    """pi 0.73.1's keybindings.js (its ``KEYBINDINGS`` ids and the old short names it maps): a
    keybindings.json that pi reads must load here without an 'unknown action' line."""
    import re
    import shutil

    import pytest

    from pi_tui.testing.pi_reference import PI_INDEX

    dist = PI_INDEX.parents[1] if PI_INDEX.is_file() else None
    sources = [dist / "dist" / "core" / "keybindings.js"] if dist else []
    sources += [dist.parent / "pi-tui" / "dist" / "keybindings.js"] if dist else []
    if not sources or not all(path.is_file() for path in sources) or shutil.which("node") is None:
        pytest.skip(f"LOUD SKIP: pi 0.73.1 is not installed at {PI_INDEX}: its key ids are not compared")
    text = "\n".join(path.read_text() for path in sources)
    ids = set(re.findall(r'^\s+"((?:app|tui)\.[\w.]+)": \{', text, re.M))
    old_names = set(re.findall(r'^\s+(\w+): "(?:app|tui)\.[\w.]+",', text, re.M))
    assert len(ids) > 60 and len(old_names) > 40  # the patterns still match pi's file
    keymap = Keymap.defaults()
    keymap.apply(dict.fromkeys(sorted(ids | old_names), "f12"), source="pi.json")
    unknown = [line for line in keymap.diagnostics if "unknown action" in line]
    assert unknown == []
