"""What a new user sees when no model is configured: exactly what to set, instead of a failure."""

from __future__ import annotations

from pathlib import Path

from textual.content import Content
from textual.widgets import Static

MODELS_JSON_EXAMPLE = """{
  "providers": {
    "local": {
      "baseUrl": "http://127.0.0.1:8080/v1",
      "api": "openai-completions",
      "apiKey": "none",
      "models": [{"id": "my-model", "contextWindow": 128000}]
    }
  }
}"""


def first_run_text(agent_dir: Path | None) -> Content:
    where = f"{agent_dir}/models.json" if agent_dir else "~/.pi/agent/models.json"
    text = Content.styled("No model is configured yet.\n", "bold $warning")
    text = text.append_text("Set one of these, then restart pi-tui (your typing is kept):\n\n")
    text = text.append_text("  1. An API key in the environment, for example\n", "bold")
    text = text.append_text("       export ANTHROPIC_API_KEY=…   or   export OPENAI_API_KEY=…\n")
    text = text.append_text("  2. A model on the command line\n", "bold")
    text = text.append_text("       pi-tui --model anthropic/claude-sonnet-4-5   (add --api-key KEY if needed)\n")
    text = text.append_text(f"  3. Your own endpoint in {where}\n", "bold")
    text = text.append_text("\n".join("       " + line for line in MODELS_JSON_EXAMPLE.split("\n")) + "\n",
                            "$text-muted")
    text = text.append_text("\nTry it without a key: make demo  (the scripted provider)", "$text-muted")
    return text


class FirstRunNotice(Static):
    DEFAULT_CSS = "FirstRunNotice { height: auto; }"

    def __init__(self, agent_dir: Path | None) -> None:
        super().__init__(first_run_text(agent_dir), classes="first-run")
