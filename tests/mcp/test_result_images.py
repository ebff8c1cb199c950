"""An MCP tool's image stays in the session whatever the model (as the read tool's does): for a
model without image input the result says so and the request carries the placeholder instead,
while the TUI can still draw the image and a later vision model still sees it."""

from __future__ import annotations

import base64
import json

from mcp import types

from pi_tui.core.provider import ModelInfo
from pi_tui.mcp.results import convert_result
from pi_tui.providers.replay_transform import TOOL_IMAGE_PLACEHOLDER, transform_for_replay

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 40).decode("ascii")


def _result(mime: str = "image/png") -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text="a picture"),
                                         types.ImageContent(type="image", data=PNG, mime_type=mime)])


def test_for_a_text_only_model_the_image_is_kept_and_the_result_says_it_is_not_shown() -> None:
    result = convert_result(_result(), server="ev", tool="get-tiny-image", artifact_dir=None, images=False)
    assert result.content[1] == {"type": "image", "data": PNG, "mimeType": "image/png"}
    assert result.content[0]["type"] == "text"
    assert "not shown to this model, which does not support images" in result.content[0]["text"]
    message = {"role": "toolResult", "toolCallId": "c1", "toolName": "mcp__ev__get-tiny-image",
               "content": result.content, "isError": False, "timestamp": 1}
    text_only = ModelInfo(provider="fake", id="fake-model", api="openai-completions")
    sent = json.dumps(transform_for_replay([message], text_only))  # type: ignore[list-item]
    assert PNG not in sent and TOOL_IMAGE_PLACEHOLDER in sent
    vision = ModelInfo(provider="fake", id="fake-vision", api="openai-completions", input=("text", "image"))
    assert PNG in json.dumps(transform_for_replay([message], vision))  # type: ignore[list-item]


def test_for_a_vision_model_the_image_goes_through_without_a_note() -> None:
    result = convert_result(_result(), server="ev", tool="get-tiny-image", artifact_dir=None, images=True)
    assert result.content == [{"type": "text", "text": "a picture"}, {"type": "image", "data": PNG, "mimeType": "image/png"}]


def test_an_image_format_models_do_not_take_is_named_not_kept() -> None:
    result = convert_result(_result("image/tiff"), server="ev", tool="scan", artifact_dir=None, images=True)
    assert [block["type"] for block in result.content] == ["text"]
    text = str(result.content[0].get("text"))
    assert "[image image/tiff" in text and "not a format models take" in text
