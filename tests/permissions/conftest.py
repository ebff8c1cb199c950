"""A fake world for permission tests: HOME, agent dir, project and a sibling folder under
/var/tmp (not /tmp, which the sandbox replaces), and the real permission defaults (the suite's
``PI_PERMISSION_MODE=bypassPermissions`` removed)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

KEY = "-----BEGIN OPENSSH PRIVATE KEY----- escape-suite-key"
BASHRC = "# the user's bashrc\n"


@dataclass
class FakeWorld:
    base: Path
    home: Path
    agent: Path
    project: Path
    sibling: Path


@pytest.fixture
def fake_world(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeWorld]:
    base = Path(tempfile.mkdtemp(prefix="pi-perm-", dir="/var/tmp"))
    try:
        home, project, sibling = base / "home", base / "project", base / "sibling"
        agent = home / ".pi" / "agent"
        for folder in (home / ".ssh", agent, project / ".git" / "hooks", project / ".pi", sibling):
            folder.mkdir(parents=True)
        (home / ".ssh" / "id_rsa").write_text(KEY)
        (home / ".bashrc").write_text(BASHRC)
        (agent / "auth.json").write_text('{"openai": "sk-agent-secret"}')
        (project / ".git" / "config").write_text("[core]\n")
        (project / ".pi" / "settings.json").write_text("{}")
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
        monkeypatch.delenv("PI_PERMISSION_MODE", raising=False)
        monkeypatch.chdir(project)
        yield FakeWorld(base, home, agent, project, sibling)
    finally:
        shutil.rmtree(base, ignore_errors=True)
