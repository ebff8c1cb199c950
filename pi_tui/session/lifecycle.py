"""``AgentSession`` start-up and ``/reload`` for extensions (mixed into the class).

pi-behaviour.md §10.2 / §13.8: ``session_start{reason:"startup"}`` once when the session is up
(modes call ``start()``; the first ``prompt()`` calls it too, so a mode that forgets loses
nothing), then ``resources_discover{cwd, reason}``. The ``skillPaths`` / ``promptPaths`` it
returns are kept on the session and passed to every later resource load (they are reloaded
before each run), until the next discovery replaces them. ``/reload`` is
``session_shutdown{reason:"reload"}``, settings re-read, ``session_start{reason:"reload"}``,
discovery again and a fresh resource load. Extensions themselves are not re-imported.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_tui.session.session_base import SessionBase


class LifecycleMixin(SessionBase):
    _extra_skill_paths: list[Path]
    _extra_prompt_paths: list[Path]
    _extension_resource_origins: dict[Path, Path]
    _startup_notes: list[tuple[str, str]]

    def diagnostics(self) -> list[tuple[str, str]]:
        """Every problem found while setting up, as ``(source, message)``; each message names its
        file. Sources: ``settings``, ``resources`` (context files, skills, templates; current as
        of the last reload), ``models`` (models.json), ``session`` (the session file's load
        warnings), ``extensions`` (load failures) and whatever was added with
        ``add_diagnostic`` (the SDK adds ``model`` restore notes). Modes show them at startup
        and after ``/reload``."""
        found: list[tuple[str, str]] = []
        found += [("settings", str(d)) for d in getattr(self.settings, "diagnostics", None) or ()]
        found += [("resources", str(d)) for d in getattr(self.resources, "diagnostics", None) or ()]
        found += [("models", str(d)) for d in getattr(self.model_registry, "diagnostics", None) or ()]
        found += [("session", str(w)) for w in getattr(self.session_manager, "load_warnings", None) or ()]
        if self.extensions is not None:
            found += [("extensions", f"{e['extensionPath']}: {e['error']}")
                      for e in self.extensions.errors if e.get("event") == "load"]
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
        """What was loaded that the user should know about, though nothing is wrong: a trusted
        project's code (what runs, and why it may) and a project SYSTEM.md that replaced the
        system prompt. Modes show it at startup (print/RPC: stderr; JSON: an info ``notify``)."""
        lines: list[str] = []
        trust = self.project_trust
        if trust is not None and trust.trusted:
            lines += trust.report()
        for note in getattr(self.resources, "project_prompt_notes", lambda: [])():
            lines.append(note)
        return lines

    def add_diagnostic(self, source: str, message: str) -> None:
        """Record a start-up problem for ``diagnostics()`` (shown by every mode)."""
        self._startup_notes.append((source, message))

    async def start(self) -> None:
        """Tell extensions the session is up, once: ``session_start{reason:"startup"}`` then
        ``resources_discover{reason:"startup"}`` (whose paths are loaded at once)."""
        if self._started:
            return
        self._started = True
        if self.checkpoints is not None:
            await self.checkpoints.on_start()
        await self._lifecycle("session_start", {"reason": "startup"})
        await self._discover_resources("startup")

    async def reload(self) -> None:
        """``/reload``: settings, extension-contributed resource paths, skills, prompt templates
        and context files are read again."""
        await self._lifecycle("session_shutdown", {"reason": "reload"})
        reread = getattr(self.settings, "reload", None)
        if callable(reread):
            reread()
        self._started = True
        await self._lifecycle("session_start", {"reason": "reload"})
        await self._discover_resources("reload")

    async def _lifecycle(self, event: str, payload: dict[str, Any]) -> None:
        if self.extensions is not None and self.extensions.has_handlers(event):
            await self.extensions.emit(event, payload)

    async def _discover_resources(self, reason: str) -> None:
        skills: list[Path] = []
        prompts: list[Path] = []
        origins: dict[Path, Path] = {}
        if self.extensions is not None and self.extensions.has_handlers("resources_discover"):
            found = await self.extensions.emit_resources_discover(self.cwd, reason)
            skills = [self._extension_path(p) for p in found.skill_paths]
            prompts = [self._extension_path(p) for p in found.prompt_paths]
            origins = {self._extension_path(p): ext for p, ext in found.extension_of.items()}
        self._extension_resource_origins = origins
        changed = (skills, prompts) != (self._extra_skill_paths, self._extra_prompt_paths)
        self._extra_skill_paths, self._extra_prompt_paths = skills, prompts
        if changed or reason == "reload":
            self.rebuild_system_prompt()

    def extension_of_resource(self, path: Path) -> Path | None:
        """The extension whose ``resources_discover`` returned ``path`` (a skill or prompt file),
        or a folder above it; None when no extension did."""
        path = path.resolve()
        for listed, extension in self._extension_resource_origins.items():
            listed = listed.resolve()
            if path == listed or listed in path.parents:
                return extension
        return None

    def _extension_path(self, value: str) -> Path:
        """A path an extension returned: ``~`` expanded, relative ones against the cwd."""
        path = Path(value).expanduser()
        return path if path.is_absolute() else self.cwd / path

    def _load_resources(self) -> Any:
        """The resource loader, with the extension-discovered paths when there are any (a
        loader given to ``AgentSession`` directly may take no arguments)."""
        loader = self._resource_loader
        assert loader is not None
        if self._extra_skill_paths or self._extra_prompt_paths:
            return loader(extra_skill_paths=tuple(self._extra_skill_paths),
                          extra_prompt_paths=tuple(self._extra_prompt_paths))
        return loader()
