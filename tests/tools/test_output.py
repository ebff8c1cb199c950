from __future__ import annotations

from pathlib import Path

from pi_tui.tools.output import TAIL_WINDOW_CHARS, OutputAccumulator


def test_memory_stays_bounded_and_file_is_complete(tmp_path: Path):
    acc = OutputAccumulator(tmp_path)
    chunk = b"".join(b"line %d\n" % i for i in range(10_000))
    for _ in range(50):
        acc.feed(chunk)
        assert len(acc._early) == 0 or acc.full_output_path is None
        assert acc._tail_chars <= 2 * TAIL_WINDOW_CHARS
    acc.finish()
    assert acc.full_output_path is not None
    assert acc.full_output_path.read_bytes() == chunk * 50
    assert acc.total_lines == 500_001
    truncation = acc.truncation()
    assert truncation.total_lines == 500_001 and truncation.truncated


def test_split_utf8_sequences_and_invalid_bytes_are_counted_like_decoded_text(tmp_path: Path):
    acc = OutputAccumulator(tmp_path)
    data = "€".encode()
    acc.feed(data[:1])
    acc.feed(data[1:] + b"\xff")
    acc.finish()
    assert acc.raw_bytes == 4
    assert acc.decoded_bytes == len("€\ufffd".encode())
    assert acc.tail_text() == "€\ufffd"


def test_small_output_never_creates_a_file(tmp_path: Path):
    acc = OutputAccumulator(tmp_path)
    acc.feed(b"hello\n")
    acc.finish()
    assert acc.full_output_path is None and list(tmp_path.iterdir()) == []
