"""Every reader of a session file, driven on one file: what the fuzz tests run per example.

Each call is the real code a user reaches (the loaders, the projection and conversion the
model's request is built from, token estimates, the tree, ``pi-tui context|tree`` in-process,
the session listing, the HTML export, a ``SessionManager`` that opens, appends and closes). None
may raise; all output must be valid JSON / UTF-8.
"""

from __future__ import annotations

import io
import json
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

from pi_tui.cli import main
from pi_tui.core.context.convert import convert_to_llm
from pi_tui.core.messages import empty_usage
from pi_tui.core.session.listing import session_info
from pi_tui.core.session.loading import LoadedSession, load_session_readonly
from pi_tui.core.session.manager import SessionManager
from pi_tui.core.session.projection import build_session_context
from pi_tui.core.session.tree import build_tree, index_entries, path_to, replay_labels
from pi_tui.core.tokens import estimate_context_tokens, estimate_tokens
from pi_tui.modes.export_html import render_session_html
from pi_tui.modes.inspect_format import describe_entry, render_message, render_tree

MAX_LEAVES = 12


def strict_json(value: Any) -> str:
    """JSON as a provider, RPC client or browser would need it: no NaN, encodable as UTF-8."""
    text = json.dumps(value, allow_nan=False, ensure_ascii=False)
    text.encode("utf-8")
    return text


def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def project_everywhere(loaded: LoadedSession) -> None:
    """The context from the last entry and from up to ``MAX_LEAVES`` others, as the model gets it."""
    entries = loaded.entries
    by_id = index_entries(entries)
    leaves: list[Any] = [None, *[e["id"] for e in entries[-MAX_LEAVES:]]]
    for leaf in leaves:
        context = build_session_context(entries, leaf if leaf is not None else entries[-1]["id"] if entries else None,
                                        by_id=by_id)
        estimate_context_tokens(context.messages)
        for block_images in (False, True):
            llm = convert_to_llm(context.messages, block_images=block_images)
            strict_json(llm)
            for number, message in enumerate(llm, start=1):
                "\n".join(render_message(number, message, estimate_tokens(message))).encode("utf-8")
        if leaf is not None:
            branch = path_to(by_id, leaf)
            render_session_html(loaded.header, branch, title="t", session_file=loaded.path).encode("utf-8")


def read_everything(path: Path, scratch: Path, printed: list[str] | None = None) -> LoadedSession:
    """Run every reader on ``path`` (unchanged) and on a copy that a manager appends to.
    ``printed`` receives what the ``pi-tui`` commands wrote (for the traceback count)."""
    loaded = load_session_readonly(path)
    project_everywhere(loaded)
    roots = build_tree(loaded.entries, replay_labels(loaded.entries))
    leaf = loaded.entries[-1]["id"] if loaded.entries else None
    "\n".join(render_tree(roots, leaf, set())).encode("utf-8")
    for entry in loaded.entries:
        describe_entry(entry).encode("utf-8")
    for args in (("context", str(path)), ("context", str(path), "--json"), ("tree", str(path))):
        code, out, err = cli(*args)
        if printed is not None:
            printed += [out, err]
        assert code == 0, (args, err)
        assert "Traceback" not in err
        if "--json" in args:
            json.loads(out)
    info = session_info(path)
    assert info is not None
    strict_json(info.to_json())

    copy = scratch / "copy.jsonl"
    shutil.copyfile(path, copy)
    before = copy.read_bytes()
    manager = SessionManager.open(copy, cwd=scratch)
    try:
        manager.get_tree()
        manager.labels()
        strict_json(convert_to_llm(manager.build_session_context().messages))
        manager.append_message({"role": "user", "content": "still works", "timestamp": 1})
        manager.append_message({"role": "assistant", "content": [{"type": "text", "text": "yes"}], "api": "a",
                                "provider": "p", "model": "m", "usage": empty_usage(), "stopReason": "stop",
                                "timestamp": 2})
        migrated = manager.backup_file
    finally:
        manager.close()
    if migrated is not None:  # an older version: rewritten as v3, the original kept beside it
        assert manager.migrated_from is not None and migrated.read_bytes() == before
        migrated.unlink()
    else:
        assert copy.read_bytes().startswith(before)  # appended to, never rewritten
    reopened = load_session_readonly(copy)
    assert len(reopened.entries) == len(loaded.entries) + 2
    copy.unlink()
    return loaded


# --------------------------------------------------------------------------- a fixed damaged file

SAMPLE = [
    ("message", {"role": "user", "content": 42, "timestamp": 1}),
    ("message", {"role": "assistant", "content": "text where blocks belong", "api": "a", "provider": "p",
                 "model": "m", "usage": {"input": "NaN-as-text"}, "stopReason": 3, "timestamp": 1}),
    ("message", {"role": "toolResult", "toolCallId": "c", "toolName": "bash", "content": [{"type": "image"}],
                 "isError": "no", "timestamp": 1}),
    ("message", {"role": "assistant", "content": [{"type": "toolCall", "id": "c", "name": "bash",
                                                   "arguments": "rm -rf /"}], "api": "a", "provider": "p",
                 "model": "m", "usage": None, "stopReason": "toolUse", "timestamp": 10**400}),
    ("label", {"targetId": ["e1"], "label": 5}),
    ("session_info", {"name": {"nested": [[[["garbage"]]]]}}),
    ("model_change", {"provider": None, "modelId": 12}),
    ("custom_message", {"customType": "x", "content": {"type": "text"}, "display": "yes"}),
]


def write_damaged_sample(folder: Path) -> tuple[Path, list[int]]:
    """``folder/sample.jsonl``: a good user message, then one damaged entry of each kind in a chain,
    then a good last message (with a NaN timestamp); returns the path and the damaged lines."""
    header = {"type": "session", "version": 3, "id": "sample", "timestamp": "2026-01-01T00:00:00.000Z",
              "cwd": str(folder)}
    lines = [json.dumps(header),
             json.dumps({"type": "message", "id": "e1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
                         "message": {"role": "user", "content": "hello", "timestamp": 1}})]
    damaged = []
    for index, (kind, payload) in enumerate(SAMPLE):
        entry = {"type": kind, "id": f"d{index}", "parentId": "e1" if index == 0 else f"d{index - 1}",
                 "timestamp": "2026-01-01T00:00:02.000Z"}
        entry |= {"message": payload} if kind == "message" else payload
        lines.append(json.dumps(entry))
        damaged.append(len(lines))
    lines.append('{"type":"message","id":"last","parentId":"d7","timestamp":"2026-01-01T00:00:03.000Z",'
                 '"message":{"role":"user","content":"still here","timestamp":NaN}}')
    damaged.append(len(lines))
    path = folder / "sample.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path, damaged
