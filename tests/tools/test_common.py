from __future__ import annotations

import pytest

from pi_tui.core.errors import ToolError
from pi_tui.tools.common import (
    names_failures,
    optional_bool,
    optional_int,
    optional_str,
    require_str,
)


def test_arguments_are_coerced_like_pis_validator():
    assert optional_str({"path": 12}, "path", "read") == "12"
    assert optional_int({"offset": "40"}, "offset", "read") == 40
    assert optional_int({"offset": 3.0}, "offset", "read") == 3
    assert optional_bool({"literal": "true"}, "literal", "grep") is True
    assert optional_int({}, "offset", "read") is None


def test_bad_arguments_name_the_tool_and_field():
    with pytest.raises(ToolError, match=r'^Validation failed for tool "read":\n  - path: must have required properties path$'):
        require_str({}, "path", "read")
    with pytest.raises(ToolError, match=r"  - offset: must be number$"):
        optional_int({"offset": "soon"}, "offset", "read")
    with pytest.raises(ToolError, match=r"  - path: must be string$"):
        optional_str({"path": ["a"]}, "path", "read")


def test_unexpected_exceptions_name_the_subject():
    with pytest.raises(ToolError, match=r"^read failed for notes\.txt: ValueError: boom$"), names_failures("read", "notes.txt"):
        raise ValueError("boom")
    with pytest.raises(ToolError, match=r"^expected$"), names_failures("read", "x"):
        raise ToolError("expected")
