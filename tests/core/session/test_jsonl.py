"""Parsing: malformed and torn lines are skipped but always reported (file + line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_tui.core.session.jsonl import (
    dump_line,
    parse_session_bytes,
    parse_session_text,
    read_header,
    read_session_file,
)

HEADER = '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}'
ENTRY = '{"type":"custom","customType":"x","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z"}'


def parse(text: str):
    return parse_session_bytes(text.encode(), Path("s.jsonl"))


def test_blank_lines_are_skipped_and_crlf_is_tolerated():
    result = parse(f"\n{HEADER}\r\n\n   \n{ENTRY}\r\n")
    assert [e["type"] for e in result.entries] == ["session", "custom"]
    assert result.warnings == []


def test_malformed_lines_are_counted_and_reported_with_their_line():
    result = parse(f"{HEADER}\n{{broken\n42\n{ENTRY}\n[1]\n")
    assert [e["type"] for e in result.entries] == ["session", "custom"]
    assert result.malformed_lines == [2, 3, 5]
    assert result.warnings == [f"s.jsonl:{n}: malformed line skipped (not a JSON object)" for n in (2, 3, 5)]
    assert not result.torn_last_line


def test_a_torn_last_line_is_reported_as_such():
    result = parse(f"{HEADER}\n{ENTRY}\n{ENTRY[:30]}")
    assert len(result.entries) == 2
    assert result.torn_last_line and not result.ends_with_newline
    assert result.warnings == ["s.jsonl:3: incomplete last line skipped (a write was cut off)"]


def test_many_malformed_lines_are_summarized():
    result = parse(HEADER + "\n" + "nope\n" * 30)
    assert len(result.malformed_lines) == 30
    assert len(result.warnings) == 21
    assert "10 more malformed lines skipped (30 in total)" in result.warnings[-1]


def test_a_file_without_valid_header_yields_nothing():
    assert parse(ENTRY + "\n").entries == []
    assert parse('{"type":"session","id":5}\n').entries == []
    assert parse("").entries == [] and not parse("").has_content
    assert "not a pi session file" in parse("hello\n").warnings[-1]


def test_extra_data_after_an_object_is_malformed():
    result = parse(f'{HEADER}\n{ENTRY} {{"x":1}}\n{ENTRY}  \n')
    assert result.malformed_lines == [2]
    assert len(result.entries) == 2


def test_dump_line_is_compact_utf8_and_escapes_lone_surrogates():
    assert dump_line({"a": "é", "b": [1, None]}) == '{"a":"é","b":[1,null]}\n'
    line = dump_line({"a": "\ud800"})
    line.encode("utf-8")
    assert json.loads(line) == {"a": "\ud800"}


def test_read_header(tmp_path: Path):
    good = tmp_path / "a.jsonl"
    good.write_text(HEADER + "\n" + ENTRY + "\n")
    assert read_header(good)["id"] == "s1"
    bad = tmp_path / "b.jsonl"
    bad.write_text(ENTRY + "\n")
    assert read_header(bad) is None
    assert read_header(tmp_path / "missing.jsonl") is None
    assert read_session_file(good).valid


def _reference(text: str) -> tuple[list[dict], list[int]]:
    """Line by line with json.loads: what the fast parser must agree with."""
    good, bad = [], []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip(" \t\r\f\v"):  # ASCII blanks only, as JS trim() in pi
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            good.append(obj)
        else:
            bad.append(number)
    return good, bad


# Integers past 64 bits load as floats with orjson (as in JavaScript, i.e. as pi reads them).
_objects = st.dictionaries(st.text(max_size=5), st.one_of(st.integers(-(2**63), 2**63 - 1), st.text(max_size=8), st.none()), max_size=3)
_lines = st.one_of(
    _objects.map(lambda o: json.dumps(o, ensure_ascii=False)),
    _objects.map(lambda o: " \t" + json.dumps(o) + " \r"),
    st.text(alphabet=st.characters(blacklist_characters="\n"), max_size=20),
    st.sampled_from(["[]", "1", '"x"', "{", "}", "{}{}", "{} x", "", "   ", "null"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_lines, max_size=12), st.booleans())
def test_the_fast_parser_agrees_with_json_loads_line_by_line(lines: list[str], final_newline: bool):
    body = "\n".join([HEADER, *lines]) + ("\n" if final_newline else "")
    result = parse_session_bytes(body.encode("utf-8", errors="surrogatepass"), Path("p.jsonl"))
    good, bad = _reference(body.encode("utf-8", errors="surrogatepass").decode("utf-8", errors="replace"))
    assert result.entries == good
    assert result.malformed_lines == bad


@settings(max_examples=300, deadline=None)
@given(st.lists(_lines, max_size=12), st.booleans())
def test_the_stdlib_parser_agrees_with_json_loads_line_by_line(lines: list[str], final_newline: bool):
    """The path used when orjson is not installed gives the same entries and reports."""
    body = "\n".join([HEADER, *lines]) + ("\n" if final_newline else "")
    text = body.encode("utf-8", errors="surrogatepass").decode("utf-8", errors="replace")
    result = parse_session_text(text, Path("p.jsonl"))
    good, bad = _reference(text)
    assert result.entries == good
    assert result.malformed_lines == bad


def test_lines_orjson_refuses_still_load_like_pi_wrote_them():
    pytest.importorskip("orjson")
    lines = ['{"type":"custom","customType":"x","data":"\\ud800","id":"a","parentId":null}',
             '{"type":"custom","customType":"x","data":123456789012345678901234567890,"id":"b","parentId":"a"}',
             '{"type":"custom","customType":"x","data":NaN,"id":"c","parentId":"b"}']
    body = "\n".join([HEADER, *lines]) + "\n"
    result = parse_session_bytes(body.encode(), Path("p.jsonl"))
    assert [e.get("id") for e in result.entries[1:]] == ["a", "b", "c"]
    assert result.entries[1]["data"] == "\ud800"
    assert result.entries[2]["data"] == float(123456789012345678901234567890)  # as JSON.parse reads it
    assert result.malformed_lines == []


def _fields(parsed):
    return (parsed.entries, parsed.lines, parsed.warnings, parsed.malformed_lines, parsed.torn_last_line,
            parsed.ends_with_newline, parsed.byte_order_mark, parsed.suspect_lines, parsed.has_content)


@pytest.mark.parametrize("ending", ["\n", "", '\n{"type":"mess'])
@pytest.mark.parametrize("bom", [False, True])
def test_a_large_file_read_in_blocks_parses_as_a_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       ending: str, bom: bool) -> None:
    """Read a few bytes at a time (lines cut across blocks, a line longer than a block, blank
    and malformed lines, an infinite number): the same entries, line numbers and warnings as one read."""
    pytest.importorskip("orjson", reason="blocks are read with orjson only (the default install)")
    import pi_tui.core.session.jsonl as jsonl

    long_entry = json.dumps({"type": "custom", "customType": "x" * 300, "id": "a9", "parentId": "a1",
                             "timestamp": "2026-01-01T00:00:01.000Z"})
    lines = [HEADER, ENTRY, "", "not json", long_entry, "   ", ENTRY.replace('"a1"', '"a2"').replace("null", "1e999")]
    text = ("\ufeff" if bom else "") + "\n".join(lines * 5) + ending
    path = tmp_path / "s.jsonl"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(jsonl, "READ_BLOCK_BYTES", 64)
    whole = parse_session_bytes(path.read_bytes(), path)
    assert _fields(read_session_file(path)) == _fields(whole)
    assert whole.torn_last_line == ending.endswith('mess') and len(whole.entries) == 20


@settings(max_examples=80, deadline=None, derandomize=True)
@given(sizes=st.lists(st.integers(0, 400), min_size=1, max_size=40), block=st.integers(8, 700),
       odd=st.sampled_from(["", "blank", "not json", "[1]", "bom", "crlf"]))
def test_blocks_read_in_place_parse_as_the_whole_file(sizes: list[int], block: int, odd: str) -> None:
    """Each block's whole lines are read where they lie (no copy), the line cut by the block's
    end is completed by the next block's first line: any block size, any line lengths, the same
    result as one read of the whole file, with an odd line anywhere sending a block the slow way."""
    pytest.importorskip("orjson", reason="blocks are read with orjson only (the default install)")
    import tempfile

    import pi_tui.core.session.jsonl as jsonl

    lines = [HEADER] + [ENTRY.replace('"a1"', f'"e{i}"').replace('"x"', json.dumps("y" * size))
                        for i, size in enumerate(sizes)]
    if odd in ("blank", "not json", "[1]"):
        lines.insert(len(lines) // 2 + 1, "" if odd == "blank" else odd)
    newline = "\r\n" if odd == "crlf" else "\n"
    data = (("\ufeff" if odd == "bom" else "") + newline.join(lines) + newline).encode()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        path.write_bytes(data)
        saved = jsonl.READ_BLOCK_BYTES
        jsonl.READ_BLOCK_BYTES = block
        try:
            blocks = read_session_file(path)
        finally:
            jsonl.READ_BLOCK_BYTES = saved
    whole = parse_session_bytes(data, path)
    assert _fields(blocks) == _fields(whole)
    assert len(whole.entries) == len(sizes) + 1


def test_reading_a_large_file_does_not_hold_its_bytes_while_parsing(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Resuming a 100,000-entry session peaked with the file's 75 MB of bytes held on top of its
    entries (issue 19 item 15): they are read a block at a time now (here 256 KB blocks of a
    12 MB file; the real block is 4 MB)."""
    pytest.importorskip("orjson", reason="blocks are read with orjson only (the default install)")
    import tracemalloc

    import pi_tui.core.session.jsonl as jsonl

    monkeypatch.setattr(jsonl, "READ_BLOCK_BYTES", 256 * 1024)

    body = "".join(ENTRY.replace('"a1"', f'"e{i}"').replace('"x"', json.dumps("y" * 900)) + "\n" for i in range(12_000))
    path = tmp_path / "big.jsonl"
    path.write_text(HEADER + "\n" + body)
    size = path.stat().st_size
    tracemalloc.start()
    try:
        parsed = read_session_file(path)
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(parsed.entries) == 12_001
    assert peak - current < size // 2, f"{(peak - current) / 1e6:.1f} MB above the result for a {size / 1e6:.1f} MB file"


def test_the_words_every_entry_repeats_are_one_string_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 100,000-entry session held 44 MB of copies of "message", "assistant", its provider and
    model, block types and tool names (issue 19 item 15). They are shared as the file is read,
    a block at a time, by the entries' fast check (``well_formed.Admission``)."""
    pytest.importorskip("orjson", reason="blocks are read with orjson only (the default install)")
    import pi_tui.core.session.jsonl as jsonl
    from pi_tui.core.session.loading import checked_session, read_session

    monkeypatch.setattr(jsonl, "READ_BLOCK_BYTES", 1024)
    reply = {"type": "message", "id": "", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
             "message": {"role": "assistant", "api": "openai-completions", "provider": "fake", "model": "fake-model",
                         "stopReason": "toolUse", "timestamp": 1767225601000,
                         "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                                   "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                         "content": [{"type": "toolCall", "id": "c", "name": "read", "arguments": {}}]}}
    lines = [HEADER] + [json.dumps({**reply, "id": f"m{i}", "parentId": f"m{i - 1}" if i else None}) for i in range(40)]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    read = read_session(path)
    assert len(read.well_formed) == 41 and all(read.well_formed[1:]) and not read.well_formed[0]
    entries = checked_session(read).entries
    first, last = entries[0], entries[-1]
    assert first["type"] is last["type"]
    for key in ("role", "api", "provider", "model", "stopReason"):
        assert first["message"][key] is last["message"][key], key
    assert first["message"]["content"][0]["name"] is last["message"]["content"][0]["name"]
    assert first["message"]["content"][0]["type"] is last["message"]["content"][0]["type"]


def test_a_block_of_object_lines_is_read_without_the_line_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 19 item 15: the common block (every line an object orjson reads) skips the per-line
    loop, with the same entries, line numbers and flags; any other block still goes through it."""
    pytest.importorskip("orjson")
    import pi_tui.core.session.jsonl as jsonl

    lines = [HEADER, *(ENTRY.replace('"a1"', f'"e{n}"') for n in range(40))]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    reference = parse_session_text(path.read_text(), path)
    loop = jsonl._parse_lines
    calls: list[int] = []
    monkeypatch.setattr(jsonl, "_parse_lines", lambda data, *a, **k: calls.append(len(data)) or loop(data, *a, **k))
    monkeypatch.setattr(jsonl, "READ_BLOCK_BYTES", 256)
    assert _fields(read_session_file(path)) == _fields(reference)
    assert calls == [0]  # only the empty remainder that finishes the read
    path.write_text("\n".join([*lines[:5], "", *lines[5:]]) + "\n", encoding="utf-8")
    calls.clear()
    blank = read_session_file(path)
    assert blank.entries == reference.entries and blank.lines[5] == 7 and calls[0] > 0
