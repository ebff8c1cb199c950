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


# (file, the description pi 0.73.1's parseFrontmatter gives), taken from pi itself: the block
# ends without a line break where ``---`` starts, which npm ``yaml`` reads as one (so ``|`` and
# ``>`` keep their final newline there) and PyYAML alone does not.
PI_SCALARS = [
    ('---\nname: a\ndescription: |\n  line one\n  line two\n---\nbody',
     'line one\nline two\n'),
    ('---\nname: a\ndescription: |\n  line one\n  line two\n\n---\nbody',
     'line one\nline two\n'),
    ('---\ndescription: |\n  line one\n  line two\nname: a\n---\nbody',
     'line one\nline two\n'),
    ('---\nname: a\ndescription: >\n  folded one\n  folded two\n---\nbody',
     'folded one folded two\n'),
    ('---\nname: a\ndescription: >\n  folded one\n\n  para two\n---\nbody',
     'folded one\npara two\n'),
    ('---\nname: a\ndescription: |-\n  strip one\n  strip two\n---\nbody',
     'strip one\nstrip two'),
    ('---\nname: a\ndescription: >-\n  strip one\n  strip two\n---\nbody',
     'strip one strip two'),
    ('---\nname: a\ndescription: |+\n  keep one\n  keep two\n---\nbody',
     'keep one\nkeep two\n'),
    ('---\nname: a\ndescription: |+\n  keep one\n  keep two\n\n\n---\nbody',
     'keep one\nkeep two\n\n'),
    ('---\nname: a\ndescription: >+\n  keep one\n  keep two\n---\nbody',
     'keep one keep two\n'),
    ('---\nname: a\ndescription: >+\n  keep one\n\n---\nbody',
     'keep one\n'),
    ('---\nname: a\ndescription: "quoted one\n  quoted two"\n---\nbody',
     'quoted one quoted two'),
    ("---\nname: a\ndescription: 'single one\n\n  single two'\n---\nbody",
     'single one\nsingle two'),
    ('---\nname: a\ndescription: plain one\n  plain two\n---\nbody',
     'plain one plain two'),
    ('---\nname: a\ndescription: |2\n    indented\n  less\n---\nbody',
     '  indented\nless\n'),
    ('---\nname: a\ndescription: |\n  trailing spaces   \n---\nbody',
     'trailing spaces   \n'),
    ('---\r\nname: a\r\ndescription: |\r\n  crlf one\r\n  crlf two\r\n---\r\nbody',
     'crlf one\ncrlf two\n'),
    ('---\nname: a\ndescription: |\n  last\n---',
     'last\n'),
    ('---\nname: a\ndescription: >\n  last folded\n---',
     'last folded\n'),
]


@pytest.mark.parametrize(("text", "description"), PI_SCALARS)
def test_scalars_parse_as_pis_parser(text: str, description: str) -> None:
    assert parse_frontmatter(text).frontmatter["description"] == description


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
