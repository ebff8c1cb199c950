from __future__ import annotations

import pytest

from pi_tui.resources.frontmatter import FrontmatterError, parse_frontmatter, strip_frontmatter


def test_crlf_is_normalized() -> None:
    parsed = parse_frontmatter("---\r\nname: x\r\ndescription: d\r\n---\r\n\r\nbody\r\nline\r\n")
    assert parsed.frontmatter == {"name": "x", "description": "d"}
    assert parsed.body == "body\nline"


def test_invalid_yaml_raises_with_line() -> None:
    with pytest.raises(FrontmatterError, match="at line"):
        parse_frontmatter("---\nname: [unclosed\n---\nbody")


def test_multiline_block_scalar() -> None:
    parsed = parse_frontmatter("---\ndescription: |\n  one\n  two\n---\nb")
    assert parsed.frontmatter["description"] == "one\ntwo"


@pytest.mark.parametrize("text", ["no frontmatter here", "---\nname: x\nnever closed"])
def test_missing_or_unterminated_block_keeps_content(text: str) -> None:
    parsed = parse_frontmatter(text)
    assert parsed.frontmatter == {}
    assert parsed.body == text


def test_empty_frontmatter_is_empty_mapping() -> None:
    assert parse_frontmatter("---\n---\nbody") == parse_frontmatter("---\n\n---\nbody")
    assert parse_frontmatter("---\n---\nbody").frontmatter == {}
    assert parse_frontmatter("---\n---\nbody").body == "body"


def test_non_mapping_yaml_is_an_error_and_strip_still_works() -> None:
    with pytest.raises(FrontmatterError):
        parse_frontmatter("---\n- a\n- b\n---\nbody")
    assert strip_frontmatter("---\n: : bad\n---\n  body  ") == "body"


def test_error_line_is_the_file_line() -> None:
    with pytest.raises(FrontmatterError, match="mapping values are not allowed here at line 3, column 5"):
        parse_frontmatter("---\nname: ok\na: b: c\n---\nbody")
