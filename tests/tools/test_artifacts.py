from __future__ import annotations

from pathlib import Path

from pi_tui.core.messages import ToolResultMessage
from pi_tui.core.tool import ToolContext
from pi_tui.tools.artifacts import (
    PREVIEW_BYTES,
    apply_artifacts,
    head_preview,
    tail_preview,
)
from pi_tui.tools.read import ReadTool

from .helpers import text


def result(call_id: str, body: str, **extra) -> ToolResultMessage:
    message: ToolResultMessage = {
        "role": "toolResult", "toolCallId": call_id, "toolName": "ext_tool",
        "content": [{"type": "text", "text": body}], "isError": False, "timestamp": 1,
    }
    message.update(extra)  # type: ignore[typeddict-item]
    return message


def content_text(message: ToolResultMessage) -> str:
    return "".join(b["text"] for b in message["content"] if b["type"] == "text")


def test_exactly_30000_bytes_stays_inline_30001_is_saved(tmp_path: Path):
    at_limit = result("a", "x" * 30_000)
    over = result("b", "y" * 30_001)
    out, events = apply_artifacts([at_limit, over], artifact_dir=tmp_path, strategy="pipeline")
    assert out[0] is at_limit
    assert [e["toolCallId"] for e in events] == ["b"]
    event = events[0]
    assert event["type"] == "artifact_saved" and event["originalBytes"] == 30_001
    saved = Path(event["path"])
    assert saved.parent == tmp_path and saved.read_text() == "y" * 30_001
    reference = out[1]["details"]["artifact"]
    assert reference == {"path": saved.name, "original_bytes": 30_001}
    body = content_text(out[1])
    assert saved.name in body and "original_bytes=30001" in body and str(saved) in body
    assert len(body.encode()) < 5_000
    assert over["content"][0]["text"] == "y" * 30_001  # the input is not modified


def test_multibyte_character_size_counts_in_bytes(tmp_path: Path):
    # 10,000 three-byte characters = 30,000 bytes (inline); one more byte tips it over
    _, events = apply_artifacts([result("a", "€" * 10_000)], artifact_dir=tmp_path, strategy="pipeline")
    assert events == []
    _, events = apply_artifacts([result("a", "€" * 10_000 + "!")], artifact_dir=tmp_path, strategy="pipeline")
    assert len(events) == 1


def test_turn_budget_saves_largest_first_until_within_200000(tmp_path: Path):
    sizes = {"a": 29_000, "b": 28_000, "c": 27_000, "d": 26_000, "e": 25_000, "f": 24_000, "g": 23_000, "h": 22_000}
    results = [result(k, "z" * v) for k, v in sizes.items()]  # total 204,000, each under 30,000
    out, events = apply_artifacts(results, artifact_dir=tmp_path, strategy="pipeline")
    assert [e["toolCallId"] for e in events] == ["a"]  # 204,000 - 29,000 = 175,000 ≤ 200,000
    sizes_after = [len(content_text(m).encode()) for m in out]
    assert sum(sizes_after) <= 200_000 + 5_000


def test_budget_of_exactly_200000_is_fine(tmp_path: Path):
    results = [result(str(i), "q" * 25_000) for i in range(8)]  # exactly 200,000
    _, events = apply_artifacts(results, artifact_dir=tmp_path, strategy="pipeline")
    assert events == []
    results.append(result("extra", "q"))
    _, events = apply_artifacts(results, artifact_dir=tmp_path, strategy="pipeline")
    assert [e["toolCallId"] for e in events] == ["0"]  # ties: the earliest of the largest


def test_previews_cut_on_whole_characters():
    data = ("a" + "€" * 1000).encode()  # 1 + 3,000 bytes; byte 2,000 falls inside a €
    head = head_preview(data)
    assert head == "a" + "€" * 666 and len(head.encode()) == 1999
    tail = tail_preview(data)
    assert tail == "€" * 666 and len(tail.encode()) == 1998
    assert len(head_preview(("😀" * 600).encode()).encode()) == 2000
    assert PREVIEW_BYTES == 2000


def test_reference_and_previews_in_the_replaced_result(tmp_path: Path):
    body = "HEAD" + "m" * 40_000 + "TAIL"
    out, _ = apply_artifacts([result("a", body, details={"exitCode": 0})], artifact_dir=tmp_path, strategy="pipeline")
    replaced = content_text(out[0])
    assert "HEAD" in replaced and "TAIL" in replaced
    assert out[0]["details"]["exitCode"] == 0  # the tool's own details survive
    assert out[0]["toolCallId"] == "a" and out[0]["isError"] is False


def test_pi_strategy_catches_only_what_exceeds_pi_limits(tmp_path: Path):
    builtin_sized = result("read", "r" * 51_200 + "\n\n[Showing lines 1-900 of 5000. Use offset=901 to continue.]")
    huge = result("ext", "e" * 5_000_000)
    medium = result("mid", "m" * 40_000)
    bash_sized = result("bash", "\n".join("l" for _ in range(2000)) + "\n\n[Showing lines 1-2000 of 9000. Full output: x]")
    many_lines = result("lines", "\n".join("l" for _ in range(2006)))
    out, events = apply_artifacts([builtin_sized, huge, medium, bash_sized, many_lines], artifact_dir=tmp_path, strategy="pi")
    assert [e["toolCallId"] for e in events] == ["ext", "lines"]
    assert out[0] is builtin_sized and out[2] is medium and out[3] is bash_sized


def test_images_are_kept_and_only_text_is_saved(tmp_path: Path):
    message = result("img", "t" * 40_000)
    message["content"].append({"type": "image", "data": "AAAA", "mimeType": "image/png"})
    out, events = apply_artifacts([message], artifact_dir=tmp_path, strategy="pipeline")
    assert out[0]["content"][-1] == {"type": "image", "data": "AAAA", "mimeType": "image/png"}
    assert Path(events[0]["path"]).read_text() == "t" * 40_000


def test_already_saved_results_are_not_saved_twice(tmp_path: Path):
    out, _ = apply_artifacts([result("a", "x" * 50_000)], artifact_dir=tmp_path, strategy="pipeline")
    again, events = apply_artifacts(out, artifact_dir=tmp_path, strategy="pipeline")
    assert events == [] and again[0] is out[0]


def test_no_artifact_dir_uses_a_temp_folder():
    _, events = apply_artifacts([result("a", "x" * 40_000)], artifact_dir=None, strategy="pipeline")
    assert Path(events[0]["path"]).read_text() == "x" * 40_000


async def test_the_model_can_read_an_artifact_back(tmp_path: Path):
    body = "\n".join(f"row {i}" for i in range(10_000))
    _, events = apply_artifacts([result("a", body)], artifact_dir=tmp_path, strategy="pipeline")
    ctx = ToolContext(cwd=tmp_path / "elsewhere")
    page = await ReadTool().execute("r", {"path": events[0]["path"], "offset": 5001, "limit": 3}, ctx)
    assert text(page) == "row 5000\nrow 5001\nrow 5002\n\n[4997 more lines in file. Use offset=5004 to continue.]"


def test_the_30000_byte_boundary_counts_content_not_the_separator_between_blocks(tmp_path: Path):
    """Two 15,000-byte text blocks are 30,000 bytes of content: inline (the newline that joins
    them in an artifact file made it 30,001 and saved it)."""
    two_blocks = result("a", "x" * 15_000)
    two_blocks["content"] = [{"type": "text", "text": "x" * 15_000}, {"type": "text", "text": "y" * 15_000}]
    out, events = apply_artifacts([two_blocks], artifact_dir=tmp_path, strategy="pipeline")
    assert events == [] and out[0] is two_blocks
    two_blocks["content"].append({"type": "text", "text": "z"})
    _, events = apply_artifacts([two_blocks], artifact_dir=tmp_path, strategy="pipeline")
    assert [e["toolCallId"] for e in events] == ["a"]


def test_results_already_recorded_in_the_turn_count_towards_its_budget(tmp_path: Path):
    """Sequential execution records one result at a time: the earlier ones of the same turn
    can no longer be saved, but they count, so the newest is saved once the turn would go past
    200,000 bytes inline."""
    recorded = [result(str(i), "r" * 29_000) for i in range(6)]  # 174,000 inline
    out, events = apply_artifacts([result("6", "s" * 29_000)], artifact_dir=tmp_path, strategy="pipeline",
                                  recorded=recorded)
    assert [e["toolCallId"] for e in events] == ["6"]
    saved_reference = out[0]
    _, events = apply_artifacts([result("5b", "s" * 26_000)], artifact_dir=tmp_path, strategy="pipeline",
                                recorded=[*recorded, saved_reference])  # 174,000 + 26,000 = 200,000: fine
    assert events == []
