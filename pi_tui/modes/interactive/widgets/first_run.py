"""What a new user sees when no model is configured: exactly what to set, instead of a failure."""

from __future__ import annotations

from pathlib import Path

from textual.content import Content
from textual.widgets import Static

MODELS_JSON_EXAMPLE = (
    '{"providers": {"local": {"baseUrl": "http://127.0.0.1:8080/v1",\n'
    '  "api": "openai-completions", "apiKey": "none",\n'
    '  "models": [{"id": "my-model", "contextWindow": 128000}]}}}'
)


def first_run_text(agent_dir: Path | None) -> Content:
    """Short enough to fit an 80x24 terminal above the editor."""
    where = f"{agent_dir}/models.json" if agent_dir else "~/.pi/agent/models.json"
    text = Content.styled("No model is configured yet.", "bold $warning")
    text = text.append_text(" Set one of these, then restart pi-tui:\n")
    text = text.append_text("  1. an API key  ", "bold").append_text(
        "export ANTHROPIC_API_KEY=…  (or OPENAI_API_KEY, …)\n")
    text = text.append_text("  2. a model     ", "bold").append_text(
        "pi-tui --model anthropic/claude-sonnet-4-5 (--api-key KEY)\n")
    text = text.append_text("  3. an endpoint ", "bold").append_text(f"in {where}:\n")
    text = text.append_text("\n".join("     " + line for line in MODELS_JSON_EXAMPLE.split("\n")) + "\n",
                            "$text-muted")
    text = text.append_text("Try it without a key: make demo (the scripted provider).", "$text-muted")
    return text


class FirstRunNotice(Static):
    DEFAULT_CSS = "FirstRunNotice { height: auto; }"

    def __init__(self, agent_dir: Path | None) -> None:
        super().__init__(first_run_text(agent_dir), classes="first-run")
