"""Global and project settings, merged (pi-behaviour.md §10.1, §13.8; docs/settings.md).

``<agentDir>/settings.json`` is the base, ``<cwd>/.pi/settings.json`` is merged over it (objects
merge recursively, arrays and primitives replace). Unknown keys are kept as they are.

Failure policy — the program always starts:
* a file that is not valid JSON (or not an object) is reported with its path and the parser's
  message, and treated as empty; it is **never** overwritten, so the user's text is not lost;
* a known key with a wrong type is reported and its default is used.

Project trust (``trust.py``): until ``set_project_trusted(True)``, the project file's code keys
(``extensions``, ``shellPath``, ``shellCommandPrefix``) and ``sessionDir`` are left out of the
merged view, and so are ``skills``/``prompts`` entries outside the project, so a cloned repository
cannot make ``bash`` run its program, move the session files, nor read the user's other files into
the prompt (``file_settings("project")`` still shows them, for the trust dialog). ``GLOBAL_ONLY_KEYS`` (``trustedProjects``, ``shellEnvPassthrough``)
count only in the global file: a project cannot trust itself nor hand secrets to commands.

Writes touch only the keys changed in this process: the file is re-read under a lock file
(10 tries × 20 ms, like pi's proper-lockfile) and just those keys are replaced, so edits made
meanwhile by another process (or by hand) survive.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any, Literal

from pi_tui.core.errors import ConfigError
from pi_tui.resources import settings_schema as schema
from pi_tui.resources.diagnostics import ResourceDiagnostic
from pi_tui.resources.locations import agent_dir as default_agent_dir
from pi_tui.resources.locations import expand_home, normalized_path, project_dir
from pi_tui.resources.settings_io import Scope, SettingsFile, file_lock, read_settings_file
from pi_tui.resources.settings_schema import (
    DEFAULT_SETTINGS,
    MISSING,
    BranchSummarySettings,
    CompactionSettings,
    ContextStrategy,
    ImageSettings,
    JsonDict,
    PipelineSettings,
    RetrySettings,
)
from pi_tui.resources.trust import (
    GLOBAL_ONLY_KEYS,
    PROJECT_GATED_KEYS,
    PROJECT_PATH_KEYS,
    outside_project,
)

SETTINGS_FILE = "settings.json"
_MERGE_ORDER: tuple[Scope, ...] = ("global", "project")
_PRIORITY_ORDER: tuple[Scope, ...] = ("project", "global")


class SettingsManager:
    """The merged view of both files plus typed getters; see the module docstring."""

    def __init__(self, global_path: Path | None, project_path: Path | None) -> None:
        self._files: dict[Scope, SettingsFile] = {}
        if global_path is not None:
            self._files["global"] = SettingsFile(global_path, "global")
        if project_path is not None:
            self._files["project"] = SettingsFile(project_path, "project")
        self._overrides: JsonDict = {}
        self.project_trusted = False
        """Whether the project file's code keys apply (see the module docstring)."""
        self.diagnostics: list[ResourceDiagnostic] = []
        self._merged: JsonDict = {}
        self.reload()

    @classmethod
    def in_memory(cls, settings: JsonDict | None = None) -> SettingsManager:
        """No files: for ``--no-session`` style SDK use and tests. ``set_*`` changes memory only."""
        manager = cls(None, None)
        if settings:
            manager._overrides = copy.deepcopy(settings)
            schema.migrate(manager._overrides)
            manager._rebuild()
        return manager

    @property
    def global_path(self) -> Path | None:
        file = self._files.get("global")
        return file.path if file else None

    @property
    def project_path(self) -> Path | None:
        file = self._files.get("project")
        return file.path if file else None

    def reload(self) -> None:
        """Re-read both files (``/reload``); unsaved changes of this process are kept."""
        self.diagnostics = []
        for file in self._files.values():
            file.load(self.diagnostics)
        self._rebuild()

    def set_project_trusted(self, trusted: bool) -> None:
        """Let the project file's code keys apply (or not) from now on."""
        self.project_trusted = trusted
        self._rebuild()

    def _project_view(self, file: SettingsFile) -> JsonDict:
        if self.project_trusted:
            return {k: v for k, v in file.effective.items() if k not in GLOBAL_ONLY_KEYS}
        view = {k: v for k, v in file.effective.items() if k not in (*GLOBAL_ONLY_KEYS, *PROJECT_GATED_KEYS)}
        settings_dir = file.path.parent
        for key in PROJECT_PATH_KEYS:
            entries = view.get(key)
            if isinstance(entries, list):
                view[key] = [e for e in entries if not (isinstance(e, str) and e.strip()
                                                        and outside_project(e.strip(), settings_dir, settings_dir.parent))]
        return view

    def _rebuild(self) -> None:
        merged: JsonDict = {}
        for scope in _MERGE_ORDER:
            file = self._files.get(scope)
            if file is not None:
                merged = schema.deep_merge(merged, self._project_view(file) if scope == "project" else file.effective)
        self._merged = schema.deep_merge(merged, self._overrides)

    # ------------------------------------------------------------------ reading

    def get(self, path: str | tuple[str, ...], default: Any = None) -> Any:
        """The merged value at a dotted path, else pi's default, else ``default``."""
        parts = schema.split_path(path)
        value = schema.lookup(self._merged, parts)
        if value is MISSING:
            value = schema.lookup(DEFAULT_SETTINGS, parts)
        return default if value is MISSING else copy.deepcopy(value)

    def as_dict(self) -> JsonDict:
        """Defaults with both files merged over them (what ``ToolContext.settings`` carries)."""
        return schema.deep_merge(DEFAULT_SETTINGS, self._merged)

    def file_settings(self, scope: Scope) -> JsonDict:
        """One file's contents after migration (a copy)."""
        file = self._files.get(scope)
        return copy.deepcopy(file.effective) if file else {}

    def _int(self, path: str, default: int) -> int:
        value = self.get(path)
        return value if isinstance(value, int) and not isinstance(value, bool) else default

    def _bool(self, path: str, default: bool) -> bool:
        value = self.get(path)
        return value if isinstance(value, bool) else default

    def _str(self, path: str) -> str | None:
        value = self.get(path)
        return value if isinstance(value, str) and value else None

    def compaction_settings(self, provider: str | None = None, model_id: str | None = None) -> CompactionSettings:
        """``compaction.*`` with ``compaction.modelOverrides["<provider>/<model>"]`` applied.

        The override may set any of ``enabled``, ``reserveTokens``, ``keepRecentTokens``; a key
        equal to the bare model id also matches (litellm ids often already contain the provider).
        """
        base = CompactionSettings(
            enabled=self._bool("compaction.enabled", True),
            reserve_tokens=self._int("compaction.reserveTokens", 16384),
            keep_recent_tokens=self._int("compaction.keepRecentTokens", 20000),
        )
        overrides = self.get("compaction.modelOverrides")
        if not isinstance(overrides, dict) or model_id is None:
            return base
        override = overrides.get(f"{provider}/{model_id}") if provider else None
        if override is None:
            override = overrides.get(model_id)
        if not isinstance(override, dict):
            return base

        def pick_int(key: str, fallback: int) -> int:
            value = override.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else fallback

        enabled = override.get("enabled")
        return CompactionSettings(
            enabled=enabled if isinstance(enabled, bool) else base.enabled,
            reserve_tokens=pick_int("reserveTokens", base.reserve_tokens),
            keep_recent_tokens=pick_int("keepRecentTokens", base.keep_recent_tokens),
        )

    def branch_summary_settings(self) -> BranchSummarySettings:
        return BranchSummarySettings(
            reserve_tokens=self._int("branchSummary.reserveTokens", 16384),
            skip_prompt=self._bool("branchSummary.skipPrompt", False),
        )

    def retry_settings(self) -> RetrySettings:
        timeout = self.get("retry.provider.timeoutMs")
        provider_retries = self.get("retry.provider.maxRetries")
        return RetrySettings(
            enabled=self._bool("retry.enabled", True),
            max_retries=self._int("retry.maxRetries", 3),
            base_delay_ms=self._int("retry.baseDelayMs", 2000),
            provider_timeout_ms=timeout if isinstance(timeout, int) else None,
            provider_max_retries=provider_retries if isinstance(provider_retries, int) else None,
            provider_max_retry_delay_ms=self._int("retry.provider.maxRetryDelayMs", 60000),
        )

    def image_settings(self) -> ImageSettings:
        return ImageSettings(
            auto_resize=self._bool("images.autoResize", True),
            block_images=self._bool("images.blockImages", False),
        )

    def thinking_budgets(self) -> dict[str, int] | None:
        """``thinkingBudgets``: thinking tokens per level (``minimal``..``high``) for the models
        that think by budget (Anthropic's budget models, Gemini 2.x); None when unset. pi passes
        it on main agent calls only, never on summaries (§15.1)."""
        raw = self.get("thinkingBudgets")
        if not isinstance(raw, dict):
            return None
        budgets = {level: value for level, value in raw.items() if level in ("minimal", "low", "medium", "high")
                   and isinstance(value, int) and not isinstance(value, bool) and value >= 0}
        return budgets or None

    def context_strategy(self) -> ContextStrategy:
        return "pipeline" if self.get("context.strategy") == "pipeline" else "pi"

    def pipeline_settings(self) -> PipelineSettings:
        defaults = PipelineSettings()
        variant: Literal["exact", "cache-aware"] = (
            "cache-aware" if self.get("context.pipeline.variant") == "cache-aware" else "exact"
        )
        knobs = {
            name: self._int(f"context.pipeline.{_camel(name)}", getattr(defaults, name))
            for name in PipelineSettings.__dataclass_fields__
            if name != "variant"
        }
        return PipelineSettings(variant=variant, **knobs)

    @property
    def default_provider(self) -> str | None:
        return self._str("defaultProvider")

    @property
    def default_model(self) -> str | None:
        return self._str("defaultModel")

    @property
    def default_thinking_level(self) -> str:
        return self._str("defaultThinkingLevel") or "medium"

    @property
    def shell_path(self) -> str | None:
        return self._str("shellPath")

    @property
    def shell_command_prefix(self) -> str | None:
        return self._str("shellCommandPrefix")

    @property
    def session_dir(self) -> str | None:
        return self._str("sessionDir")

    @property
    def steering_mode(self) -> str:
        return self._str("steeringMode") or "one-at-a-time"

    @property
    def follow_up_mode(self) -> str:
        return self._str("followUpMode") or "one-at-a-time"

    @property
    def enable_skill_commands(self) -> bool:
        return self._bool("enableSkillCommands", True)

    @property
    def extension_handler_timeout_s(self) -> float:
        return self._int("extensionHandlerTimeoutMs", 60_000) / 1000

    def resource_paths(
        self, key: Literal["skills", "prompts", "extensions", "themes"], scope: Scope | None = None
    ) -> list[Path]:
        """Paths listed under ``key`` in either file (or only ``scope``'s); ``~`` expands,
        relative paths resolve against the folder the file configures (agent dir for global,
        ``.pi`` for project) and come out normalized as pi's (``.pi/../x`` is ``x``). Project first."""
        return [path for path, found_in in self.resource_entries(key) if scope in (None, found_in)]

    def resource_entries(self, key: Literal["skills", "prompts", "extensions", "themes"]) -> list[tuple[Path, Scope]]:
        """``resource_paths`` with the file each path came from (RPC ``get_commands`` reports it)."""
        paths: list[tuple[Path, Scope]] = []
        for scope in _PRIORITY_ORDER:
            file = self._files.get(scope)
            if file is None:
                continue
            entries = (self._project_view(file) if scope == "project" else file.effective).get(key)
            if not isinstance(entries, list):
                continue
            for entry in entries:
                if isinstance(entry, str) and entry.strip():
                    paths.append((normalized_path(file.path.parent, expand_home(entry.strip())), scope))
        return paths

    # ------------------------------------------------------------------ writing

    def set_global(self, path: str | tuple[str, ...], value: Any) -> bool:
        """Change a key in ``<agentDir>/settings.json``; True when it reached the disk. A value of
        the wrong type for a known key raises ``ConfigError`` (nothing changes)."""
        return self._set("global", path, value)

    def set_project(self, path: str | tuple[str, ...], value: Any) -> bool:
        """Change a key in ``<cwd>/.pi/settings.json``; True when it reached the disk."""
        return self._set("project", path, value)

    set = set_global

    def _set(self, scope: Scope, path: str | tuple[str, ...], value: Any) -> bool:
        parts = schema.split_path(path)
        if not parts:
            raise ConfigError("settings path must not be empty")
        problem = schema.type_problem(".".join(parts), value)
        if problem is not None:
            raise ConfigError(f"cannot set {problem}")
        file = self._files.get(scope)
        if file is None:
            schema.assign(self._overrides, parts, value)
            self._rebuild()
            return False
        file.modified[parts] = copy.deepcopy(value)
        schema.assign(file.effective, parts, value)
        self._rebuild()
        return self._flush(file)

    def _flush(self, file: SettingsFile) -> bool:
        if file.unparseable:
            self._report(file, "not saved: the file could not be parsed at startup; fix it by hand first")
            return False
        file.path.parent.mkdir(parents=True, exist_ok=True)
        with file_lock(file.path) as locked:
            if not locked:
                self._report(file, "not saved: the settings file is locked by another process")
                return False
            current, problem = read_settings_file(file.path)
            if problem is not None:
                self._report(file, f"not saved: {problem}")
                return False
            for parts, value in file.modified.items():
                schema.assign(current, parts, value)
            tmp = file.path.with_name(f".{file.path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(current, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            os.replace(tmp, file.path)
            file.raw = current
        return True

    def _report(self, file: SettingsFile, message: str) -> None:
        diagnostic = ResourceDiagnostic("error", message, file.path)
        if diagnostic not in self.diagnostics:
            self.diagnostics.append(diagnostic)


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part.title() for part in rest)


def load_settings(cwd: Path, agent_dir: Path | None = None) -> SettingsManager:
    """Read ``<agentDir>/settings.json`` and ``<cwd>/.pi/settings.json``; never raises for bad files."""
    agent = agent_dir if agent_dir is not None else default_agent_dir()
    return SettingsManager(agent / SETTINGS_FILE, project_dir(cwd) / SETTINGS_FILE)


__all__ = [
    "BranchSummarySettings",
    "CompactionSettings",
    "ImageSettings",
    "PipelineSettings",
    "RetrySettings",
    "SettingsManager",
    "load_settings",
    "read_settings_file",
]
