from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pi_tui.tools.truncate import (
    format_size,
    tail_of_line_bytes,
    truncate_head,
    truncate_line,
    truncate_tail,
)


def test_format_size_matches_pi():
    assert format_size(0) == "0B"
    assert format_size(1023) == "1023B"
    assert format_size(1024) == "1.0KB"
    assert format_size(51200) == "50.0KB"
    assert format_size(1024 * 1024) == "1.0MB"
    assert format_size(1536 * 1024) == "1.5MB"


def test_head_no_truncation_within_limits():
    result = truncate_head("a\nb\nc", max_lines=3, max_bytes=100)
    assert not result.truncated
    assert result.truncated_by is None
    assert (result.total_lines, result.output_lines, result.total_bytes) == (3, 3, 5)


def test_head_by_lines_and_by_bytes():
    by_lines = truncate_head("\n".join(str(i) for i in range(10)), max_lines=4, max_bytes=1000)
    assert by_lines.content == "0\n1\n2\n3"
    assert by_lines.truncated_by == "lines"
    by_bytes = truncate_head("aaaa\nbbbb\ncccc", max_lines=100, max_bytes=9)
    assert by_bytes.content == "aaaa\nbbbb"  # 4 + 1 + 4 = 9 bytes fits exactly
    assert by_bytes.truncated_by == "bytes"
    assert by_bytes.output_bytes == 9


def test_head_first_line_too_big_gives_empty_content():
    result = truncate_head("x" * 20 + "\nshort", max_bytes=10)
    assert result.first_line_exceeds_limit
    assert result.content == ""
    assert result.output_lines == 0


def test_head_never_cuts_a_multibyte_line():
    line = "é" * 10  # 20 bytes
    result = truncate_head(f"{line}\n{line}", max_bytes=30)
    assert result.content == line


def test_tail_keeps_the_end_and_partial_last_line_on_char_boundary():
    result = truncate_tail("a\nb\nc\nd", max_lines=2)
    assert result.content == "c\nd"
    assert result.truncated_by == "lines"
    partial = truncate_tail("€" * 10, max_bytes=7)  # € is 3 bytes; 7 bytes → 2 whole chars
    assert partial.content == "€€"
    assert partial.last_line_partial
    assert partial.truncated_by == "bytes"


def test_tail_of_line_bytes_never_starts_inside_a_character():
    assert tail_of_line_bytes("a€b", 4) == "€b"
    assert tail_of_line_bytes("a€b", 3) == "b"


def test_truncate_line():
    assert truncate_line("x" * 500) == ("x" * 500, False)
    assert truncate_line("x" * 501) == ("x" * 500 + "... [truncated]", True)


@given(st.text(alphabet=st.sampled_from(["a", "é", "€", "\n", "𝄞"]), max_size=300), st.integers(1, 20), st.integers(1, 80))
def test_head_and_tail_outputs_are_whole_lines_within_limits(content, max_lines, max_bytes):
    for result in (truncate_head(content, max_lines=max_lines, max_bytes=max_bytes),
                   truncate_tail(content, max_lines=max_lines, max_bytes=max_bytes)):
        assert len(result.content.encode()) <= max_bytes or not result.truncated
        assert result.output_lines <= max_lines
        if not result.truncated:
            assert result.content == content
    head = truncate_head(content, max_lines=max_lines, max_bytes=max_bytes)
    assert content.startswith(head.content)
    tail = truncate_tail(content, max_lines=max_lines, max_bytes=max_bytes)
    assert content.endswith(tail.content)
