"""ACP prompt content blocks → pi-tui's prompt text and images, and the ``/compact`` parse."""

from __future__ import annotations

import pytest

from pi_tui.modes.acp.jsonrpc import RpcError
from pi_tui.modes.acp.prompt_input import compact_instructions, prompt_from_blocks


def test_blocks_become_text_files_mentions_and_images() -> None:
    text, images = prompt_from_blocks([
        {"type": "text", "text": "Compare"},
        {"type": "resource", "resource": {"uri": "file:///src/a%20b.py", "mimeType": "text/x-python", "text": "x = 1"}},
        {"type": "text", "text": "with"},
        {"type": "resource_link", "uri": "file:///src/c.py", "name": "c.py"},
        {"type": "image", "data": "iVBOR", "mimeType": "image/png"},
        {"type": "resource", "resource": {"uri": "file:///shot.png", "mimeType": "image/png", "blob": "AAAA"}},
    ])
    assert text == 'Compare\n<file name="/src/a b.py">\nx = 1\n</file>\nwith @/src/c.py \n<file name="/shot.png"></file>\n'
    assert images == [{"type": "image", "data": "iVBOR", "mimeType": "image/png"},
                      {"type": "image", "data": "AAAA", "mimeType": "image/png"}]


@pytest.mark.parametrize(("blocks", "words"), [
    ("hi", "non-empty list"),
    ([{"type": "audio", "data": "AA", "mimeType": "audio/wav"}], "prompt[0]: content type 'audio' is not supported"),
    ([{"type": "text", "text": "ok"}, {"type": "image", "mimeType": "image/png"}], "prompt[1]: a image block is missing"),
    ([{"type": "resource", "resource": {"uri": "file:///x"}}], "resource needs text or blob"),
])
def test_bad_blocks_are_invalid_params_naming_the_block(blocks: object, words: str) -> None:
    with pytest.raises(RpcError) as raised:
        prompt_from_blocks(blocks)
    assert raised.value.code == -32602 and words in raised.value.data["details"]


def test_compact_is_recognised_only_as_the_command() -> None:
    assert compact_instructions("/compact") is None
    assert compact_instructions("  /compact focus on the API  ") == "focus on the API"
    assert compact_instructions("/compaction please") is False
    assert compact_instructions("please /compact") is False
