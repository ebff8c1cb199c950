"""Moving a session file to the trash instead of deleting it (the /resume picker's delete).

As pi does, the ``trash`` command comes first when it is installed. Without it, when the user has
a freedesktop home trash (``$XDG_DATA_HOME/Trash`` exists: a desktop made it), the file goes there
as the FreeDesktop.org Trash specification 1.0 says (the file under ``files/``, a ``.trashinfo``
under ``info/`` with its original path and the deletion time), so a file manager can restore it.
No trash folder is created (on a server nobody would empty it), and a file on another file system
than the home trash is not copied across: the caller deletes it then (pi unlinks when ``trash``
fails).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Literal
from urllib.parse import quote

TrashMethod = Literal["trash-cli", "freedesktop"]

TRASH_CLI_TIMEOUT_SECONDS = 10.0


def home_trash(env: dict[str, str] | None = None) -> Path:
    """``$XDG_DATA_HOME/Trash``, else ``~/.local/share/Trash``."""
    environ = os.environ if env is None else env
    data_home = environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "Trash"


def move_to_trash(path: Path, *, trash_cli: str | None = None, trash_dir: Path | None = None,
                  use_cli: bool = True) -> TrashMethod | None:
    """Move ``path`` to the trash; the method used, or None when no trash could take it (the
    file is then untouched).

    Args:
        trash_cli: the ``trash`` command (default: looked up on PATH).
        trash_dir: the home trash (default ``home_trash()``; tests give a tmp folder).
        use_cli: False skips the ``trash`` command (tests of the freedesktop path).
    """
    cli = (trash_cli or shutil.which("trash")) if use_cli else None
    if cli is not None:
        args = [cli, "--", str(path)] if str(path).startswith("-") else [cli, str(path)]
        try:
            done = subprocess.run(args, capture_output=True, timeout=TRASH_CLI_TIMEOUT_SECONDS, check=False)
        except (OSError, subprocess.TimeoutExpired):
            done = None
        if (done is not None and done.returncode == 0) or not path.exists():
            return "trash-cli"
    if sys.platform == "darwin" or sys.platform.startswith("win"):
        return None
    return "freedesktop" if _freedesktop(path, trash_dir or home_trash()) else None


def _freedesktop(path: Path, trash: Path) -> bool:
    files, info = trash / "files", trash / "info"
    if not trash.is_dir():
        return False
    try:
        files.mkdir(parents=True, exist_ok=True, mode=0o700)
        info.mkdir(parents=True, exist_ok=True, mode=0o700)
        if os.stat(files).st_dev != os.stat(path).st_dev:
            return False
    except OSError:
        return False
    original = path.resolve(strict=False)
    when = datetime.now().strftime("%Y-%m-%dT%H:%M:%S")
    body = f"[Trash Info]\nPath={quote(str(original))}\nDeletionDate={when}\n".encode()
    stem, suffix = original.stem, original.suffix
    for attempt in range(1000):
        name = original.name if attempt == 0 else f"{stem}.{attempt}{suffix}"
        info_file = info / f"{name}.trashinfo"
        try:
            # O_EXCL: the info file reserves the name (the spec's way to avoid a race).
            fd = os.open(info_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        except OSError:
            return False
        with os.fdopen(fd, "wb") as handle:
            handle.write(body)
        if (files / name).exists():
            info_file.unlink(missing_ok=True)
            continue
        try:
            os.rename(path, files / name)
        except OSError:
            info_file.unlink(missing_ok=True)
            return False
        return True
    return False
