"""Tool-argument validation against a tool's JSON schema, as pi 0.73.1 does it (§13.4, §7.3).

pi validates with TypeBox: values are first *coerced* where the schema allows (a number given for
a string field becomes ``"5"``, ``"3"`` for a number becomes ``3``, ``"true"`` for a boolean
becomes ``True``), then checked. Problems are reported one per line as
``  - <dotted path>: <message>`` and go back to the model in an error tool result::

    Validation failed for tool "bash":
      - command: must have required properties command

    Received arguments:
    {}

Only the schema keywords tools actually use are implemented (type, properties, required,
additionalProperties, items, enum, const, anyOf/oneOf, min/max bounds). Unknown keywords are
ignored rather than rejected: a lenient validator lets a call through, a wrong one blocks it.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any

from pi_tui.core.messages import JsonValue

_TYPE_CHECKS: dict[str, Any] = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


class ArgumentValidationError(ValueError):
    """Raised with pi's full model-visible text (see ``format_validation_error``)."""


def validate_tool_arguments(tool_name: str, schema: dict[str, JsonValue], args: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """Return the coerced arguments, or raise ``ArgumentValidationError`` with pi's text."""
    coerced = _coerce(copy.deepcopy(args), schema)
    problems: list[tuple[str, str]] = []
    _check(coerced, schema, [], problems)
    if problems:
        raise ArgumentValidationError(format_validation_error(tool_name, problems, args))
    result = coerced if isinstance(coerced, dict) else {}
    return result


def format_validation_error(tool_name: str, problems: list[tuple[str, str]], received: JsonValue) -> str:
    lines = "\n".join(f"  - {path}: {message}" for path, message in problems)
    shown = json.dumps(received, indent=2, ensure_ascii=False, default=str)
    return f'Validation failed for tool "{tool_name}":\n{lines}\n\nReceived arguments:\n{shown}'


# --------------------------------------------------------------------------- coercion


def _coerce(value: Any, schema: Any) -> Any:
    if not isinstance(schema, dict):
        return value
    types = _types_of(schema)
    if isinstance(value, dict) and (not types or "object" in types):
        props = schema.get("properties")
        if isinstance(props, dict):
            for key, sub in props.items():
                if key in value:
                    value[key] = _coerce(value[key], sub)
        return value
    if isinstance(value, list) and (not types or "array" in types):
        items = schema.get("items")
        if isinstance(items, dict):
            return [_coerce(v, items) for v in value]
        return value
    if not types or any(_TYPE_CHECKS.get(t, lambda _v: False)(value) for t in types):
        return value
    for target in types:
        converted = _convert_scalar(value, target)
        if converted is not _NO:
            return converted
    return value


_NO = object()


def _convert_scalar(value: Any, target: str) -> Any:
    if target == "string" and isinstance(value, bool):
        return "true" if value else "false"
    if target == "string" and isinstance(value, int | float):
        return _js_number_text(value)
    if target in ("number", "integer"):
        if isinstance(value, bool):
            return 1 if value else 0
        if isinstance(value, str) and value.strip():
            try:
                number = float(value)
            except ValueError:
                return _NO
            if math.isfinite(number):
                if number.is_integer():
                    return int(number)
                return number if target == "number" else _NO
    if target == "boolean":
        if value in ("true", 1) and not isinstance(value, bool):
            return True
        if value in ("false", 0) and not isinstance(value, bool):
            return False
    if target == "null" and value in ("", "null"):
        return None
    return _NO


def _js_number_text(value: int | float) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# --------------------------------------------------------------------------- checking


def _types_of(schema: dict[str, Any]) -> list[str]:
    raw = schema.get("type")
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, list):
        return [t for t in raw if isinstance(t, str)]
    return []


def _path_text(path: list[str]) -> str:
    return ".".join(path) if path else "root"


def _check(value: Any, schema: Any, path: list[str], problems: list[tuple[str, str]]) -> None:
    if schema is False:
        problems.append((_path_text(path), "schema is false"))
        return
    if not isinstance(schema, dict):
        return
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            if not any(_is_valid(value, option) for option in options):
                problems.append((_path_text(path), f"must match a schema in {key}"))
            return
    types = _types_of(schema)
    if types and not any(_TYPE_CHECKS.get(t, lambda _v: True)(value) for t in types):
        problems.append((_path_text(path), f"must be {' or '.join(types)}"))
        return
    if "const" in schema and value != schema["const"]:
        problems.append((_path_text(path), "must be equal to constant"))
    enum = schema.get("enum")
    if isinstance(enum, list) and value not in enum:
        problems.append((_path_text(path), "must be equal to one of the allowed values"))
    if isinstance(value, dict):
        _check_object(value, schema, path, problems)
    elif isinstance(value, list):
        _check_array(value, schema, path, problems)
    elif isinstance(value, str):
        _check_bounds(len(value), schema, "minLength", "maxLength", "characters", path, problems)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        _check_number(value, schema, path, problems)


def _check_object(value: dict[str, Any], schema: dict[str, Any], path: list[str], problems: list[tuple[str, str]]) -> None:
    raw_props = schema.get("properties")
    props: dict[str, Any] = raw_props if isinstance(raw_props, dict) else {}
    for name in schema.get("required", []) or []:
        if name not in value:
            problems.append((_path_text([*path, name]), f"must have required properties {name}"))
    extra_schema = schema.get("additionalProperties", True)
    has_extra = False
    for key, item in value.items():
        if key in props:
            _check(item, props[key], [*path, key], problems)
        elif extra_schema is False:
            problems.append((_path_text([*path, key]), "schema is false"))
            has_extra = True
        elif isinstance(extra_schema, dict):
            _check(item, extra_schema, [*path, key], problems)
    if has_extra:
        problems.append((_path_text(path), "must not have additional properties"))


def _check_array(value: list[Any], schema: dict[str, Any], path: list[str], problems: list[tuple[str, str]]) -> None:
    _check_bounds(len(value), schema, "minItems", "maxItems", "items", path, problems)
    items = schema.get("items")
    if isinstance(items, dict):
        for index, item in enumerate(value):
            _check(item, items, [*path, str(index)], problems)


def _check_bounds(
    size: int, schema: dict[str, Any], low_key: str, high_key: str, unit: str, path: list[str], problems: list[tuple[str, str]]
) -> None:
    low, high = schema.get(low_key), schema.get(high_key)
    if isinstance(low, int) and size < low:
        problems.append((_path_text(path), f"must NOT have fewer than {low} {unit}"))
    if isinstance(high, int) and size > high:
        problems.append((_path_text(path), f"must NOT have more than {high} {unit}"))


def _check_number(value: float, schema: dict[str, Any], path: list[str], problems: list[tuple[str, str]]) -> None:
    where = _path_text(path)
    for key, op in (("minimum", ">="), ("maximum", "<="), ("exclusiveMinimum", ">"), ("exclusiveMaximum", "<")):
        bound = schema.get(key)
        if not isinstance(bound, int | float) or isinstance(bound, bool):
            continue
        holds = {">=": value >= bound, "<=": value <= bound, ">": value > bound, "<": value < bound}[op]
        if not holds:
            problems.append((where, f"must be {op} {_js_number_text(bound)}"))


def _is_valid(value: Any, schema: Any) -> bool:
    problems: list[tuple[str, str]] = []
    _check(value, schema, [], problems)
    return not problems
