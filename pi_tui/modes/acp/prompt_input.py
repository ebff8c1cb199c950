"""What the client sends and what we advertise: prompt content blocks → pi-tui's prompt text and
images; the slash commands (``available_commands_update``).

Content blocks (we advertise ``image`` and ``embeddedContext``, not ``audio``):

* ``text`` as it is; ``image`` with base64 ``data`` as an image attachment;
* ``resource`` (embedded context, e.g. an editor @-mention with the buffer's text) as
  ``<file name="PATH">…</file>`` on its own lines, as ``pi-tui -p @file`` inlines files; a blob
  resource that is an image as an attachment, any other blob as a note naming it;
* ``resource_link`` as ``@PATH`` (the model reads it with ``read``);
* ``audio`` and unknown types are invalid parameters (-32602), naming the block.

Commands: ``/compact [instructions]`` and ``/template [NAME args]``, then every extension
command, prompt template and skill (``skill:NAME``) that RPC mode's ``get_commands`` lists.
``/compact`` is run here; everything else goes through ``AgentSession.prompt``, which expands it
exactly as the TUI does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from pi_tui.modes.acp.jsonrpc import invalid_params

if TYPE_CHECKING:
    from pi_tui.session.agent_session import AgentSession

BUILTIN_COMMANDS = (
    {"name": "compact", "description": "Summarize the conversation so far to free context",
     "input": {"hint": "optional: what the summary should focus on"}},
    {"name": "template", "description": "List the prompt templates, or run one: /template NAME arguments",
     "input": {"hint": "template name and arguments"}},
)


def uri_path(uri: str) -> str:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def prompt_from_blocks(blocks: Any) -> tuple[str, list[dict[str, Any]]]:
    if not isinstance(blocks, list) or not blocks:
        raise invalid_params("session/prompt: prompt must be a non-empty list of content blocks")
    parts: list[str] = []
    images: list[dict[str, Any]] = []
    for index, block in enumerate(blocks):
        kind = block.get("type") if isinstance(block, dict) else None
        where = f"session/prompt: prompt[{index}]"
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif kind == "image" and isinstance(block.get("data"), str) and isinstance(block.get("mimeType"), str):
            images.append({"type": "image", "data": block["data"], "mimeType": block["mimeType"]})
        elif kind == "resource" and isinstance(block.get("resource"), dict):
            parts.append(_embedded(block["resource"], images, where))
        elif kind == "resource_link" and isinstance(block.get("uri"), str):
            parts.append(f" @{uri_path(block['uri'])} ")
        elif kind in ("text", "image", "resource", "resource_link"):
            raise invalid_params(f"{where}: a {kind} block is missing a required field")
        else:
            raise invalid_params(f"{where}: content type {kind!r} is not supported (text, image, resource, resource_link)")
    return "".join(parts).strip(" "), images


def _embedded(resource: dict[str, Any], images: list[dict[str, Any]], where: str) -> str:
    uri = resource.get("uri")
    if not isinstance(uri, str):
        raise invalid_params(f"{where}: resource.uri must be a string")
    path = uri_path(uri)
    if isinstance(resource.get("text"), str):
        return f'\n<file name="{path}">\n{resource["text"]}\n</file>\n'
    mime = resource.get("mimeType")
    if isinstance(resource.get("blob"), str) and isinstance(mime, str) and mime.startswith("image/"):
        images.append({"type": "image", "data": resource["blob"], "mimeType": mime})
        return f'\n<file name="{path}"></file>\n'
    if isinstance(resource.get("blob"), str):
        return f"\n[Attached binary file {path} ({mime or 'unknown type'}) left out]\n"
    raise invalid_params(f"{where}: resource needs text or blob")


def compact_instructions(text: str) -> str | bool | None:
    """For ``/compact [instructions]``: the instructions (None when none); False for any other text."""
    stripped = text.strip()
    if stripped != "/compact" and not stripped.startswith(("/compact ", "/compact\n")):
        return False
    rest = stripped[len("/compact"):].strip()
    return rest or None


def available_commands(session: AgentSession) -> list[dict[str, Any]]:
    from pi_tui.modes.rpc.views import commands_json

    commands = [dict(c) for c in BUILTIN_COMMANDS]
    seen = {c["name"] for c in commands}
    templates = {t.name: t for t in getattr(session.resources, "prompt_templates", None) or []}
    for item in commands_json(session):
        name = str(item["name"])
        if name in seen:
            continue
        seen.add(name)
        command: dict[str, Any] = {"name": name, "description": str(item.get("description") or f"{item['source']} command")}
        template = templates.get(name) if item.get("source") == "prompt" else None
        if template is not None and template.argument_hint:
            command["input"] = {"hint": template.argument_hint}
        commands.append(command)
    return commands
