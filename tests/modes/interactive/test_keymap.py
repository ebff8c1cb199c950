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
