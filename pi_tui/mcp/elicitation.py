"""An MCP elicitation request (``elicitation/create``) as form fields, and the typed answers back.

The requested schema is a flat object of primitive properties (the protocol allows no more):
strings (with ``format``), numbers, integers, booleans, single-choice enums (``enum`` or
``oneOf`` of ``{const, title}``) and multiple-choice arrays of them. The TUI shows one field per
property (``screens/mcp_elicit.py``); what was typed is checked and converted here, so the server
receives the types its schema asked for. Print, JSON and RPC mode have nobody to ask: they
decline (``McpManager.elicit`` is None there).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pi_tui.core.terminal_text import printable


@dataclass(frozen=True, slots=True)
class FormField:
    name: str
    label: str
    kind: str
    """``string``, ``number``, ``integer``, ``boolean``, ``choice`` or ``choices`` (several)."""
    description: str = ""
    required: bool = False
    default: Any = None
    choices: tuple[tuple[str, str], ...] = ()
    """(value, title) for ``choice`` / ``choices``."""
    minimum: float | None = None
    maximum: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def initial_text(self) -> str:
        """The field's starting text: the schema's default (choices by value, comma-separated)."""
        if self.default is None:
            return ""
        if isinstance(self.default, bool):
            return "yes" if self.default else "no"
        if isinstance(self.default, list):
            return ", ".join(str(v) for v in self.default)
        return str(self.default)

    def hint(self) -> str:
        if self.kind in ("choice", "choices"):
            options = ", ".join(value if value == title else f"{value} ({title})" for value, title in self.choices)
            return ("one of: " if self.kind == "choice" else "comma-separated, from: ") + options
        if self.kind == "boolean":
            return "yes or no"
        if self.kind in ("number", "integer"):
            bounds = [f"≥ {self.minimum:g}" if self.minimum is not None else "",
                      f"≤ {self.maximum:g}" if self.maximum is not None else ""]
            return " ".join(["a whole number" if self.kind == "integer" else "a number", *[b for b in bounds if b]])
        return str(self.extra.get("format", ""))


def _choices(schema: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    if isinstance(schema.get("enum"), list):
        names = schema.get("enumNames") if isinstance(schema.get("enumNames"), list) else None
        return tuple((str(v), str(names[i]) if names and i < len(names) else str(v))
                     for i, v in enumerate(schema["enum"]))
    options = schema.get("oneOf") or schema.get("anyOf") or []
    return tuple((str(o.get("const")), printable(str(o.get("title", o.get("const"))))) for o in options
                 if isinstance(o, dict) and "const" in o)


def form_fields(schema: dict[str, Any]) -> list[FormField]:
    found = schema.get("properties")
    properties: dict[str, Any] = found if isinstance(found, dict) else {}
    required = set(schema.get("required") or [])
    fields = []
    for name, prop in properties.items():
        if not isinstance(prop, dict):
            continue
        kind = str(prop.get("type", "string"))
        choices: tuple[tuple[str, str], ...] = ()
        if kind == "array":
            items = prop.get("items")
            kind, choices = "choices", _choices(items if isinstance(items, dict) else {})
        elif _choices(prop):
            kind, choices = "choice", _choices(prop)
        elif kind not in ("number", "integer", "boolean"):
            kind = "string"
        fields.append(FormField(
            name=str(name), label=printable(str(prop.get("title") or name)), kind=kind,
            description=printable(str(prop.get("description") or "")), required=name in required,
            default=prop.get("default"), choices=choices,
            minimum=prop.get("minimum") if isinstance(prop.get("minimum"), int | float) else None,
            maximum=prop.get("maximum") if isinstance(prop.get("maximum"), int | float) else None,
            extra={k: prop[k] for k in ("format", "minLength", "maxLength", "minItems", "maxItems") if k in prop}))
    return fields


def _one(field_: FormField, text: str) -> Any:
    if field_.kind == "boolean":
        lowered = text.lower()
        if lowered in ("y", "yes", "true", "1", "on"):
            return True
        if lowered in ("n", "no", "false", "0", "off"):
            return False
        raise ValueError("answer yes or no")
    if field_.kind in ("number", "integer"):
        try:
            value: float | int = int(text) if field_.kind == "integer" else float(text)
        except ValueError:
            raise ValueError(field_.hint()) from None
        if (field_.minimum is not None and value < field_.minimum) or (
                field_.maximum is not None and value > field_.maximum):
            raise ValueError(field_.hint())
        return value
    values = [value for value, _title in field_.choices]
    titles = {title.lower(): value for value, title in field_.choices}
    if field_.kind == "choice":
        chosen = text if text in values else titles.get(text.lower())
        if chosen is None:
            raise ValueError(field_.hint())
        return chosen
    if field_.kind == "choices":
        picked = []
        for part in (p.strip() for p in text.split(",")):
            if part:
                chosen = part if part in values else titles.get(part.lower())
                if chosen is None:
                    raise ValueError(f"'{part}' is not a choice; {field_.hint()}")
                picked.append(chosen)
        return picked
    return text


def answers(fields: list[FormField], typed: dict[str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    """(the content to accept with, problems by field name); empty optional fields are left out."""
    content: dict[str, Any] = {}
    problems: dict[str, str] = {}
    for field_ in fields:
        text = typed.get(field_.name, "").strip()
        if not text:
            if field_.required:
                problems[field_.name] = "required"
            continue
        try:
            content[field_.name] = _one(field_, text)
        except ValueError as error:
            problems[field_.name] = str(error)
    return content, problems
