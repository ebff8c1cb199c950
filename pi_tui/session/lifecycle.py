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

    async def start(self) -> None:
        """Tell extensions the session is up, once: ``session_start{reason:"startup"}`` then
        ``resources_discover{reason:"startup"}`` (whose paths are loaded at once)."""
        if self._started:
            return
        self._started = True
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
        if self.extensions is not None and self.extensions.has_handlers("resources_discover"):
            found = await self.extensions.emit_resources_discover(self.cwd, reason)
            skills = [self._extension_path(p) for p in found.skill_paths]
            prompts = [self._extension_path(p) for p in found.prompt_paths]
        changed = (skills, prompts) != (self._extra_skill_paths, self._extra_prompt_paths)
        self._extra_skill_paths, self._extra_prompt_paths = skills, prompts
        if changed or reason == "reload":
            self.rebuild_system_prompt()

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
