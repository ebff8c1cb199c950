"""Helpers for the checkpoint tests: sessions on the scripted provider in a real project folder,
and a byte-exact picture of a folder (contents, symlink targets, the executable bit)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pi_tui.core.provider import ModelInfo
from pi_tui.sdk import create_agent_session
from pi_tui.session.agent_session import AgentSession
from pi_tui.testing.scripted import ScriptedProvider

MODEL = ModelInfo(provider="fake", id="fake-model", context_window=200_000)
GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="LOUD SKIP: no git binary on PATH; checkpoints need the real git")


def picture(root: Path, *, skip: tuple[str, ...] = (".git",)) -> dict[str, tuple[str, bytes]]:
    """Every file and symlink under ``root`` (not following links): kind+mode and bytes."""
    found: dict[str, tuple[str, bytes]] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in skip]
        for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[rel] = ("link", os.readlink(path).encode("utf-8", "surrogateescape"))
            else:
                executable = "x" if os.access(path, os.X_OK) else "-"
                found[rel] = ("file" + executable, path.read_bytes())
    return found


def tree_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root`` (a ``.git`` folder, byte for byte)."""
    out: dict[str, str] = {}
    for folder, _dirs, files in os.walk(root):
        for name in files:
            path = Path(folder) / name
            out[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def user_git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="u", GIT_AUTHOR_EMAIL="u@x", GIT_COMMITTER_NAME="u", GIT_COMMITTER_EMAIL="u@x",
               GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return done.stdout


def cp_entries(session: AgentSession) -> list[dict[str, Any]]:
    return [e for e in session.session_manager.get_entries()
            if e.get("type") == "custom" and e.get("customType") == "pi-tui.checkpoint"]


@pytest.fixture
def make_session(project: Path, agent_dir: Path) -> Any:
    def make(turns: list[dict[str, Any]], **kwargs: Any) -> tuple[AgentSession, ScriptedProvider, list[dict[str, Any]]]:
        provider = ScriptedProvider(turns)
        kwargs.setdefault("model", MODEL)
        kwargs.setdefault("load_extensions", False)
        kwargs.setdefault("cwd", project)
        session = create_agent_session(agent_dir=agent_dir, provider=provider, **kwargs)
        events: list[dict[str, Any]] = []
        session.subscribe(events.append)
        return session, provider, events

    return make


def write(path: str, content: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "write", "arguments": {"path": path, "content": content}}]}


def bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def edit(path: str, old: str, new: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "edit", "arguments": {"path": path, "edits": [{"oldText": old, "newText": new}]}}]}
