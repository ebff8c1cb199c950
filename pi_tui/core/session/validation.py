"""Checking a loaded session's entries and their tree (pi-behaviour.md §1.2, §1.6).

Runs once per load, after parsing and migration, on every path that reads a session file (open,
resume, ``--fork``, listing, ``pi-tui tree|context``, export). It decides for each problem:

* **repaired in memory**: a field that can be fixed without guessing (a ``parentId`` that is a
  list becomes a root, a text block's ``content`` string becomes a block, ``NaN`` token counts
  become 0, a parent cycle is cut at its oldest entry);
* **replaced by a placeholder**: an entry whose payload cannot be used (a message whose
  ``content`` is a number, a label without a target) keeps its place in the tree as an
  ``invalid_entry`` (same id, parent and timestamp; ``invalidType`` and ``problem`` say what it
  was), so its children still hang where they did, but it never reaches the model;
* **skipped**: an entry nothing can refer to (no string id, or an id already taken).

Every decision is a diagnostic naming the file, the line, the entry and the field. The file
itself is never changed here: it is append-only history, and what was read stays on disk.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_tui.core.messages import THINKING_LEVELS
from pi_tui.core.session.entries import Entry
from pi_tui.core.session.message_checks import (
    Fix,
    Note,
    Unusable,
    check_message,
    describe,
    is_count,
    user_content,
)
from pi_tui.core.session.non_json import clean_non_json
from pi_tui.core.session.well_formed import entry_ok

INVALID_ENTRY = "invalid_entry"
"""The in-memory type of an entry whose payload could not be used (never written by pi-tui
itself, but a fork of a damaged session copies it, so a later load shows the same problem)."""

MAX_LISTED_PROBLEMS = 20
"""Problems listed one by one per file before the rest are counted in one line."""


@dataclass(slots=True)
class Diagnostics:
    """The problems found in one file, each as ``<file>:<line>: <entry>: <problem>``."""

    path: Path
    listed: list[str] = field(default_factory=list)
    count: int = 0

    def add(self, line: int | None, what: str, problem: str) -> None:
        self.count += 1
        if self.count <= MAX_LISTED_PROBLEMS:
            where = f"{self.path}:{line}" if line is not None else str(self.path)
            self.listed.append(f"{where}: {what}: {problem}")

    def warnings(self) -> list[str]:
        extra = self.count - len(self.listed)
        if extra <= 0:
            return list(self.listed)
        return [*self.listed, f"{self.path}: {extra} more problems in entries ({self.count} in total)"]


def entry_name(entry: Entry) -> str:
    """``message entry 1a2b3c4d``: how diagnostics name an entry."""
    kind = entry.get("type")
    entry_id = entry.get("id")
    prefix = f"{kind} entry" if type(kind) is str else "entry"
    return f"{prefix} {entry_id}" if type(entry_id) is str else f"{prefix} without an id"


def placeholder(entry: Entry, problem: str) -> Entry:
    """An ``invalid_entry`` standing in for ``entry`` (same id, parent and timestamp)."""
    kind = entry.get("type")
    return {
        "type": INVALID_ENTRY,
        "id": entry["id"],
        "parentId": entry.get("parentId"),
        "timestamp": entry.get("timestamp", ""),
        "invalidType": kind if type(kind) is str else describe(kind),
        "problem": problem,
    }


# --------------------------------------------------------------------------- payloads by type

Check = Callable[[Entry, Fix, Note], None]
"""Checks one entry type's payload; repairs through ``Fix``; raises ``Unusable``."""


def _required_text(entry: Entry, key: str) -> None:
    if type(entry.get(key)) is not str:
        raise Unusable(f"{key} {'is missing' if key not in entry else 'is ' + describe(entry[key])}, expected text")


def _optional_bool(entry: Entry, key: str, fix: Fix, note: Note) -> None:
    if key in entry and type(entry[key]) is not bool:
        note(f"{key} is {describe(entry[key])}, expected true/false; ignored")
        fix.drop(key)


def _message(entry: Entry, fix: Fix, note: Note) -> None:
    message = entry.get("message")
    checked = check_message(message, note)
    if checked is not message:
        fix.set("message", checked)


def _thinking_level(entry: Entry, fix: Fix, note: Note) -> None:
    _required_text(entry, "thinkingLevel")
    if entry["thinkingLevel"] not in THINKING_LEVELS:
        raise Unusable(f"thinkingLevel {entry['thinkingLevel']!r} is not a thinking level")


def _model_change(entry: Entry, fix: Fix, note: Note) -> None:
    _required_text(entry, "provider")
    _required_text(entry, "modelId")


def _compaction(entry: Entry, fix: Fix, note: Note) -> None:
    _required_text(entry, "summary")
    if type(entry.get("firstKeptEntryId")) is not str:
        what = "is missing" if "firstKeptEntryId" not in entry else f"is {describe(entry['firstKeptEntryId'])}"
        note(f"firstKeptEntryId {what}, expected an entry id; nothing before the compaction is kept")
        fix.set("firstKeptEntryId", "")
    if not is_count(entry.get("tokensBefore")):
        what = "is missing" if "tokensBefore" not in entry else f"is {describe(entry['tokensBefore'])}"
        note(f"tokensBefore {what}, expected a token count; read as 0")
        fix.set("tokensBefore", 0)
    _optional_bool(entry, "fromHook", fix, note)


def _branch_summary(entry: Entry, fix: Fix, note: Note) -> None:
    _required_text(entry, "summary")
    if type(entry.get("fromId")) is not str:
        what = "is missing" if "fromId" not in entry else f"is {describe(entry['fromId'])}"
        note(f"fromId {what}, expected an entry id; read as 'root'")
        fix.set("fromId", "root")
    _optional_bool(entry, "fromHook", fix, note)


def _custom(entry: Entry, fix: Fix, note: Note) -> None:
    _required_text(entry, "customType")


def _custom_message(entry: Entry, fix: Fix, note: Note) -> None:
    _required_text(entry, "customType")
    if "content" not in entry:
        raise Unusable("content is missing, expected text or a list of blocks")
    content = entry["content"]
    checked = user_content(content, note, "content")
    if checked is not content:
        fix.set("content", checked)
    if "display" in entry and type(entry["display"]) is not bool:
        note(f"display is {describe(entry['display'])}, expected true/false; read as true")
        fix.set("display", True)


def _label(entry: Entry, fix: Fix, note: Note) -> None:
    _required_text(entry, "targetId")
    label = entry.get("label")
    if label is not None and type(label) is not str:
        raise Unusable(f"label is {describe(label)}, expected text (or none, to clear)")


def _session_info(entry: Entry, fix: Fix, note: Note) -> None:
    name = entry.get("name")
    if name is not None and type(name) is not str:
        raise Unusable(f"name is {describe(name)}, expected text")


PAYLOAD_CHECKS: dict[str, Check] = {
    "message": _message,
    "thinking_level_change": _thinking_level,
    "model_change": _model_change,
    "compaction": _compaction,
    "branch_summary": _branch_summary,
    "custom": _custom,
    "custom_message": _custom_message,
    "label": _label,
    "session_info": _session_info,
}


# --------------------------------------------------------------------------- one entry


def check_entry(entry: Entry, note: Note, *, suspect: bool = False) -> Entry | None:
    """The entry as it should be used (itself, a repaired copy or a placeholder), or None to skip.

    ``suspect``: the strict parser refused the line, so it may hold NaN/Infinity or a lone
    surrogate. Typed fields report NaN as they are checked; whatever is left (in tool call
    arguments, ``details``, ``data``, any text) is then cleaned, so nothing that cannot be
    written as JSON or UTF-8 travels on to the model, the terminal or an export.
    """
    checked = _check_fields(entry, note)
    if suspect and checked is not None:
        numbers: list[str] = []
        texts: list[str] = []
        checked = clean_non_json(checked, "entry", numbers, texts)
        if numbers:
            note(f"holds NaN/Infinity (not JSON) at {_fields(numbers)}; read as null")
        if texts:
            note(f"holds text with a lone surrogate (not Unicode) at {_fields(texts)}; replaced by U+FFFD")
    return checked


def _fields(paths: list[str]) -> str:
    shown = ", ".join(path.split(".", 1)[-1] for path in paths[:5])
    return shown + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")


def _check_fields(entry: Entry, note: Note) -> Entry | None:
    if type(entry.get("id")) is not str:
        note(f"id {'is missing' if 'id' not in entry else 'is ' + describe(entry['id'])}, expected text; "
             "entry skipped (nothing can refer to it)")
        return None
    fix = Fix(entry)
    parent = entry.get("parentId", ...)
    if parent is not None and type(parent) is not str:
        what = "is missing" if parent is ... else f"is {describe(parent)}"
        note(f"parentId {what}, expected an entry id or null; shown as a root")
        fix.set("parentId", None)
    if type(entry.get("timestamp")) is not str:
        what = "is missing" if "timestamp" not in entry else f"is {describe(entry['timestamp'])}"
        note(f"timestamp {what}, expected an ISO date; read as ''")
        fix.set("timestamp", "")
    kind = entry.get("type")
    if type(kind) is not str:
        problem = f"type {'is missing' if 'type' not in entry else 'is ' + describe(kind)}, expected text"
        note(f"{problem}; kept in the tree, left out of the context")
        return placeholder(fix.result(), problem)
    check = PAYLOAD_CHECKS.get(kind)
    if check is None:
        return fix.result()  # a type from a newer version: kept as it is, as pi does
    try:
        check(entry, fix, note)
    except Unusable as unusable:
        note(f"{unusable}; kept in the tree, left out of the context")
        return placeholder(fix.result(), str(unusable))
    return fix.result()


# --------------------------------------------------------------------------- the whole file


def check_header(header: Entry, diagnostics: Diagnostics, *, suspect: bool = False) -> Entry:
    if suspect:
        numbers: list[str] = []
        texts: list[str] = []
        header = clean_non_json(header, "header", numbers, texts)
        if numbers or texts:
            diagnostics.add(1, "session header", f"holds NaN/Infinity or a lone surrogate at {_fields(numbers + texts)}; "
                                                 "read as null / U+FFFD")
    fix = Fix(header)
    for key in ("cwd", "timestamp"):
        if type(header.get(key)) is not str:
            what = "is missing" if key not in header else f"is {describe(header[key])}"
            diagnostics.add(1, "session header", f"{key} {what}, expected text; read as ''")
            fix.set(key, "")
    if "parentSession" in header and type(header["parentSession"]) is not str:
        diagnostics.add(1, "session header", f"parentSession is {describe(header['parentSession'])}, expected a path; ignored")
        fix.drop("parentSession")
    return fix.result()


@dataclass(slots=True)
class CheckedEntries:
    """What ``check_entries`` decided, with what it learned on the way, so that no one walks the
    100,000 entries again to learn it."""

    entries: list[Entry]
    """The tree entries to use (repaired copies where the file is damaged)."""
    by_id: dict[str, Entry]
    """id -> entry of ``entries``."""
    irregular: list[int]
    """Positions in ``entries`` of every entry that is not a well-formed message of the common
    roles (labels, session names, compactions, custom entries, repaired ones...): the entries
    whose kind matters to the session manager, found without looking at the others."""


def check_entries(entries: list[Entry], lines: list[int], diagnostics: Diagnostics,
                  suspect_lines: frozenset[int] = frozenset(), well_formed: memoryview | None = None) -> CheckedEntries:
    """Tree entries (no header) as they should be used; ``lines[i]`` is entry i's line number.

    One pass (this runs on every load of a 100,000-entry session): the common case, a message
    entry whose base fields and message are well formed, is recognised inline without building
    anything; everything else takes ``check_entry``. Parents are resolved on the way: appends
    always follow an earlier entry, so only the few entries whose parent is not seen yet (missing,
    itself, or later in the file: the only way to a cycle) are looked at again at the end. When
    nothing needs replacing, the result's ``entries`` is ``entries`` itself. ``well_formed[i]`` is entry i's
    ``entry_ok`` when it was answered already, while the file was read (``well_formed.Admission``).
    """
    position: dict[str, int] = {}
    by_id: dict[str, Entry] = {}
    unresolved: list[int] = []
    compactions: list[int] = []
    irregular: list[int] = []
    replaced: dict[int, Entry | None] = {}  # index -> what to use instead (None: skip)
    for index, entry in enumerate(entries):
        entry_id: Any = entry.get("id")  # a str once the checks below passed
        parent = entry.get("parentId")
        compaction = False
        used = entry
        regular = ((well_formed[index] if well_formed is not None else entry_ok(entry))
                   and not (suspect_lines and lines[index] in suspect_lines))
        if not regular:
            line = lines[index]

            def note(problem: str, line: int = line, entry: Entry = entry) -> None:
                diagnostics.add(line, entry_name(entry), problem)

            good = check_entry(entry, note, suspect=line in suspect_lines)
            if good is None:
                replaced[index] = None
                continue
            if good is not entry:
                replaced[index] = used = good
            entry_id = good["id"]
            parent = good["parentId"]
            compaction = good["type"] == "compaction"
        if entry_id in position:
            first = lines[position[entry_id]]
            diagnostics.add(lines[index], entry_name(entry), f"id {entry_id} is already used by line {first}; entry skipped")
            replaced[index] = None
            continue
        if parent is not None and parent not in position:
            unresolved.append(index)
        if compaction:
            compactions.append(index)
        if not regular:
            irregular.append(index)
        position[entry_id] = index
        by_id[entry_id] = used
    if not replaced:
        checked = check_structure(entries, lines, position, diagnostics, unresolved, compactions, by_id)
        return CheckedEntries(checked, by_id, irregular)
    # something was skipped or replaced (rare): build the list to use, indexes renumbered
    kept: list[Entry] = []
    kept_lines: list[int] = []
    renumber: dict[int, int] = {}
    for index, entry in enumerate(entries):
        use = replaced.get(index, entry)
        if use is None:
            continue
        renumber[index] = len(kept)
        kept.append(use)
        kept_lines.append(lines[index])
    position = {entry_id: renumber[index] for entry_id, index in position.items()}
    checked = check_structure(kept, kept_lines, position, diagnostics, [renumber[i] for i in unresolved],
                              [renumber[i] for i in compactions], by_id)
    return CheckedEntries(checked, by_id, [renumber[i] for i in irregular])


def check_structure(entries: list[Entry], lines: list[int], position: dict[str, int], diagnostics: Diagnostics,
                    unresolved: list[int], compactions: list[int], by_id: dict[str, Entry]) -> list[Entry]:
    """Parents that are missing, the entry itself, or part of a cycle (which would hide every
    entry of the cycle and below from the tree): reported; a self-parent or a cycle is cut so
    the entry becomes a root (in memory only; ``by_id`` is given the cut copy). ``position``:
    id -> index in ``entries``; ``unresolved``: the entries whose parent came later in the file
    or not at all."""
    cut: dict[int, str] = {}
    points_forward = False
    for index in unresolved:
        entry = entries[index]
        parent = entry["parentId"]
        at = position.get(parent)
        if at is None:
            diagnostics.add(lines[index], entry_name(entry),
                            f"parent {parent} is not in the file (or was skipped); shown as a root")
        elif at == index:
            cut[index] = "is its own parent; shown as a root"
        else:
            points_forward = True
    if points_forward:
        for index, names in _cycles(entries, position):
            cut[index] = f"is part of a parentId cycle ({' -> '.join(names)}); cut here, shown as a root"
    for index in compactions:
        kept = entries[index].get("firstKeptEntryId")
        if kept and kept not in position:
            diagnostics.add(lines[index], entry_name(entries[index]),
                            f"firstKeptEntryId {kept} is not in the file; nothing before the compaction is kept")
    if not cut:
        return entries
    repaired = list(entries)
    for index in sorted(cut):
        diagnostics.add(lines[index], entry_name(entries[index]), cut[index])
        repaired[index] = by_id[entries[index]["id"]] = {**entries[index], "parentId": None}
    return repaired


def _cycles(entries: list[Entry], position: dict[str, int]) -> list[tuple[int, list[str]]]:
    """Each parent cycle (of two or more entries) once: the position of its oldest entry (where it
    is cut) and the ids around it. Iterative; each entry is walked at most once."""
    state = [0] * len(entries)  # 0 unseen, 1 on the current walk, 2 done
    found: list[tuple[int, list[str]]] = []
    for start in range(len(entries)):
        walk: list[int] = []
        index: int | None = start
        while index is not None and state[index] == 0:
            state[index] = 1
            walk.append(index)
            entry = entries[index]
            parent = entry.get("parentId")
            index = position.get(parent) if type(parent) is str and parent != entry["id"] else None
        if index is not None and state[index] == 1:  # came back to this walk: a cycle
            members = walk[walk.index(index):]
            if len(members) > 1:
                oldest = members.index(min(members))
                ring = members[oldest:] + members[:oldest + 1]  # from the oldest, following parentId
                found.append((ring[0], [entries[i]["id"] for i in ring]))
        for visited in walk:
            state[visited] = 2
    return found
