"""The composition root: ``create_agent_session(...)`` builds an ``AgentSession`` wired like the
CLI's, with every part injectable. This is the only module that names concrete classes.

Anything not given is built the way the CLI builds it::

    settings   load_settings(cwd, agent_dir)                      (or a dict → in-memory)
    resources  load_resources(cwd, agent_dir, options), reloaded before every run
    models     ModelRegistry.for_agent_dir(agent_dir)
    model      --model/--provider, else settings' defaults, else models.json's first model
    provider   a ``Provider`` for every model: models.json ``openai-completions`` endpoints use
               the direct HTTP client (no litellm import); anything else the litellm adapter
    tools      the built-in tools; active: ``active_tools`` or read, bash, edit, write
    store      ``session_manager``, else --session / --continue / --no-session, else a new file
    extensions ``extensions`` (an ``ExtensionRunner``), else those found on disk (unless
               ``load_extensions=False``) plus ``extension_paths`` (always loaded)
    permissions ``permissions`` (``PermissionOptions``, docs/permissions.md); None: as pi, no gate
    mcp        the servers of ``<agentDir>/mcp.json``, ``.mcp.json``, ``.pi/mcp.json`` and each
               ``mcp_config`` file, plus ``mcp_servers`` (ACP's, as ``mcp.config.ServerConfig``);
               started at ``session.start()``, their tools frozen before the first request
    trust      ``trust_project``: True/False decides for this run; None (default) uses the
               ``trustedProjects`` setting or the answer remembered in the agent dir, else the
               project's code (``.pi/extensions``, project ``extensions``/``shellPath``/
               ``shellCommandPrefix``) is skipped; ``session.project_trust`` says what and why

A ``provider`` instance (e.g. a ``ScriptedProvider``) serves every model, and litellm is never
imported: tests and demos run fully offline.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pi_tui.core.errors import ConfigError, ProviderSetupError
from pi_tui.core.provider import ModelInfo, Provider
from pi_tui.core.session.manager import SessionManager
from pi_tui.core.tool import Tool
from pi_tui.resources.locations import agent_dir as default_agent_dir
from pi_tui.resources.locations import default_session_dir
from pi_tui.session.agent_session import AgentSession
from pi_tui.session.checkpoint_hooks import open_and_attach
from pi_tui.session.permission_hooks import attach_permissions, child_tools_for, share_permissions
from pi_tui.session.restore import restore_model_and_thinking
from pi_tui.session.retry import Clock

SCRIPTED_MODEL = ModelInfo(provider="scripted", id="scripted-model", name="Scripted model")


def create_agent_session(
    *,
    cwd: Path | str | None = None,
    agent_dir: Path | str | None = None,
    provider: Provider | Callable[[ModelInfo], Provider] | None = None,
    model: ModelInfo | str | None = None,
    provider_name: str | None = None,
    thinking_level: str | None = None,
    api_key: str | None = None,
    tools: Sequence[Tool] | None = None,
    active_tools: Sequence[str] | None = None,
    session_manager: SessionManager | None = None,
    session: str | None = None,
    session_dir: Path | str | None = None,
    continue_session: bool = False,
    no_session: bool = False,
    settings: Any = None,
    resources: Any = None,
    resource_options: Any = None,
    model_registry: Any = None,
    extensions: Any = None,
    load_extensions: bool = True,
    extension_paths: Sequence[str] = (),
    trust_project: bool | None = None,
    clock: Clock | None = None,
    permissions: Any = None,
    mcp_config: Sequence[Path | str] = (),
    mcp_servers: Sequence[Any] = (),
) -> AgentSession:
    """An ``AgentSession`` ready for ``prompt()``; see the module docstring for the defaults."""
    cwd_path = Path(cwd).absolute() if cwd is not None else Path.cwd()
    agent = Path(agent_dir) if agent_dir is not None else default_agent_dir()
    settings = _settings(settings, cwd_path, agent)
    trust = apply_project_trust(cwd_path, agent, settings, trust_project)
    if isinstance(model, str):
        from pi_tui.providers.models import parse_model_ref

        model, suffix_level = parse_model_ref(model)  # "provider/id:high"
        thinking_level = thinking_level or suffix_level
    registry = model_registry if model_registry is not None else _registry(agent)
    chosen = _initial_model(model, provider_name, provider, registry, settings)
    runner = _extensions(extensions, load_extensions, extension_paths, cwd_path, agent, settings,
                         include_project=trust.trusted)
    enabled = _enabled_delegation(settings) if tools is None else []
    wanted = [n for n in ("task", "todo") if n in enabled or n in (active_tools or ())] if tools is None else []
    all_tools = list(tools) if tools is not None else _builtin_tools() + _delegation_tools(cwd_path, agent, settings, wanted)
    if runner is not None:
        all_tools += [t for t in runner.tools() if t.name not in {x.name for x in all_tools}]
    active = list(active_tools) if active_tools is not None else _default_active(all_tools, tools is not None)
    if active_tools is None:
        active += [name for name in enabled if name not in active]
    loader = None
    if resources is None:
        options = resource_options if resource_options is not None else _resource_options(settings)

        def loader(extra_skill_paths: Sequence[Path] = (), extra_prompt_paths: Sequence[Path] = ()) -> Any:
            """Extensions' ``resources_discover`` paths come in as arguments."""
            from pi_tui.resources.loader import load_resources

            chosen = options
            if extra_skill_paths or extra_prompt_paths:
                chosen = dataclasses.replace(options, extra_skill_paths=tuple(extra_skill_paths),
                                             extra_prompt_paths=tuple(extra_prompt_paths))
            return load_resources(cwd_path, agent, chosen)

        resources = loader()
    manager = session_manager or _session_manager(cwd_path, settings, session, session_dir, continue_session, no_session)
    try:
        restored = restore_model_and_thinking(
            manager, model=chosen, model_explicit=model is not None,
            thinking_level=thinking_level, default_thinking_level=getattr(settings, "default_thinking_level", "medium"),
            resolve=lambda p, m: _resolve_stored(registry, chosen, p, m))
        agent_session = AgentSession(
            cwd=cwd_path,
            session_manager=manager,
            provider_factory=_provider_factory(provider),
            model=restored.model,
            thinking_level=restored.thinking_level,
            tools=all_tools,
            active_tools=active,
            settings=settings,
            resources=resources,
            resource_loader=loader,
            model_registry=registry,
            extensions=runner,
            api_key=api_key,
            clock=clock, check_credentials=provider is None,
        )
        agent_session.project_trust = trust
        attach_permissions(agent_session, permissions, cwd_path, agent, settings, trust.trusted)
        open_and_attach(agent_session, cwd_path, agent, settings)  # docs/checkpoints.md
        mcp = _mcp_manager(cwd_path, agent, settings, trust, mcp_config, mcp_servers)
        agent_session.mcp = mcp
        if mcp is not None:
            from pi_tui.session.mcp_tools import attach_mcp

            attach_mcp(agent_session, mcp, None if active_tools is None else set(active_tools))
        _bind_delegation(agent_session, all_tools, _provider_factory(provider), agent, api_key)
        agent_session.fresh_start = _fresh_start(model, provider_name, provider, registry, settings, thinking_level)
        if runner is not None:
            runner.on_error(agent_session.emit)
            runner.bind(agent_session)
        for note in restored.notes:
            agent_session.add_diagnostic("model", note)  # no listener yet: modes show diagnostics()
            agent_session.notify(note, "warning")
    except BaseException:
        if session_manager is None:  # ours: release the file lock, or the file stays locked in this process
            manager.close()
        raise
    return agent_session


# --------------------------------------------------------------------------- parts


def _settings(settings: Any, cwd: Path, agent: Path) -> Any:
    from pi_tui.resources.settings import SettingsManager, load_settings

    if settings is None:
        return load_settings(cwd, agent)
    if isinstance(settings, dict):
        return SettingsManager.in_memory(settings)
    return settings


def project_trust(cwd: Path, agent: Path, settings: Any, flag: bool | None) -> Any:
    """The trust decision for ``cwd``'s project code (``resources/trust.py``)."""
    from pi_tui.resources.trust import resolve_project_trust

    files = getattr(settings, "file_settings", None)
    return resolve_project_trust(
        cwd, agent,
        project_settings=files("project") if callable(files) else {},
        global_settings=files("global") if callable(files) else {},
        flag=flag,
        extra_code=_mcp_project_code(cwd, agent),
    )


def _mcp_project_code(cwd: Path, agent: Path) -> list[Any]:
    """The project's MCP servers as trust items; a stat per config file when there are none."""
    from pi_tui.mcp.files import any_config

    if not any_config(cwd, agent):
        return []
    from pi_tui.mcp.setup import project_code

    return project_code(cwd, agent)


def apply_project_trust(cwd: Path, agent: Path, settings: Any, flag: bool | None) -> Any:
    """Decide trust and let ``settings`` show the project's gated keys only if trusted (anything
    that reads ``sessionDir`` or a project path list must go through this first)."""
    trust = project_trust(cwd, agent, settings, flag)
    if hasattr(settings, "set_project_trusted"):
        settings.set_project_trusted(trust.trusted)
    return trust


def _mcp_manager(cwd: Path, agent: Path, settings: Any, trust: Any, files: Sequence[Path | str],
                 editor_servers: Sequence[Any]) -> Any:
    """The MCP servers' manager (``pi_tui/mcp``), not started yet; None when none is configured
    (then nothing of MCP is imported beyond a stat per config file)."""
    from pi_tui.mcp.files import any_config

    extra = [Path(f) for f in files]
    if not editor_servers and not any_config(cwd, agent, extra):
        return None
    from pi_tui.mcp.setup import build_manager

    return build_manager(cwd, agent, project_trusted=bool(getattr(trust, "trusted", False)), extra_files=extra,
                         editor_servers=editor_servers, settings=settings)


def _registry(agent: Path) -> Any:
    from pi_tui.providers.models import ModelRegistry

    return ModelRegistry.for_agent_dir(agent)


def _initial_model(model: ModelInfo | str | None, provider_name: str | None, provider: Any, registry: Any,
                   settings: Any) -> ModelInfo | None:
    if isinstance(model, ModelInfo):
        return model
    try:
        found: ModelInfo = registry.initial_model(
            model, provider_name,
            default_provider=getattr(settings, "default_provider", None),
            default_model=getattr(settings, "default_model", None),
        )
        return found
    except ProviderSetupError:
        if model is not None or provider is None:
            if model is not None:
                raise
            return None
        return SCRIPTED_MODEL


def _fresh_start(model: ModelInfo | str | None, provider_name: str | None, provider: Any, registry: Any,
                 settings: Any, thinking_level: str | None) -> Callable[[], tuple[ModelInfo | None, str | None]]:
    """§13.1: a replacement session without messages (``/new``, a root fork) starts like a fresh
    one: the model and thinking level come again from the CLI choices kept here and from the
    settings as they are now (``/model`` saved its choice there). None = keep the current."""

    def resolve() -> tuple[ModelInfo | None, str | None]:
        try:
            chosen = _initial_model(model, provider_name, provider, registry, settings)
        except (ProviderSetupError, ConfigError):
            chosen = None
        return (None if chosen is SCRIPTED_MODEL else chosen), thinking_level

    return resolve


def _resolve_stored(registry: Any, chosen: ModelInfo | None, provider: str, model_id: str) -> ModelInfo | None:
    if chosen is not None and (chosen.provider, chosen.id) == (provider, model_id):
        return chosen
    try:
        found: ModelInfo = registry.resolve(f"{provider}/{model_id}", provider)
    except (ProviderSetupError, ConfigError):
        return None
    return found


def _provider_factory(provider: Any) -> Callable[[ModelInfo], Provider]:
    if provider is None:
        return default_provider_for
    if hasattr(provider, "stream"):
        return lambda _model: provider
    return provider  # type: ignore[no-any-return]


def default_provider_for(model: ModelInfo) -> Provider:
    """Our own HTTP client where we have one for the model's API (fast start: no litellm
    import), the litellm adapter for everything else (``providers/routing.py``)."""
    from pi_tui.providers.routing import native_api

    native = native_api(model)
    if native == "openai-completions":
        from pi_tui.providers.openai_http import OpenAIHttpProvider

        return OpenAIHttpProvider()
    if native == "openai-responses":
        from pi_tui.providers.responses_http import ResponsesHttpProvider

        return ResponsesHttpProvider()
    if native == "anthropic-messages":
        from pi_tui.providers.anthropic_http import AnthropicHttpProvider

        return AnthropicHttpProvider()
    if native == "google-generative-ai":
        from pi_tui.providers.gemini_http import GeminiHttpProvider

        return GeminiHttpProvider()
    from pi_tui.providers.litellm_provider import LiteLLMProvider

    return LiteLLMProvider()


def _enabled_delegation(settings: Any) -> list[str]:
    """``task`` / ``todo`` as the ``subagents.enabled`` / ``todo.enabled`` settings switch them on."""
    get = getattr(settings, "get", None)
    if not callable(get):
        return []
    return [name for name, key in (("task", "subagents.enabled"), ("todo", "todo.enabled")) if get(key, False) is True]


def _delegation_tools(cwd: Path, agent: Path, settings: Any, wanted: Sequence[str]) -> list[Tool]:
    """``task`` and ``todo`` (``subagents/setup.py``), built only when the settings or ``--tools``
    ask for them: a run without them never imports the room (``-p`` start-up)."""
    if not wanted:
        return []
    from pi_tui.subagents.setup import delegation_tools

    return [t for t in delegation_tools(cwd, agent, settings) if t.name in wanted]


def _builtin_tools() -> list[Tool]:
    try:
        from pi_tui.tools.registry import builtin_tools
    except ImportError:
        return []
    return list(builtin_tools().values())


def _default_active(all_tools: list[Tool], given: bool) -> list[str]:
    if given:
        return [t.name for t in all_tools]
    try:
        from pi_tui.tools.registry import DEFAULT_ACTIVE_TOOLS
    except ImportError:
        DEFAULT_ACTIVE_TOOLS = ("read", "bash", "edit", "write")
    names = {t.name for t in all_tools}
    builtin = [n for n in DEFAULT_ACTIVE_TOOLS if n in names]
    extension_tools = [t.name for t in all_tools if t.name not in _builtin_names()]
    return builtin + extension_tools


def _builtin_names() -> set[str]:
    return {"read", "bash", "edit", "write", "grep", "find", "ls", "task", "todo"}


# --------------------------------------------------------------------------- subagents and todo


def _bind_delegation(session: AgentSession, tools: Sequence[Tool], provider: Callable[[ModelInfo], Provider],
                     agent: Path, api_key: str | None) -> None:
    """Attach the todo tracker and give each ``task`` tool the way to start a child of ``session``."""
    if not any(tool.name in ("task", "todo") for tool in tools):
        return
    from pi_tui.subagents.task_tool import TaskTool
    from pi_tui.subagents.todo_tracker import TodoTracker

    for tool in tools:
        if tool.name == "todo":
            session.todos = TodoTracker(session)
            session.subscribe(session.todos.observe)
            session.hooks.pipeline_summarized.append(session.todos.after_pipeline_summary)
        if isinstance(tool, TaskTool):
            tool.attach(_spawner(session, provider, agent, api_key, tool.agents),
                        parent_tools=session.get_active_tools, forward=session.emit)
            for diagnostic in tool.agent_diagnostics:
                session.add_diagnostic("agents", str(diagnostic))


def _spawner(session: AgentSession, provider: Callable[[ModelInfo], Provider], agent: Path, api_key: str | None,
             agents: Any) -> Callable[[Any], Any]:
    return lambda spec: _spawn_child(session, spec, provider, agent, api_key, agents)


def _spawn_child(parent: AgentSession, spec: Any, provider: Callable[[ModelInfo], Provider], agent: Path,
                 api_key: str | None, agents: Any) -> Any:
    """A child ``AgentSession`` for one ``task`` call: the parent's model (or the definition's),
    settings, resources and provider; its own session file beside the parent's (header
    ``parentSession``), no extensions, only ``spec.tools``."""
    from pi_tui.subagents.definitions import child_system_resources
    from pi_tui.subagents.setup import child_handle, child_model, child_session_manager, child_tools

    model, notes = child_model(parent.model, parent.model_registry, spec.agent)
    manager = child_session_manager(parent.session_manager, spec)
    child = create_agent_session(
        cwd=parent.cwd, agent_dir=agent, provider=provider, model=model,
        thinking_level=spec.agent.thinking or parent.thinking_level, api_key=api_key,
        tools=child_tools_for(parent, child_tools(spec, parent.active_tools, agents, parent.settings),
                              read_only=spec.agent.read_only), session_manager=manager,
        settings=parent.settings, resources=child_system_resources(parent.resources, spec.agent),
        model_registry=parent.model_registry, load_extensions=False,
        trust_project=getattr(parent.project_trust, "trusted", None), clock=parent.clock,
    )
    child.one_shot = True  # threshold compaction between its turns, none after its answer
    child.file_access = parent.file_access  # ACP: the child reads the editor's buffers too
    child.before_tool_call = parent.before_tool_call  # ACP's permission question guards the child's calls too
    share_permissions(parent, child, read_only=spec.agent.read_only)
    return child_handle(child, manager, model, notes)


def _resource_options(settings: Any) -> Any:
    from pi_tui.resources.loader import ResourceOptions

    return ResourceOptions(settings=settings)


def _extensions(extensions: Any, load: bool, paths: Sequence[str], cwd: Path, agent: Path, settings: Any, *,
                include_project: bool) -> Any:
    """``load=False`` (``--no-extensions``) skips discovery only: explicit ``-e`` paths still load,
    as in pi. An untrusted project's extensions are not discovered."""
    if extensions is not None:
        return extensions
    if not load and not paths:
        return None
    from pi_tui.extensions.loader import discover_extension_paths, load_extensions

    settings_paths = settings.resource_paths("extensions") if hasattr(settings, "resource_paths") else []
    found = discover_extension_paths(cwd, agent, explicit_paths=[Path(p) for p in paths], settings_paths=settings_paths,
                                     include_defaults=load, include_project=include_project)
    if not found:
        return None
    timeout = getattr(settings, "extension_handler_timeout_s", None)
    return load_extensions(found, timeout_s=timeout) if timeout else load_extensions(found)


def _session_manager(cwd: Path, settings: Any, session: str | None, session_dir: Path | str | None,
                     continue_session: bool, no_session: bool) -> SessionManager:
    if no_session:
        return SessionManager.in_memory(cwd)
    directory = default_session_dir(cwd, setting=getattr(settings, "session_dir", None),
                                    flag=str(session_dir) if session_dir is not None else None)
    if session:
        return SessionManager.open(resolve_session_arg(session, directory), cwd=cwd)
    if continue_session:
        return SessionManager.continue_recent(cwd, directory)
    return SessionManager.create(cwd, directory)


def resolve_session_arg(value: str, directory: Path) -> Path:
    """``--session``: a path (contains a separator or ends ``.jsonl``), else an id prefix of a
    session in ``directory``. A prefix that only matches another project's session is an error
    that names it (``--fork`` copies it here)."""
    if "/" in value or "\\" in value or value.endswith(".jsonl"):
        return Path(value).expanduser()
    hits = _sessions_with_prefix(directory, value)
    if len(hits) == 1:
        return hits[0]
    if hits:
        raise ConfigError(f"Session id prefix '{value}' is ambiguous in {directory}: " + ", ".join(p.name for p in hits))
    from pi_tui.resources.locations import sessions_root

    elsewhere = [p for folder in _subdirs(sessions_root()) for p in _sessions_with_prefix(folder, value)]
    if elsewhere:
        raise ConfigError(f"Session '{value}' belongs to another project: {elsewhere[0]}\n"
                          f"Use --fork {elsewhere[0]} to copy it into this directory.")
    raise ConfigError(f"No session matching '{value}' in {directory}")


def _sessions_with_prefix(directory: Path, prefix: str) -> list[Path]:
    if not directory.is_dir():
        return []
    return [p for p in sorted(directory.glob("*.jsonl")) if p.stem.split("_", 1)[-1].startswith(prefix)]


def _subdirs(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def fork_session_arg(value: str, cwd: Path, settings: Any, session_dir: Path | str | None = None) -> SessionManager:
    """``--fork PATH|ID``: copy that session (any project's) into a new session of ``cwd``."""
    from pi_tui.resources.locations import sessions_root

    directory = default_session_dir(cwd, setting=getattr(settings, "session_dir", None),
                                    flag=str(session_dir) if session_dir is not None else None)
    if "/" in value or "\\" in value or value.endswith(".jsonl"):
        source = Path(value).expanduser()
    else:
        found = [p for folder in [directory, *_subdirs(sessions_root())] for p in _sessions_with_prefix(folder, value)]
        if not found:
            raise ConfigError(f"No session matching '{value}' to fork")
        source = found[0]
    return SessionManager.fork_from(source, cwd, directory)
