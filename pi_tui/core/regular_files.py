"""Opening files that must be regular files, without ever blocking on one that is not.

``open()`` of a FIFO with no writer blocks forever (and for writing, with no reader); a
character device such as ``/dev/zero`` or ``/dev/urandom`` never ends; a block device is a whole
disk. A repository is untrusted, so a path the model names, an ``AGENTS.md``, a ``.gitignore`` or a
``SKILL.md`` may be any of these. Every open here passes ``O_NONBLOCK`` (a FIFO then opens at
once, or fails with ``ENXIO`` for writing), checks with ``fstat`` what was opened, and refuses
anything but a regular file before a byte is read or written. The check is on the open file,
so swapping the path for a FIFO between a ``stat`` and the open changes nothing.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from typing import BinaryIO

from pi_tui.core.sizes import format_size

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class NotRegularFileError(OSError):
    """The path is a FIFO, device, socket or directory: refused instead of read or written."""

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        self.kind = kind
        super().__init__(errno.EINVAL, f"not a regular file: it is {kind}", os.fspath(path))

    def __str__(self) -> str:
        return f"{self.filename} is {self.kind}, not a regular file"


def file_kind(mode: int) -> str:
    """``"a FIFO (named pipe)"``, ``"a character device"`` … (``"a regular file"`` for one)."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


class PathChangedError(OSError):
    """A pinned path (the real path a permission check approved) is no longer that file: a link
    was swapped in for it or for a folder on its way since the check. Nothing was opened."""

    def __init__(self, path: str | os.PathLike[str], what: str) -> None:
        self.what = what
        super().__init__(errno.ELOOP, f"changed since it was checked: {what}", os.fspath(path))

    def __str__(self) -> str:
        return (f"{self.filename} changed since its permission check ({self.what}): not opened; "
                "call the tool again to have the new path checked")


def _open_pinned(path: str | os.PathLike[str], flags: int) -> int:
    """Open exactly the real path ``path`` (every link already resolved by the check): its folder
    is opened first and must still be that folder (``/proc/self/fd`` says where the descriptor
    really is), then the file inside it without following a link (``O_NOFOLLOW``)."""
    real = os.fspath(path)
    folder, name = os.path.split(real)
    parent = os.open(folder or "/", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        where = os.readlink(f"/proc/self/fd/{parent}")
        if where != (folder or "/"):
            raise PathChangedError(path, f"its folder is now {where}")
        try:
            return os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, 0o666,
                           dir_fd=parent)
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise PathChangedError(path, "it is now a symbolic link") from None
            raise
    finally:
        os.close(parent)


def _open_checked(path: str | os.PathLike[str], flags: int, *, pinned: bool = False) -> int:
    try:
        if pinned:
            fd = _open_pinned(path, flags)
        else:
            fd = os.open(path, flags | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, 0o666)
    except PathChangedError:
        raise
    except OSError as error:
        if error.errno == errno.ENXIO:  # a FIFO with no reader, or a socket
            try:
                mode = os.stat(path).st_mode
            except OSError:
                raise error from None
            raise NotRegularFileError(path, file_kind(mode)) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(path, file_kind(mode))
        # Regular files ignore O_NONBLOCK, but clear it so nothing downstream is surprised.
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular(path: str | os.PathLike[str], *, pinned: bool = False) -> BinaryIO:
    """Open a regular file for binary reading; ``NotRegularFileError`` for anything else.
    ``pinned``: ``path`` is a checked real path, opened following no link (``PathChangedError``)."""
    return os.fdopen(_open_checked(path, os.O_RDONLY, pinned=pinned), "rb")


def open_regular_for_write(path: str | os.PathLike[str], *, pinned: bool = False) -> BinaryIO:
    """Create or truncate a regular file for binary writing; refuses (and leaves untouched) a
    FIFO, device or socket at ``path`` (``O_TRUNC`` does nothing to those). ``pinned``: as for
    ``open_regular``; truncated only once it is known to be the checked file."""
    if not pinned:
        return os.fdopen(_open_checked(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "wb")
    fd = _open_checked(path, os.O_WRONLY | os.O_CREAT, pinned=True)
    try:
        os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "wb")


def read_regular_bytes(path: str | os.PathLike[str], max_bytes: int | None = None) -> tuple[bytes, int]:
    """The first ``max_bytes`` (all when None) of a regular file, and the file's full size."""
    with open_regular(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        data = fh.read() if max_bytes is None else fh.read(max_bytes)
    return data, max(size, len(data))


def read_regular_text(path: str | os.PathLike[str], *, errors: str = "strict") -> str:
    """A regular file's whole text (UTF-8); ``NotRegularFileError`` for a FIFO, device …"""
    data, _size = read_regular_bytes(path)
    return data.decode("utf-8", errors)


def read_text_file(path: str | os.PathLike[str], max_bytes: int, limit_for: str) -> str:
    """A regular UTF-8 text file of at most ``max_bytes``. ``ValueError`` says why one cannot be
    used — a FIFO/device, over the limit (``f"... limit for {limit_for}"``), binary, not UTF-8;
    ``OSError`` (``FileNotFoundError`` …) passes through."""
    try:
        data, size = read_regular_bytes(path, max_bytes + 1)
    except NotRegularFileError as error:
        raise ValueError(f"it is {error.kind}, not a regular file") from None
    if size > max_bytes:
        raise ValueError(f"the file is {format_size(size)}, over the {format_size(max_bytes)} limit for {limit_for}")
    if b"\x00" in data:
        raise ValueError(f"it is a binary file ({format_size(size)}), not text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"it is not UTF-8 text ({format_size(size)}; a binary file?)") from None
