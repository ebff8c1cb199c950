"""``/template`` over RPC ``prompt``: ``/template NAME args`` runs the template as ``/NAME args``
does, ``/template`` alone lists the templates (a ``notify``) without running anything, and a name
that is no template is an error response (never a prompt)."""

from __future__ import annotations

from pathlib import Path

from pi_tui.resources.loader import ResourceOptions, load_resources
from tests.modes.rpc.conftest import ClientFactory
from tests.modes.test_template_command_modes import _greet, _listed


async def test_rpc_template_command(make_client: ClientFactory, project: Path, agent_dir: Path) -> None:
    _greet(project)
    resources = load_resources(project, agent_dir, ResourceOptions())
    client = make_client([{"text": "Hello, Ada!"}], resources=resources)
    listed = await client.request({"id": "l", "type": "prompt", "message": "/template"})
    notices = [f for f in client.frames if f["type"] == "extension_ui_request" and f["method"] == "notify"]
    ran = await client.request({"id": "r", "type": "prompt", "message": "/template greet Ada"})
    await client.wait_for(lambda: "agent_end" in client.types())
    typo = await client.request({"id": "t", "type": "prompt", "message": "/template gret Ada"})
    await client.close()
    assert listed["success"] is True and notices and notices[0]["notifyType"] == "info"
    assert notices[0]["message"].startswith("Prompt templates (/template NAME args… or /NAME args…):\n")
    assert _listed(notices[0]["message"], "/greet <name>", "Greet someone  [project]")
    assert ran["success"] is True
    user = next(f["message"] for f in client.frames if f["type"] == "message_start" and f["message"]["role"] == "user")
    assert user["content"] == [{"type": "text", "text": "Say hello to Ada."}]
    assert typo["success"] is False and typo["error"].startswith("No prompt template named 'gret'. Templates: ")
    assert client.types().count("agent_start") == 1  # neither the list nor the typo ran the agent


async def test_a_template_named_template_wins_as_in_pi(make_client: ClientFactory, project: Path,
                                                      agent_dir: Path) -> None:
    _greet(project)
    (project / ".pi" / "prompts" / "template.md").write_text("Fill in the form for $1.\n")
    resources = load_resources(project, agent_dir, ResourceOptions())
    client = make_client([{"text": "ok"}], resources=resources)
    await client.request({"id": "r", "type": "prompt", "message": "/template greet"})
    await client.wait_for(lambda: "agent_end" in client.types())
    await client.close()
    user = next(f["message"] for f in client.frames if f["type"] == "message_start" and f["message"]["role"] == "user")
    assert user["content"][0]["text"].strip() == "Fill in the form for greet."
