"""``pi-tui sessions | tree | context | checkpoints``: see what is stored and what the model would receive.

These commands only read: files are never locked, migrated on disk or rewritten, so they are safe
to run on a session another pi-tui (or pi) is using. Problems are one line on stderr naming the
file and the issue, exit code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pi_tui.core.context.convert import convert_to_llm
from pi_tui.core.errors import SessionError
from pi_tui.core.messages import LlmMessage
from pi_tui.core.provider import ModelInfo
from pi_tui.core.session.listing import SessionInfo, list_all_sessions, list_sessions
from pi_tui.core.session.loading import LoadedSession, load_session_readonly
from pi_tui.core.session.projection import LAST_ENTRY, SessionContext, build_session_context
from pi_tui.core.session.tree import build_tree, index_entries, path_to, replay_labels
from pi_tui.core.terminal_text import json_line
from pi_tui.core.tokens import estimate_tokens
from pi_tui.modes.inspect_format import render_message, render_tree, short
from pi_tui.providers.replay_transform import is_failed_reply, transform_for_replay
from pi_tui.resources.locations import default_session_dir, sessions_root
from pi_tui.resources.settings import load_settings

EXIT_USAGE = 2


class InspectError(Exception):
    """A problem to report in one line (exit code 2)."""


def run_inspect(args: argparse.Namespace) -> int:
    try:
        if args.command == "sessions":
            lines = _sessions(args)
        elif args.command == "tree":
            lines = _tree(Path(args.file))
        elif args.command == "checkpoints":
            from pi_tui.modes.inspect_checkpoints import checkpoint_lines

            lines = checkpoint_lines(_load(Path(args.file)), as_json=args.json)
        else:
            lines = _context(Path(args.file), args.leaf, as_json=args.json)
        _emit(lines)
    except (InspectError, SessionError, FileNotFoundError) as error:
        print(f"pi-tui {args.command}: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `pi-tui tree big.jsonl | head`: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return 0


def _emit(lines: Iterable[str]) -> None:
    write = sys.stdout.write
    for line in lines:
        write(line)
        write("\n")
    sys.stdout.flush()


def _reserved(path: Path) -> LoadedSession | None:
    """An empty file is a session reserved and locked by a pi-tui that has written nothing yet
    (``--session NEW.jsonl`` before its first prompt): nothing in it, which is no error."""
    try:
        empty = path.is_file() and path.stat().st_size == 0
    except OSError:
        return None
    if not empty:
        return None
    print(f"note: {path} is empty: a session reserved by pi-tui that has no entries yet", file=sys.stderr)
    return LoadedSession(path, {"type": "session", "id": "(not written yet)"}, [], [], None)


def _load(path: Path) -> LoadedSession:
    loaded = _reserved(path) or load_session_readonly(path)
    for warning in loaded.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    return loaded


# --------------------------------------------------------------------------- sessions


def _sessions(args: argparse.Namespace) -> list[str]:
    if args.all and not args.session_dir:
        infos = list_all_sessions(sessions_root())
    else:
        from pi_tui.resources.locations import agent_dir
        from pi_tui.sdk import apply_project_trust

        cwd = Path.cwd()
        settings = load_settings(cwd)
        apply_project_trust(cwd, agent_dir(), settings, None)  # a project's sessionDir counts once trusted
        setting = settings.session_dir
        infos = list_sessions(default_session_dir(cwd, setting=setting, flag=args.session_dir))
    if args.json:
        return [json_line([info.to_json() for info in infos], indent=2)]
    if not infos:
        return ["(no sessions)"]
    titles = {str(info.path): info.name or info.first_message for info in infos}
    return [_session_line(info, show_cwd=args.all, parents=titles) for info in infos]


def _session_line(info: SessionInfo, *, show_cwd: bool, parents: dict[str, str] | None = None) -> str:
    when = info.modified.strftime("%Y-%m-%d %H:%M")
    title = info.name or info.first_message
    if info.subagent is not None:  # a task child: whose, and which task (a fork has no such label)
        parent = info.parent_session_path or ""
        of = (parents or {}).get(parent) or Path(parent).name or "?"
        label = short(info.subagent, 36)
        title = f'↳ subagent {label} of "{short(of, max(8, 60 - len(label) - 17))}"'
    where = f"  {info.cwd}" if show_cwd else ""
    return f"{when}  {info.message_count:>5} msgs  {short(title, 60):<60}{where}  {info.path}"


# --------------------------------------------------------------------------- tree


def _tree(path: Path) -> list[str]:
    loaded = _load(path)
    entries = loaded.entries
    if not entries:
        return [f"(session {loaded.header['id']} has no entries)"]
    last_id = entries[-1].get("id")
    leaf = last_id if isinstance(last_id, str) else None
    active = {str(e.get("id")) for e in path_to(index_entries(entries), leaf)}
    roots = build_tree(entries, replay_labels(entries))
    return [f"session {loaded.header['id']}  cwd {loaded.header.get('cwd', '')}", *render_tree(roots, leaf, active)]


# --------------------------------------------------------------------------- context


def _context(path: Path, leaf: str | None, *, as_json: bool) -> list[str]:
    loaded = _load(path)
    by_id = index_entries(loaded.entries)
    if leaf is not None and leaf not in by_id:
        raise InspectError(f"no entry with id {leaf!r} in {path}")
    context = build_session_context(loaded.entries, leaf if leaf is not None else LAST_ENTRY, by_id=by_id)
    # As pi sends it: the images.blockImages setting (of this directory) applies.
    block_images = load_settings(Path.cwd()).image_settings().block_images
    projected = convert_to_llm(context.messages, block_images=block_images)
    messages = transform_for_replay(projected, _target_model(context, projected))
    dropped = [message for message in projected if is_failed_reply(message)]
    estimates = [estimate_tokens(message) for message in messages]  # type: ignore[arg-type]
    total = sum(estimates)
    if as_json:
        return [json_line({"messages": messages, "tokens": total, "dropped": dropped})]
    model = f"{context.model.provider}/{context.model.model_id}" if context.model else "(none)"
    leaf_shown = leaf or (loaded.entries[-1].get("id") if loaded.entries else None) or "(none)"
    lines = [f"session {loaded.header['id']}  leaf {leaf_shown}  model {model}  thinking {context.thinking_level}"]
    for number, (message, tokens) in enumerate(zip(messages, estimates, strict=True), start=1):
        lines.append("")
        lines.extend(render_message(number, message, tokens))  # type: ignore[arg-type]
    if dropped:
        lines.append("")
        lines.append(f"Not sent: {len(dropped)} failed or aborted {'reply' if len(dropped) == 1 else 'replies'} "
                     "(kept in the file, dropped from every request):")
        lines.extend(f"  {_failed_line(message)}" for message in dropped)
    lines.append("")
    lines.append(f"{len(messages)} messages, ~{total} tokens (estimate: chars/4 per message)")
    return lines


def _target_model(context: SessionContext, messages: list[LlmMessage]) -> ModelInfo:
    """The session's model as the replay transform needs it: provider, id and api (the api of its
    latest reply decides which thinking and tool-call ids count as its own). Whether it takes
    images is not recorded in the file, so images are shown as stored."""
    if context.model is None:
        return ModelInfo(provider="", id="", input=("text", "image"))
    provider, model_id = context.model.provider, context.model.model_id
    api = next((str(m.get("api")) for m in reversed(messages)
                if m.get("role") == "assistant" and (m.get("provider"), m.get("model")) == (provider, model_id)),
               "openai-completions")
    return ModelInfo(provider=provider, id=model_id, api=api, input=("text", "image"))


def _failed_line(message: LlmMessage) -> str:
    raw: dict[str, Any] = dict(message)
    return short(f"assistant ({raw.get('stopReason')}): {raw.get('errorMessage') or ''}", 160)
