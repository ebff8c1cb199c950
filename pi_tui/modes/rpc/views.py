"""Read-only JSON views of the session in pi's RPC shapes (pi-behaviour.md §9.4).

``AgentSession`` has no ``get_session_stats``, ``get_fork_messages``, ``get_last_assistant_text``
or ``get_commands`` of its own; they are computed here from its public parts (``messages``,
``state``, ``session_manager``, ``resources``, ``extensions``, ``settings``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pi_tui.core.messages import text_of
from pi_tui.core.provider import ModelInfo
from pi_tui.modes.rpc.source_info import extension_source_info, resource_source_info
from pi_tui.resources.locations import agent_dir as default_agent_dir

if TYPE_CHECKING:
    from pi_tui.session.agent_session import AgentSession


def model_json(model: ModelInfo) -> dict[str, Any]:
    """pi's ``Model`` object."""
    data: dict[str, Any] = {
        "id": model.id,
        "name": model.name or model.id,
        "api": model.api,
        "provider": model.provider,
        "baseUrl": model.base_url or "",
        "reasoning": model.reasoning,
        "input": list(model.input),
        "cost": {
            "input": model.cost.input, "output": model.cost.output,
            "cacheRead": model.cost.cache_read, "cacheWrite": model.cost.cache_write,
        },
        "contextWindow": model.context_window,
        "maxTokens": model.max_tokens,
    }
    if model.headers:
        data["headers"] = dict(model.headers)
    if model.compat:
        data["compat"] = dict(model.compat)
    return data


def auto_compaction_enabled(session: AgentSession) -> bool:
    settings = session.settings
    if settings is None or not hasattr(settings, "compaction_settings"):
        return True
    return bool(settings.compaction_settings().enabled)


def state_json(session: AgentSession) -> dict[str, Any]:
    """``get_state``; optional fields (model, sessionFile, sessionName) are left out when unset."""
    state = session.state
    data: dict[str, Any] = {}
    if state.model is not None:
        data["model"] = model_json(state.model)
    data.update({
        "thinkingLevel": state.thinking_level,
        "isStreaming": state.is_streaming,
        "isCompacting": state.is_compacting,
        "steeringMode": session.agent.steering.mode,
        "followUpMode": session.agent.follow_ups.mode,
    })
    if state.session_file is not None:
        data["sessionFile"] = str(state.session_file)
    data["sessionId"] = state.session_id
    if state.session_name:
        data["sessionName"] = state.session_name
    data.update({
        "autoCompactionEnabled": auto_compaction_enabled(session),
        "messageCount": state.message_count,
        "pendingMessageCount": len(session.agent.steering) + len(session.agent.follow_ups),
    })
    todos = session.todos.current() if session.todos is not None else []
    if todos or "todo" in session.get_active_tools():  # pi-tui addition: the todo list at the current leaf
        data["todos"] = todos
    if session.mcp is not None:  # pi-tui addition: each MCP server's state (docs/mcp.md)
        data["mcpServers"] = session.mcp.state()
    return data


def session_stats(session: AgentSession) -> dict[str, Any]:
    """pi's ``SessionStats``: message counts and token totals of the current context."""
    counts = {"user": 0, "assistant": 0, "toolResult": 0}
    tool_calls = 0
    for message in session.messages:
        role = str(message.get("role"))
        if role in counts:
            counts[role] += 1
        if role == "assistant":
            tool_calls += sum(1 for block in _blocks(message) if block.get("type") == "toolCall")
    totals = session.state.totals
    data: dict[str, Any] = {
        "sessionId": session.session_manager.session_id,
        "userMessages": counts["user"],
        "assistantMessages": counts["assistant"],
        "toolCalls": tool_calls,
        "toolResults": counts["toolResult"],
        "totalMessages": len(session.messages),
        "tokens": {
            "input": totals.input, "output": totals.output, "cacheRead": totals.cache_read,
            "cacheWrite": totals.cache_write, "total": totals.total_tokens,
        },
        "cost": totals.cost,
    }
    from pi_tui.subagents.child import subagent_usage  # here: RPC start-up does not load the room

    delegated = subagent_usage(session.messages)
    if delegated.turns:  # pi-tui addition: what the task tool's children used, beside the session's own
        data["subagents"] = delegated.to_json()
    if session.session_manager.session_file is not None:
        data["sessionFile"] = str(session.session_manager.session_file)
    usage = session.get_context_usage()
    if usage is not None:
        data["contextUsage"] = {
            "tokens": usage.tokens, "contextWindow": usage.context_window, "percent": usage.percent,
        }
    return data


def fork_messages(session: AgentSession) -> list[dict[str, str]]:
    """Every user message of the session file (all branches, file order) with its text: the
    choices ``fork`` accepts. Messages without text (images only) are left out, as pi does."""
    rows: list[dict[str, str]] = []
    for entry in session.session_manager.get_entries():
        message = entry.get("message") if entry.get("type") == "message" else None
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        text = text_of(message.get("content", ""))
        if text:
            rows.append({"entryId": str(entry["id"]), "text": text})
    return rows


def last_assistant_text(session: AgentSession) -> str | None:
    """The text of the newest assistant message (skipping aborted ones with no content), trimmed;
    None when there is none or it is empty."""
    for message in reversed(session.messages):
        if message.get("role") != "assistant":
            continue
        content = _blocks(message)
        if message.get("stopReason") == "aborted" and not content:
            continue
        text = "".join(str(block.get("text", "")) for block in content if block.get("type") == "text").strip()
        return text or None
    return None


def _blocks(message: Any) -> list[dict[str, Any]]:
    """A message's content blocks (a string content has none)."""
    content = dict(message).get("content")
    return [block for block in content if isinstance(block, dict)] if isinstance(content, list) else []


_LOCATIONS = {"user", "project", "path"}


def commands_json(session: AgentSession) -> list[dict[str, Any]]:
    """``get_commands``: extension commands, prompt templates, then skills (``skill:<name>``),
    each ``{name, description?, source, sourceInfo}`` as pi 0.73.1 sends it, plus pi 0.58's
    ``location?`` and ``path`` for older clients. The built-in interactive commands are not
    included (they are not available over RPC)."""
    out: list[dict[str, Any]] = []
    resources = session.resources
    cwd = Path(getattr(resources, "cwd", None) or session.cwd)
    agent_dir = Path(getattr(resources, "agent_dir", None) or default_agent_dir())
    settings = session.settings
    runner = session.extensions
    for command in runner.commands() if runner is not None else []:
        item: dict[str, Any] = {"name": command.invocation_name}
        if command.description:
            item["description"] = command.description
        item["source"] = "extension"
        item["sourceInfo"] = extension_source_info(Path(command.extension_path), cwd=cwd, agent_dir=agent_dir,
                                                   settings=settings)
        item["path"] = str(command.extension_path)
        out.append(item)
    for template in getattr(resources, "prompt_templates", None) or []:
        path = Path(template.file_path)
        info = resource_source_info(path, template.source, kind="prompts", cwd=cwd, agent_dir=agent_dir,
                                    settings=settings, extension=session.extension_of_resource(path))
        out.append(_resource_command(template.name, template.description, "prompt", template.source, info))
    for skill in getattr(resources, "skills", None) or []:
        path = Path(skill.file_path)
        info = resource_source_info(path, skill.source, kind="skills", cwd=cwd, agent_dir=agent_dir,
                                    settings=settings, base_dir=Path(skill.base_dir),
                                    extension=session.extension_of_resource(path))
        out.append(_resource_command(f"skill:{skill.name}", skill.description, "skill", skill.source, info))
    return out


def _resource_command(name: str, description: str, source: str, location: str, info: dict[str, Any]) -> dict[str, Any]:
    item: dict[str, Any] = {"name": name}
    if description:
        item["description"] = description
    item["source"] = source
    item["sourceInfo"] = info
    if location in _LOCATIONS:
        item["location"] = location
    item["path"] = info["path"]
    return item
