"""``/template``: find and run the prompt templates without knowing their names.

* ``/template`` lists them (name, argument hint, description, where each comes from); the TUI
  opens a picker instead.
* ``/template NAME args…`` is ``/NAME args…``: the same expansion (prompt_templates.py).
* ``/template NAME`` for a name that is no template is an error listing the names, so a typo is
  never sent to the model as a prompt.

A template that is itself named ``template`` wins over the command (pi has no ``/template`` and
would expand it), in the TUI too, so nothing that expands in pi expands differently here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pi_tui.core.errors import PiError
from pi_tui.resources.prompt_templates import PromptTemplate, split_command

COMMAND = "template"
SOURCE_LABELS = {"path": "--prompt-template", "project": "project", "user": "user", "settings": "settings",
                 "builtin": "built-in", "extension": "extension"}


class UnknownTemplateError(PiError):
    """``/template NAME`` named no template."""


@dataclass(frozen=True, slots=True)
class TemplateCommand:
    """What ``/template …`` asks for: ``rewritten`` (``/NAME args…``) or, when None, the list."""

    rewritten: str | None


def parse_template_command(text: str, templates: Sequence[PromptTemplate]) -> TemplateCommand | None:
    """None when ``text`` is not the ``/template`` command (or a template named ``template``
    takes it); raises ``UnknownTemplateError`` for a name that is no template."""
    command = split_command(text)
    if command is None or command[0] != COMMAND or any(t.name == COMMAND for t in templates):
        return None
    name, _, args = command[1].lstrip(" \t").partition(" ")
    name = name.strip()
    if not name:
        return TemplateCommand(None)
    if not any(t.name == name for t in templates):
        raise UnknownTemplateError(f"No prompt template named {name!r}. {_names(templates)}")
    return TemplateCommand(f"/{name} {args}" if args else f"/{name}")


def _names(templates: Iterable[PromptTemplate]) -> str:
    names = sorted(t.name for t in templates)
    return f"Templates: {', '.join(names)}." if names else "There are no prompt templates."


def source_label(template: PromptTemplate) -> str:
    return SOURCE_LABELS.get(template.source, template.source)


def template_listing(templates: Sequence[PromptTemplate]) -> str:
    """The text ``/template`` shows outside the TUI: one line per template."""
    if not templates:
        return ("No prompt templates. Add Markdown files to .pi/prompts/ or ~/.pi/agent/prompts/ "
                "(docs/prompt-templates.md).")
    rows = [(f"/{t.name}" + (f" {t.argument_hint}" if t.argument_hint else ""), t) for t in templates]
    width = min(40, max(len(usage) for usage, _ in rows))
    lines = ["Prompt templates (/template NAME args… or /NAME args…):"]
    for usage, template in rows:
        lines.append(f"  {usage.ljust(width)}  {template.description}  [{source_label(template)}]".rstrip())
    return "\n".join(lines)
