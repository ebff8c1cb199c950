"""The request-time pipeline: atomic tool groups, snip and micro (spec/context-pipeline.md).

These reducers change only the *request copy* built before a model call; the session file (the
canonical history) is never touched. Every step keeps or drops whole *units*:

* a **tool group** is one assistant message with tool calls together with all of its results;
* every other message is a unit of its own.

So a request never holds a tool result without its call, or a call without its result. Where
the history itself breaks that rule (a branch taken right after a tool call, an orphan result),
the unit builder repairs the copy: orphan results are left out and a missing result becomes the
same synthetic ``No result provided`` error result pi's wire encoder would add (§14.6).

Steps (numbers are the spec's, configurable through ``PipelineConfig``):

* **snip**: more than 50 units → the first 3, one marker message, the last 46;
* **micro**: the results of the 3 most recent tool groups stay; older results read
  ``[Earlier tool result compacted. Re-run if needed.]`` (calls and ids unchanged).

The cache-aware variant (``pipeline_cache.py``) changes *when* these steps move, not what they do.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_tui.core.context import pipeline_defaults as knob_defaults
from pi_tui.core.context.convert import convert_message
from pi_tui.core.messages import AgentMessage, ToolResultMessage
from pi_tui.core.tokens import estimate_tokens

MICRO_PLACEHOLDER = "[Earlier tool result compacted. Re-run if needed.]"
NO_RESULT_TEXT = "No result provided"


@dataclass(frozen=True, slots=True, kw_only=True)
class PipelineConfig:
    variant: str = "exact"
    snip_max_groups: int = knob_defaults.SNIP_MAX_GROUPS
    snip_keep_first: int = knob_defaults.SNIP_KEEP_FIRST
    snip_keep_last: int = knob_defaults.SNIP_KEEP_LAST
    micro_keep_recent: int = knob_defaults.MICRO_KEEP_RECENT
    summary_threshold_bytes: int = knob_defaults.SUMMARY_THRESHOLD_BYTES
    cache_aware_protect_tokens: int = knob_defaults.CACHE_AWARE_PROTECT_TOKENS
    cache_aware_min_gain_tokens: int = knob_defaults.CACHE_AWARE_MIN_GAIN_TOKENS
    cache_aware_snip_batch: int = 16

    @property
    def cache_aware(self) -> bool:
        return self.variant == "cache-aware"


def coerce_pipeline_config(value: Any) -> PipelineConfig:
    """From ``resources.settings.PipelineSettings`` (or anything with the same attributes)."""
    if isinstance(value, PipelineConfig):
        return value
    if value is None:
        return PipelineConfig()
    defaults = PipelineConfig()
    fields = {name: getattr(value, name, getattr(defaults, name)) for name in PipelineConfig.__dataclass_fields__}
    return PipelineConfig(**fields)


WIRE_FIELDS = ("role", "content", "toolCallId", "toolName", "isError")
"""What a message puts on the wire. Everything else an agent message carries (usage, timestamps,
api/provider/model, stop reason, response ids, a tool's ``details`` such as the edit tool's
diff) stays in the session file and is never sent."""


def wire_message(message: Any) -> dict[str, Any] | None:
    """The message as a request carries it (after ``convert_to_llm``), or None when it is not
    sent: app messages that do not reach the model, and errored or aborted assistant answers,
    which the replay transform drops (§14.6)."""
    llm: Any = convert_message(message)
    if llm is None or (llm["role"] == "assistant" and llm.get("stopReason") in ("error", "aborted")):
        return None
    return {key: llm[key] for key in WIRE_FIELDS if key in llm}


def message_bytes(message: Any) -> int:
    """UTF-8 size of the message's wire fields as compact JSON: the pipeline's measure of
    request size (the threshold is about what is sent, not about what the session stores)."""
    wire = wire_message(message)
    if wire is None:
        return 0
    return len(json.dumps(wire, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass"))


def request_bytes(messages: Sequence[Any]) -> int:
    """``message_bytes`` summed over a request's messages."""
    return sum(message_bytes(m) for m in messages)


def _estimate(message: Any) -> int:
    return estimate_tokens(message)


@dataclass(slots=True)
class Unit:
    """One atomic unit of the request: a single message or a whole tool group."""

    start: int
    """Index of the unit's first message in the input."""
    messages: list[AgentMessage]
    is_tool_group: bool
    open: bool = False
    """A tool group at the end of the input may still receive results: rebuilt on the next extend."""
    repaired: bool = False
    _size: tuple[int, int] | None = field(default=None, repr=False)
    _micro: list[AgentMessage] | None = field(default=None, repr=False)

    def size(self) -> tuple[int, int]:
        """``(bytes, tokens)``, computed once."""
        if self._size is None:
            self._size = (sum(message_bytes(m) for m in self.messages), sum(_estimate(m) for m in self.messages))
        return self._size

    def result_tokens(self) -> int:
        return sum(_estimate(m) for m in self.messages if m["role"] == "toolResult")

    def micro_messages(self) -> list[AgentMessage]:
        """The unit with its tool results replaced by the placeholder (memoized, deterministic)."""
        if self._micro is None:
            self._micro = [_compacted(m) if m["role"] == "toolResult" else m for m in self.messages]
        return self._micro


def _compacted(message: AgentMessage) -> AgentMessage:
    result: dict[str, Any] = dict(message)
    result["content"] = [{"type": "text", "text": MICRO_PLACEHOLDER}]
    result.pop("details", None)
    return result  # type: ignore[return-value]


def _synthetic_result(call: dict[str, Any], timestamp: int) -> ToolResultMessage:
    return {
        "role": "toolResult",
        "toolCallId": call["id"],
        "toolName": call.get("name", ""),
        "content": [{"type": "text", "text": NO_RESULT_TEXT}],
        "isError": True,
        "timestamp": timestamp,
    }


def _calls(message: AgentMessage) -> list[dict[str, Any]]:
    if message["role"] != "assistant" or message.get("stopReason") in ("error", "aborted"):
        return []
    return [b for b in message["content"] if b.get("type") == "toolCall"]  # type: ignore[misc]


def _close_group(unit: Unit, calls: list[dict[str, Any]], answered: set[str]) -> None:
    missing = [c for c in calls if c["id"] not in answered]
    if missing:
        timestamp = int(unit.messages[0].get("timestamp", 0) or 0)
        unit.messages.extend(_synthetic_result(c, timestamp) for c in missing)
        unit.repaired = True


def build_units(messages: Sequence[AgentMessage], start: int = 0) -> tuple[list[Unit], int]:
    """Split ``messages[start:]`` into units (the last tool group is marked ``open``).

    Returns the units and the number of orphan tool results left out.
    """
    units: list[Unit] = []
    orphans = 0
    group: Unit | None = None
    calls: list[dict[str, Any]] = []
    answered: set[str] = set()
    for index in range(start, len(messages)):
        message = messages[index]
        if message["role"] == "toolResult":
            call_id = message.get("toolCallId")
            if group is not None and call_id in {c["id"] for c in calls} and call_id not in answered:
                answered.add(call_id)
                group.messages.append(message)
            else:
                orphans += 1  # a result without its call is left out of the request
            continue
        if group is not None:
            _close_group(group, calls, answered)
            group = None
        new_calls = _calls(message)
        if new_calls:
            group = Unit(index, [message], True)
            calls, answered = new_calls, set()
            units.append(group)
        else:
            units.append(Unit(index, [message], False))
    if group is not None:
        _close_group(group, calls, answered)
        group.open = True
    return units, orphans


def flatten(units: Sequence[Unit]) -> list[AgentMessage]:
    return [m for u in units for m in u.messages]


# --------------------------------------------------------------------------- snip


def snip_marker(dropped_units: int, timestamp: int) -> AgentMessage:
    text = f"[Compacted: {dropped_units} earlier message groups were omitted from this request.]"
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": timestamp}


def snip_drop_count(unit_count: int, config: PipelineConfig) -> int:
    """How many middle units snip removes (0 when it does not apply).

    Exact: ``n - first - last`` as soon as ``n > max``. Cache-aware: the same, rounded *up* to a
    multiple of the batch size, so the dropped window (and the marker text) changes only once
    every ``batch`` new units instead of on every request.
    """
    if unit_count <= config.snip_max_groups:
        return 0
    exact = unit_count - config.snip_keep_first - config.snip_keep_last
    if not config.cache_aware or config.cache_aware_snip_batch <= 1:
        return exact
    batch = config.cache_aware_snip_batch
    rounded = math.ceil(exact / batch) * batch
    return min(rounded, unit_count - config.snip_keep_first - 1)


@dataclass(frozen=True, slots=True)
class Snip:
    keep_first: int
    dropped: int


def plan_snip(unit_count: int, config: PipelineConfig) -> Snip:
    return Snip(min(config.snip_keep_first, unit_count), snip_drop_count(unit_count, config))


# --------------------------------------------------------------------------- micro


def micro_keep_from(units: Sequence[Unit], keep_recent: int) -> int:
    """Index of the oldest unit whose results micro keeps: the ``keep_recent``-th newest tool group."""
    seen = 0
    for index in range(len(units) - 1, -1, -1):
        if units[index].is_tool_group:
            seen += 1
            if seen == keep_recent:
                return index
    return 0


@dataclass(slots=True)
class Reduction:
    """The request copy after snip and micro, with what each step did."""

    messages: list[AgentMessage]
    snipped_units: int = 0
    micro_units: int = 0
    bytes_before: int = 0
    bytes_after_snip: int = 0
    bytes_after: int = 0
    tokens_before: int = 0
    tokens_after_snip: int = 0
    tokens_after: int = 0


def reduce_units(
    units: Sequence[Unit],
    config: PipelineConfig,
    *,
    micro_before: int | None = None,
    totals: tuple[int, int] | None = None,
) -> Reduction:
    """Snip, then micro, over whole units.

    ``micro_before`` (cache-aware) replaces the results of tool groups whose unit index is below
    it; without it the exact rule applies to the snipped request: all but the 3 newest groups.
    ``totals`` are the ``(bytes, tokens)`` of all units when the caller keeps them incrementally
    (otherwise they are summed here, which is O(units)).
    """
    snip = plan_snip(len(units), config)
    if snip.dropped:
        kept = list(range(snip.keep_first)) + list(range(snip.keep_first + snip.dropped, len(units)))
    else:
        kept = list(range(len(units)))
    reduction = Reduction(messages=[])
    if totals is None:
        sizes_all = [u.size() for u in units]
        totals = (sum(s[0] for s in sizes_all), sum(s[1] for s in sizes_all))
    reduction.bytes_before, reduction.tokens_before = totals
    kept_units = [units[i] for i in kept]
    reduction.snipped_units = snip.dropped
    marker: AgentMessage | None = None
    if snip.dropped:
        anchor = units[snip.keep_first]
        marker = snip_marker(snip.dropped, int(anchor.messages[0].get("timestamp", 0) or 0) if anchor.messages else 0)
    sizes = [u.size() for u in kept_units]
    marker_size = (message_bytes(marker), _estimate(marker)) if marker is not None else (0, 0)
    reduction.bytes_after_snip = sum(s[0] for s in sizes) + marker_size[0]
    reduction.tokens_after_snip = sum(s[1] for s in sizes) + marker_size[1]
    if micro_before is None:
        keep_from_position = micro_keep_from(kept_units, config.micro_keep_recent)
        compact = [u.is_tool_group and pos < keep_from_position for pos, u in enumerate(kept_units)]
    else:
        compact = [u.is_tool_group and i < micro_before for i, u in zip(kept, kept_units, strict=True)]
    out: list[AgentMessage] = []
    bytes_after, tokens_after = marker_size
    for pos, unit in enumerate(kept_units):
        if marker is not None and pos == snip.keep_first:
            out.append(marker)
        if compact[pos] and unit.messages:
            micro = unit.micro_messages()
            out.extend(micro)
            reduction.micro_units += 1
            bytes_after += sum(message_bytes(m) for m in micro)
            tokens_after += sum(_estimate(m) for m in micro)
        else:
            out.extend(unit.messages)
            bytes_after += sizes[pos][0]
            tokens_after += sizes[pos][1]
    if marker is not None and snip.keep_first >= len(kept_units):
        out.append(marker)
    reduction.messages = out
    reduction.bytes_after = bytes_after
    reduction.tokens_after = tokens_after
    return reduction


def tool_pairing_problems(messages: Sequence[AgentMessage]) -> list[str]:
    """Every way ``messages`` break call/result pairing (empty when the request is well formed).

    Errored and aborted assistants are ignored, as the wire encoder drops them (§14.6).
    """
    problems: list[str] = []
    pending: dict[str, bool] = {}
    for index, message in enumerate(messages):
        role = message["role"]
        if role == "toolResult":
            call_id = message.get("toolCallId")
            if call_id not in pending or pending[call_id]:
                problems.append(f"message {index}: tool result {call_id!r} without its call")
            else:
                pending[call_id] = True
            continue
        if role == "assistant" and message.get("stopReason") in ("error", "aborted"):
            continue
        problems.extend(f"call {cid!r} without its result" for cid, done in pending.items() if not done)
        pending = {c["id"]: False for c in _calls(message)}
    problems.extend(f"call {cid!r} without its result" for cid, done in pending.items() if not done)
    return problems
