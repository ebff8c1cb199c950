"""Session start-up and ``/reload`` for extensions, and what setting up found.

pi-behaviour.md §10.2 / §13.8: ``session_start{reason:"startup"}`` once when the session is up
(modes call ``start()``; the first ``prompt()`` calls it too, so a mode that forgets loses
nothing), then ``resources_discover{cwd, reason}``. The ``skillPaths`` / ``promptPaths`` it
returns are kept (``DiscoveredPaths``) and passed to every later resource load (they are
reloaded before each run), until the next discovery replaces them. ``/reload`` is
``session_shutdown{reason:"reload"}``, settings re-read, ``session_start{reason:"reload"}``,
discovery again and a fresh resource load. Extensions themselves are not re-imported.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.session.hooks import SessionHooks, run_hooks
from pi_tui.session.live_state import LiveState

if TYPE_CHECKING:  # not imported at run time: a session without extensions never loads them (start-up)
    from pi_tui.extensions.runner import ExtensionRunner


class DiscoveredPaths:
    """The skill and prompt paths extensions' ``resources_discover`` returned, and the loader
    that reads the resources with them."""

    def __init__(self, loader: Callable[..., Any] | None) -> None:
        self.loader = loader
        self.skill_paths: list[Path] = []
        self.prompt_paths: list[Path] = []
        self.origins: dict[Path, Path] = {}
        """Each returned path → the extension that returned it."""

    def load(self) -> Any:
        """The resources, with the extension-discovered paths when there are any (a loader given
        to ``AgentSession`` directly may take no arguments)."""
        loader = self.loader
        assert loader is not None
        if self.skill_paths or self.prompt_paths:
            return loader(extra_skill_paths=tuple(self.skill_paths), extra_prompt_paths=tuple(self.prompt_paths))
        return loader()

    def extension_of(self, path: Path) -> Path | None:
        path = path.resolve()
        for listed, extension in self.origins.items():
            listed = listed.resolve()
            if path == listed or listed in path.parents:
                return extension
        return None


class Lifecycle:
    def __init__(
        self, state: LiveState, paths: DiscoveredPaths, hooks: SessionHooks, *, extensions: ExtensionRunner | None,
        model_registry: Any, rebuild_system_prompt: Callable[[], str], notify: Callable[[str, str], None],
    ) -> None:
        self._state = state
        self._paths = paths
        self._hooks = hooks
        self._extensions = extensions
        self._model_registry = model_registry
        self._rebuild = rebuild_system_prompt
        self._notify = notify
        self.started = False
        self.project_trust: Any = None
        """The project trust decision (``resources.trust.ProjectTrust``) the SDK made, or None."""
        self._startup_notes: list[tuple[str, str]] = []

    def diagnostics(self) -> list[tuple[str, str]]:
        """Every problem found while setting up, as ``(source, message)``; see
        ``AgentSession.diagnostics``."""
        state = self._state
        found: list[tuple[str, str]] = []
        found += [("settings", str(d)) for d in getattr(state.settings, "diagnostics", None) or ()]
        found += [("resources", str(d)) for d in getattr(state.resources, "diagnostics", None) or ()]
        found += [("models", str(d)) for d in getattr(self._model_registry, "diagnostics", None) or ()]
        found += [("session", str(w)) for w in getattr(state.session_manager, "load_warnings", None) or ()]
        if self._extensions is not None:
            found += [("extensions", f"{e['extensionPath']}: {e['error']}")
                      for e in self._extensions.errors if e.get("event") == "load"]
        trust = self.project_trust
        if trust is not None and trust.skipped:
            found.append(("trust", "\n".join(trust.report())))
        found += self._startup_notes
        unique: list[tuple[str, str]] = []
        seen: set[str] = set()
        for source, message in found:
            if message not in seen:  # the same file problem may reach us through two parts
                seen.add(message)
                unique.append((source, message))
        return unique

    def startup_info(self) -> list[str]:
        lines: list[str] = []
        trust = self.project_trust
        if trust is not None and trust.trusted:
            lines += trust.report()
        for note in getattr(self._state.resources, "project_prompt_notes", lambda: [])():
            lines.append(note)
        return lines

    def add_diagnostic(self, source: str, message: str) -> None:
        self._startup_notes.append((source, message))

    def extension_of_resource(self, path: Path) -> Path | None:
        return self._paths.extension_of(path)

    async def start(self) -> None:
        if self.started:
            return
        self.started = True
        await self.emit("session_start", {"reason": "startup"})
        await self._discover_resources("startup")
        await self.session_started("startup")

    async def reload(self) -> None:
        await self.emit("session_shutdown", {"reason": "reload"})
        reread = getattr(self._state.settings, "reload", None)
        if callable(reread):
            reread()
        self.started = True
        await self.emit("session_start", {"reason": "reload"})
        await self._discover_resources("reload")
        await self.session_started("reload")

    async def replaced(self, reason: str, previous_file: Path | None) -> None:
        """The session was replaced (``new``, ``resume``, ``fork``): it counts as started."""
        self.started = True
        await self.emit("session_start", {"reason": reason, "previousSessionFile": _text(previous_file)})
        await self.session_started(reason)

    async def emit(self, event: str, payload: dict[str, Any]) -> None:
        """A lifecycle event for the extensions (awaited: pi awaits these)."""
        if self._extensions is not None and self._extensions.has_handlers(event):
            await self._extensions.emit(event, payload)

    async def session_started(self, reason: str) -> None:
        """The ``session_started`` hooks (``hooks.py``), once the extensions know."""
        await run_hooks(self._hooks.session_started, reason, self._notify, f"A session-start hook ({reason})")

    async def _discover_resources(self, reason: str) -> None:
        paths = self._paths
        skills: list[Path] = []
        prompts: list[Path] = []
        origins: dict[Path, Path] = {}
        if self._extensions is not None and self._extensions.has_handlers("resources_discover"):
            found = await self._extensions.emit_resources_discover(self._state.cwd, reason)
            skills = [self._extension_path(p) for p in found.skill_paths]
            prompts = [self._extension_path(p) for p in found.prompt_paths]
            origins = {self._extension_path(p): ext for p, ext in found.extension_of.items()}
        paths.origins = origins
        changed = (skills, prompts) != (paths.skill_paths, paths.prompt_paths)
        paths.skill_paths, paths.prompt_paths = skills, prompts
        if changed or reason == "reload":
            self._rebuild()

    def _extension_path(self, value: str) -> Path:
        """A path an extension returned: ``~`` expanded, relative ones against the cwd."""
        path = Path(value).expanduser()
        return path if path.is_absolute() else self._state.cwd / path


def _text(path: Path | None) -> str | None:
    return str(path) if path is not None else None
