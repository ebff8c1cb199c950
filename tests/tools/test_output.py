from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pi_tui.tools import output
from pi_tui.tools.output import TAIL_WINDOW_CHARS, OutputAccumulator
from pi_tui.tools.truncate import truncate_tail


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


_pieces = st.sampled_from(["a", "bb", "\n", "é", "€", "x" * 70, "\n\n", "😀"])


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(_pieces, max_size=30).map("".join), max_size=12), st.sampled_from([7, 64, 130]))
def test_bounded_tail_gives_the_same_view_as_the_whole_output(tmp_path, monkeypatch, chunks, step):
    monkeypatch.setattr(output, "TAIL_WINDOW_CHARS", 50)
    spill = tmp_path / f"spill-{step}-{len(chunks)}"
    acc = OutputAccumulator(spill, max_lines=3, max_bytes=20)
    data = "".join(chunks).encode()
    # feed at arbitrary byte boundaries, splitting multi-byte characters
    for start in range(0, len(data), step):
        acc.feed(data[start : start + step])
    acc.finish()
    full = data.decode()
    expected = truncate_tail(full, max_lines=3, max_bytes=20)
    got = acc.truncation()
    assert got.content == expected.content
    assert got.truncated == expected.truncated
    assert got.total_lines == expected.total_lines and got.total_bytes == expected.total_bytes
    if acc.full_output_path is not None:
        assert acc.full_output_path.read_bytes() == data


# --------------------------------------------------------------------------- known keys in the file

KEYS = ["sk-key-0123456789", "sk-key-0123456789-longer-one", "tok-ABCDEFGH"]


def _redacted_file(tmp_path: Path, data: bytes, step: int, keys: list[str] = KEYS) -> bytes:
    acc = OutputAccumulator(tmp_path, max_lines=3, max_bytes=20, secrets=keys)
    for start in range(0, len(data), step):
        acc.feed(data[start : start + step])
    acc.finish()
    assert acc.full_output_path is not None
    return acc.full_output_path.read_bytes()


def test_a_key_split_at_every_byte_boundary_never_reaches_the_file(tmp_path: Path) -> None:
    from pi_tui.core.redact import REDACTED, Redactor

    text = "head\n" * 10 + f"a {KEYS[1]} b {KEYS[0]}\nc{KEYS[2]}{KEYS[2]}\nend {KEYS[0][:-1]}"
    expected = Redactor(KEYS).redact(text).encode()
    assert expected.count(REDACTED.encode()) == 4
    for step in range(1, len(KEYS[1]) + 3):
        for offset in range(step):  # every position of the first split
            folder = tmp_path / f"{step}-{offset}"
            acc = OutputAccumulator(folder, max_lines=3, max_bytes=20, secrets=KEYS)
            data = text.encode()
            acc.feed(data[:offset])
            for start in range(offset, len(data), step):
                acc.feed(data[start : start + step])
            acc.finish()
            assert acc.full_output_path is not None
            assert acc.full_output_path.read_bytes() == expected, (step, offset)


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["a", "\n", "é", "sk-key-", "0123456789", "-longer-one", *KEYS]), min_size=1,
                max_size=40).map("".join), st.integers(1, 40))
def test_the_file_is_the_output_redacted_as_a_whole(tmp_path: Path, text: str, step: int) -> None:
    from pi_tui.core.redact import Redactor

    data = ("x\n" * 30 + text).encode()
    folder = tmp_path / f"{abs(hash((text, step)))}"
    assert _redacted_file(folder, data, step) == Redactor(KEYS).redact(data.decode()).encode()


def test_without_keys_the_file_stays_byte_identical(tmp_path: Path) -> None:
    data = b"\xff\xfe raw " * 100 + KEYS[0].encode()
    assert _redacted_file(tmp_path, data, 7, keys=[]) == data
