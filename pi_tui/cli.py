"""Command-line entry point: parse arguments, pick a mode, import it lazily.

Nothing heavy is imported here: ``--version`` and ``--help`` must not load litellm or textual.
Each mode lives in ``pi_tui.modes`` and is imported only when chosen.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pi_tui import __version__

SUBCOMMANDS = ("sessions", "tree", "context", "checkpoints")

DESCRIPTION = """\
pi-tui - an interactive terminal coding agent (pi's context management, in Python).

Usage:
  pi-tui [options] [@files...] [messages...]     interactive TUI (default)
  pi-tui -p "prompt" ["prompt 2" ...]            print mode: final answer on stdout
  pi-tui --mode json -p "prompt"                 every event as one JSON line
  pi-tui --mode rpc                              JSON commands on stdin, events on stdout
  pi-tui --mode acp                              Agent Client Protocol agent (Zed, Toad, ...)
  pi-tui sessions [--all] [--json]               list sessions of this directory
  pi-tui tree FILE                               print a session's tree
  pi-tui context FILE [--leaf ID] [--json]       what the model would receive next
"""

EPILOG = """\
Configuration lives in ~/.pi/agent (or $PI_CODING_AGENT_DIR) and ./.pi: settings.json,
models.json, prompts/, skills/, extensions/, AGENTS.md. See README.md and docs/.
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pi-tui",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("-v", "--version", action="version", version=f"pi-tui {__version__}")
    model = p.add_argument_group("model")
    model.add_argument("--provider", help="provider name (models.json or litellm provider)")
    model.add_argument("--model", help="model as provider/id (litellm naming), optionally :thinking")
    model.add_argument("--api-key", dest="api_key", help="API key for this run")
    model.add_argument("--thinking", choices=["off", "minimal", "low", "medium", "high", "xhigh"])
    model.add_argument("--models", help="comma-separated model patterns for cycling")
    model.add_argument("--list-models", dest="list_models", nargs="?", const="", metavar="SEARCH",
                       help="list known models (optionally filtered) and exit")
    prompt = p.add_argument_group("system prompt")
    prompt.add_argument("--system-prompt", dest="system_prompt", metavar="TEXT|FILE")
    prompt.add_argument("--append-system-prompt", dest="append_system_prompt", action="append",
                        metavar="TEXT|FILE", help="repeatable")
    mode = p.add_argument_group("mode")
    mode.add_argument("--mode", choices=["text", "json", "rpc", "acp"], default=None)
    mode.add_argument("-p", "--print", dest="print_mode", action="store_true",
                      help="run the prompts, print the final answer, exit")
    session = p.add_argument_group("session")
    session.add_argument("-c", "--continue", dest="continue_session", action="store_true",
                         help="continue the most recent session of this directory")
    session.add_argument("-r", "--resume", action="store_true", help="pick a session to resume")
    session.add_argument("--session", metavar="PATH|ID", help="open a session file or id prefix")
    session.add_argument("--session-dir", dest="session_dir", metavar="DIR")
    session.add_argument("--no-session", dest="no_session", action="store_true",
                         help="keep the session in memory only")
    session.add_argument("--fork", metavar="PATH|ID", help="copy a session into this directory")
    tools = p.add_argument_group("tools and resources")
    tools.add_argument("-t", "--tools", help="comma-separated allowlist: read,bash,edit,write,grep,find,ls")
    tools.add_argument("-nt", "--no-tools", dest="no_tools", action="store_true")
    tools.add_argument("-nbt", "--no-builtin-tools", dest="no_builtin_tools", action="store_true")
    tools.add_argument("-e", "--extension", dest="extensions", action="append", default=[], metavar="PATH")
    tools.add_argument("-ne", "--no-extensions", dest="no_extensions", action="store_true")
    tools.add_argument("--trust-project", dest="trust_project", action="store_true",
                       help="let this project's code run for this run: .pi/extensions and the project "
                            "settings' extensions, shellPath, shellCommandPrefix (see README: project trust)")
    tools.add_argument("--permission-mode", dest="permission_mode", metavar="MODE",
                       choices=["plan", "default", "acceptEdits", "auto", "dontAsk", "bypassPermissions"],
                       help="plan, default, acceptEdits, auto, dontAsk or bypassPermissions for this run "
                            "(docs/permissions.md)")
    tools.add_argument("--yolo", action="store_true",
                       help="--permission-mode bypassPermissions: no sandbox, no questions (pi's behaviour)")
    tools.add_argument("--mcp-config", dest="mcp_config", action="append", default=[], metavar="FILE",
                       help="MCP servers from this file as well ({\"mcpServers\": …}; docs/mcp.md)")
    tools.add_argument("--skill", dest="skills", action="append", default=[], metavar="PATH")
    tools.add_argument("-ns", "--no-skills", dest="no_skills", action="store_true")
    tools.add_argument("--prompt-template", dest="prompt_templates", action="append", default=[], metavar="PATH")
    tools.add_argument("-np", "--no-prompt-templates", dest="no_prompt_templates", action="store_true")
    tools.add_argument("-nc", "--no-context-files", dest="no_context_files", action="store_true")
    misc = p.add_argument_group("other")
    misc.add_argument("--export", nargs="+", metavar=("SESSION", "OUT"), help="export a session to HTML")
    misc.add_argument("--verbose", action="store_true")
    misc.add_argument("--offline", action="store_true")
    p.add_argument("messages", nargs="*", help="initial messages (@file to inline a file)")
    return p


def build_inspect_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="pi-tui", description="Inspect sessions without a model.")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sessions", help="list sessions of the current directory")
    s.add_argument("--all", action="store_true", help="sessions of every directory")
    s.add_argument("--json", action="store_true")
    s.add_argument("--session-dir", dest="session_dir", metavar="DIR")
    t = sub.add_parser("tree", help="print a session's tree")
    t.add_argument("file")
    c = sub.add_parser("context", help="print what the model would receive next")
    c.add_argument("file")
    c.add_argument("--leaf", metavar="ID")
    c.add_argument("--json", action="store_true")
    k = sub.add_parser("checkpoints", help="print which node of a session changed which files")
    k.add_argument("file")
    k.add_argument("--json", action="store_true")
    return p


def guard_terminal_output(*, stdout: bool) -> None:
    """Every text write to stderr (and, outside the TUI, stdout) goes through the one sanitizer
    (``core.terminal_text``): a model answer, a provider's error body or a file name never drives
    the terminal. JSON/RPC output is already free of control characters, so it passes unchanged."""
    from pi_tui.core.terminal_text import PrintableStream

    if not isinstance(sys.stderr, PrintableStream) and sys.stderr is not None:
        sys.stderr = PrintableStream(sys.stderr)
    if stdout and not isinstance(sys.stdout, PrintableStream) and sys.stdout is not None:
        sys.stdout = PrintableStream(sys.stdout)


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    guard_terminal_output(stdout=False)
    if args_list and args_list[0] == "mcp":
        guard_terminal_output(stdout=True)
        from pi_tui.modes.mcp_command import run_mcp_command

        return run_mcp_command(args_list[1:])
    if args_list and args_list[0] in SUBCOMMANDS:
        guard_terminal_output(stdout=True)
        from pi_tui.modes.inspect import run_inspect

        return run_inspect(build_inspect_parser().parse_args(args_list))
    args = build_parser().parse_args(args_list)
    interactive = not (args.export or args.list_models is not None or args.mode is not None
                       or args.print_mode or not sys.stdin.isatty())
    if not interactive:  # the TUI draws through Textual, whose own output is filtered (line filter)
        guard_terminal_output(stdout=True)
    if args.export:
        from pi_tui.modes.export_html import run_export

        return run_export(args)
    if args.list_models is not None:
        from pi_tui.modes.list_models import run_list_models

        return run_list_models(args)
    if args.mode == "rpc":
        from pi_tui.modes.litellm_warmup import start_early_litellm_import

        start_early_litellm_import(args)
        from pi_tui.modes.rpc.server import run_rpc_mode

        return run_rpc_mode(args)
    if args.mode == "acp":
        from pi_tui.modes.litellm_warmup import start_early_litellm_import

        start_early_litellm_import(args)
        from pi_tui.modes.acp.server import run_acp_mode

        return run_acp_mode(args)
    if args.print_mode or args.mode in ("text", "json") or not sys.stdin.isatty():
        from pi_tui.modes.litellm_warmup import start_early_litellm_import

        start_early_litellm_import(args)  # overlaps our own startup; only for litellm-carried models
        from pi_tui.modes.print_mode import run_print_mode

        return run_print_mode(args)
    from pi_tui.modes.interactive import run_interactive

    return run_interactive(args)
