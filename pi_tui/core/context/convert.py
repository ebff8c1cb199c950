"""Agent messages → LLM messages (pi-behaviour.md §1.5, ``convertToLlm``).

The wrapper texts below are model-visible and exact. ``user``, ``assistant`` and ``toolResult``
pass through as the same objects; only the app roles are turned into new user messages. Unknown
roles are dropped, as pi does. Nothing here mutates its input.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pi_tui.core.messages import AgentMessage, LlmMessage, UserMessage

COMPACTION_SUMMARY_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"
BRANCH_SUMMARY_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX = "</summary>"
IMAGES_DISABLED_TEXT = "Image reading is disabled."


def bash_execution_to_text(message: Any) -> str:
    """How a ``!cmd`` run reads to the model."""
    text = f"Ran `{message.get('command', '')}`\n"
    output = message.get("output")
    text += f"```\n{output}\n```" if output else "(no output)"
    exit_code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif exit_code is not None and exit_code != 0:
        text += f"\n\nCommand exited with code {exit_code}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {message['fullOutputPath']}]"
    return text


def _user_text(text: str, timestamp: Any) -> UserMessage:
    return {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": timestamp}


def convert_message(message: AgentMessage) -> LlmMessage | None:
    """One agent message as the model sees it, or None when it does not reach the model."""
    role = message.get("role")
    if role in ("user", "assistant", "toolResult"):
        return message  # type: ignore[return-value]
    raw: Any = message
    timestamp = raw.get("timestamp")
    if role == "bashExecution":
        if raw.get("excludeFromContext"):
            return None
        return _user_text(bash_execution_to_text(raw), timestamp)
    if role == "custom":
        content = raw.get("content", "")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        return {"role": "user", "content": blocks, "timestamp": timestamp}  # type: ignore[return-value]
    if role == "branchSummary":
        return _user_text(BRANCH_SUMMARY_PREFIX + str(raw.get("summary", "")) + BRANCH_SUMMARY_SUFFIX, timestamp)
    if role == "compactionSummary":
        text = COMPACTION_SUMMARY_PREFIX + str(raw.get("summary", "")) + COMPACTION_SUMMARY_SUFFIX
        return _user_text(text, timestamp)
    return None


def _without_images(message: LlmMessage) -> LlmMessage:
    """Images → the fixed notice; runs of that notice collapse to one (a copy, when needed)."""
    if message["role"] not in ("user", "toolResult"):
        return message
    content = message["content"]
    if not isinstance(content, list) or not any(block.get("type") == "image" for block in content):
        return message
    notice = {"type": "text", "text": IMAGES_DISABLED_TEXT}
    blocks: list[Any] = []
    for block in content:
        replaced = notice if block.get("type") == "image" else block
        previous = blocks[-1] if blocks else None
        is_notice = replaced.get("type") == "text" and replaced.get("text") == IMAGES_DISABLED_TEXT
        if (
            is_notice
            and previous is not None
            and previous.get("type") == "text"
            and previous.get("text") == IMAGES_DISABLED_TEXT
        ):
            continue
        blocks.append(dict(replaced) if replaced is notice else replaced)
    copy: Any = dict(message)
    copy["content"] = blocks
    return copy  # type: ignore[no-any-return]


def convert_to_llm(messages: Iterable[AgentMessage], *, block_images: bool = False) -> list[LlmMessage]:
    """The LLM messages for ``messages``; ``block_images`` is the ``images.blockImages`` setting."""
    converted: list[LlmMessage] = []
    for message in messages:
        llm = convert_message(message)
        if llm is None:
            continue
        converted.append(_without_images(llm) if block_images else llm)
    return converted
