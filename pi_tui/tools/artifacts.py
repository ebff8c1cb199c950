"""Tool-result artifacts (context-pipeline.md step 1).

Applied by the session to every tool result of a turn — built-in, extension or custom — before
the results are written to the session file. A large result's text is saved to a file in the
session's artifact folder and the result keeps a reference and two previews instead:

* strategy ``"pipeline"``: a result strictly larger than 30,000 UTF-8 bytes is saved; then, if
  the results still inline total more than 200,000 bytes, the largest are saved, largest first,
  until the inline total is within 200,000 (both numbers, and the preview size, are settings:
  ``ArtifactLimits``);
* strategy ``"pi"`` (the default context strategy): only results beyond pi's own limits
  (2,000 lines / 50 KB, plus a small allowance for the tools' own notices) are caught; the
  built-ins already cut their output, so this stops e.g. an extension returning 5 MB.

Previews are at most 2,000 bytes each, cut on whole UTF-8 characters. The reference — the path
relative to the artifact folder and ``original_bytes`` — is in the result text and in
``details["artifact"]``. The model reads the full text back with ``read`` (offset/limit).
Image blocks stay as they are; only text counts and only text is saved.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pi_tui.core.events import ArtifactSavedEvent
from pi_tui.core.messages import JsonValue, ToolResultMessage, UserContent
from pi_tui.tools.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES

ARTIFACT_THRESHOLD_BYTES = 30_000
TURN_BUDGET_BYTES = 200_000
PREVIEW_BYTES = 2_000
PI_NOTICE_ALLOWANCE_BYTES = 2_048
"""Room for the tools' own notices (``[Showing lines …]``) on top of their 50 KB output."""
PI_STRATEGY_THRESHOLD_BYTES = DEFAULT_MAX_BYTES + PI_NOTICE_ALLOWANCE_BYTES
PI_NOTICE_ALLOWANCE_LINES = 5
PI_STRATEGY_THRESHOLD_LINES = DEFAULT_MAX_LINES + PI_NOTICE_ALLOWANCE_LINES

Strategy = Literal["pi", "pipeline"]


@dataclass(frozen=True, slots=True)
class ArtifactLimits:
    """The pipeline's knobs (settings ``context.pipeline.artifactThresholdBytes``,
    ``turnInlineLimitBytes``, ``previewBytes``); the defaults are the spec's numbers. The ``pi``
    strategy uses pi's own tool limits for the threshold and the budget, and these previews."""

    threshold_bytes: int = ARTIFACT_THRESHOLD_BYTES
    turn_inline_bytes: int = TURN_BUDGET_BYTES
    preview_bytes: int = PREVIEW_BYTES

    @classmethod
    def from_settings(cls, settings: object) -> ArtifactLimits:
        """From ``PipelineSettings`` (or anything with its attribute names); defaults otherwise."""
        return cls(
            threshold_bytes=max(0, int(getattr(settings, "artifact_threshold_bytes", ARTIFACT_THRESHOLD_BYTES))),
            turn_inline_bytes=max(0, int(getattr(settings, "turn_inline_limit_bytes", TURN_BUDGET_BYTES))),
            preview_bytes=max(0, int(getattr(settings, "preview_bytes", PREVIEW_BYTES))),
        )


def result_text(result: ToolResultMessage) -> str:
    """The result's text blocks joined with newlines (what an artifact file holds)."""
    return "\n".join(str(block.get("text", "")) for block in result.get("content", []) if block.get("type") == "text")


def text_bytes(result: ToolResultMessage) -> int:
    """The UTF-8 bytes of the result's text content: the blocks themselves, not the newline
    that joins them in an artifact file (two 15,000-byte blocks are 30,000 bytes: inline)."""
    return sum(len(str(block.get("text", "")).encode("utf-8", "surrogatepass"))
               for block in result.get("content", []) if block.get("type") == "text")


def head_preview(data: bytes, limit: int = PREVIEW_BYTES) -> str:
    """The first ≤ ``limit`` bytes, dropping a character that does not fit whole."""
    return data[:limit].decode("utf-8", "ignore")


def tail_preview(data: bytes, limit: int = PREVIEW_BYTES) -> str:
    """The last ≤ ``limit`` bytes, dropping a character that does not fit whole."""
    return data[-limit:].decode("utf-8", "ignore") if limit else ""


def _safe_name(call_id: str, tool_name: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{tool_name}-{call_id}")[:120].strip(".") or "result"
    return stem


def _unique_path(folder: Path, stem: str) -> Path:
    candidate = folder / f"{stem}.txt"
    counter = 2
    while candidate.exists():
        candidate = folder / f"{stem}-{counter}.txt"
        counter += 1
    return candidate


@dataclass(frozen=True, slots=True)
class _Saved:
    relative: str
    absolute: Path
    original_bytes: int


def reference_text(saved: _Saved, data: bytes, preview_bytes: int = PREVIEW_BYTES) -> str:
    """What the model sees instead of the full text."""
    return (
        f"[Tool result saved as an artifact: {saved.original_bytes} bytes, too large to keep inline. "
        f"Artifact: {saved.relative} (original_bytes={saved.original_bytes}). "
        f"Full text: {saved.absolute} — use the read tool with offset/limit to see more.]\n"
        f"--- first {preview_bytes} bytes ---\n{head_preview(data, preview_bytes)}\n"
        f"--- last {preview_bytes} bytes ---\n{tail_preview(data, preview_bytes)}"
    )


def _save(folder: Path, result: ToolResultMessage, data: bytes) -> _Saved:
    folder.mkdir(parents=True, exist_ok=True)
    path = _unique_path(folder, _safe_name(result.get("toolCallId", ""), result.get("toolName", "")))
    temporary = path.with_name(path.name + ".part")
    with open(temporary, "wb") as fh:
        fh.write(data)
    os.replace(temporary, path)  # a reader never sees half an artifact
    return _Saved(path.name, path, len(data))


def _replaced(result: ToolResultMessage, saved: _Saved, data: bytes, preview_bytes: int) -> ToolResultMessage:
    images: list[UserContent] = [b for b in result.get("content", []) if b.get("type") != "text"]
    new_result: ToolResultMessage = dict(result)  # type: ignore[assignment]
    new_result["content"] = [{"type": "text", "text": reference_text(saved, data, preview_bytes)}, *images]
    reference: dict[str, JsonValue] = {"path": saved.relative, "original_bytes": saved.original_bytes}
    old_details = result.get("details")
    if isinstance(old_details, dict):
        new_result["details"] = {**old_details, "artifact": reference}
    elif old_details is None:
        new_result["details"] = {"artifact": reference}
    else:
        new_result["details"] = {"artifact": reference, "toolDetails": old_details}
    return new_result


def _already_artifact(result: ToolResultMessage) -> bool:
    details = result.get("details")
    return isinstance(details, dict) and isinstance(details.get("artifact"), dict)


def _beyond_pi_limits(result: ToolResultMessage, size: int) -> bool:
    if size > PI_STRATEGY_THRESHOLD_BYTES:
        return True
    return result_text(result).count("\n") + 1 > PI_STRATEGY_THRESHOLD_LINES


def apply_artifacts(
    results: Sequence[ToolResultMessage],
    *,
    artifact_dir: Path | None,
    strategy: Strategy | str = "pi",
    limits: ArtifactLimits | None = None,
    recorded: Sequence[ToolResultMessage] = (),
) -> tuple[list[ToolResultMessage], list[ArtifactSavedEvent]]:
    """Replace large results of one turn by artifact references; returns (results, events).

    ``recorded``: results of the same turn already written (sequential tool execution records
    one at a time). They can no longer be saved, but what they keep inline counts towards the
    turn's budget, so the rule holds however the tools ran. The input is not modified.
    ``artifact_dir`` None (``--no-session``) uses a temp folder.
    """
    limits = limits or ArtifactLimits()
    sizes = [0 if _already_artifact(r) else text_bytes(r) for r in results]
    if strategy == "pipeline":
        chosen = {i for i, size in enumerate(sizes) if size > limits.threshold_bytes}
    else:
        chosen = {i for i, size in enumerate(sizes) if size > 0 and _beyond_pi_limits(results[i], size)}
    if strategy == "pipeline":
        inline_total = sum(0 if _already_artifact(r) else text_bytes(r) for r in recorded)
        inline_total += sum(size for i, size in enumerate(sizes) if i not in chosen)
        by_size = sorted((i for i in range(len(results)) if i not in chosen and sizes[i] > 0), key=lambda i: (-sizes[i], i))
        for index in by_size:
            if inline_total <= limits.turn_inline_bytes:
                break
            chosen.add(index)
            inline_total -= sizes[index]
    if not chosen:
        return list(results), []
    folder = artifact_dir if artifact_dir is not None else Path(tempfile.mkdtemp(prefix="pi-tui-artifacts-"))
    out: list[ToolResultMessage] = []
    events: list[ArtifactSavedEvent] = []
    for index, result in enumerate(results):
        if index not in chosen:
            out.append(result)
            continue
        data = result_text(result).encode("utf-8", "surrogatepass")
        saved = _save(folder, result, data)
        out.append(_replaced(result, saved, data, limits.preview_bytes))
        events.append({
            "type": "artifact_saved",
            "toolCallId": result.get("toolCallId", ""),
            "toolName": result.get("toolName", ""),
            "path": str(saved.absolute),
            "originalBytes": saved.original_bytes,
        })
    return out, events
