"""Argument validation: pi 0.73.1's messages and TypeBox-like coercion."""

from __future__ import annotations

import pytest

from pi_tui.agent.validation import ArgumentValidationError, validate_tool_arguments

READ = {
    "type": "object",
    "required": ["path"],
    "properties": {"path": {"type": "string"}, "offset": {"type": "number"}, "limit": {"type": "integer"}},
}
EDIT = {
    "type": "object",
    "required": ["path", "edits"],
    "additionalProperties": False,
    "properties": {
        "path": {"type": "string"},
        "edits": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["oldText", "newText"],
                "additionalProperties": False,
                "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
            },
        },
    },
}


def _error(schema: dict, args: dict, name: str = "read") -> str:
    with pytest.raises(ArgumentValidationError) as info:
        validate_tool_arguments(name, schema, args)
    return str(info.value)


def test_missing_required_property_text_is_pis() -> None:
    assert _error(READ, {}) == (
        'Validation failed for tool "read":\n  - path: must have required properties path\n\n'
        "Received arguments:\n{}"
    )


def test_wrong_type_and_nested_paths() -> None:
    text = _error(READ, {"path": "a", "offset": "x"})
    assert "  - offset: must be number" in text
    assert text.endswith('Received arguments:\n{\n  "path": "a",\n  "offset": "x"\n}')
    nested = _error(EDIT, {"path": "f", "edits": [{"oldText": "a"}]}, "edit")
    assert "  - edits.0.newText: must have required properties newText" in nested


def test_additional_properties_on_a_closed_schema() -> None:
    text = _error(EDIT, {"path": "f", "edits": [], "extra": 1}, "edit")
    assert "  - extra: schema is false\n  - root: must not have additional properties" in text


def test_coercion_where_the_schema_allows() -> None:
    assert validate_tool_arguments("read", READ, {"path": 5, "offset": "10", "limit": "3"}) == {
        "path": "5", "offset": 10, "limit": 3,
    }
    flag = {"type": "object", "properties": {"on": {"type": "boolean"}}}
    assert validate_tool_arguments("t", flag, {"on": "true"}) == {"on": True}
    assert validate_tool_arguments("t", READ, {"path": 2.0}) == {"path": "2"}


def test_original_arguments_are_shown_not_the_coerced_ones() -> None:
    text = _error(READ, {"path": 1, "offset": "nope"})
    assert '"path": 1' in text


def test_enum_and_bounds() -> None:
    schema = {"type": "object", "properties": {"m": {"enum": ["a", "b"]}, "n": {"type": "number", "minimum": 1}}}
    text = _error(schema, {"m": "c", "n": 0}, "t")
    assert "  - m: must be equal to one of the allowed values" in text
    assert "  - n: must be >= 1" in text
