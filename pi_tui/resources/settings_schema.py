"""Settings keys, defaults, migrations and typed views (pi-behaviour.md §10.1, §13.8).

The JSON files are kept as plain dicts so unknown keys survive; this module only says what the
known keys mean. A known key holding the wrong type is reported once at load and its default is
used — a typo in one key never stops the program.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Literal

from pi_tui.core.context import pipeline_defaults as _pipeline

JsonDict = dict[str, Any]

DEFAULT_SETTINGS: JsonDict = {
    "defaultThinkingLevel": "medium",
    "transport": "auto",
    "steeringMode": "one-at-a-time",
    "followUpMode": "one-at-a-time",
    "theme": "dark",
    "compaction": {"enabled": True, "reserveTokens": 16384, "keepRecentTokens": 20000},
    "branchSummary": {"reserveTokens": 16384, "skipPrompt": False},
    "retry": {
        "enabled": True,
        "maxRetries": 3,
        "baseDelayMs": 2000,
        "provider": {"maxRetryDelayMs": 60000},
    },
    "hideThinkingBlock": False,
    "quietStartup": False,
    "collapseChangelog": False,
    "enableSkillCommands": True,
    "terminal": {
        "showImages": True,
        "clearOnShrink": False,
        "imageWidthCells": 60,
        "showTerminalProgress": False,
        "notifications": "auto",  # pi-tui's own key (modes/interactive/terminal_signals.py)
    },
    "images": {"autoResize": True, "blockImages": False},
    "doubleEscapeAction": "tree",
    "treeFilterMode": "default",
    "editorPaddingX": 0,
    "autocompleteMaxVisible": 5,
    "showHardwareCursor": False,
    "markdown": {"codeBlockIndent": "  "},
    "enableInstallTelemetry": True,
    "warnings": {"anthropicExtraUsage": True},
    # pi-tui's own keys.
    "context": {
        "strategy": "pi",
        "pipeline": {
            "variant": "exact",
            "artifactThresholdBytes": 30_000,
            "turnInlineLimitBytes": 200_000,
            "previewBytes": 2_000,
            "snipMaxGroups": 50,
            "snipKeepFirst": 3,
            "snipKeepLast": 46,
            "microKeepRecent": 3,
            "summaryThresholdBytes": 50_000,
            "cacheAwareProtectTokens": 40_000,
            "cacheAwareMinGainTokens": 20_000,
        },
    },
    "extensionHandlerTimeoutMs": 60_000,
    "sessionTitles": {"enabled": False},
}
"""Defaults of the known keys (pi's, plus ``context.*`` and ``extensionHandlerTimeoutMs``)."""

_INT = "integer"
_BOOL = "boolean"
_STR = "string"
_LIST = "array"

EXPECTED_TYPES: dict[str, str] = {
    "defaultProvider": _STR,
    "defaultModel": _STR,
    "defaultThinkingLevel": _STR,
    "transport": _STR,
    "steeringMode": _STR,
    "followUpMode": _STR,
    "theme": _STR,
    "compaction.enabled": _BOOL,
    "compaction.reserveTokens": _INT,
    "compaction.keepRecentTokens": _INT,
    "branchSummary.reserveTokens": _INT,
    "branchSummary.skipPrompt": _BOOL,
    "retry.enabled": _BOOL,
    "retry.maxRetries": _INT,
    "retry.baseDelayMs": _INT,
    "retry.provider.timeoutMs": _INT,
    "retry.provider.maxRetries": _INT,
    "retry.provider.maxRetryDelayMs": _INT,
    "shellPath": _STR,
    "shellCommandPrefix": _STR,
    "sessionDir": _STR,
    "enableSkillCommands": _BOOL,
    "images.autoResize": _BOOL,
    "images.blockImages": _BOOL,
    "skills": _LIST,
    "prompts": _LIST,
    "themes": _LIST,
    "packages": _LIST,
    "enabledModels": _LIST,
    "extensions": _LIST,
    "trustedProjects": _LIST,
    "shellEnvPassthrough": _LIST,
    "context.strategy": _STR,
    "context.pipeline.variant": _STR,
    "extensionHandlerTimeoutMs": _INT,
    "acp.askPermission": _BOOL,
    "checkpoints.enabled": _BOOL,
    "checkpoints.timeoutMs": _INT,
    "checkpoints.maxFileBytes": _INT,
    "checkpoints.maxFolderFiles": _INT,
    "checkpoints.firstSnapshotTimeoutMs": _INT,
    "checkpoints.warnStoreBytes": _INT,
    "subagents.enabled": _BOOL,
    "subagents.maxDepth": _INT,
    "subagents.maxConcurrent": _INT,
    "todo.enabled": _BOOL,
    "terminal.showTerminalProgress": _BOOL,
    "terminal.notifications": _STR,
    "notifyCommand": _LIST,
    "sessionTitles.enabled": _BOOL,
    "sessionTitles.model": _STR,
    "thinkingBudgets.minimal": _INT,
    "thinkingBudgets.low": _INT,
    "thinkingBudgets.medium": _INT,
    "thinkingBudgets.high": _INT,
}
for _knob in DEFAULT_SETTINGS["context"]["pipeline"]:
    if _knob != "variant":
        EXPECTED_TYPES[f"context.pipeline.{_knob}"] = _INT

CHOICES: dict[str, tuple[str, ...]] = {
    "defaultThinkingLevel": ("off", "minimal", "low", "medium", "high", "xhigh"),
    "transport": ("sse", "websocket", "websocket-cached", "auto"),
    "steeringMode": ("all", "one-at-a-time"),
    "followUpMode": ("all", "one-at-a-time"),
    "context.strategy": ("pi", "pipeline"),
    "context.pipeline.variant": ("exact", "cache-aware"),
    "terminal.notifications": ("auto", "osc777", "osc9", "osc99", "bell", "off"),
}


def type_problem(path: str, value: Any) -> str | None:
    """Why ``value`` is not valid for the known key ``path`` (None when it is fine or unknown)."""
    expected = EXPECTED_TYPES.get(path)
    if expected is None:
        return None
    ok = {
        _INT: isinstance(value, int) and not isinstance(value, bool) and value >= 0,
        _BOOL: isinstance(value, bool),
        _STR: isinstance(value, str),
        _LIST: isinstance(value, list),
    }[expected]
    if not ok:
        shown = "a negative number" if expected == _INT and isinstance(value, int) else type(value).__name__
        return f"{path}: expected {'a non-negative ' if expected == _INT else 'a '}{expected}, got {shown}"
    choices = CHOICES.get(path)
    if choices and value not in choices:
        return f"{path}: {value!r} is not one of {', '.join(choices)}"
    return None


# --------------------------------------------------------------------------- migrations


def migrate(raw: JsonDict) -> list[str]:
    """Rewrite old key shapes in place (pi's migrations); returns what was migrated."""
    done: list[str] = []
    if "queueMode" in raw:
        value = raw.pop("queueMode")
        raw.setdefault("steeringMode", value)
        done.append("queueMode → steeringMode")
    if isinstance(raw.get("websockets"), bool):
        value = raw.pop("websockets")
        raw.setdefault("transport", "websocket" if value else "sse")
        done.append("websockets → transport")
    skills = raw.get("skills")
    if isinstance(skills, dict):
        raw.pop("skills")
        if "enableSkillCommands" in skills:
            raw.setdefault("enableSkillCommands", skills["enableSkillCommands"])
        dirs = skills.get("customDirectories")
        if isinstance(dirs, list):
            raw["skills"] = list(dirs)
        done.append("skills{} → enableSkillCommands + skills[]")
    retry = raw.get("retry")
    if isinstance(retry, dict) and "maxDelayMs" in retry:
        value = retry.pop("maxDelayMs")
        provider = retry.setdefault("provider", {})
        if isinstance(provider, dict):
            provider.setdefault("maxRetryDelayMs", value)
        done.append("retry.maxDelayMs → retry.provider.maxRetryDelayMs")
    return done


# --------------------------------------------------------------------------- merging


def deep_merge(base: JsonDict, override: JsonDict) -> JsonDict:
    """``override`` over ``base``: objects merge recursively, arrays and primitives replace."""
    result = copy.deepcopy(base)
    for key, value in override.items():
        current = result.get(key)
        if isinstance(current, dict) and isinstance(value, dict):
            result[key] = deep_merge(current, value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def split_path(path: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    if isinstance(path, str):
        return tuple(part for part in path.split(".") if part)
    return tuple(path)


_MISSING = object()


def lookup(data: Any, parts: tuple[str, ...]) -> Any:
    """The value at ``parts`` or the ``MISSING`` sentinel."""
    node = data
    for part in parts:
        if not isinstance(node, dict) or part not in node:
            return _MISSING
        node = node[part]
    return node


MISSING = _MISSING


def assign(data: JsonDict, parts: tuple[str, ...], value: Any) -> None:
    """Set ``parts`` to ``value``, creating objects on the way (a non-object on the way is replaced)."""
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = copy.deepcopy(value)


# --------------------------------------------------------------------------- typed views


@dataclass(frozen=True, slots=True)
class CompactionSettings:
    enabled: bool = True
    reserve_tokens: int = 16384
    keep_recent_tokens: int = 20000


@dataclass(frozen=True, slots=True)
class BranchSummarySettings:
    reserve_tokens: int = 16384
    skip_prompt: bool = False


@dataclass(frozen=True, slots=True)
class RetrySettings:
    enabled: bool = True
    max_retries: int = 3
    base_delay_ms: int = 2000
    provider_timeout_ms: int | None = None
    provider_max_retries: int | None = None
    provider_max_retry_delay_ms: int = 60000


@dataclass(frozen=True, slots=True)
class ImageSettings:
    auto_resize: bool = True
    block_images: bool = False


@dataclass(frozen=True, slots=True)
class PipelineSettings:
    """Knobs of the request-time pipeline (spec/context-pipeline.md); defaults are the spec's numbers."""

    variant: Literal["exact", "cache-aware"] = "exact"
    artifact_threshold_bytes: int = 30_000
    turn_inline_limit_bytes: int = 200_000
    preview_bytes: int = 2_000
    # The pipeline's own knobs default to what the pipeline itself uses (one place for the numbers).
    snip_max_groups: int = _pipeline.SNIP_MAX_GROUPS
    snip_keep_first: int = _pipeline.SNIP_KEEP_FIRST
    snip_keep_last: int = _pipeline.SNIP_KEEP_LAST
    micro_keep_recent: int = _pipeline.MICRO_KEEP_RECENT
    summary_threshold_bytes: int = _pipeline.SUMMARY_THRESHOLD_BYTES
    cache_aware_protect_tokens: int = _pipeline.CACHE_AWARE_PROTECT_TOKENS
    cache_aware_min_gain_tokens: int = _pipeline.CACHE_AWARE_MIN_GAIN_TOKENS


ContextStrategy = Literal["pi", "pipeline"]
