"""What a new user sees when no model is configured: exactly what to set, instead of a failure."""

from __future__ import annotations

from pathlib import Path

from textual.content import Content
from textual.widgets import Static

MODELS_JSON_EXAMPLE = (
    '{"providers": {"local": {\n'
    '  "baseUrl": "http://127.0.0.1:8080/v1",\n'
    '  "api": "openai-completions", "apiKey": "none",\n'
    '  "models": [{"id": "my-model"}]}}}'
)


def first_run_text(agent_dir: Path | None) -> Content:
    """Lines of at most ~52 columns: it must read well beside the events pane at 100 columns
    and above the editor at 80x24 (a wrapped command line is hard to copy)."""
    where = f"{agent_dir}/models.json" if agent_dir else "~/.pi/agent/models.json"
    text = Content.styled("No model is configured yet.", "bold $warning")
    text = text.append_text(" Set one, then restart:\n")
    text = text.append_text(" 1. a key     ", "bold").append_text("export ANTHROPIC_API_KEY=…\n")
    text = text.append_text("              (or OPENAI_API_KEY, GEMINI_API_KEY, …)\n", "$text-muted")
    text = text.append_text(" 2. a model   ", "bold").append_text("pi-tui --model anthropic/claude-sonnet-4-5\n")
    text = text.append_text(" 3. a server  ", "bold").append_text("an OpenAI-compatible endpoint in\n")
    text = text.append_text(f"    {where}:\n")
    text = text.append_text("\n".join("    " + line for line in MODELS_JSON_EXAMPLE.split("\n")) + "\n",
                            "$text-muted")
    text = text.append_text("Without a key: make demo (the scripted provider).", "$text-muted")
    return text


class FirstRunNotice(Static):
    DEFAULT_CSS = "FirstRunNotice { height: auto; }"

    def __init__(self, agent_dir: Path | None) -> None:
        super().__init__(first_run_text(agent_dir), classes="first-run")
