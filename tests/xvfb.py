"""A private X server (Xvfb) for tests that need a real X11 clipboard (xclip).

Xvfb chooses a free display itself and writes its number to a pipe once it accepts clients
(``-displayfd``): picking a number by looking at ``/tmp/.X11-unix`` races with other X servers on
the machine, and the socket file appears before the server answers, so the first client can fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

START_SECONDS = 20.0
MISSING_X = [tool for tool in ("Xvfb", "xclip") if shutil.which(tool) is None]
MISSING_X_REASON = f"{', '.join(MISSING_X)} not installed (.ci/run installs them)"


@contextmanager
def private_x_display() -> Iterator[str]:
    """Start Xvfb on a display it chose as free; yield its name (``:N``); stop it after."""
    read_end, write_end = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write_end), "-screen", "0", "640x480x24", "-nolisten", "tcp"],
                              pass_fds=(write_end,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_end)
    try:
        number = b""
        deadline = time.monotonic() + START_SECONDS
        os.set_blocking(read_end, False)
        while not number.endswith(b"\n"):
            if time.monotonic() > deadline or server.poll() is not None:
                raise RuntimeError("Xvfb did not start (no display number within the timeout)")
            try:
                number += os.read(read_end, 16)
            except BlockingIOError:
                time.sleep(0.05)
        yield f":{number.decode().strip()}"
    finally:
        os.close(read_end)
        server.terminate()
        try:
            server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=5)
