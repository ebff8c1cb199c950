"""The command line every fake server shares: ``--script FILE [--port 0] [--log FILE]`` plus a
fake's own options, prints ``PORT <n>`` as its first stdout line, then serves until interrupted
(benchmarks and pi runs against a fake use it)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from pi_tui.testing.fake_base import FakeServerBase


def serve_from_command_line(argv: list[str] | None, *, prog: str, description: str,
                            make_server: Callable[[argparse.Namespace], FakeServerBase],
                            add_arguments: Callable[[argparse.ArgumentParser], None] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {prog}", description=description)
    parser.add_argument("--script", required=True, type=Path, help="script file (JSON or YAML)")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0 = any free port)")
    parser.add_argument("--log", type=Path, help="append every request body to this file, one JSON line each")
    if add_arguments is not None:
        add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        server = make_server(args)
    except Exception as err:  # a bad script or a busy port: one clear line, no traceback
        sys.stderr.write(f"{prog.rsplit('.', 1)[-1]}: {err}\n")
        return 2
    sys.stdout.write(f"PORT {server.port}\n")
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0
