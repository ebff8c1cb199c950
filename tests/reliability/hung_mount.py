"""A file on a hung mount: a regular file whose ``read()`` never answers.

A dead NFS/sshfs server, a stuck FUSE daemon or ``/proc/kmsg`` give exactly this: ``open``
succeeds, ``fstat`` says "regular file", and the first ``read`` blocks in the kernel forever — no
``O_NONBLOCK`` or FIFO check helps. None can be made portably in a test, so this double replaces
``core.regular_files.open_regular`` for one file name with a file object whose ``read`` blocks
until ``release`` is set (never, in a child process). In a child process ``hung_mount_site`` on
``PYTHONPATH`` installs it (``PI_TUI_TEST_HUNG_MOUNT`` = seconds for ``STALLED_AFTER_SECONDS``).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

HUNG_NAME = "on-a-hung-mount.txt"
SITE = Path(__file__).with_name("hung_mount_site")
ENV = "PI_TUI_TEST_HUNG_MOUNT"


class HungFile:
    """What ``open_regular`` returns for the hung file: every read blocks until released."""

    def __init__(self, release: threading.Event, reading: threading.Event) -> None:
        self._release = release
        self._reading = reading

    def __enter__(self) -> HungFile:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def read(self, size: int = -1) -> bytes:
        self._reading.set()
        self._release.wait()
        return b""

    def seek(self, offset: int, whence: int = 0) -> int:
        return 0

    def fileno(self) -> int:
        raise OSError("a hung mount")

    def close(self) -> None:
        return None


def install(release: threading.Event, reading: threading.Event, stalled_after: float | None) -> list[tuple[Any, str, Any]]:
    """Patch the opener (and the read tool's copy of it, if imported); returns what to restore."""
    import sys

    from pi_tui.core import cancellable_thread, regular_files

    real = regular_files.open_regular

    def open_regular(path: Any, **options: Any) -> Any:  # (the read tool passes pinned=)
        return HungFile(release, reading) if Path(path).name == HUNG_NAME else real(path, **options)

    patched: list[tuple[Any, str, Any]] = [(regular_files, "open_regular", real)]
    regular_files.open_regular = open_regular  # type: ignore[assignment]
    read_module = sys.modules.get("pi_tui.tools.read")
    if read_module is not None:
        patched.append((read_module, "open_regular", read_module.open_regular))
        read_module.open_regular = open_regular  # type: ignore[attr-defined]
    if stalled_after is not None:
        patched.append((cancellable_thread, "STALLED_AFTER_SECONDS", cancellable_thread.STALLED_AFTER_SECONDS))
        cancellable_thread.STALLED_AFTER_SECONDS = stalled_after
    return patched


def restore(patched: list[tuple[Any, str, Any]]) -> None:
    for module, name, value in reversed(patched):
        setattr(module, name, value)
