"""``pi-tui --list-models [search]``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pi_tui.modes.list_models import format_tokens


def _run(agent_dir: Path, *args: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(agent_dir.parent), "PATH": "/usr/bin:/bin", "PI_CODING_AGENT_DIR": str(agent_dir), **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "pi_tui", "--list-models", *args], capture_output=True, text=True, env=env, timeout=60)


def test_models_json_models_come_first_with_windows(agent_dir: Path) -> None:
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"fake": {
        "baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions", "apiKey": "k",
        "models": [{"id": "fake-model", "contextWindow": 8192, "maxTokens": 1000}, {"id": "guess", "reasoning": True}]}}}))
    result = _run(agent_dir, env_extra={"OPENAI_API_KEY": "sk"})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["provider", "model", "context", "max-out", "thinking", "images"]
    assert lines[1].split() == ["fake", "fake-model", "8.2K", "1K", "no", "no"]
    assert lines[2].split() == ["fake", "guess", "128K?", "16.4K", "yes", "no"]
    assert any(line.split()[:3] == ["openai", "gpt-4o", "128K"] for line in lines)
    assert "context window unknown" in result.stderr


def test_search_filters_and_no_models_says_what_to_set(agent_dir: Path) -> None:
    result = _run(agent_dir, "gpt-4o-mini", env_extra={"OPENAI_API_KEY": "sk"})
    rows = result.stdout.splitlines()[1:]
    assert rows and all("gpt-4o-mini" in row for row in rows)
    empty = _run(agent_dir)
    assert empty.returncode == 0 and empty.stdout == ""
    assert "No models available" in empty.stderr and "models.json" in empty.stderr and "OPENAI_API_KEY" in empty.stderr


def test_broken_models_json_is_a_warning(agent_dir: Path) -> None:
    (agent_dir / "models.json").write_text("{oops")
    result = _run(agent_dir)
    assert result.returncode == 0
    assert "Warning:" in result.stderr and "models.json" in result.stderr and "Traceback" not in result.stderr


def test_token_counts_are_short() -> None:
    assert [format_tokens(n) for n in (999, 1000, 8192, 128_000, 1_048_576, 2_000_000)] == ["999", "1K", "8.2K", "128K", "1M", "2M"]
