"""The ``compat`` flags of an OpenAI-compatible endpoint (pi-behaviour.md §14.4).

A models.json provider may set any flag explicitly (provider-level ``compat`` merged with the
model's, the model winning). Every flag left unset is auto-detected from the provider name and
the base URL, exactly as pi 0.73.1 does, so one agent dir produces the same requests in pi and
pi-tui.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_NON_STANDARD = (
    ("cerebras", "cerebras.ai"),
    ("xai", "api.x.ai"),
    (None, "chutes.ai"),
    (None, "deepseek.com"),
    ("zai", "api.z.ai"),
    ("moonshotai", "api.moonshot."),
    ("moonshotai-cn", "api.moonshot."),
    ("opencode", "opencode.ai"),
    ("cloudflare-workers-ai", "api.cloudflare.com"),
    ("cloudflare-ai-gateway", "gateway.ai.cloudflare.com"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Compat:
    """Resolved flags; field names follow models.json (camelCase there, snake_case here)."""

    supports_store: bool = True
    supports_developer_role: bool = True
    supports_reasoning_effort: bool = True
    supports_usage_in_streaming: bool = True
    max_tokens_field: str = "max_completion_tokens"
    requires_tool_result_name: bool = False
    requires_assistant_after_tool_result: bool = False
    requires_thinking_as_text: bool = False
    requires_reasoning_content_on_assistant_messages: bool = False
    thinking_format: str = "openai"
    supports_strict_mode: bool = True
    cache_control_format: str | None = None
    supports_long_cache_retention: bool = True
    send_session_affinity_headers: bool = False
    zai_tool_stream: bool = False
    open_router_routing: dict[str, Any] = field(default_factory=dict)
    vercel_gateway_routing: dict[str, Any] = field(default_factory=dict)


_JSON_NAMES = {
    "supportsStore": "supports_store",
    "supportsDeveloperRole": "supports_developer_role",
    "supportsReasoningEffort": "supports_reasoning_effort",
    "supportsUsageInStreaming": "supports_usage_in_streaming",
    "maxTokensField": "max_tokens_field",
    "requiresToolResultName": "requires_tool_result_name",
    "requiresAssistantAfterToolResult": "requires_assistant_after_tool_result",
    "requiresThinkingAsText": "requires_thinking_as_text",
    "requiresReasoningContentOnAssistantMessages": "requires_reasoning_content_on_assistant_messages",
    "thinkingFormat": "thinking_format",
    "supportsStrictMode": "supports_strict_mode",
    "cacheControlFormat": "cache_control_format",
    "supportsLongCacheRetention": "supports_long_cache_retention",
    "sendSessionAffinityHeaders": "send_session_affinity_headers",
    "zaiToolStream": "zai_tool_stream",
    "openRouterRouting": "open_router_routing",
    "vercelGatewayRouting": "vercel_gateway_routing",
}


def _is(provider: str, base_url: str, name: str | None, host: str) -> bool:
    return (name is not None and provider == name) or host in base_url


def merge_compat(provider_level: dict[str, Any] | None, model_level: dict[str, Any] | None) -> dict[str, Any]:
    """Shallow merge, model wins; the two routing objects merge one level deeper."""
    merged = dict(provider_level or {})
    for key, value in (model_level or {}).items():
        if key in ("openRouterRouting", "vercelGatewayRouting") and isinstance(value, dict):
            merged[key] = {**(merged.get(key) or {}), **value}
        else:
            merged[key] = value
    return merged


def resolve_compat(provider: str, base_url: str | None, model_id: str, explicit: dict[str, Any] | None) -> Compat:
    """Explicit flags first, then pi's detection for the host (§14.4 table and list)."""
    url = base_url or ""
    non_standard = any(_is(provider, url, name, host) for name, host in _NON_STANDARD)
    xai = _is(provider, url, "xai", "api.x.ai")
    zai = _is(provider, url, "zai", "api.z.ai")
    moonshot = provider in ("moonshotai", "moonshotai-cn") or "api.moonshot." in url
    cf_gateway = _is(provider, url, "cloudflare-ai-gateway", "gateway.ai.cloudflare.com")
    cf_workers = _is(provider, url, "cloudflare-workers-ai", "api.cloudflare.com")
    deepseek = _is(provider, url, "deepseek", "deepseek.com")
    openrouter = _is(provider, url, "openrouter", "openrouter.ai")
    detected: dict[str, Any] = {
        "supports_store": not non_standard,
        "supports_developer_role": not non_standard,
        "supports_reasoning_effort": not (xai or zai or moonshot or cf_gateway),
        "max_tokens_field": "max_tokens" if ("chutes.ai" in url or moonshot or cf_gateway) else "max_completion_tokens",
        "requires_reasoning_content_on_assistant_messages": deepseek,
        "thinking_format": "deepseek" if deepseek else "zai" if zai else "openrouter" if openrouter else "openai",
        "supports_strict_mode": not (moonshot or cf_gateway),
        "supports_long_cache_retention": not (cf_gateway or cf_workers),
        "cache_control_format": "anthropic" if provider == "openrouter" and model_id.startswith("anthropic/") else None,
    }
    for json_name, value in (explicit or {}).items():
        attr = _JSON_NAMES.get(json_name)
        if attr is not None and value is not None:
            detected[attr] = value
    return Compat(**detected)
