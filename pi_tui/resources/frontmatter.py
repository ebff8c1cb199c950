"""YAML frontmatter of markdown resources (pi's ``utils/frontmatter.ts``).

Rules: CRLF/CR become LF; a file that starts with ``---`` has frontmatter only when a closing
``\\n---`` follows; the YAML must be a mapping (empty means ``{}``); the body is the trimmed rest.
Scalars come out as pi's parser gives them (``tests/resources/test_frontmatter.py`` holds vectors
taken from pi 0.73.1 for every block and quoted style).
Invalid YAML raises ``FrontmatterError`` whose message says where ("… at line L, column C") so the
diagnostic can point the user at the exact spot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pi_tui.core.errors import ConfigError

if TYPE_CHECKING:
    import yaml


class FrontmatterError(ConfigError):
    """The frontmatter block is not valid YAML (or not a mapping)."""


@dataclass(frozen=True, slots=True)
class ParsedMarkdown:
    frontmatter: dict[str, Any]
    body: str


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _yaml_error_message(error: yaml.YAMLError) -> str:
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    if mark is not None:
        # PyYAML marks are 0-based and count from the block's first line, which is the file's
        # second line (after the opening ``---``): report the line an editor shows.
        return f"{problem} at line {mark.line + 2}, column {mark.column + 1}"
    return f"{problem} at line 2"


# The fast path below reads the frontmatter most files have (one ``key: text`` per line: the
# built-in skills and templates, nearly every published skill) without PyYAML, whose import is
# ~10 ms of every start. It answers only where PyYAML's answer is certain to be the same dict
# (``tests/resources/test_frontmatter_fast_path.py`` compares the two on generated blocks) and
# returns None for anything else, which then goes to PyYAML.
_SIMPLE_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):[ ]+(.*?)[ ]*")
# Printable as PyYAML's reader accepts it, without the characters that can end or start
# something else inside a plain scalar (":" a mapping, "#" a comment), a tab, a BOM, or what
# YAML counts as a line break (NEL, U+2028, U+2029).
_PLAIN_REST = re.compile("[^\x00-\x1f\x7f-\x9f:#\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]*")
# (Said as what is left out: the same class written as the ranges let in took 3.5 ms to compile.)
_QUOTED = re.compile(r'"([^"\\\x00-\x1f\x7f-\x9f]*)"|\'([^\'\x00-\x1f\x7f-\x9f]*)\'')
# Words PyYAML resolves to a bool or null even unquoted (YAML 1.1); any case, to be safe.
_NOT_TEXT = frozenset({"yes", "no", "true", "false", "on", "off", "null", "y", "n"})


def _simple_scalar(text: str) -> str | None:
    quoted = _QUOTED.fullmatch(text)
    if quoted is not None:
        inner = quoted.group(1) if quoted.group(1) is not None else quoted.group(2)
        return inner if _PLAIN_REST.fullmatch(inner) else None
    if text[:1].isalpha() and text.lower() not in _NOT_TEXT and _PLAIN_REST.fullmatch(text):
        return text
    return None


def _simple_mapping(yaml_text: str) -> dict[str, Any] | None:
    found: dict[str, Any] = {}
    for line in yaml_text.split("\n"):
        if not line:
            continue
        match = _SIMPLE_LINE.fullmatch(line)
        if match is None or match.group(1).lower() in _NOT_TEXT:
            return None
        value = _simple_scalar(match.group(2))
        if value is None:
            return None
        found[match.group(1)] = value
    return found or None


def parse_frontmatter(content: str) -> ParsedMarkdown:
    """Split ``content`` into frontmatter and body; raises ``FrontmatterError`` on bad YAML."""
    normalized = normalize_newlines(content)
    if not normalized.startswith("---"):
        return ParsedMarkdown({}, normalized)
    end = normalized.find("\n---", 3)
    if end == -1:
        return ParsedMarkdown({}, normalized)
    yaml_text = normalized[4:end] if end >= 4 else ""
    if yaml_text and not yaml_text.endswith("\n"):
        # The block ends where the closing ``---`` line starts, so its last line has no line
        # break. pi's parser (npm ``yaml``) reads the end of input as one; PyYAML does not, and
        # ``description: |`` ending the block lost its final newline in the system prompt.
        yaml_text += "\n"
    body = normalized[end + 4 :].strip()
    simple = _simple_mapping(yaml_text)
    if simple is not None:
        return ParsedMarkdown(simple, body)
    import yaml  # on the first block the fast path leaves to it (see above)

    try:
        data = yaml.safe_load(yaml_text) if yaml_text.strip() else None
    except yaml.YAMLError as exc:
        raise FrontmatterError(_yaml_error_message(exc)) from None
    except RecursionError:  # a cloned repository's [[[[...]]]]: deeper than the parser can go
        raise FrontmatterError("frontmatter nested too deeply") from None
    if data is None:
        return ParsedMarkdown({}, body)
    if not isinstance(data, dict):
        raise FrontmatterError(f"frontmatter must be a mapping of keys to values, got {type(data).__name__} at line 2")
    return ParsedMarkdown({str(k): v for k, v in data.items()}, body)


def strip_frontmatter(content: str) -> str:
    """The body without frontmatter; on invalid YAML, everything after the block."""
    try:
        return parse_frontmatter(content).body
    except FrontmatterError:
        normalized = normalize_newlines(content)
        end = normalized.find("\n---", 3)
        return normalized[end + 4 :].strip()
