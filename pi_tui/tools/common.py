"""Small helpers every built-in tool shares: argument reading and OS-error wording.

The agent loop validates arguments against each tool's JSON schema before calling it; these
helpers are the second line, so a tool called directly (SDK, tests, a sloppy extension) still
fails with a clear message instead of a ``KeyError``. Coercion follows pi's validator: a number
given for a string becomes a string, a numeric string given for a number becomes a number.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pi_tui.core.errors import ToolError
from pi_tui.core.messages import JsonValue


def _invalid(tool: str, key: str, problem: str) -> ToolError:
    return ToolError(f'Validation failed for tool "{tool}":\n  - {key}: {problem}')


def require_str(args: dict[str, JsonValue], key: str, tool: str) -> str:
    value = args.get(key)
    if value is None:
        raise _invalid(tool, key, f"must have required properties {key}")
    return optional_str(args, key, tool) or ""


def optional_str(args: dict[str, JsonValue], key: str, tool: str) -> str | None:
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if not isinstance(value, str):
        raise _invalid(tool, key, "must be string")
    return value


def optional_number(args: dict[str, JsonValue], key: str, tool: str) -> float | None:
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, bool):
        raise _invalid(tool, key, "must be number")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            pass
    raise _invalid(tool, key, "must be number")


def optional_int(args: dict[str, JsonValue], key: str, tool: str) -> int | None:
    number = optional_number(args, key, tool)
    return None if number is None else int(number)


def optional_bool(args: dict[str, JsonValue], key: str, tool: str) -> bool | None:
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if value in ("true", "false"):
        return bool(value == "true")
    raise _invalid(tool, key, "must be boolean")


_CODE_TEXT = {
    errno.ENOENT: "no such file or directory",
    errno.EACCES: "permission denied",
    errno.EISDIR: "illegal operation on a directory",
    errno.ENOTDIR: "not a directory",
    errno.EPERM: "operation not permitted",
}


def os_error_code(error: OSError) -> str:
    if error.errno is None:
        return "EIO"
    return errno.errorcode.get(error.errno, "EIO")


def node_style_error(error: OSError, syscall: str, path: Path | str) -> ToolError:
    """``ENOENT: no such file or directory, open '<path>'`` — the wording pi's errors carry."""
    code = os_error_code(error)
    text = _CODE_TEXT.get(error.errno or 0, (error.strerror or "error").lower())
    return ToolError(f"{code}: {text}, {syscall} '{os.fspath(path)}'")


def output_dir(artifact_dir: Path | None) -> Path:
    """Where full outputs go: the session's artifact folder, or the temp dir without a session."""
    if artifact_dir is None:
        return Path(tempfile.gettempdir())
    artifact_dir.mkdir(parents=True, exist_ok=True)
    return artifact_dir


@contextmanager
def names_failures(tool: str, subject: str) -> Iterator[None]:
    """Turn an unexpected exception into a ToolError that names the tool and its path/command,
    so the model sees what failed instead of a bare ``UnicodeDecodeError: …``."""
    try:
        yield
    except ToolError:
        raise
    except Exception as error:
        raise ToolError(f"{tool} failed for {subject}: {type(error).__name__}: {error}") from error
