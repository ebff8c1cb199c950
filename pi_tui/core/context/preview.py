"""What the next model request will contain, part by part (the data behind ``/context``).

``AgentSession.preview_request()`` builds a ``RequestPreview`` with ``build_request_preview`` from
the same inputs its next call would use (system prompt, active tools, the request history after
projection and any pipeline steps). Each part carries its token count, the text the model sees,
and a note saying what compaction, pruning or artifacts replaced there.

Prompt-cache reuse is estimated by comparing part fingerprints with the previous request
(``request_fingerprints``): providers cache the longest unchanged prefix, so the reusable share
is the run of leading parts (system, tools, messages) identical to last time.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from pi_tui.core.context.convert import (
    BRANCH_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_PREFIX,
    convert_message,
)
from pi_tui.core.context.pipeline import MICRO_PLACEHOLDER
from pi_tui.core.messages import AgentMessage, LlmMessage
from pi_tui.core.provider import CompletionRequest, ToolSpec
from pi_tui.core.tokens import IMAGE_CHARS, count_tokens_exact

PartKind: TypeAlias = Literal["system", "tools", "summary", "message"]
TokenCounter: TypeAlias = Callable[[str], int]

SNIP_MARKER = re.compile(r"^\[Compacted: (\d+) earlier message groups were omitted from this request\.\]$")
"""The pipeline's snip marker message (``core/context/pipeline.snip_marker``)."""
EXACT_COUNT_MAX_CHARS = 2_000_000
"""Above this many characters in one part, tiktoken is skipped for the chars/4 estimate."""
_WIRE_KEYS = ("role", "content", "toolCallId", "toolName", "isError")


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestPart:
    """One piece of the next request."""

    name: str
    """``System prompt``, ``Tools (4)``, ``user``, ``tool result · bash`` …"""
    kind: PartKind
    tokens: int
    text: str
    """What the model sees, as plain text (tool calls as ``name({json})``)."""
    note: str = ""
    """What was replaced or shortened here, if anything."""
    role: str | None = None
    fingerprint: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestPreview:
    """The next request, and how much of the previous one a prompt cache could reuse."""

    parts: tuple[RequestPart, ...]
    model_ref: str | None = None
    context_window: int | None = None
    prefix_reuse_tokens: int | None = None
    """Tokens of the leading parts identical to the previous request; None without one."""
    previous_request_tokens: int | None = None
    last_cache_read_tokens: int | None = None
    """``cacheRead`` the provider reported for the last reply (measured, when known)."""
    notes: tuple[str, ...] = field(default_factory=tuple)
    """Request-level notes (strategy, what the pipeline did)."""

    @property
    def total_tokens(self) -> int:
        return sum(part.tokens for part in self.parts)

    @property
    def prefix_reuse_percent(self) -> float | None:
        if self.prefix_reuse_tokens is None or not self.total_tokens:
            return None
        return 100.0 * self.prefix_reuse_tokens / self.total_tokens


@dataclass(frozen=True, slots=True)
class PartFingerprint:
    fingerprint: str
    tokens: int


def build_request_preview(
    *,
    system_prompt: str,
    tools: Sequence[ToolSpec],
    messages: Sequence[AgentMessage],
    message_notes: Mapping[int, str] | None = None,
    previous: Sequence[PartFingerprint] | None = None,
    model_ref: str | None = None,
    context_window: int | None = None,
    last_cache_read_tokens: int | None = None,
    notes: Sequence[str] = (),
    branch: Sequence[Mapping[str, Any]] | None = None,
    count: TokenCounter | None = None,
) -> RequestPreview:
    """The preview of a request made of ``system_prompt``, ``tools`` and ``messages``.

    Args:
        messages: the request history (agent messages, before ``convert_to_llm``).
        message_notes: extra notes by index into ``messages`` (the pipeline's replacements).
        previous: ``request_fingerprints`` of the previous request, for prefix reuse.
        branch: the session's root → leaf entries; the compaction summary's note then says how
            many messages the compaction replaced and where the kept part starts.
        count: a token counter; defaults to tiktoken (chars/4 for huge parts).
    """
    counter = count or _count
    parts = [_system_part(system_prompt, counter)]
    if tools:
        parts.append(_tools_part(tools, counter))
    extra = message_notes or {}
    detailed = compaction_note(branch) if branch else None
    for index, message in enumerate(messages):
        auto = detailed if detailed and message.get("role") == "compactionSummary" else None
        part = _message_part(message, counter, extra.get(index, ""), auto_note=auto)
        if part is not None:
            parts.append(part)
    reuse = None if previous is None else _prefix_reuse(parts, previous)
    return RequestPreview(
        parts=tuple(parts),
        model_ref=model_ref,
        context_window=context_window,
        prefix_reuse_tokens=reuse,
        previous_request_tokens=None if previous is None else sum(p.tokens for p in previous),
        last_cache_read_tokens=last_cache_read_tokens,
        notes=tuple(notes),
    )


def request_fingerprints(request: CompletionRequest, *, count: TokenCounter | None = None) -> list[PartFingerprint]:
    """The parts of a request as sent, for comparing with the next preview."""
    counter = count or _count
    parts = [_system_part(request.system_prompt, counter)]
    if request.tools:
        parts.append(_tools_part(request.tools, counter))
    for message in request.messages:
        part = _message_part(message, counter, "")
        if part is not None:
            parts.append(part)
    return [PartFingerprint(part.fingerprint, part.tokens) for part in parts]


def _prefix_reuse(parts: Sequence[RequestPart], previous: Sequence[PartFingerprint]) -> int:
    reused = 0
    for part, old in zip(parts, previous, strict=False):
        if part.fingerprint != old.fingerprint:
            break
        reused += part.tokens
    return reused


def _count(text: str) -> int:
    if len(text) > EXACT_COUNT_MAX_CHARS:
        return math.ceil(len(text) / 4)
    return count_tokens_exact(text) if text else 0


def _digest(value: Any) -> str:
    """A fingerprint for comparing with the previous request of this process (never persisted)."""
    if isinstance(value, tuple) and all(isinstance(item, str) for item in value):
        return f"{hash(value) & 0xFFFFFFFFFFFFFFFF:016x}"
    encoded = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha1(encoded.encode("utf-8"), usedforsecurity=False).hexdigest()


def _system_part(system_prompt: str, counter: TokenCounter) -> RequestPart:
    return RequestPart(
        name="System prompt",
        kind="system",
        tokens=counter(system_prompt),
        text=system_prompt,
        fingerprint=_digest(["system", system_prompt]),
    )


def _tools_part(tools: Sequence[ToolSpec], counter: TokenCounter) -> RequestPart:
    specs = [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in tools]
    text = json.dumps(specs, ensure_ascii=False, indent=1)
    return RequestPart(
        name=f"Tools ({len(tools)}): " + ", ".join(t.name for t in tools),
        kind="tools",
        tokens=counter(text),
        text=text,
        fingerprint=_digest(["tools", specs]),
    )


def compaction_note(branch: Sequence[Mapping[str, Any]]) -> str | None:
    """What the latest compaction on ``branch`` replaced, or None without one.

    ``compaction: 42 earlier messages (12,345 tokens) summarized; kept from entry 1a2b3c4d``.
    """
    last = next((i for i in range(len(branch) - 1, -1, -1) if branch[i].get("type") == "compaction"), None)
    if last is None:
        return None
    compaction = branch[last]
    kept_id = compaction.get("firstKeptEntryId")
    kept_at = next((i for i in range(last) if branch[i].get("id") == kept_id), last)
    replaced = sum(
        1 for entry in branch[:kept_at] if entry.get("type") in ("message", "custom_message", "branch_summary", "compaction")
    )
    tokens = int(compaction.get("tokensBefore") or 0)
    kept = f"kept from entry {kept_id}" if kept_at < last else "nothing kept"
    return f"compaction: {replaced} earlier messages ({tokens:,} tokens) summarized; {kept}"


def _message_part(
    message: AgentMessage, counter: TokenCounter, extra_note: str, *, auto_note: str | None = None
) -> RequestPart | None:
    llm = convert_message(message)
    if llm is None:
        return None
    text, images = _wire_text(llm)
    role = str(message.get("role"))
    name = _part_name(message)
    auto_note = auto_note or _auto_note(message)
    if role == "user":
        # Already-converted summaries (a request's LLM messages) are recognised by their wrappers.
        if text.startswith(COMPACTION_SUMMARY_PREFIX):
            role, name, auto_note = "compactionSummary", "compaction summary", "compaction: replaces earlier history"
        elif text.startswith(BRANCH_SUMMARY_PREFIX):
            role, name, auto_note = "branchSummary", "branch summary", "summary of a branch left behind"
        elif match := SNIP_MARKER.match(text):
            name, auto_note = "snip marker", f"snip: {match.group(1)} earlier message groups omitted from this request"
    kind: PartKind = "summary" if role in ("compactionSummary", "branchSummary") else "message"
    note = "; ".join(n for n in (auto_note, extra_note) if n)
    wire = (text, *(str(llm.get(key)) for key in _WIRE_KEYS if key != "content"))
    return RequestPart(
        name=name,
        kind=kind,
        tokens=counter(text) + math.ceil(images * IMAGE_CHARS / 4),
        text=text,
        note=note,
        role=role,
        fingerprint=_digest(wire),
    )


def _wire_text(message: LlmMessage) -> tuple[str, int]:
    content: Any = message.get("content")
    if isinstance(content, str):
        return content, 0
    lines: list[str] = []
    images = 0
    for block in content or []:
        kind = block.get("type")
        if kind == "text":
            lines.append(str(block.get("text", "")))
        elif kind == "thinking":
            lines.append(f"(thinking) {block.get('thinking', '')}")
        elif kind == "toolCall":
            arguments = json.dumps(block.get("arguments"), ensure_ascii=False)
            lines.append(f"{block.get('name')}({arguments})")
        elif kind == "image":
            images += 1
            lines.append(f"[image {block.get('mimeType', '')}]")
    return "\n".join(lines), images


def _part_name(message: AgentMessage) -> str:
    raw: Any = message
    role = raw.get("role")
    names = {
        "compactionSummary": "compaction summary",
        "branchSummary": "branch summary",
        "bashExecution": f"!{raw.get('command', '')}",
    }
    if role == "toolResult":
        return f"tool result · {raw.get('toolName', '?')}"
    if role == "custom":
        return f"custom · {raw.get('customType', '?')}"
    if role == "assistant":
        calls = [b.get("name") for b in raw.get("content") or [] if b.get("type") == "toolCall"]
        return "assistant → " + ", ".join(str(c) for c in calls) if calls else "assistant"
    return names.get(role, str(role))


def _auto_note(message: AgentMessage) -> str:
    raw: Any = message
    role = raw.get("role")
    if role == "compactionSummary":
        return f"compaction: replaces {int(raw.get('tokensBefore') or 0):,} tokens of earlier history"
    if role == "branchSummary":
        return f"summary of a branch left behind (branch point {raw.get('fromId')})"
    if role == "bashExecution" and raw.get("truncated"):
        return f"output truncated; full output in {raw.get('fullOutputPath')}"
    if role != "toolResult":
        return ""
    content = raw.get("content") or []
    if any(block.get("type") == "text" and block.get("text") == MICRO_PLACEHOLDER for block in content):
        return "micro: the tool result's text was cleared from the request"
    return _details_note(raw.get("details"))


def _details_note(details: Any) -> str:
    if not isinstance(details, Mapping):
        return ""
    artifact = details.get("artifact")
    if isinstance(artifact, Mapping):
        size = artifact.get("original_bytes") or artifact.get("originalBytes")
        size_text = f"{int(size):,} bytes" if isinstance(size, int) else "full text"
        return f"artifact: {size_text} saved to {artifact.get('path')}; head/tail preview sent"
    truncation = details.get("truncation")
    full_path = details.get("fullOutputPath")
    if isinstance(truncation, Mapping) and truncation.get("truncated"):
        shown, total = truncation.get("outputLines"), truncation.get("totalLines")
        where = f"; full output: {full_path}" if full_path else ""
        return f"truncated: {shown} of {total} lines sent{where}"
    if full_path:
        return f"full output: {full_path}"
    return ""
