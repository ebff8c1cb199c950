"""What the OpenAI Responses API rejects, for ``responses_fake`` (wording as the API words it).

The rule that matters most here: with ``store: false`` nothing is kept server-side, so a
reasoning model's output items are only valid together. An assistant ``message`` or
``function_call`` item the server produced next to a ``reasoning`` item must come back with
that reasoning item before it (``Item 'fc_…' of type 'function_call' was provided without its
required 'reasoning' item: 'rs_…'``), and a reasoning item must carry the ``encrypted_content``
the server issued (without it the server looks the id up and finds nothing; a made-up one
cannot be verified). Also checked: unknown parameters, item id prefixes, tool-call/output
pairing in both directions, ``reasoning`` on models without it, ``include`` values and the
``max_output_tokens`` minimum.

Stdlib only: the fake must start fast and never load litellm.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_PARAMETERS = {
    "model", "input", "stream", "prompt_cache_key", "prompt_cache_retention", "store", "max_output_tokens", "tools",
    "reasoning", "include", "temperature", "top_p", "tool_choice", "parallel_tool_calls", "instructions", "metadata",
    "service_tier", "text", "truncation", "user", "previous_response_id", "background", "max_tool_calls",
    "safety_identifier", "stream_options", "top_logprobs", "conversation",
}
_INCLUDE = {
    "reasoning.encrypted_content", "message.output_text.logprobs", "file_search_call.results", "web_search_call.results",
    "web_search_call.action.sources", "message.input_image.image_url", "computer_call_output.output.image_url",
    "code_interpreter_call.outputs",
}
_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_PREFIX = {"message": "msg", "function_call": "fc", "reasoning": "rs"}


@dataclass(frozen=True, slots=True)
class Rejection:
    status: int
    message: str
    param: str | None = None
    code: str | None = None


@dataclass(frozen=True, slots=True)
class IssuedState:
    """What the server remembers of its own replies (it stores nothing else)."""

    encrypted: Callable[[str], str | None]
    """encrypted_content → the reasoning item id it was issued for (None: never issued)."""
    required_reasoning: Callable[[str], str | None]
    """message/function_call item id → the reasoning item that preceded it, if any."""


def is_reasoning_model(model: str) -> bool:
    return re.match(r"^(o\d|gpt-5|codex)", model) is not None


def _efforts_of(model: str) -> tuple[str, ...]:
    """The efforts a model takes (OpenAI's reasoning docs and its errors): the o-series only
    low/medium/high; the gpt-5 family before gpt-5.1 no ``none``
    (``Unsupported value: 'none' is not supported with the 'gpt-5-mini' model``), from gpt-5.1 on
    no ``minimal``, ``xhigh`` only after gpt-5.1-codex-max. Other models: every value."""
    if re.match(r"^o\d", model):  # the o-series: "Supported values are: 'low', 'medium', and 'high'."
        return ("low", "medium", "high")
    found = re.match(r"^gpt-5(?:\.(\d+))?", model)
    if found is None:
        return _EFFORTS
    minor = int(found.group(1) or 0)
    if minor == 0:
        return ("minimal", "low", "medium", "high")
    if minor == 1 and "codex-max" not in model:
        return ("none", "low", "medium", "high")
    return ("none", "low", "medium", "high", "xhigh")


def validate(body: Any, state: IssuedState) -> Rejection | None:
    if not isinstance(body, dict):
        return Rejection(400, "We could not parse the JSON body of your request.")
    for key in body:
        if key not in _PARAMETERS:
            return Rejection(400, f"Unknown parameter: '{key}'.", key, "unknown_parameter")
    if not body.get("model"):
        return Rejection(400, "Missing required parameter: 'model'.", "model", "missing_required_parameter")
    for check in (_check_options, _check_tools, _check_input):
        problem = check(body, state)
        if problem is not None:
            return problem
    return None


def _check_options(body: dict[str, Any], state: IssuedState) -> Rejection | None:
    limit = body.get("max_output_tokens")
    if limit is not None and (not isinstance(limit, int) or limit < 16):
        return Rejection(400, f"Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got {limit} instead.",
                         "max_output_tokens", "integer_below_min_value")
    for value in body.get("include") or []:
        if value not in _INCLUDE:
            return Rejection(400, f"Invalid value: '{value}'. Supported values are: {', '.join(sorted(_INCLUDE))}.", "include", "invalid_value")
    reasoning = body.get("reasoning")
    if reasoning is not None:
        if not is_reasoning_model(str(body["model"])):
            return Rejection(400, "Unsupported parameter: 'reasoning.effort' is not supported with this model.", "reasoning.effort",
                             "unsupported_parameter")
        effort = reasoning.get("effort") if isinstance(reasoning, dict) else None
        if effort is not None and effort not in _EFFORTS:
            return Rejection(400, f"Invalid value: '{effort}'. Supported values are: {', '.join(repr(e) for e in _EFFORTS)}.",
                             "reasoning.effort", "invalid_value")
        supported = _efforts_of(str(body["model"]))
        if effort is not None and effort not in supported:
            listed = ", ".join(f"'{e}'" for e in supported[:-1]) + f", and '{supported[-1]}'"
            return Rejection(400, f"Unsupported value: '{effort}' is not supported with the '{body['model']}' model. "
                                  f"Supported values are: {listed}.", "reasoning.effort", "unsupported_value")
    return None


def _check_tools(body: dict[str, Any], state: IssuedState) -> Rejection | None:
    for i, tool in enumerate(body.get("tools") or []):
        if not isinstance(tool, dict) or tool.get("type") != "function":
            return Rejection(400, f"Invalid value at 'tools[{i}].type'.", f"tools[{i}].type", "invalid_value")
        if not _TOOL_NAME.match(str(tool.get("name", ""))):
            return Rejection(400, f"Invalid 'tools[{i}].name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                             f"tools[{i}].name", "invalid_value")
    return None


def _check_item(i: int, item: dict[str, Any], store: bool, state: IssuedState) -> Rejection | None:
    kind = item.get("type", "message")
    item_id = item.get("id")
    prefix = _PREFIX.get(str(kind))
    if item_id is not None and prefix and not str(item_id).startswith(prefix):
        return Rejection(400, f"Invalid 'input[{i}].id': '{item_id}'. Expected an ID that begins with '{prefix}'.", f"input[{i}].id",
                         "invalid_value")
    if kind == "reasoning":
        if "summary" not in item:
            return Rejection(400, f"Missing required parameter: 'input[{i}].summary'.", f"input[{i}].summary", "missing_required_parameter")
        encrypted = item.get("encrypted_content")
        if not encrypted and not store:
            return Rejection(404, f"Item with id '{item_id}' not found. Items are not persisted when `store` is set to false. "
                                  "Try again with `store` set to true, or remove this item from your input.", "input")
        if encrypted and state.encrypted(str(encrypted)) != item_id:
            return Rejection(400, f"The encrypted content for item {item_id} could not be verified.", None, "invalid_encrypted_content")
    if kind == "function_call":
        for key in ("call_id", "name", "arguments"):
            if not isinstance(item.get(key), str):
                return Rejection(400, f"Missing required parameter: 'input[{i}].{key}'.", f"input[{i}].{key}", "missing_required_parameter")
    return None


def _check_input(body: dict[str, Any], state: IssuedState) -> Rejection | None:
    items = body.get("input")
    if isinstance(items, str):
        return None
    if not isinstance(items, list):
        return Rejection(400, "Invalid type for 'input': expected one of a string or an array of input items.", "input", "invalid_type")
    store = body.get("store") is not False
    seen_reasoning: set[str] = set()
    calls: dict[str, int] = {}
    answered: set[str] = set()
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            return Rejection(400, f"Invalid type for 'input[{i}]': expected an object.", f"input[{i}]", "invalid_type")
        problem = _check_item(i, item, store, state)
        if problem is not None:
            return problem
        kind = item.get("type", "message")
        if kind == "reasoning" and item.get("id"):
            seen_reasoning.add(str(item["id"]))
        if kind in ("message", "function_call") and item.get("id"):
            needed = state.required_reasoning(str(item["id"]))
            if needed is not None and needed not in seen_reasoning:
                return Rejection(400, f"Item '{item['id']}' of type '{kind}' was provided without its required 'reasoning' item: '{needed}'.",
                                 "input")
        if kind == "function_call":
            calls[str(item["call_id"])] = i
        elif kind == "function_call_output":
            call_id = str(item.get("call_id"))
            if call_id not in calls:
                return Rejection(400, f"No tool call found for function call output with call_id {call_id}.", "input")
            answered.add(call_id)
        elif item.get("role") == "user":
            missing = [c for c in calls if c not in answered]
            if missing:
                return Rejection(400, f"No tool output found for function call {missing[0]}.", "input")
    missing = [c for c in calls if c not in answered]
    if missing:
        return Rejection(400, f"No tool output found for function call {missing[0]}.", "input")
    return None
