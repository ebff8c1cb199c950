from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pi_tui.core.errors import ToolError
from pi_tui.tools.edit_diff import plan_edit
from pi_tui.tools.edit_match import EditSpec, FuzzyView, LfView, normalize_for_fuzzy_match

_PIECES = ["a", "b", "x", " ", "\t", "\u00a0", "\u2019", "\u201c", "\u2014", "\uff41", "e\u0301", "\u3000", "'"]
_content = st.lists(st.sampled_from(_PIECES), max_size=12).map("".join)


@given(st.lists(_content, min_size=1, max_size=8), st.data(), st.sampled_from(["\n", "\r\n"]))
def test_an_edit_changes_only_its_region(contents, data, newline):
    lines = [f"<{k}>{body}" for k, body in enumerate(contents)]
    target = data.draw(st.integers(0, len(lines) - 1))
    original = newline.join(lines)
    old_text = normalize_for_fuzzy_match(lines[target])
    planned = plan_edit(original.encode(), [EditSpec(old_text, "NEW")], "f.txt")
    line = lines[target]
    trailing = line[len(line.rstrip()) :]
    expected = newline.join([*lines[:target], "NEW" + trailing, *lines[target + 1 :]])
    assert planned.new_original == expected


@given(st.lists(_content, min_size=1, max_size=6).map("\n".join))
def test_fuzzy_view_text_is_pis_normalization(text):
    view = FuzzyView.of(text)
    assert view.text == normalize_for_fuzzy_match(text)
    for offset in range(len(view.text)):
        start, end = view.to_lf_region(offset, offset + 1)
        assert 0 <= start < end <= len(text)


def test_lf_view_maps_crlf_offsets_back():
    view = LfView.of("a\r\nb\rc\r\nd")
    assert view.text == "a\nb\nc\nd"
    assert [view.to_original(i) for i in range(len(view.text) + 1)] == [0, 1, 3, 4, 5, 6, 8, 9]


def test_overlap_detected_on_original_regions():
    with pytest.raises(ToolError, match="overlap"):
        plan_edit("x \u2014 y z".encode(), [EditSpec("x - y", "1"), EditSpec("y z", "2")], "f")
