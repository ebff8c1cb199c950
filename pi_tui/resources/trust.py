"""Project trust: a repository's code runs only once the user has trusted that project.

A clone the user merely opens is untrusted. In it, these are *code* — they run on the user's
machine with the user's permissions — and are skipped until the project is trusted:

* ``.pi/extensions/*.py`` (and packages), imported at startup;
* paths in the project ``.pi/settings.json`` ``extensions`` list;
* ``shellPath`` and ``shellCommandPrefix`` in the project ``.pi/settings.json``, which run with
  every ``bash`` command.

Project settings that reach outside the repository are held back the same way (``PROJECT_GATED_KEYS``,
docs/settings.md): ``sessionDir`` (a clone could have the user's conversations written into
itself, to be committed and pushed, or anywhere else), and ``skills`` / ``prompts`` entries that
resolve outside the project — through ``..``, an absolute path or a symlink — which would read
the user's other files into the model's context. Entries inside the project stay allowed, like
the project's own ``.pi/skills`` and ``.pi/prompts``.

The project's AGENTS.md/CLAUDE.md, SYSTEM.md, APPEND_SYSTEM.md, prompts and skills are text the
model reads, not code: they load either way (the TUI says when a project SYSTEM.md replaced the
system prompt) — unless one is a symlink leading out of the repository (``AGENTS.md ->
~/.ssh/id_ed25519``), which would send the user's own file to the model with every request: such
a link is held back until the project is trusted (``context_files.links_out_of_project``).

A project is trusted when any of these holds, first match wins:

1. ``--trust-project`` (this run only) — or the SDK's ``trust_project=True``;
2. the *global* setting ``trustedProjects`` lists its folder or a parent folder (a project's own
   settings cannot trust itself);
3. the user answered the TUI's dialog with "trust" — remembered in
   ``<agentDir>/trusted-projects.json``, keyed by the project's real path, together with the code
   that was shown, by path or value (not content: README, "Project trust"). Code that appears later
   (a new extension after ``git pull``) is not covered:
   the TUI asks again, other modes skip it until then.

"Not now" is remembered as well, so the dialog comes once per project; ``/trust`` reopens it.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pi_tui.resources.context_files import links_out_of_project
from pi_tui.resources.locations import expand_home, project_dir

TRUST_FILE = "trusted-projects.json"
TRUSTED_PROJECTS_SETTING = "trustedProjects"
PROJECT_CODE_KEYS = ("extensions", "shellPath", "shellCommandPrefix")
"""Project settings keys that make pi-tui run something: ignored until the project is trusted."""
PROJECT_GATED_KEYS = (*PROJECT_CODE_KEYS, "sessionDir")
"""Every project key ignored whole until the project is trusted (``sessionDir``: where the user's
conversations are written)."""
PROJECT_PATH_KEYS = ("skills", "prompts")
"""Project keys listing paths: the entries outside the project are ignored until it is trusted."""

GLOBAL_ONLY_KEYS = (TRUSTED_PROJECTS_SETTING, "shellEnvPassthrough", "notifyCommand")
"""Keys a project file may not set, trusted or not: trust itself, which secret environment
variables reach shell commands (``tools/shell.py``), and the program run for a desktop
notification (``notifyCommand``: it would run whenever a run ends while you look elsewhere)."""

CodeKind = Literal["extension", "settings extension", "shellPath", "shellCommandPrefix", "sessionDir", "outside path",
                   "outside link", "mcp server"]


@dataclass(frozen=True, slots=True)
class ProjectCode:
    """One thing in a project that would run code."""

    kind: CodeKind
    where: str
    """Relative to the project: ``.pi/extensions/x.py`` or ``.pi/settings.json``."""
    value: str
    """What runs: the extension's path, the shell program, the prefix's text."""

    def describe(self) -> str:
        if self.kind == "extension":
            return f"{self.where} — a Python extension, imported at startup"
        if self.kind == "settings extension":
            return f'{self.where} "extensions": {self.value} — a Python extension, imported at startup'
        if self.kind == "shellPath":
            return f'{self.where} "shellPath": {self.value} — every bash command runs through this program'
        if self.kind == "sessionDir":
            return f'{self.where} "sessionDir": {self.value} — your session files would be written there'
        if self.kind == "outside path":
            key, _, path = self.value.partition(": ")
            return (f'{self.where} "{key}": {path} — outside this project; its files would be read into the '
                    "model's context")
        if self.kind == "mcp server":  # value: "name: runs `cmd args` in cwd with env A, B" (pi_tui/mcp/setup.py)
            return f"{self.where} MCP server {self.value}"
        if self.kind == "outside link":
            return (f"{self.where} -> {self.value} — a link out of this project; that file would be sent to the "
                    "model with every request")
        return f'{self.where} "shellCommandPrefix": {_one_line(self.value)} — runs before every bash command'

    def key(self) -> str:
        return f"{self.kind}:{self.where}:{self.value}"


def _one_line(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return json.dumps(flat if len(flat) <= limit else flat[: limit - 1] + "…", ensure_ascii=False)


def extension_entries(directory: Path) -> list[Path]:
    """Extension candidates directly inside an ``extensions/`` folder (``*.py`` files and folders
    with an ``__init__.py``), sorted by name; dot and underscore names are skipped."""
    if not directory.is_dir():
        return []
    found: list[Path] = []
    for child in sorted(directory.iterdir(), key=lambda p: p.name):
        if child.name.startswith((".", "_")):
            continue
        if (child.is_file() and child.suffix == ".py") or (child.is_dir() and (child / "__init__.py").is_file()):
            found.append(child)
    return found


def find_project_code(cwd: Path, project_settings: Mapping[str, Any]) -> list[ProjectCode]:
    """Everything in ``cwd``'s project that would run code, in load order."""
    base = project_dir(cwd)
    settings_where = f"{base.name}/settings.json"
    found = [ProjectCode("extension", str(path.relative_to(cwd)), str(path))
             for path in extension_entries(base / "extensions")]
    entries = project_settings.get("extensions")
    if isinstance(entries, list):
        for entry in entries:
            if isinstance(entry, str) and entry.strip():
                found.append(ProjectCode("settings extension", settings_where, entry.strip()))
    for key in ("shellPath", "shellCommandPrefix", "sessionDir"):
        value = project_settings.get(key)
        if isinstance(value, str) and value:
            found.append(ProjectCode(key, settings_where, value))
    for key in PROJECT_PATH_KEYS:
        entries = project_settings.get(key)
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, str) and entry.strip() and outside_project(entry.strip(), base, cwd):
                found.append(ProjectCode("outside path", settings_where, f"{key}: {entry.strip()}"))
    found += [ProjectCode("outside link", os.path.relpath(link, cwd.absolute()), real)
              for link, real in links_out_of_project(cwd)]
    return found


def outside_project(entry: str, settings_dir: Path, project: Path) -> bool:
    """Whether a path from the project's settings (relative to its ``.pi`` folder, ``~``
    expanded) leads outside ``project`` once ``..`` and symlinks are resolved."""
    path = expand_home(entry)
    real = os.path.realpath(path if path.is_absolute() else settings_dir / path)
    root = os.path.realpath(project)
    return not (real == root or real.startswith(root.rstrip(os.sep) + os.sep))


def project_key(cwd: Path) -> str:
    """The project's identity: its real path (symlinks and ``..`` resolved)."""
    return os.path.realpath(cwd)


@dataclass(slots=True)
class ProjectTrust:
    """The trust decision for one run."""

    project: str
    trusted: bool
    reason: str
    """Why, for the user: ``--trust-project``, ``the trustedProjects setting``, …"""
    code: list[ProjectCode] = field(default_factory=list)
    decided: bool = True
    """False when nobody has answered for this project's current code (the TUI asks)."""
    new_code: list[ProjectCode] = field(default_factory=list)
    """Code the remembered answer did not cover (appeared after it)."""

    @property
    def skipped(self) -> list[ProjectCode]:
        return [] if self.trusted else list(self.code)

    def report(self) -> list[str]:
        """What was loaded or skipped, and why: one line per item after a heading."""
        if not self.code:
            return []
        if self.trusted:
            head = f"Project code loaded ({self.project} is trusted: {self.reason}):"
        else:
            head = (f"Project code NOT loaded ({self.project} is not trusted: {self.reason}). "
                    "Trust it with --trust-project, /trust in the TUI, or the trustedProjects setting:")
        return [head, *(f"  {item.describe()}" for item in self.code)]


class TrustStore:
    """``<agentDir>/trusted-projects.json``: ``{"projects": {realpath: {"trusted": bool,
    "decidedAt": iso, "code": [keys]}}}``. A damaged file counts as empty (every project asks
    again) and is only replaced by the next answer."""

    def __init__(self, agent_dir: Path) -> None:
        self.path = agent_dir / TRUST_FILE

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):  # (RecursionError: nested too deeply)
            return {}
        projects = data.get("projects") if isinstance(data, dict) else None
        return projects if isinstance(projects, dict) else {}

    def lookup(self, project: str) -> dict[str, Any] | None:
        entry = self._read().get(project)
        return entry if isinstance(entry, dict) and isinstance(entry.get("trusted"), bool) else None

    def remember(self, project: str, trusted: bool, code: Sequence[ProjectCode]) -> None:
        projects = self._read()
        projects[project] = {
            "trusted": trusted,
            "decidedAt": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "code": [item.key() for item in code],
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"projects": projects}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        with contextlib.suppress(OSError):
            os.chmod(tmp, 0o600)
        os.replace(tmp, self.path)


def _listed_in_setting(project: str, entries: Any) -> str | None:
    if not isinstance(entries, list):
        return None
    for entry in entries:
        if not isinstance(entry, str) or not entry.strip():
            continue
        folder = os.path.realpath(expand_home(entry.strip()))
        if project == folder or project.startswith(folder.rstrip(os.sep) + os.sep):
            return entry.strip()
    return None


def resolve_project_trust(
    cwd: Path,
    agent_dir: Path,
    *,
    project_settings: Mapping[str, Any],
    global_settings: Mapping[str, Any],
    flag: bool | None = None,
    extra_code: Sequence[ProjectCode] = (),
) -> ProjectTrust:
    """Decide whether ``cwd``'s project code may run (see the module docstring for the order).
    ``extra_code``: what rooms above find (a project's MCP servers, ``pi_tui/mcp/setup.py``)."""
    project = project_key(cwd)
    code = [*find_project_code(cwd, project_settings), *extra_code]
    if flag is not None:
        return ProjectTrust(project, flag, "--trust-project" if flag else "trust turned off for this run", code)
    listed = _listed_in_setting(project, global_settings.get(TRUSTED_PROJECTS_SETTING))
    if listed is not None:
        return ProjectTrust(project, True, f"listed in the trustedProjects setting as {listed}", code)
    stored = TrustStore(agent_dir).lookup(project)
    if stored is None:
        return ProjectTrust(project, False, "nobody has trusted it yet", code, decided=not code)
    decided_at, keys = stored.get("decidedAt"), stored.get("code")
    when = decided_at[:10] if isinstance(decided_at, str) else "an unknown date"
    covered = {k for k in keys if isinstance(k, str)} if isinstance(keys, list) else set()  # a damaged entry covers nothing
    new = [item for item in code if item.key() not in covered]
    if not stored["trusted"]:
        return ProjectTrust(project, False, f"you chose 'not now' on {when}", code)
    if new:
        return ProjectTrust(project, False, "it has code you have not trusted yet (added after you trusted it on "
                            f"{when})", code, decided=False, new_code=new)
    return ProjectTrust(project, True, f"you trusted it on {when}", code)
