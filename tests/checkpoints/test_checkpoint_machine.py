"""A state machine over random model writes, user edits and deletions (between turns), prompts,
navigations with file restores, /undo and gc runs of the store (another session deleted): whatever was on disk when the agent or a restore next
acted — the model's writes and the user's edits alike — is afterwards still on disk or reachable
in the store, so no content anyone wrote is ever lost."""

from __future__ import annotations

import asyncio
import hashlib
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from pi_tui.checkpoints.git_store import store_dir_for
from pi_tui.checkpoints.prune import gc_store
from pi_tui.core.errors import PiError
from pi_tui.sdk import create_agent_session
from pi_tui.session.checkpoint_hooks import undo
from pi_tui.testing.scripted import ScriptedProvider
from tests.checkpoints.conftest import MODEL, needs_git

FILES = ("a.txt", "sub/b.txt", "c d.txt")
STEPS = 40


def _turns() -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for step in range(STEPS):
        for name in FILES:
            marker = f"step-{step}-{name} "
            turns.append({"when": {"last_user_contains": marker},
                          "tool_calls": [{"name": "write", "arguments": {"path": name, "content": f"model {step}\n"}}]})
            turns.append({"when": {"last_user_contains": marker}, "text": "wrote it"})
    return turns


def _blob(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class CheckpointMachine(RuleBasedStateMachine):
    @initialize()
    def start(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.root = Path(tempfile.mkdtemp(prefix="pi-tui-checkpoints-"))
        self.project = self.root / "project"
        self.project.mkdir()
        (self.project / "pre.txt").write_text("was here before\n")
        self.agent = self.root / "agent"
        self.session = create_agent_session(cwd=self.project, agent_dir=self.agent, provider=ScriptedProvider(_turns()),
                                            model=MODEL, settings={}, load_extensions=False)
        self.step = 0
        self.at_risk: dict[str, str] = {}
        """What was on disk before the current action: blob id → where it came from."""
        self.kept: dict[str, str] = {}
        """Contents the store is known to hold."""

    def teardown(self) -> None:
        if hasattr(self, "session"):
            self.session.session_manager.close()
            self.loop.close()

    def _remember_disk(self, why: str) -> None:
        for path in self.project.rglob("*"):
            if path.is_file() and not path.is_symlink():
                self.at_risk.setdefault(_blob(path.read_bytes()), f"{path.relative_to(self.project)} ({why})")

    def _on_disk(self) -> set[str]:
        return {_blob(p.read_bytes()) for p in self.project.rglob("*") if p.is_file() and not p.is_symlink()}

    def _reachable(self) -> set[str]:
        store = store_dir_for(self.agent, self.project)
        if not (store / "HEAD").exists():
            return set()
        listed = subprocess.run(["git", "--git-dir", str(store), "rev-list", "--objects", "--all"],
                                capture_output=True, text=True, check=True).stdout
        return {line.split(" ", 1)[0] for line in listed.splitlines()}

    @rule(name=st.sampled_from(FILES))
    def model_writes(self, name: str) -> None:
        if self.step >= STEPS:
            return
        self._remember_disk("before a prompt")
        self.loop.run_until_complete(self.session.prompt(f"step-{self.step}-{name} please"))
        self.step += 1
        self._check_after("a prompt")
        self._remember_disk("after a turn")

    @rule(name=st.sampled_from(FILES), text=st.text(alphabet="xyz\n", min_size=0, max_size=5))
    def user_edits(self, name: str, text: str) -> None:
        path = self.project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"user {text}")

    @rule(name=st.sampled_from(FILES))
    def user_deletes(self, name: str) -> None:
        (self.project / name).unlink(missing_ok=True)

    @rule(pick=st.integers(min_value=0, max_value=10_000))
    def navigate_restoring(self, pick: int) -> None:
        entries = [e for e in self.session.session_manager.get_entries() if e.get("customType") != "pi-tui.checkpoint"]
        if not entries:
            return
        target = entries[pick % len(entries)]
        self._remember_disk("before a restore")
        try:
            self.loop.run_until_complete(self.session.navigate_tree(target["id"], restore_files=True))
        except PiError as err:
            assert "Cannot restore files" in str(err) or "off" in str(err), err
        self._check_after("a restore")

    @rule()
    def undo_last_prompt(self) -> None:
        self._remember_disk("before /undo")
        try:
            self.loop.run_until_complete(undo(self.session))
        except PiError as err:
            assert "Nothing to undo" in str(err) or "Cannot restore files" in str(err), err
        self._check_after("/undo")

    @rule()
    def another_session_deleted(self) -> None:
        """Some other session of the project was deleted: the store's gc (no grace at all) runs
        between any two actions and must not take anything this session can still restore."""
        store = store_dir_for(self.agent, self.project)
        if (store / "HEAD").exists():
            gc_store(store, grace="now")

    def _check_after(self, action: str) -> None:
        """Right after an action that snapshots or restores: what was on disk before it is still on
        disk or in the store. From then on only what the store holds is tracked (what the user
        later deletes by hand without any snapshot point in between is the user's doing)."""
        reachable = self._reachable()
        lost = [why for blob, why in self.at_risk.items() if blob not in reachable and blob not in self._on_disk()]
        assert not lost, f"unreachable after {action}: {lost}"
        self.kept.update({blob: why for blob, why in self.at_risk.items() if blob in reachable})
        self.at_risk = {}

    @invariant()
    def what_the_store_held_stays_reachable(self) -> None:
        if hasattr(self, "session") and self.kept:
            reachable = self._reachable()
            assert not [why for blob, why in self.kept.items() if blob not in reachable]

    @invariant()
    def the_pre_existing_file_is_never_deleted_unless_restored_away(self) -> None:
        # pre.txt was never touched by anyone: no restore may delete it
        if hasattr(self, "project"):
            assert (self.project / "pre.txt").read_text() == "was here before\n"


CheckpointMachine.TestCase.settings = settings(
    max_examples=12, stateful_step_count=14, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestCheckpointMachine = needs_git(CheckpointMachine.TestCase)
