"""What the Gemini API (``generativelanguage.googleapis.com/v1beta``) rejects, for ``gemini_fake``.

Each check answers with the real API's status and wording where it is known (from Google's
docs and error reports), so a client that passes the fake passes the API on these points:

* the JSON itself: unknown field names are a 400 (the API parses bodies as protobuf JSON and
  accepts both ``camelCase`` and ``snake_case`` spellings);
* ``contents``: present, roles ``user``/``model`` only, no empty ``parts``, one data field per part;
* function calling: a function-call turn follows a user turn or a function-response turn, and
  the function-response turn right after it answers exactly as many calls;
* thinking: ``thinkingBudget`` and ``thinkingLevel`` are exclusive, levels exist only on
  Gemini 3 (and Gemma 4: minimal, high), 2.5 Pro cannot switch thinking off;
* **thought signatures** (https://ai.google.dev/gemini-api/docs/thought-signatures): on Gemini 3
  the first ``functionCall`` part of every model step of the *current turn* (everything after the
  last user message that is not a function response) must carry its ``thoughtSignature``; a
  signature the server never issued is ``Corrupted``. Google's documented placeholders
  (``skip_thought_signature_validator``, ``context_engineering_is_the_way_to_go``, plain or
  base64) are accepted, as the API does.

Stdlib only: the fake must start fast and never load litellm.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Rejection:
    """An HTTP error the API would answer with."""

    status: int
    message: str


_TOP_LEVEL = {"contents", "systemInstruction", "tools", "toolConfig", "safetySettings", "generationConfig", "cachedContent"}
_PART_DATA = {"text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode", "codeExecutionResult"}
_PART_META = {"thought", "thoughtSignature", "videoMetadata", "partMetadata", "mediaResolution"}
_GENERATION = {
    "stopSequences", "responseMimeType", "responseSchema", "responseJsonSchema", "responseModalities",
    "candidateCount", "maxOutputTokens", "temperature", "topP", "topK", "seed", "presencePenalty",
    "frequencyPenalty", "responseLogprobs", "logprobs", "enableEnhancedCivicAnswers", "speechConfig",
    "thinkingConfig", "mediaResolution", "imageConfig",
}
_THINKING = {"includeThoughts", "thinkingBudget", "thinkingLevel"}
_DUMMY_SIGNATURES = {"skip_thought_signature_validator", "context_engineering_is_the_way_to_go"}
MAX_OUTPUT_TOKENS = 65_536
MISSING_SIGNATURE = (
    "Function call is missing a thought_signature in functionCall parts. This is required for tools to work "
    "correctly, and missing thought_signature may lead to degraded model performance. Additional data, "
    "function call `default_api:{name}` , position {position}. Please refer to "
    "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)
CORRUPTED_SIGNATURE = "Corrupted thought signature."


def camel(name: str) -> str:
    """``function_call`` → ``functionCall`` (the API accepts both spellings)."""
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def normalized(value: Any) -> Any:
    """The body with every key in camelCase, except inside free-form JSON (args, response, schemas)."""
    if isinstance(value, list):
        return [normalized(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = camel(key)
        out[name] = item if name in _FREE_FORM else normalized(item)
    return out


_FREE_FORM = {"args", "response", "parameters", "parametersJsonSchema", "responseSchema", "responseJsonSchema"}


def is_gemini_3(model: str) -> bool:
    match = re.search(r"gemini-(\d+)", model)
    return match is not None and int(match.group(1)) >= 3


def is_dummy_signature(signature: str) -> bool:
    if signature in _DUMMY_SIGNATURES:
        return True
    try:
        return base64.b64decode(signature, validate=True).decode("ascii", "replace") in _DUMMY_SIGNATURES
    except ValueError:
        return False


def _unknown(keys: Any, allowed: set[str], where: str) -> Rejection | None:
    for key in keys:
        if key not in allowed:
            return Rejection(400, f'Invalid JSON payload received. Unknown name "{key}" at \'{where}\': Cannot find field.')
    return None


def validate(raw_body: Any, model: str, *, is_issued: Callable[[str], bool], placeholders_ok: bool = True) -> Rejection | None:
    """The first rule the request breaks, or None. ``raw_body`` is the parsed JSON as sent.

    ``placeholders_ok=False`` is stricter than the API: Google's "skip validation" placeholder
    counts as missing (a client that sends it lost the real signature, and Google says the model
    then performs worse). Tests of our own client use it."""
    if not isinstance(raw_body, dict):
        return Rejection(400, "Invalid JSON payload received. Expected an object.")
    body = normalized(raw_body)
    for check in (_check_fields, _check_contents, _check_function_turns, _check_generation):
        problem = check(body, model)
        if problem is not None:
            return problem
    return _check_signatures(body, model, is_issued, placeholders_ok)


def _check_fields(body: dict[str, Any], model: str) -> Rejection | None:
    problem = _unknown(body, _TOP_LEVEL, "")
    if problem is not None:
        return problem
    for i, content in enumerate(body.get("contents") or []):
        if not isinstance(content, dict):
            return Rejection(400, f"Invalid value at 'contents[{i}]': expected an object.")
        problem = _unknown(content, {"role", "parts"}, f"contents[{i}]")
        if problem is not None:
            return problem
        for j, part in enumerate(content.get("parts") or []):
            if not isinstance(part, dict):
                return Rejection(400, f"Invalid value at 'contents[{i}].parts[{j}]': expected an object.")
            problem = _unknown(part, _PART_DATA | _PART_META, f"contents[{i}].parts[{j}]")
            if problem is not None:
                return problem
    generation = body.get("generationConfig") or {}
    problem = _unknown(generation, _GENERATION, "generation_config")
    if problem is None:
        problem = _unknown(generation.get("thinkingConfig") or {}, _THINKING, "generation_config.thinking_config")
    return problem


def _check_contents(body: dict[str, Any], model: str) -> Rejection | None:
    contents = body.get("contents")
    if not contents:
        return Rejection(400, "* GenerateContentRequest.contents: contents is not specified\n")
    for i, content in enumerate(contents):
        if content.get("role") not in ("user", "model"):
            return Rejection(400, "Please use a valid role: user, model.")
        parts = content.get("parts") or []
        if not parts:
            return Rejection(400, f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty.\n")
        for j, part in enumerate(parts):
            data = [k for k in part if k in _PART_DATA]
            if len(data) != 1:
                return Rejection(400, f"* GenerateContentRequest.contents[{i}].parts[{j}].data: required oneof field 'data' must have one initialized field\n")
    return None


def _calls(content: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in content.get("parts", []) if "functionCall" in p]


def _responses(content: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in content.get("parts", []) if "functionResponse" in p]


def _check_function_turns(body: dict[str, Any], model: str) -> Rejection | None:
    contents = body["contents"]
    for i, content in enumerate(contents):
        if content["role"] == "model" and _calls(content) and i > 0:
            previous = contents[i - 1]
            if previous["role"] != "user":
                return Rejection(400, "Please ensure that function call turn comes immediately after a user turn or after a function response turn.")
        if _responses(content):
            previous = contents[i - 1] if i > 0 else None
            if previous is None or previous["role"] != "model" or not _calls(previous):
                return Rejection(400, "Please ensure that function response turn comes immediately after a function call turn.")
            if len(_responses(content)) != len(_calls(previous)):
                return Rejection(400, "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.")
    return None


def _check_generation(body: dict[str, Any], model: str) -> Rejection | None:
    generation = body.get("generationConfig") or {}
    limit = generation.get("maxOutputTokens")
    if limit is not None and not (isinstance(limit, int) and 1 <= limit <= MAX_OUTPUT_TOKENS):
        return Rejection(400, f"Unable to submit request because it has a maxOutputTokens value of {limit} but the supported range is from 1 (inclusive) to {MAX_OUTPUT_TOKENS + 1} (exclusive). Update the value and try again.")
    thinking = generation.get("thinkingConfig") or {}
    if "thinkingBudget" in thinking and "thinkingLevel" in thinking:
        return Rejection(400, "You can only set only one of thinking budget and thinking level.")
    level = thinking.get("thinkingLevel")
    if level is not None:
        gemma_4 = re.search(r"gemma-?4", model) is not None
        if not is_gemini_3(model) and not gemma_4:
            return Rejection(400, "Thinking level is not supported for this model.")
        allowed = {"low", "high"} if "pro" in model else {"minimal", "high"} if gemma_4 else {"minimal", "low", "medium", "high"}
        if str(level).lower() not in allowed:
            return Rejection(400, f"Thinking level {level} is not supported for this model. Supported levels: {', '.join(sorted(allowed))}.")
    budget = thinking.get("thinkingBudget")
    if budget is not None and "2.5-pro" in model and budget != -1 and not 128 <= budget <= 32768:
        if budget == 0:
            return Rejection(400, "Budget 0 is invalid. This model only works in thinking mode.")
        return Rejection(400, f"The thinking budget {budget} is invalid. Please choose a value between 128 and 32768.")
    return None


def current_turn_start(contents: list[dict[str, Any]]) -> int:
    """Index of the content that opens the current turn: the last user content that is not only
    function responses."""
    for i in range(len(contents) - 1, -1, -1):
        content = contents[i]
        if content["role"] == "user" and any("functionResponse" not in p for p in content["parts"]):
            return i
    return 0


def _check_signatures(body: dict[str, Any], model: str, is_issued: Callable[[str], bool], placeholders_ok: bool) -> Rejection | None:
    contents = body["contents"]
    for content in contents:
        for part in content["parts"]:
            signature = part.get("thoughtSignature")
            if signature is not None and not (is_issued(str(signature)) or is_dummy_signature(str(signature))):
                return Rejection(400, CORRUPTED_SIGNATURE)
    if not is_gemini_3(model):
        return None
    for i in range(current_turn_start(contents), len(contents)):
        calls = _calls(contents[i]) if contents[i]["role"] == "model" else []
        signature = str(calls[0].get("thoughtSignature") or "") if calls else ""
        if calls and (not signature or (not placeholders_ok and is_dummy_signature(signature))):
            return Rejection(400, MISSING_SIGNATURE.format(name=calls[0]["functionCall"].get("name", ""), position=i + 1))
    return None
