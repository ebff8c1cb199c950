"""The private snapshot store: a git directory pi-tui owns, driven by plumbing, never the user's.

One store per project (the cwd's real path) under ``<agentDir>/checkpoints/``. Its index file is
kept between snapshots, so an unchanged tree costs one stat pass (``add -u``), one walk for new
files (``ls-files -o``, sped up by git's untracked cache) and a ``write-tree`` that answers from
the cache tree. Every git call runs with an environment of our own: no system or global config,
no hooks, no fsmonitor, no signing, no end-of-line or filter conversion, a fixed author, and
``GIT_DIR`` always pointing at the store — the user's ``.git`` is never named, so never written.

Sessions of one project share the store; a file lock (``pi-tui.lock``) serializes them, and
while it is held any ``index.lock`` left behind is stale (only pi-tui uses this index) and is
removed. Every call has a deadline: past it the git process is killed and ``SnapshotTimeout``
raised, so a huge tree costs a skipped snapshot, never a frozen turn.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import stat
import subprocess
import threading
import time
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pi_tui.checkpoints.in_the_way import in_the_way
from pi_tui.checkpoints.scan_limits import ScanLimits, exclude_text, select_new_files, user_git_dir
from pi_tui.core.exit_cleanup import at_exit

AUTHOR = ("pi-tui checkpoints", "checkpoints@pi-tui.invalid")
PACK_AT = 200
"""From this many new files on, their contents go into one pack first (``_pack_new_files``)."""
PACK_BATCH = 5000
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_GITLINK = "160000"
_ATTRIBUTES = "* -text -filter -ident -working-tree-encoding -eol\n"
"""What git reads from the store's ``info/attributes`` (which outranks the project's
``.gitattributes``): bytes are stored and restored exactly as they are on disk."""


class CheckpointError(Exception):
    """A snapshot or restore could not be done; the message says what and why."""


class SnapshotTimeout(CheckpointError):
    def __init__(self, message: str, *, left: int = 0) -> None:
        super().__init__(message)
        self.left = left
        """New files not yet in the store's index when time ran out (the rest are kept)."""


class GitMissing(CheckpointError):
    pass


@dataclass(frozen=True, slots=True)
class Changes:
    """What moving the files from one snapshot to another does, by path (relative, '/'-separated)."""

    changed: tuple[str, ...] = ()
    created: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    """(A restore's result) paths it left as they are: ``in_the_way``, or asked to leave."""

    @property
    def empty(self) -> bool:
        return not (self.changed or self.created or self.deleted)

    @property
    def count(self) -> int:
        return len(self.changed) + len(self.created) + len(self.deleted)

    def as_dict(self, limit: int | None = None) -> dict[str, list[str]]:
        end = limit if limit is not None else None
        return {"changed": list(self.changed[:end]), "created": list(self.created[:end]),
                "deleted": list(self.deleted[:end])}


@dataclass(frozen=True, slots=True)
class TreeSnapshot:
    tree: str
    ms: int
    skipped: tuple[str, ...] = ()
    """Paths left out and why (``name (why)``): large files, crowded folders, nested repositories."""
    notes: tuple[str, ...] = field(default=())
    """Things that happened on the way (a stale lock removed)."""


def store_dir_for(agent_dir: Path, project: Path) -> Path:
    """``<agentDir>/checkpoints/<name>-<hash of the real path>``: one store per project."""
    real = os.path.realpath(project)
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in Path(real).name)[:40] or "root"
    return agent_dir / "checkpoints" / f"{name}-{digest}"


def git_available() -> str | None:
    return shutil.which("git")


class GitStore:
    def __init__(self, store: Path, work_tree: Path, limits: ScanLimits, *, excluded: Sequence[Path] = ()) -> None:
        self.store = store
        self.work_tree = Path(os.path.realpath(work_tree))
        self.limits = limits
        self._excluded = [Path(os.path.realpath(p)) for p in excluded]
        self._user_git = user_git_dir(self.work_tree)
        self._env: dict[str, str] | None = None
        self._exclude_written: str | None = None

    # ------------------------------------------------------------------ running git

    def _environment(self) -> dict[str, str]:
        if self._env is None:
            env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
            env.update({
                "GIT_DIR": str(self.store), "GIT_WORK_TREE": str(self.work_tree),
                "GIT_INDEX_FILE": str(self.store / "index"),
                "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_ATTR_NOSYSTEM": "1",
                "GIT_AUTHOR_NAME": AUTHOR[0], "GIT_AUTHOR_EMAIL": AUTHOR[1],
                "GIT_COMMITTER_NAME": AUTHOR[0], "GIT_COMMITTER_EMAIL": AUTHOR[1],
                "GIT_TERMINAL_PROMPT": "0", "GIT_LITERAL_PATHSPECS": "1", "LC_ALL": "C",
            })
            self._env = env
        return self._env

    def git(self, *args: str, stdin: bytes | None = None, deadline: float, check: bool = True) -> bytes:
        env = self._environment()
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise SnapshotTimeout("time limit reached")
        try:
            process = subprocess.Popen(
                ["git", *args], stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=self.work_tree, env=env,
            )
        except FileNotFoundError as err:
            raise GitMissing("git is not on PATH") from err
        with _running(process):
            try:
                out, err_text = process.communicate(stdin, timeout=remaining)
            except subprocess.TimeoutExpired as err:
                process.kill()
                process.communicate()
                raise SnapshotTimeout(f"git {args[0]} did not finish in time") from err
        if check and process.returncode != 0:
            text = err_text.decode("utf-8", "replace").strip().splitlines()
            raise CheckpointError(f"git {args[0]} failed: {text[-1] if text else f'exit {process.returncode}'}")
        return out

    # ------------------------------------------------------------------ the store itself

    def ensure(self, deadline: float) -> None:
        if (self.store / "HEAD").is_file():
            return
        # What ``git init --bare`` makes, written directly (one git process less per new store).
        for folder in ("objects/info", "objects/pack", "refs/heads", "refs/tags", "info"):
            (self.store / folder).mkdir(parents=True, exist_ok=True)
        (self.store / "config").write_text(self._config_text(), encoding="utf-8")
        (self.store / "info" / "attributes").write_text(_ATTRIBUTES, encoding="utf-8")
        (self.store / "project").write_text(str(self.work_tree) + "\n", encoding="utf-8", errors="surrogateescape")
        (self.store / "HEAD").write_text("ref: refs/heads/main\n", encoding="ascii")  # last: marks it complete

    def _config_text(self) -> str:
        excludes = str(self._user_git / "info" / "exclude") if self._user_git is not None else os.devnull
        return "\n".join([
            "[core]", "\trepositoryformatversion = 0", "\tbare = false", "\tfilemode = true",
            "\tsymlinks = true", "\tignorecase = false", "\tprecomposeunicode = false",
            "\tlogallrefupdates = false", f"\thooksPath = {os.devnull}", "\tfsmonitor = false",
            "\tuntrackedCache = true", "\tautocrlf = false", "\tsafecrlf = false", "\tpreloadIndex = true",
            "\tsplitIndex = false", f"\texcludesFile = {_quoted(excludes)}", f"\tattributesFile = {os.devnull}",
            "[index]", "\tversion = 4", "[commit]", "\tgpgSign = false", "[tag]", "\tgpgSign = false",
            "[gc]", "\tauto = 0", "\tpackRefs = false", "[maintenance]", "\tauto = false",
            "[advice]", "\taddEmbeddedRepo = false", "\tdetachedHead = false",
            "[user]", f"\tname = {AUTHOR[0]}", f"\temail = {AUTHOR[1]}", "",
        ])

    @contextlib.contextmanager
    def locked(self, deadline: float) -> Iterator[list[str]]:
        """Hold the store's lock (other sessions of this project wait); yields a list of notes."""
        with store_lock(self.store, deadline) as notes:
            yield notes

    # ------------------------------------------------------------------ snapshot

    def snapshot(self, deadline: float) -> TreeSnapshot:
        """Bring the store's index up to the working tree and write its tree."""
        started = time.monotonic()
        with self.locked(deadline) as notes:
            self.ensure(deadline)
            self._write_excludes()
            listed = self.git("ls-files", "-z", "--others", "--exclude-standard", deadline=deadline)
            new = [p for p in listed.decode("utf-8", "surrogateescape").split("\0") if p]
            chosen, skipped = select_new_files(self.work_tree, new, self.limits)
            self.git("add", "-u", deadline=deadline)
            self._add_new_files(chosen, deadline)
            tree = self.git("write-tree", deadline=deadline).decode().strip()
        return TreeSnapshot(tree=tree, ms=int((time.monotonic() - started) * 1000), skipped=tuple(skipped),
                            notes=tuple(notes))

    def _add_new_files(self, chosen: Sequence[str], deadline: float) -> None:
        """Into the index in batches, each kept once done: a snapshot past its time (the first one
        of a huge tree) leaves the files it reached in the index and the store, so the next
        snapshot goes on from there instead of hashing everything again."""
        done = 0
        try:
            for start in range(0, len(chosen), PACK_BATCH):
                batch = chosen[start:start + PACK_BATCH]
                if len(batch) >= PACK_AT:
                    self._pack_new_files(batch, deadline)
                payload = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in batch)
                self.git("update-index", "--add", "-z", "--stdin", stdin=payload, deadline=deadline)
                done += len(batch)
        except SnapshotTimeout as err:
            raise SnapshotTimeout(f"{err}; {done} of {len(chosen)} new files stored so far", left=len(chosen) - done) from err

    def _pack_new_files(self, paths: Sequence[str], deadline: float) -> None:
        """Write many new files' contents as one pack (``fast-import``) before ``update-index``,
        which then finds every object present: one loose object file per file costs ~1 ms each
        on a slow file system (10,000 files: 9 s → 1 s). Only regular files are read here."""
        process = subprocess.Popen(["git", "fast-import", "--quiet"], stdin=subprocess.PIPE,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=self.work_tree,
                                   env=self._environment())
        assert process.stdin is not None
        with _running(process):
            self._feed(process, paths, deadline)

    def _feed(self, process: subprocess.Popen[bytes], paths: Sequence[str], deadline: float) -> None:
        assert process.stdin is not None
        try:
            for path in paths:
                if time.monotonic() >= deadline:
                    raise SnapshotTimeout("git fast-import did not finish in time")
                full = os.path.join(self.work_tree, path)
                try:
                    if not stat.S_ISREG(os.lstat(full).st_mode):
                        continue
                    with open(full, "rb") as handle:
                        data = handle.read()
                except OSError:
                    continue  # gone or unreadable: update-index reports it
                process.stdin.write(b"blob\ndata %d\n" % len(data) + data + b"\n")
            process.stdin.close()
            process.wait(timeout=max(0.01, deadline - time.monotonic()))
        except (subprocess.TimeoutExpired, BrokenPipeError, SnapshotTimeout) as err:
            process.kill()
            process.wait()
            if isinstance(err, BrokenPipeError):
                return  # fast-import failed: update-index writes the objects one by one instead
            raise SnapshotTimeout("git fast-import did not finish in time") from err

    def _write_excludes(self) -> None:
        text = exclude_text(self.work_tree, self._user_git is not None, self._excluded)
        if text == self._exclude_written:
            return
        path = self.store / "info" / "exclude"
        path.parent.mkdir(exist_ok=True)
        if not path.is_file() or path.read_text(encoding="utf-8", errors="surrogateescape") != text:
            path.write_text(text, encoding="utf-8", errors="surrogateescape")
        self._exclude_written = text

    def commit(self, tree: str, parents: Sequence[str], message: str, deadline: float) -> str:
        args = ["commit-tree", tree, "-m", message]
        for parent in parents:
            args += ["-p", parent]
        return self.git(*args, deadline=deadline).decode().strip()

    def keep(self, ref: str, commit: str, deadline: float) -> None:
        """Keep ``commit`` reachable: one ref per snapshot under the session's ``ref`` folder
        (``refs/pi-tui/sessions/<id>/<commit>``), written as git writes a loose ref — no git
        process per snapshot; deleting a session's snapshots is deleting that folder."""
        with self.locked(deadline):
            path = self.store / ref / commit
            path.parent.mkdir(parents=True, exist_ok=True)
            scratch = path.with_name(path.name + ".lock")
            scratch.write_text(commit + "\n", encoding="ascii")
            os.replace(scratch, path)

    def keep_present(self, ref: str, commits: Sequence[str], deadline: float) -> None:
        """``keep`` each of ``commits`` that is in the store and not yet under ``ref`` (a ref to a
        missing object would break every later gc of the store)."""
        wanted = [c for c in dict.fromkeys(commits) if not (self.store / ref / c).is_file()]
        if not wanted or not (self.store / "HEAD").is_file():
            return
        payload = "".join(f"{c}\n" for c in wanted).encode("ascii")
        out = self.git("cat-file", "--batch-check", stdin=payload, deadline=deadline).decode().split("\n")
        for parts in (line.split(" ") for line in out):
            if len(parts) > 1 and parts[1] == "commit":
                self.keep(ref, parts[0], deadline)

    def set_ref(self, ref: str, sha: str, deadline: float) -> None:
        """Point ``ref`` at any object (a tree held back, not yet committed), so that a gc of the
        store never drops it."""
        with self.locked(deadline):
            path = self.store / ref
            path.parent.mkdir(parents=True, exist_ok=True)
            scratch = path.with_name(path.name + ".lock")
            scratch.write_text(sha + "\n", encoding="ascii")
            os.replace(scratch, path)

    def delete_ref(self, ref: str, deadline: float) -> None:
        with self.locked(deadline):
            (self.store / ref).unlink(missing_ok=True)

    def tree_exists(self, sha: str, deadline: float) -> bool:
        if not (self.store / "HEAD").is_file():
            return False
        remaining = max(0.01, deadline - time.monotonic())
        done = subprocess.run(["git", "cat-file", "-e", f"{sha}^{{tree}}"], cwd=self.work_tree,
                              env=self._environment(), capture_output=True, timeout=remaining, check=False)
        return done.returncode == 0

    # ------------------------------------------------------------------ comparing and restoring

    def diff(self, old_tree: str, new_tree: str, deadline: float) -> Changes:
        if old_tree == new_tree:
            return Changes()
        raw = self.git("diff-tree", "-r", "-z", "--no-renames", old_tree, new_tree, deadline=deadline)
        changed: list[str] = []
        created: list[str] = []
        deleted: list[str] = []
        for old_mode, new_mode, status, path in _raw_records(raw):
            if _GITLINK in (old_mode, new_mode):
                continue  # a nested repository: left alone
            {"A": created, "D": deleted}.get(status, changed).append(path)
        return Changes(tuple(changed), tuple(created), tuple(deleted))

    def restore(self, current_tree: str, target_tree: str, deadline: float, leave: Collection[str] = ()) -> Changes:
        """Make the working tree's snapshotted files those of ``target_tree``. Only paths that differ
        between the two snapshots are written or deleted: files no snapshot knew (ignored, skipped,
        new since ``current_tree`` was taken) are never touched. Paths in ``leave``, and those where
        something of the user's no snapshot holds is in the way (``in_the_way``), are left as they
        are and returned as ``kept``."""
        changes = self.diff(current_tree, target_tree, deadline)
        if changes.empty:
            return changes
        with self.locked(deadline):
            left = set(leave)
            deleted = [p for p in changes.deleted if p not in left]
            for path in deleted:
                self._remove(path)
            self._remove_emptied_folders(deleted)
            left.update(in_the_way(self.work_tree, changes.created, changes.changed))
            writes = [p for p in (*changes.changed, *changes.created) if p not in left]
            for path in writes:
                full = self.work_tree / path
                if full.is_symlink() or full.exists():
                    full.unlink()
            if writes:
                payload = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in writes)
                self.git("checkout", target_tree, "--pathspec-from-file=-", "--pathspec-file-nul",
                         stdin=payload, deadline=deadline)
        return Changes(tuple(p for p in changes.changed if p not in left),
                       tuple(p for p in changes.created if p not in left), tuple(deleted),
                       tuple(p for p in (*changes.changed, *changes.created, *changes.deleted) if p in left))

    def _remove(self, path: str) -> None:
        full = self.work_tree / path
        if full.is_symlink() or full.is_file():
            full.unlink()

    def _remove_emptied_folders(self, deleted: Sequence[str]) -> None:
        folders = sorted({p.parent for d in deleted for p in [Path(d)] if str(p.parent) != "."},
                         key=lambda p: len(p.parts), reverse=True)
        for folder in folders:
            current = folder
            while str(current) != ".":
                try:
                    (self.work_tree / current).rmdir()  # only when empty
                except OSError:
                    break
                current = current.parent


_LIVE: set[subprocess.Popen[bytes]] = set()
_LIVE_LOCK = threading.Lock()


@contextlib.contextmanager
def _running(process: subprocess.Popen[bytes]) -> Iterator[None]:
    with _LIVE_LOCK:
        _LIVE.add(process)
    try:
        yield
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(process)


def _kill_unfinished() -> None:
    """At exit, a git of ours still running (a background fill, a snapshot left in a daemon
    thread) is killed: as an orphan it would keep writing the store's index while the next
    session, holding the lock, takes its ``index.lock`` for a stale one."""
    with _LIVE_LOCK:
        for process in list(_LIVE):
            with contextlib.suppress(OSError):
                process.kill()


at_exit(_kill_unfinished)


@contextlib.contextmanager
def store_lock(store: Path, deadline: float) -> Iterator[list[str]]:
    """The lock every writer of ``store`` holds (``<store>.lock`` beside it): snapshots, restores
    and a gc after a session was deleted. Past ``deadline`` without it: ``SnapshotTimeout``.
    While it is held no git of ours runs in the store, so an ``index.lock`` is stale: removed
    (the yielded notes say so)."""
    store.mkdir(parents=True, exist_ok=True)
    notes: list[str] = []
    with open(store.parent / f"{store.name}.lock", "a+b") as handle:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise SnapshotTimeout("another pi-tui session of this project held the store") from None
                time.sleep(0.01)
        try:
            stale = store / "index.lock"
            if stale.exists():  # we hold the lock, so no git of ours is running: left by a killed one
                stale.unlink(missing_ok=True)
                notes.append("removed a stale index.lock left by an interrupted snapshot")
            yield notes
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _raw_records(raw: bytes) -> Iterator[tuple[str, str, str, str]]:
    parts = raw.decode("utf-8", "surrogateescape").split("\0")
    i = 0
    while i + 1 < len(parts):
        meta = parts[i]
        if not meta.startswith(":"):
            i += 1
            continue
        old_mode, new_mode, _old, _new, status = meta[1:].split(" ")
        yield old_mode, new_mode, status[:1], parts[i + 1]
        i += 2


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
