"""A per-turn system prompt (seed 000 §3) plus a tool and a command.

``/review-mode on`` makes the next runs use a stricter system prompt. The prompt is returned by
``before_agent_start`` and so holds for exactly one run (every model call of it, tool calls
included); pi-tui restores the normal prompt afterwards. The extension also registers a
``word_count`` tool the model can call.
"""

from __future__ import annotations

from typing import Any

REVIEW_RULES = (
    "\n\nReview mode is on: do not modify files. Report problems as a list of "
    "`path:line - problem - fix`, most severe first."
)


def register(pi: Any) -> None:
    state = {"on": False}

    def toggle(args: str, ctx: Any) -> None:
        state["on"] = args.strip() != "off"
        pi.notify(f"review mode {'on' if state['on'] else 'off'}")

    pi.register_command("review-mode", toggle, description="Turn review mode on or off: /review-mode [on|off]")

    @pi.on("before_agent_start")
    def stricter_prompt(event: dict[str, Any], ctx: Any) -> dict[str, Any] | None:
        if not state["on"]:
            return None
        return {"systemPrompt": ctx.get_system_prompt() + REVIEW_RULES}

    def word_count(call_id: str, args: dict[str, Any], ctx: Any) -> str:
        text = str(args.get("text", ""))
        return f"{len(text.split())} words, {len(text)} characters"

    pi.register_tool(
        name="word_count",
        description="Count the words and characters of a text.",
        parameters={
            "type": "object",
            "properties": {"text": {"type": "string", "description": "The text to measure"}},
            "required": ["text"],
        },
        execute=word_count,
        prompt_snippet="Count words and characters of a text",
    )
