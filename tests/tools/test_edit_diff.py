from __future__ import annotations

from pi_tui.tools.edit_diff import compute_edit_diff, generate_diff_string


def numbered(count: int) -> list[str]:
    return [f"l{i}" for i in range(1, count + 1)]


def test_single_change_with_four_lines_of_context_and_ellipses():
    old = numbered(20)
    new = list(old)
    new[9] = "CHANGED"
    diff, first = generate_diff_string("\n".join(old), "\n".join(new))
    assert first == 10
    assert diff.split("\n") == [
        "    ...", "  6 l6", "  7 l7", "  8 l8", "  9 l9",
        "-10 l10", "+10 CHANGED",
        " 11 l11", " 12 l12", " 13 l13", " 14 l14", "    ...",
    ]


def test_gap_between_changes_is_whole_up_to_eight_lines_else_collapsed():
    old = numbered(30)
    short = list(old)
    short[1], short[10] = "A", "B"  # 8 unchanged lines between
    diff, _ = generate_diff_string("\n".join(old), "\n".join(short))
    assert "..." not in diff.split("+ 2 A")[1].split("+11 B")[0]
    long = list(old)
    long[1], long[20] = "A", "B"  # 18 unchanged lines between
    diff, _ = generate_diff_string("\n".join(old), "\n".join(long))
    between = diff.split("\n")[diff.split("\n").index("+ 2 A") + 1 : diff.split("\n").index("-21 l21")]
    assert between == ["  3 l3", "  4 l4", "  5 l5", "  6 l6", "    ...", " 17 l17", " 18 l18", " 19 l19", " 20 l20"]


def test_added_lines_use_new_numbers_and_removed_lines_old_numbers():
    diff, first = generate_diff_string("a\nb\nc", "a\nx\ny\nb\nc")
    assert diff.split("\n") == [" 1 a", "+2 x", "+3 y", " 2 b", " 3 c"]
    assert first == 2
    diff, first = generate_diff_string("a\nb\nc", "a\nc")
    assert diff.split("\n") == [" 1 a", "-2 b", " 3 c"]


def test_compute_edit_diff_previews_without_writing(tmp_path):
    path = tmp_path / "p.txt"
    path.write_bytes(b"one\r\ntwo\r\n")
    preview = compute_edit_diff("p.txt", [{"oldText": "two", "newText": "2"}], tmp_path)
    assert preview == {"diff": " 1 one\n-2 two\n+2 2\n 3 ", "firstChangedLine": 2}
    assert path.read_bytes() == b"one\r\ntwo\r\n"
    assert compute_edit_diff("p.txt", [{"oldText": "zzz", "newText": "2"}], tmp_path)["error"].startswith(
        "Could not find the exact text in p.txt."
    )
    assert "error" in compute_edit_diff("missing.txt", [{"oldText": "a", "newText": "b"}], tmp_path)
