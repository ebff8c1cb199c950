"""What ``prompt()`` does to the typed text before the agent sees it (pi-behaviour.md §6, §10.2).

Order, as pi: extension commands run first (handled by the session), then the extension
``input`` event (may transform the text or handle it completely), then ``/skill:<name>``
expansion, then prompt template expansion: ``/NAME args``, or ``/template NAME args`` (the same;
``/template`` alone lists the templates instead of sending anything).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pi_tui.core.messages import ImageContent
from pi_tui.resources.prompt_templates import expand_prompt_template
from pi_tui.resources.skills import expand_skill_command
from pi_tui.resources.template_command import parse_template_command, template_listing

if TYPE_CHECKING:  # not imported at run time: a session without extensions never loads them (start-up)
    from pi_tui.extensions.runner import ExtensionRunner


async def expand_prompt_text(
    text: str, images: list[ImageContent], *, extensions: ExtensionRunner | None, resources: Any, settings: Any,
    notify: Callable[[str, str], None], source: str = "interactive",
) -> tuple[str, list[ImageContent]] | None:
    """The text and images to send, or None when an extension handled the input. ``source`` is
    the ``input`` event's ``source`` (who sent the prompt); ``notify(message, level)`` reports
    a broken skill or lists the templates."""
    runner = extensions
    if runner is not None and runner.has_handlers("input"):
        answer = await runner.emit_input(text, images, source)
        if answer.action == "handled":
            return None
        text, images = answer.text, list(answer.images)
    if resources is None:
        return text, images
    if getattr(settings, "enable_skill_commands", True):
        def report(message: str) -> None:
            notify(message, "error")

        skill = expand_skill_command(text, getattr(resources, "skills", []), on_error=report)
        if skill is not None:
            return skill, images
    templates = list(getattr(resources, "prompt_templates", []))
    command = parse_template_command(text, templates)  # raises for /template <unknown name>
    if command is not None:
        if command.rewritten is None:  # ``/template`` alone: the list, nothing is sent
            notify(template_listing(templates), "info")
            return None
        text = command.rewritten
    templated = expand_prompt_template(text, templates)
    if templated is not None:
        return templated, images
    return text, images
