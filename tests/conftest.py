"""Test isolation shared by every test.

* HOME and the agent dir point at a temp folder, so no test reads the real ``~/.pi`` or the
  repo's own ``.pi/``.
* Network: any connection to an address other than 127.0.0.1/::1/localhost fails loudly, so no
  test can reach a real provider.
"""

from __future__ import annotations

import os
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_MODE", "PRODUCTION")

_LOCAL_HOSTS = {"127.0.0.1", "::1", "localhost", "0.0.0.0"}
_real_connect = socket.socket.connect
_real_create_connection = socket.create_connection


def _host_of(address: object) -> str | None:
    if isinstance(address, tuple) and address:
        return str(address[0])
    return None  # unix sockets are local


def _guarded_connect(self: socket.socket, address: object) -> None:
    host = _host_of(address)
    if host is not None and host not in _LOCAL_HOSTS:
        raise RuntimeError(f"tests must not reach the network: connection to {address!r} refused")
    return _real_connect(self, address)  # type: ignore[arg-type]


def _guarded_create_connection(address: tuple[str, int], *args: object, **kwargs: object) -> socket.socket:
    if address[0] not in _LOCAL_HOSTS:
        raise RuntimeError(f"tests must not reach the network: connection to {address!r} refused")
    return _real_create_connection(address, *args, **kwargs)  # type: ignore[arg-type]


socket.socket.connect = _guarded_connect  # type: ignore[method-assign,assignment]
socket.create_connection = _guarded_create_connection  # type: ignore[assignment]


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("home")
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)  # the trash (session delete) is under HOME too
    # Temp folders (in-memory sessions' artifact dirs, bash full-output files) go under pytest's
    # own base temp, which pytest prunes, instead of piling up in /tmp.
    scratch = tmp_path_factory.getbasetemp() / "tmp"
    scratch.mkdir(exist_ok=True)
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    # The suite tests pi's behaviour, which has no permission gate: every run is as with --yolo
    # unless a test says otherwise. tests/permissions (and any test that deletes this variable)
    # sees the real defaults: sandboxed bash, questions, untrusted projects held to plan/default.
    monkeypatch.setenv("PI_PERMISSION_MODE", "bypassPermissions")
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    yield home


@pytest.fixture
def agent_dir(isolated_home: Path) -> Path:
    return isolated_home / ".pi" / "agent"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scratch project directory, made the cwd."""
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.chdir(root)
    return root


SHARED = Path(os.environ.get("PI_TUI_SHARED") or Path(__file__).resolve().parents[1].parent / "shared")
"""The reference material beside the repository (a git worktree elsewhere sets PI_TUI_SHARED)."""


@pytest.fixture
def pi_fixtures() -> Path:
    """pi's own session files (../shared/fixtures/pi-sessions)."""
    path = SHARED / "fixtures" / "pi-sessions"
    if not path.is_dir():
        pytest.skip("../shared/fixtures is not present")
    return path
