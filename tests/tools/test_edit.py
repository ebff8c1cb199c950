from __future__ import annotations

import asyncio
import json
import os

import pytest

from pi_tui.core.errors import ToolError
from pi_tui.core.tool import ToolContext, ToolResult
from pi_tui.tools.edit import EditTool, prepare_edit_arguments

from .helpers import text


async def edit(ctx: ToolContext, path: str, *pairs: tuple[str, str], **extra) -> ToolResult:
    args = {"path": path, **extra}
    if pairs:
        args["edits"] = [{"oldText": old, "newText": new} for old, new in pairs]
    return await EditTool().execute("call", args, ctx)


async def test_replaces_and_returns_a_diff(ctx):
    (ctx.cwd / "a.py").write_text("one\ntwo\nthree\n")
    result = await edit(ctx, "a.py", ("two", "TWO"))
    assert text(result) == "Successfully replaced 1 block(s) in a.py."
    assert (ctx.cwd / "a.py").read_text() == "one\nTWO\nthree\n"
    assert result.details == {"diff": " 1 one\n-2 two\n+2 TWO\n 3 three\n 4 ", "firstChangedLine": 2}


async def test_legacy_old_text_new_text_still_works(ctx):
    (ctx.cwd / "a.txt").write_text("hello world")
    result = await EditTool().execute("c", {"path": "a.txt", "oldText": "world", "newText": "there"}, ctx)
    assert text(result) == "Successfully replaced 1 block(s) in a.txt."
    assert (ctx.cwd / "a.txt").read_text() == "hello there"


def test_argument_shim_parses_string_edits_and_appends_legacy_pair():
    prepared = prepare_edit_arguments({
        "path": "x", "edits": json.dumps([{"oldText": "a", "newText": "b"}]), "oldText": "c", "newText": "d",
    })
    assert prepared == {"path": "x", "edits": [{"oldText": "a", "newText": "b"}, {"oldText": "c", "newText": "d"}]}


def test_the_loop_hook_is_the_shim():
    assert EditTool().prepare_arguments({"path": "p", "oldText": "a", "newText": "b"}) == {
        "path": "p", "edits": [{"oldText": "a", "newText": "b"}],
    }


async def test_several_disjoint_edits_match_the_original(ctx):
    (ctx.cwd / "m.txt").write_text("alpha\nbeta\ngamma\n")
    # the second oldText would not exist after an incremental application of the first
    result = await edit(ctx, "m.txt", ("alpha", "beta"), ("beta", "BETA"), ("gamma", "G"))
    assert text(result) == "Successfully replaced 3 block(s) in m.txt."
    assert (ctx.cwd / "m.txt").read_text() == "beta\nBETA\nG\n"


async def test_not_found_and_duplicate_errors(ctx):
    (ctx.cwd / "d.txt").write_text("x = 1\nx = 1\ny = 2\n")
    with pytest.raises(ToolError) as error:
        await edit(ctx, "d.txt", ("zzz", "a"))
    assert str(error.value) == (
        "Could not find the exact text in d.txt. The old text must match exactly including all whitespace and newlines."
    )
    with pytest.raises(ToolError) as error:
        await edit(ctx, "d.txt", ("x = 1", "x = 3"))
    assert str(error.value) == (
        "Found 2 occurrences of the text in d.txt. The text must be unique. Please provide more context to make it unique."
    )
    with pytest.raises(ToolError) as error:
        await edit(ctx, "d.txt", ("y = 2", "y = 3"), ("x = 1", "x = 4"))
    assert str(error.value) == (
        "Found 2 occurrences of edits[1] in d.txt. Each oldText must be unique. Please provide more context to make it unique."
    )
    with pytest.raises(ToolError, match=r"^Could not find edits\[1\] in d\.txt\. The oldText must match"):
        await edit(ctx, "d.txt", ("y = 2", "y = 3"), ("nope", "x"))
    assert (ctx.cwd / "d.txt").read_text() == "x = 1\nx = 1\ny = 2\n"


async def test_overlapping_and_duplicate_edits_are_rejected(ctx):
    (ctx.cwd / "o.txt").write_text("abcdef\n")
    with pytest.raises(ToolError) as error:
        await edit(ctx, "o.txt", ("cdef", "X"), ("abcd", "Y"))
    assert str(error.value) == "edits[1] and edits[0] overlap in o.txt. Merge them into one edit or target disjoint regions."
    with pytest.raises(ToolError, match=r"^edits\[0\] and edits\[1\] overlap in o\.txt\."):
        await edit(ctx, "o.txt", ("bcd", "1"), ("bcd", "2"))
    assert (ctx.cwd / "o.txt").read_text() == "abcdef\n"


async def test_empty_inputs_and_no_change(ctx):
    (ctx.cwd / "e.txt").write_text("same")
    with pytest.raises(ToolError, match=r"^Edit tool input is invalid\. edits must contain at least one replacement\.$"):
        await edit(ctx, "e.txt", edits=[])
    with pytest.raises(ToolError, match=r"^oldText must not be empty in e\.txt\.$"):
        await edit(ctx, "e.txt", ("", "x"))
    with pytest.raises(ToolError, match=r"^edits\[1\]\.oldText must not be empty in e\.txt\.$"):
        await edit(ctx, "e.txt", ("same", "x"), ("", "y"))
    with pytest.raises(ToolError, match=r"^No changes made to e\.txt\. The replacement produced identical content\. This might"):
        await edit(ctx, "e.txt", ("same", "same"))
    with pytest.raises(ToolError, match=r"^No changes made to e\.txt\. The replacements produced identical content\.$"):
        await edit(ctx, "e.txt", ("sa", "sa"), ("me", "me"))


async def test_missing_file_reports_the_error_code(ctx):
    with pytest.raises(ToolError, match=r"^Could not edit file: missing\.txt\. Error code: ENOENT\.$"):
        await edit(ctx, "missing.txt", ("a", "b"))


async def test_invalid_edit_entries_are_named(ctx):
    (ctx.cwd / "v.txt").write_text("a")
    with pytest.raises(ToolError, match=r"edits\.0\.newText: must have required properties newText"):
        await EditTool().execute("c", {"path": "v.txt", "edits": [{"oldText": "a"}]}, ctx)


@pytest.mark.parametrize(
    ("content", "old", "new", "expected"),
    [
        ("value = 1   \nnext\n", "value = 1\nnext", "value = 2\nnext", "value = 2\nnext\n"),  # trailing ws
        ("say(\u201chello\u201d)\n", 'say("hello")', 'say("bye")', 'say("bye")\n'),  # smart double quotes
        ("it\u2019s here\n", "it's here", "it is here", "it is here\n"),  # smart single quote
        ("a \u2014 b\n", "a - b", "a to b", "a to b\n"),  # em dash
        ("x\u00a0= 1\n", "x = 1", "x = 2", "x = 2\n"),  # NBSP
        ("\uff41\uff42\uff43 = 1\n", "abc = 1", "abc = 2", "abc = 2\n"),  # fullwidth (NFKC)
    ],
)
async def test_fuzzy_matches(ctx, content, old, new, expected):
    (ctx.cwd / "f.txt").write_text(content, encoding="utf-8")
    await edit(ctx, "f.txt", (old, new))
    assert (ctx.cwd / "f.txt").read_text(encoding="utf-8") == expected


async def test_fuzzy_edit_leaves_every_other_byte_identical(ctx):
    before = "top  \n\u201cquoted\u201d line   \ntarget \u2014 here  \nmiddle\t\n\u2018keep\u2019 me \nend"
    (ctx.cwd / "keep.txt").write_text(before, encoding="utf-8")
    await edit(ctx, "keep.txt", ("target - here", "TARGET"))
    after = (ctx.cwd / "keep.txt").read_text(encoding="utf-8")
    assert after == before.replace("target \u2014 here", "TARGET")  # pi would strip and straighten everything


async def test_exact_match_is_preferred_and_duplicates_count_after_normalization(ctx):
    (ctx.cwd / "p.txt").write_text("it's\nit\u2019s x\n", encoding="utf-8")
    with pytest.raises(ToolError, match="Found 2 occurrences"):
        await edit(ctx, "p.txt", ("it's", "it is"))
    (ctx.cwd / "q.txt").write_text("say 'a'\nsay \u2018b\u2019\n", encoding="utf-8")
    await edit(ctx, "q.txt", ("say 'a'", "said 'a'"))
    assert (ctx.cwd / "q.txt").read_text(encoding="utf-8") == "said 'a'\nsay \u2018b\u2019\n"


async def test_crlf_file_matched_with_lf_old_text_keeps_crlf(ctx):
    (ctx.cwd / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await edit(ctx, "w.txt", ("one\ntwo", "uno\ndos"))
    assert (ctx.cwd / "w.txt").read_bytes() == b"uno\r\ndos\r\nthree\r\n"


async def test_lf_file_stays_lf(ctx):
    (ctx.cwd / "l.txt").write_bytes(b"a\nb\n")
    await edit(ctx, "l.txt", ("a\r\nb", "x\r\ny"))
    assert (ctx.cwd / "l.txt").read_bytes() == b"x\ny\n"


async def test_bom_is_preserved(ctx):
    (ctx.cwd / "bom.txt").write_bytes(b"\xef\xbb\xbfhello\r\nworld\r\n")
    await edit(ctx, "bom.txt", ("world", "there"))
    assert (ctx.cwd / "bom.txt").read_bytes() == b"\xef\xbb\xbfhello\r\nthere\r\n"


async def test_mixed_line_endings_outside_the_edit_are_untouched(ctx):
    (ctx.cwd / "mix.txt").write_bytes(b"a\r\nb\nc\rd\r\n")
    await edit(ctx, "mix.txt", ("b", "B"))
    assert (ctx.cwd / "mix.txt").read_bytes() == b"a\r\nB\nc\rd\r\n"


async def test_fuzzy_edit_in_crlf_bom_file(ctx):
    (ctx.cwd / "fw.txt").write_bytes("\ufeffx = \u201cy\u201d  \r\nz\r\n".encode())
    await edit(ctx, "fw.txt", ('x = "y"\nz', 'x = "q"\nz'))
    assert (ctx.cwd / "fw.txt").read_bytes() == '\ufeffx = "q"\r\nz\r\n'.encode()


async def test_non_utf8_file_is_refused_untouched(ctx):
    raw = b"caf\xe9 latin-1\n"
    (ctx.cwd / "l1.txt").write_bytes(raw)
    with pytest.raises(ToolError, match=r"^Could not edit file: l1\.txt\. It is not valid UTF-8"):
        await edit(ctx, "l1.txt", ("latin", "LATIN"))
    assert (ctx.cwd / "l1.txt").read_bytes() == raw


async def test_unicode_and_spaced_paths(ctx):
    folder = ctx.cwd / "dir with space" / "ünï"
    folder.mkdir(parents=True)
    (folder / "fïle name.txt").write_text("old")
    result = await edit(ctx, "@dir\u00a0with space/ünï/fïle name.txt", ("old", "new"))
    assert text(result) == "Successfully replaced 1 block(s) in @dir\u00a0with space/ünï/fïle name.txt."
    assert (folder / "fïle name.txt").read_text() == "new"


async def test_parallel_edits_of_one_file_are_serialized(ctx):
    path = ctx.cwd / "s.txt"
    path.write_text("".join(f"line{i}\n" for i in range(20)))
    await asyncio.gather(*(edit(ctx, "s.txt", (f"line{i}\n", f"LINE{i}\n")) for i in range(20)))
    assert path.read_text() == "".join(f"LINE{i}\n" for i in range(20))


async def test_file_mode_is_kept(ctx):
    path = ctx.cwd / "run.sh"
    path.write_text("echo a\n")
    path.chmod(0o755)
    await edit(ctx, "run.sh", ("a", "b"))
    assert os.stat(path).st_mode & 0o777 == 0o755
