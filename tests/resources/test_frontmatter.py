from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest

from pi_tui.resources.frontmatter import FrontmatterError, parse_frontmatter, strip_frontmatter
from pi_tui.testing.pi_reference import PI_PACKAGE

PI_FRONTMATTER = PI_PACKAGE / "dist/utils/frontmatter.js"


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


# Plain scalars as pi 0.73.1 reads them (npm ``yaml`` 2.9, YAML 1.2 core schema): YAML 1.1's
# bools, timestamps, sexagesimal numbers, ``_`` separators and leading-zero octals are not
# PyYAML's answer here. (plain text after ``key: ``, the value pi gives)
INF, NAN = float("inf"), float("nan")
PI_PLAIN = [
    ("yes", "yes"), ("no", "no"), ("Yes", "Yes"), ("NO", "NO"), ("on", "on"), ("off", "off"), ("y", "y"),
    ("n", "n"), ("true", True), ("True", True), ("TRUE", True), ("false", False), ("tRue", "tRue"),
    ("null", None), ("Null", None), ("NULL", None), ("~", None), ("", None),
    ("2024-01-01", "2024-01-01"), ("2024-01-01 10:00:00", "2024-01-01 10:00:00"), ("12:30", "12:30"),
    ("1:20:30", "1:20:30"), ("0755", 755), ("007", 7), ("0o17", 15), ("0x1F", 31), ("0b101", "0b101"),
    ("0o8", "0o8"), ("0x", "0x"), ("1_000", "1_000"), ("1e3", 1000), ("1.0e+3", 1000), ("1.5", 1.5),
    ("-2", -2), ("+1", 1), ("0", 0), (".5", 0.5), ("+.5", 0.5), ("1.", 1), ("1.2.3", "1.2.3"),
    (".inf", INF), ("-.inf", -INF), (".Inf", INF), (".nan", NAN), (".NaN", NAN), ("=", "="), ("<<", "<<"),
]


def _same(ours: object, pis: object) -> bool:
    """Equal as pi's values: of the same kind (a JS number is one kind, int or float here)."""
    if isinstance(pis, float) and math.isnan(pis):
        return isinstance(ours, float) and math.isnan(ours)
    if isinstance(pis, (int, float)) and not isinstance(pis, bool):
        return isinstance(ours, (int, float)) and not isinstance(ours, bool) and ours == pis
    return type(ours) is type(pis) and ours == pis


def _block(plain: str) -> str:
    return f"---\nname: a\ndescription: {plain}\n---\nbody"


@pytest.mark.parametrize(("plain", "value"), PI_PLAIN)
def test_plain_scalars_resolve_by_the_yaml_1_2_core_schema(plain: str, value: object) -> None:
    assert _same(parse_frontmatter(_block(plain)).frontmatter["description"], value)


def test_yaml_1_1_words_are_text_as_keys_too() -> None:
    assert parse_frontmatter("---\non: x\nyes: y\n<<: {a: 1}\n---\n").frontmatter == {"on": "x", "yes": "y", "<<": {"a": 1}}


PI_SCRIPT = """
import { parseFrontmatter } from %s;
import fs from "fs";
const num = (v) => typeof v !== "number" ? v : Number.isNaN(v) ? {num: "nan"} : !Number.isFinite(v) ? {num: v > 0 ? "inf" : "-inf"} : {num: v};
const cases = JSON.parse(fs.readFileSync(0, "utf8"));
console.log(JSON.stringify(cases.map((c) => num(parseFrontmatter(c).frontmatter.description))));
"""


@pytest.mark.skipif(shutil.which("node") is None or not PI_FRONTMATTER.is_file(),
                    reason=f"LOUD SKIP: pi 0.73.1 is not installed at {PI_FRONTMATTER} (or no node): "
                           "the plain-scalar vectors are not checked against pi")
def test_the_plain_scalar_vectors_are_pis_own_answers(tmp_path: Path) -> None:
    script = tmp_path / "fm.mjs"
    script.write_text(PI_SCRIPT % json.dumps(str(PI_FRONTMATTER)))
    done = subprocess.run(["node", str(script)], input=json.dumps([_block(p) for p, _ in PI_PLAIN]),
                          capture_output=True, text=True, timeout=60, check=True)
    for (plain, value), pis in zip(PI_PLAIN, json.loads(done.stdout), strict=True):
        if isinstance(pis, dict):
            pis = {"nan": NAN, "inf": INF, "-inf": -INF}.get(pis["num"], pis["num"])
        assert _same(value, pis), (plain, value, pis)
