"""Strict LF framing (pi's rpc-jsonl cases): split only on LF, strip one trailing CR, keep
U+2028/U+2029 and lone CRs inside payloads, deliver a final record without LF."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from pi_tui.modes.rpc.framing import LineSplitter, encode_frame, split_records


def test_splits_only_on_lf_and_strips_one_trailing_cr() -> None:
    assert split_records(b'{"a":1}\n{"b":2}\r\n') == ['{"a":1}', '{"b":2}']
    assert split_records(b"x\r\r\n") == ["x\r"]


def test_unicode_line_separators_and_inner_cr_stay_in_the_record() -> None:
    data = '{"m":"a\u2028b\u2029c"}\n'.encode()
    (record,) = split_records(data)
    assert json.loads(record)["m"] == "a\u2028b\u2029c"
    odd = "x\ry\x0bz\x0c\x1c\x85w"  # every other thing str.splitlines() would split on
    assert split_records(odd.encode() + b"\n") == [odd]


def test_a_final_record_without_lf_is_delivered() -> None:
    splitter = LineSplitter()
    assert splitter.feed(b'{"a":1}\n{"b"') == ['{"a":1}']
    assert splitter.feed(b":2}") == []
    assert splitter.finish() == '{"b":2}'
    assert splitter.finish() is None


def test_a_character_split_across_reads_is_decoded_whole() -> None:
    data = '{"m":"żółw 🐢"}\n'.encode()
    splitter = LineSplitter()
    records = [r for i in range(len(data)) for r in splitter.feed(data[i:i + 1])]
    assert records == ['{"m":"żółw 🐢"}']


def test_output_frames_are_one_line_and_escape_line_separators() -> None:
    frame = encode_frame({"text": "a\u2028b\u2029c\nd", "lone": "\ud800"})
    assert frame.endswith(b"\n") and frame.count(b"\n") == 1
    assert "\u2028".encode() not in frame and "\u2029".encode() not in frame
    frame.decode("utf-8")  # valid UTF-8 even with a lone surrogate
    assert json.loads(frame) == {"text": "a\u2028b\u2029c\nd", "lone": "\ud800"}


@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=["Cs"])), max_size=6),
       st.lists(st.integers(min_value=1, max_value=7), min_size=1, max_size=5))
def test_any_chunking_gives_the_same_records(texts: list[str], sizes: list[int]) -> None:
    payloads = [json.dumps({"t": t}, ensure_ascii=False) for t in texts]
    data = "\n".join(payloads).encode("utf-8")
    splitter = LineSplitter()
    records: list[str] = []
    position, turn = 0, 0
    while position < len(data):
        size = sizes[turn % len(sizes)]
        records += splitter.feed(data[position:position + size])
        position, turn = position + size, turn + 1
    tail = splitter.finish()
    records += [tail] if tail is not None else []
    assert [json.loads(r)["t"] for r in records] == texts
