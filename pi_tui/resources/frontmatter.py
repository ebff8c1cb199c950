"""YAML frontmatter of markdown resources (pi's ``utils/frontmatter.ts``).

Rules: CRLF/CR become LF; a file that starts with ``---`` has frontmatter only when a closing
``\\n---`` follows; the YAML must be a mapping (empty means ``{}``); the body is the trimmed rest.
Scalars come out as pi's parser gives them (``tests/resources/test_frontmatter.py`` holds vectors
taken from pi 0.73.1 for every block and quoted style): plain scalars resolve by the YAML 1.2 core
schema (npm ``yaml``'s default), not PyYAML's YAML 1.1 one, so ``yes``/``on``/``y``, dates,
``1_000`` and ``12:30`` stay text and ``0755`` is the decimal 755.
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
# Words the core schema resolves to a bool or null unquoted (any case here, to be safe).
_NOT_TEXT = frozenset({"true", "false", "null"})


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


_CORE_LOADER: list[Any] = []


def core_schema_loader() -> type[yaml.SafeLoader]:
    """PyYAML's safe loader resolving plain scalars by the YAML 1.2 core schema, as pi's parser
    (npm ``yaml`` 2.x) does: null ``~``/``null``/empty, bool ``true``/``false`` (three cases),
    int decimal/``0o``/``0x``, float with ``.inf``/``.nan``; everything else (YAML 1.1's
    ``yes``/``off``, timestamps, sexagesimal, ``_`` separators, ``<<`` merge keys) is a string."""
    if _CORE_LOADER:
        return _CORE_LOADER[0]  # type: ignore[no-any-return]
    import yaml

    class CoreLoader(yaml.SafeLoader):
        pass

    CoreLoader.yaml_implicit_resolvers = {}
    resolvers = [
        ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
        ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
        ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", list("-+0123456789")),
        ("tag:yaml.org,2002:float",
         r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
         list("-+.0123456789")),
    ]
    for tag, pattern, first in resolvers:
        CoreLoader.add_implicit_resolver(tag, re.compile(pattern), first)

    def construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
        text = str(loader.construct_scalar(node))
        if text.startswith(("0o", "0x")):
            return int(text[2:], 8 if text[1] == "o" else 16)
        return int(text, 10)

    def construct_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float:
        text = str(loader.construct_scalar(node)).lower()
        if text.endswith(".inf"):
            return float("-inf") if text.startswith("-") else float("inf")
        return float("nan") if text == ".nan" else float(text)

    CoreLoader.add_constructor("tag:yaml.org,2002:int", construct_int)
    CoreLoader.add_constructor("tag:yaml.org,2002:float", construct_float)
    _CORE_LOADER.append(CoreLoader)
    return CoreLoader


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
        data = yaml.load(yaml_text, Loader=core_schema_loader()) if yaml_text.strip() else None
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
