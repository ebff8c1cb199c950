"""The built-in slash commands (pi-behaviour.md §8.1), run from the chat screen.

``run`` returns False for anything that is not a built-in, so templates, ``/skill:`` and extension
commands go to ``session.prompt`` (which expands them) like any other text. Screens are pushed with
a callback; the session work they lead to runs in ``agent``-group workers.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pi_tui.core.messages import assistant_text
from pi_tui.modes.interactive.commands import BUILTIN_NAMES
from pi_tui.modes.interactive.formatting import format_cost, format_thousands
from pi_tui.modes.interactive.messages import SessionReplaced
from pi_tui.modes.interactive.widgets.chat_items import ErrorBlock

if TYPE_CHECKING:
    from pi_tui.modes.interactive.screen_port import ChatScreenPort

NOTHING_TO_COMPACT = "Nothing to compact (no messages yet)"


def _editor_text_of(result: Any) -> str | None:
    if isinstance(result, str):
        return result
    for name in ("editor_text", "editorText", "selected_text"):
        value = result.get(name) if isinstance(result, dict) else getattr(result, name, None)
        if isinstance(value, str):
            return value
    return None


class SlashRunner:
    def __init__(self, screen: ChatScreenPort) -> None:
        self.screen = screen

    @property
    def session(self) -> Any:
        return self.screen.session

    async def notice(self, text: str, severity: str = "info") -> None:
        await self.screen.conversation.add_notice(text, severity=severity)

    async def run(self, name: str, args: str) -> bool:
        if name.startswith("mcp__") and getattr(self.session, "mcp", None) is not None:
            from pi_tui.modes.interactive.mcp_flow import run_mcp_prompt

            return await run_mcp_prompt(self.screen, name, args)
        if name not in BUILTIN_NAMES:
            return False
        if name == "template" and (args or self._has_template_named("template")):
            return False  # ``/template NAME args``: the session expands it like ``/NAME args``
        if name == "quit":
            self.screen.pi.exit()
            return True
        if name == "hotkeys":
            await self._hotkeys()
            return True
        if self.session is None:
            await self.notice(f"/{name} needs a session; configure a model first.", "warning")
            return True
        await getattr(self, f"_cmd_{name}")(args)
        return True

    # ------------------------------------------------------------------ context

    async def _cmd_compact(self, args: str) -> None:
        messages = [e for e in self.session.session_manager.get_branch() if e.get("type") == "message"]
        if len(messages) < 2:
            await self.notice(NOTHING_TO_COMPACT, "warning")
            return
        self.screen.run_worker(self._compact(args or None), group="agent", exit_on_error=False)

    async def _compact(self, instructions: str | None) -> None:
        self.screen.renderer.last_compaction_error = None
        try:
            await self.session.compact(instructions)
        except Exception as err:
            # The compaction_end event that reports the failure was emitted before the raise but
            # may still wait in the bridge's batch: handle it first, so the failure shows once.
            await self.screen.handle_pending_events()
            await self._report_compaction_error(str(err))
        finally:
            self.screen.refresh_footer()

    async def _report_compaction_error(self, error: str) -> None:
        shown = self.screen.renderer.last_compaction_error
        if shown is not None and (error in shown or shown in error):
            return
        await self.screen.conversation.add(ErrorBlock(f"Compaction failed: {error.removeprefix('Compaction failed: ')}",
                                                      advice="The conversation is unchanged."))

    async def _cmd_context(self, args: str) -> None:
        from pi_tui.modes.interactive.screens.context_view import ContextScreen
        from pi_tui.modes.interactive.session_view import context_preview

        try:
            preview = context_preview(self.session)
        except Exception as err:
            await self.screen.conversation.add(ErrorBlock(f"Cannot build the request preview: {err}"))
            return
        await self.screen.app.push_screen(ContextScreen(preview))

    # ------------------------------------------------------------------ tree, fork, sessions

    def _setting(self, path: str, default: Any) -> Any:
        settings = getattr(self.session, "settings", None)
        getter = getattr(settings, "get", None)
        if getter is None:
            return default
        try:
            value = getter(path)
        except Exception:
            return default
        return default if value is None else value

    async def _cmd_tree(self, args: str) -> None:
        await self._open_tree()

    async def _open_tree(self, select_id: str | None = None) -> None:
        """The tree navigator, on the current leaf or on ``select_id`` (pi reopens it on the
        chosen entry after a cancelled branch summary, so the user can pick again)."""
        from pi_tui.modes.interactive.checkpoint_flow import files_preview
        from pi_tui.modes.interactive.screens.tree import TreeScreen
        from pi_tui.modes.interactive.screens.tree_rows import TreeFilter

        tree = TreeScreen(
            self.session.session_manager,
            skip_summary_prompt=bool(self._setting("branchSummary.skipPrompt", False)),
            # an unknown value is the screen's "default"
            initial_filter=cast(TreeFilter, str(self._setting("treeFilterMode", "default"))),
            select_id=select_id,
            files_preview=lambda target: files_preview(self.session, target),
        )
        await self.screen.app.push_screen(tree, self._tree_chosen)

    def _tree_chosen(self, choice: Any) -> None:
        if choice is not None:
            self.screen.run_worker(self._navigate(choice), group="agent", exit_on_error=False)

    async def _navigate(self, choice: Any) -> None:
        from pi_tui.modes.interactive.checkpoint_flow import restored_note

        restore = bool(getattr(choice, "restore_files", False))
        waiting = None
        if choice.summarize:
            from pi_tui.modes.interactive.screens.tree_dialogs import SummarizingScreen

            waiting = SummarizingScreen()
            await self.screen.app.push_screen(waiting, self._summary_cancelled)
        try:
            result = await self.session.navigate_tree(
                choice.target_id, summarize=choice.summarize, custom_instructions=choice.custom_instructions,
                **({"restore_files": True} if restore else {}),
            )
        except Exception as err:
            await self.screen.conversation.add(ErrorBlock(f"Could not move in the tree: {err}"))
            return
        finally:
            if waiting is not None:
                waiting.finish()
        if getattr(result, "cancelled", False) or getattr(result, "aborted", False):
            await self.notice("Navigation cancelled; the session is unchanged.", "warning")
            if choice.summarize:
                await self._open_tree(select_id=choice.target_id)
            return
        note = restored_note(getattr(result, "files", None))
        self.screen.post_message(SessionReplaced("Moved in the session tree" + (f" · {note}" if note else ""),
                                                 _editor_text_of(result)))

    def _summary_cancelled(self, cancelled: bool | None) -> None:
        if cancelled:
            self.screen.run_worker(self.session.abort(), exit_on_error=False)

    async def _cmd_fork(self, args: str) -> None:
        from pi_tui.modes.interactive.fork_picker import ForkPickerScreen, user_messages

        choices = user_messages(self.session.session_manager.get_branch())
        if not choices:
            await self.notice("No user messages to fork from yet.", "warning")
            return
        await self.screen.app.push_screen(ForkPickerScreen(choices), self._fork_chosen)

    def _fork_chosen(self, entry_id: str | None) -> None:
        if entry_id:
            self.screen.run_worker(self._fork(entry_id), group="agent", exit_on_error=False)

    async def _fork(self, entry_id: str) -> None:
        from pi_tui.modes.interactive.checkpoint_flow import ask_fork, restored_note

        restore = await ask_fork(self.screen.app, self.session, entry_id)
        if restore is None:
            await self.notice("Fork cancelled; the session is unchanged.", "warning")
            return
        try:
            result = await (self.session.fork(entry_id, restore_files=True) if restore else self.session.fork(entry_id))
        except Exception as err:
            await self.screen.conversation.add(ErrorBlock(f"Fork failed: {err}"))
            return
        note = restored_note(self.session.last_restore) if restore else None
        self.screen.post_message(SessionReplaced("Branched to new session" + (f" · {note}" if note else ""),
                                                 _editor_text_of(result)))

    async def _cmd_subagent(self, args: str) -> None:
        from pi_tui.modes.interactive.screens.child_session import ChildSessionScreen, pick_child

        picked = pick_child(self.session.messages, args)
        if isinstance(picked, str):
            await self.notice(picked, "warning")
            return
        await self.screen.app.push_screen(ChildSessionScreen(picked[0], description=picked[1]))

    async def _cmd_undo(self, args: str) -> None:
        await self._undo_redo("undo")

    async def _cmd_redo(self, args: str) -> None:
        await self._undo_redo("redo")

    async def _undo_redo(self, which: str) -> None:
        from pi_tui.modes.interactive.checkpoint_flow import restored_note
        from pi_tui.session import checkpoint_hooks

        async def run() -> None:
            try:
                result = await getattr(checkpoint_hooks, which)(self.session)
            except Exception as err:
                await self.screen.conversation.add(ErrorBlock(f"/{which}: {err}"))
                return
            note = restored_note(getattr(result, "files", None)) or "no file changed"
            title = "Back to before the last prompt" if which == "undo" else "Redone"
            self.screen.post_message(SessionReplaced(f"{title} · {note}", _editor_text_of(result)))

        self.screen.run_worker(run(), group="agent", exit_on_error=False)

    async def _cmd_new(self, args: str) -> None:
        async def new() -> None:
            if not await self.session.new_session():  # session_before_switch cancelled it
                await self.notice("New session cancelled by an extension; the session is unchanged.", "warning")
                return
            self.screen.post_message(SessionReplaced("New session started"))

        self.screen.run_worker(new(), group="agent", exit_on_error=False)

    async def _cmd_resume(self, args: str) -> None:
        from pi_tui.modes.interactive.screens.session_picker import SessionPickerScreen
        from pi_tui.resources.locations import default_session_dir, sessions_root

        current = self.session.state.session_file
        folder = current.parent if current is not None else default_session_dir(
            self.screen.pi.cwd, setting=getattr(self.session.settings, "session_dir", None))
        picker = SessionPickerScreen(session_dir=folder, sessions_root=sessions_root(), current_session=current,
                                     rename_current=self.session.set_session_name)
        await self.screen.app.push_screen(picker, self._resume_chosen)

    def _resume_chosen(self, chosen: Any) -> None:
        if not chosen:
            return
        self.resume(Path(str(getattr(chosen, "path", chosen))))

    def resume(self, path: Path) -> None:
        """Switch to the session file ``path``: every in-app resume comes here (``/resume``, the
        resume key). As pi's ``handleResumeSession``: when the folder stored in its header is
        gone, "Session cwd not found" is asked first; Continue switches (the session works in
        the current folder, as at start-up), Cancel leaves the current session untouched."""
        self.screen.run_worker(self._resume(path), group="resume", exit_on_error=False)

    async def _resume(self, path: Path) -> None:
        from pi_tui.modes.interactive.screens.confirm import ConfirmScreen
        from pi_tui.modes.session_cwd import PROMPT_TITLE, missing_cwd_of_file, missing_cwd_prompt

        stored = await asyncio.to_thread(missing_cwd_of_file, path)
        note = f"Resumed {path.name}"
        if stored is not None:
            question = ConfirmScreen(PROMPT_TITLE, detail=missing_cwd_prompt(stored, self.screen.pi.cwd))
            if not await self.screen.app.push_screen_wait(question):
                await self.notice("Resume cancelled: the current session was not changed")
                return
            note += " in current cwd"

        async def switch() -> None:
            try:
                switched = await self.session.switch_session(path)
            except Exception as err:
                await self.screen.conversation.add(ErrorBlock(f"Could not open {path}: {err}"))
                return
            if not switched:  # session_before_switch cancelled it: saying "Resumed" would be a lie
                await self.notice("Resume cancelled by an extension; the session is unchanged.", "warning")
                return
            self.screen.post_message(SessionReplaced(note))

        self.screen.run_worker(switch(), group="agent", exit_on_error=False)

    async def _cmd_session(self, args: str) -> None:
        state = self.session.state
        totals = state.totals
        usage = self.session.get_context_usage()
        lines = [
            f"File: {state.session_file or '(in memory)'}",
            f"Id: {state.session_id}" + (f" · name: {state.session_name}" if state.session_name else ""),
            f"Messages: {state.message_count}",
            f"Tokens: ↑{format_thousands(totals.input)} ↓{format_thousands(totals.output)} "
            f"cache read {format_thousands(totals.cache_read)} write {format_thousands(totals.cache_write)}"
            f" · cost {format_cost(totals.cost)}",
            "Context: " + (f"{format_thousands(usage.tokens)} / {format_thousands(usage.context_window)} "
                           f"({usage.percent:.1f}%)" if usage is not None and usage.tokens is not None
                           and usage.percent is not None else "unknown (after a compaction)"),
        ]
        from pi_tui.subagents.child import subagent_usage

        delegated = subagent_usage(self.session.messages)
        if delegated.turns:  # the task tool's children: not part of the tokens above
            lines.append(f"Subagents: {delegated.turns} turns · ↑{format_thousands(delegated.input)} "
                         f"↓{format_thousands(delegated.output)} cache read {format_thousands(delegated.cache_read)} "
                         f"write {format_thousands(delegated.cache_write)} · cost {format_cost(delegated.cost)}")
        await self.notice("\n".join(lines))

    async def _cmd_name(self, args: str) -> None:
        if not args:
            await self.notice("Usage: /name <name>", "warning")
            return
        self.session.set_session_name(args)
        self.screen.refresh_footer()

    # ------------------------------------------------------------------ model, settings, misc

    # ------------------------------------------------------------------ templates

    def _templates(self) -> list[Any]:
        return list(getattr(getattr(self.session, "resources", None), "prompt_templates", None) or [])

    def _has_template_named(self, name: str) -> bool:
        return self.session is not None and any(t.name == name for t in self._templates())

    async def _cmd_template(self, args: str) -> None:
        """``/template`` alone: a picker of the prompt templates; the chosen one is put in the
        editor as ``/NAME `` to add its arguments and send."""
        from pi_tui.modes.interactive.screens.template_picker import TemplatePickerScreen

        templates = self._templates()
        if not templates:
            await self.notice("No prompt templates. Add Markdown files to .pi/prompts/ or ~/.pi/agent/prompts/.",
                              "warning")
            return
        await self.screen.app.push_screen(TemplatePickerScreen(templates), self._template_chosen)

    def _template_chosen(self, template: Any) -> None:
        if template is None:
            return
        self.screen.editor.set_text(f"/{template.name} ")
        self.screen.editor.focus()

    async def _cmd_model(self, args: str) -> None:
        from pi_tui.modes.interactive.screens.model_picker import ModelPickerScreen

        try:
            models = self.session.model_registry.list_models()
        except Exception as err:
            await self.screen.conversation.add(ErrorBlock(f"Cannot list models: {err}"))
            return
        picker = ModelPickerScreen(models, current=self.session.state.model, search=args)
        await self.screen.app.push_screen(picker, self._model_chosen)

    def _model_chosen(self, model: Any) -> None:
        if model is None:
            return
        try:
            self.session.set_model(model)
        except Exception as err:
            self.screen.run_worker(self.screen.conversation.add(ErrorBlock(f"Cannot use that model: {err}")))
        self.screen.refresh_footer()

    async def _cmd_settings(self, args: str) -> None:
        from pi_tui.modes.interactive.screens.settings import SettingsScreen, SettingsValues

        values = SettingsValues.from_settings(self.session.settings, thinking_level=self.session.state.thinking_level)
        screen = SettingsScreen(values, themes=sorted(self.screen.app.available_themes))
        await self.screen.app.push_screen(screen, lambda new: self._settings_chosen(values, new))

    def _settings_chosen(self, old: Any, new: Any) -> None:
        from pi_tui.modes.interactive.screens.settings import settings_changes

        if new is None:
            return
        if new.thinking_level != old.thinking_level:
            self.session.set_thinking_level(new.thinking_level)
        for path, value in settings_changes(old, new).items():
            try:
                self.session.settings.set_global(path, value)
            except Exception as err:
                self.screen.run_worker(self.notice(f"Could not save {path}: {err}", "error"))
        if new.theme != old.theme and new.theme in self.screen.app.available_themes:
            self.screen.app.theme = new.theme
        self.screen.conversation.set_show_thinking(not new.hide_thinking)
        if new.show_images != old.show_images:
            self.screen.conversation.repaint_images()
        self.screen.refresh_footer()

    async def _hotkeys(self) -> None:
        from pi_tui.modes.interactive.screens.hotkeys import HotkeysScreen, keymap_rows

        await self.screen.app.push_screen(HotkeysScreen(keymap_rows(self.screen.keymap)))

    async def _cmd_copy(self, args: str) -> None:
        for entry in reversed(self.session.session_manager.get_branch()):
            message = entry.get("message") if entry.get("type") == "message" else None
            if message and message.get("role") == "assistant" and assistant_text(message).strip():
                await self.screen.copy_to_clipboard(assistant_text(message), "the last answer")
                return
        await self.notice("Nothing to copy yet.", "warning")

    async def _cmd_export(self, args: str) -> None:
        from pi_tui.modes.export_html import export_session_html as exporter

        try:
            # Relative to the project folder the app runs in; without an argument ``<stem>.html``
            # there. Written in a thread: a long session is a few MB of HTML.
            path = await asyncio.to_thread(self._export_to, exporter, args.strip())
        except Exception as err:
            await self.screen.conversation.add(ErrorBlock(f"Export failed: {err}"))
            return
        await self.notice(f"Exported to {path}", "success")

    def _export_to(self, exporter: Any, where: str) -> Path:
        cwd = self.screen.pi.cwd
        return Path(exporter(self.session.session_manager, cwd / Path(where).expanduser() if where else cwd))

    async def _cmd_mcp(self, args: str) -> None:
        from pi_tui.modes.interactive.mcp_flow import open_mcp_screen

        await open_mcp_screen(self.screen)

    async def _cmd_trust(self, args: str) -> None:
        """Show what this project's code is and whether it runs, and ask again (remembered)."""
        from pi_tui.sdk import project_trust

        app = self.screen.pi
        if app.agent_dir is None:
            await self.notice("/trust needs the agent dir.", "warning")
            return
        trust = project_trust(app.cwd, app.agent_dir, self.session.settings, None)
        if not trust.code:
            await self.notice("This project has no code pi-tui would run (.pi/extensions, or extensions, "
                              "shellPath, shellCommandPrefix in .pi/settings.json).")
            return
        app.show_project_trust(trust, lambda trusted: self._trust_answered(trust, trusted))

    def _trust_answered(self, trust: Any, trusted: bool) -> None:
        from pi_tui.resources.trust import TrustStore

        agent = self.screen.pi.agent_dir
        assert agent is not None, "checked by _cmd_trust"
        TrustStore(agent).remember(trust.project, trusted, trust.code)
        setter = getattr(self.session.settings, "set_project_trusted", None)
        if callable(setter):
            setter(trusted)  # shellPath / shellCommandPrefix apply (or stop) at once
        verdict = "trusted" if trusted else "not trusted"
        self.screen.call_later(self.notice, f"Remembered: {trust.project} is {verdict}. The project's shell "
                               "settings follow now; its extensions load (or stay out) when pi-tui starts again.")

    async def _cmd_reload(self, args: str) -> None:
        reload = getattr(self.session, "reload", None)
        if reload is None:
            await self.notice("Reload is not supported by this session.", "warning")
            return
        try:
            result = reload()
            if hasattr(result, "__await__"):
                await result
        except Exception as err:
            await self.screen.conversation.add(ErrorBlock(f"Reload failed: {err}"))
            return
        self.screen.refresh_footer()
        await self.notice("Reloaded settings, prompt templates, skills and context files", "success")
        await self.screen.show_diagnostics()
