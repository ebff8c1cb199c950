"""bash inside bubblewrap: what the sandbox lets a command see and change (docs/permissions.md).

* The whole filesystem read-only (``--ro-bind / /``), a fresh ``/dev`` and ``/proc`` (the new
  PID namespace's: the parent's ``/proc/<pid>/environ`` and ``/proc/1/root`` are not there),
  an empty ``/tmp`` and ``/run`` (the host's hold tmux, X11, D-Bus and container sockets, which
  a read-only mount does not stop anyone from connecting to).
* Writable: the project, the session's own temp dir (``TMPDIR`` inside), ``sandbox.allowWrite``.
* Inside them, read-only again: ``.pi`` and, in every repository's gitdirs, ``config``,
  ``config.worktree``, ``commondir`` and ``hooks`` (what would run later on the host, outside the
  sandbox; ``git_guard.py``, which also checks them after each command), and the shell start-up
  files when home is writable.
* Hidden (an empty folder or ``/dev/null`` mounted over them): ``~/.ssh``, ``~/.aws``,
  ``~/.gnupg``, ``~/.config/gh``, the agent dir's ``auth.json``/``models.json``/``sessions``,
  container sockets, ``sandbox.denyRead``.
* New user, PID, IPC, UTS and (network off) network namespaces, ``--die-with-parent``,
  ``--new-session`` (no controlling terminal: no TIOCSTI), no new privileges (bwrap always sets
  it: setuid binaries and ``sudo`` cannot gain anything), ``--disable-userns`` and the seccomp
  filter (``seccomp.py``). When the command exits the PID namespace ends, and with it anything
  it left running in the background.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pi_tui.permissions import git_guard

if TYPE_CHECKING:
    from pi_tui.permissions.proxy import DomainProxy

FORWARDER = Path(__file__).with_name("forwarder.py")
Network = Literal["off", "on"]
HIDDEN_HOME = (".ssh", ".aws", ".gnupg", ".config/gh", ".docker", ".kube", ".netrc", ".git-credentials",
               ".pypirc", ".npmrc", ".config/gcloud", ".azure", ".password-store", ".local/share/keyrings")
"""Credentials under the home folder that no command in the sandbox reads."""
HIDDEN_AGENT = ("auth.json", "models.json", "sessions")
PROTECTED_IN_ROOTS = (".pi",)
"""Inside a writable root, read-only: what runs later outside the sandbox."""
PROTECTED_HOME = (".bashrc", ".bash_profile", ".profile", ".zshrc", ".zprofile", ".bash_login", ".gitconfig",
                  ".config/git", ".pi")
"""Read-only when the home folder itself is a writable root (the project is ``~``)."""
CONTAINER_SOCKETS = ("/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock",
                     "/run/podman/podman.sock", "/var/run/crio/crio.sock", "/run/k3s/containerd/containerd.sock")


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """What one session's sandbox lets a command see and change."""

    project: Path
    temp_dir: Path
    home: Path
    agent_dir: Path
    allow_write: tuple[Path, ...] = ()
    deny_read: tuple[Path, ...] = ()
    network: Network = "off"
    domains: tuple[str, ...] = ()
    """``sandbox.network`` as a list: no network but the domain proxy's socket (``proxy.py``)."""
    read_only: bool = False
    """Plan mode: nothing writable but the temp dir."""

    def writable_roots(self) -> list[Path]:
        roots = [self.temp_dir] if self.read_only else [self.project, self.temp_dir, *self.allow_write]
        seen: list[Path] = []
        for root in roots:
            real = Path(os.path.realpath(root))
            if real not in seen:
                seen.append(real)
        return seen

    def protected_paths(self) -> list[Path]:
        """Read-only paths inside the writable roots (real paths)."""
        found: list[Path] = []
        home = Path(os.path.realpath(self.home))
        for root in self.writable_roots():
            found += [root / rel for rel in PROTECTED_IN_ROOTS] + git_guard.protected_in(root)
            if root == home or home.is_relative_to(root):
                found += [home / rel for rel in PROTECTED_HOME]
        return found

    def hidden_paths(self) -> list[Path]:
        return [*(self.home / rel for rel in HIDDEN_HOME), *(self.agent_dir / rel for rel in HIDDEN_AGENT),
                *(Path(p) for p in CONTAINER_SOCKETS), *self.deny_read]


@dataclass(slots=True)
class Bwrap:
    """The bwrap found by the preflight and what it supports."""

    program: str
    disable_userns: bool
    seccomp_filter: bytes | None
    """The filter (None: no syscall table for this architecture), handed to bwrap through a pipe."""


def find_bwrap() -> str | None:
    """The system's bwrap: never one from the project or a PATH entry a repository could plant."""
    for candidate in ("/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


PROXY_INSIDE = "/run/pi-proxy"
"""Where the domain proxy's folder (its Unix socket) is bound inside the sandbox."""


def bwrap_arguments(policy: SandboxPolicy, cwd: Path, *, disable_userns: bool, seccomp_fd: int | None,
                    proxy_folder: Path | None = None) -> list[str]:
    """bwrap's options for one command (the program and ``--`` not included)."""
    args = ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--unshare-user", "--unshare-pid", "--unshare-ipc",
            "--unshare-uts", "--unshare-cgroup-try", "--hostname", "pi-sandbox"]
    if policy.network == "off" or policy.read_only:
        args.append("--unshare-net")
    if disable_userns:
        args.append("--disable-userns")
    # /tmp inside is the session's own temp dir: never the host's, kept from one command to the next.
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--bind", str(policy.temp_dir), "/tmp",
             "--tmpfs", "/dev/shm"]
    args += _empty_run()
    if proxy_folder is not None:  # the only way out of the empty network namespace
        from pi_tui.permissions.proxy import INSIDE_PORT

        url = f"http://127.0.0.1:{INSIDE_PORT}"
        args += ["--ro-bind", str(proxy_folder), PROXY_INSIDE]
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
            args += ["--setenv", name, url]
        args += ["--setenv", "NO_PROXY", "localhost,127.0.0.1,::1", "--setenv", "no_proxy", "localhost,127.0.0.1,::1"]
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime) and not runtime.startswith("/run/"):
        args += ["--tmpfs", runtime]
    _make_protected_folders(policy)
    for root in policy.writable_roots():
        if root.is_dir() and root != Path(os.path.realpath(policy.temp_dir)):
            args += ["--bind", str(root), str(root), *git_guard.bind_arguments(root)]
    for path in policy.protected_paths():
        if path.is_symlink():  # a link where a protected folder belongs: nothing may go through it
            args += ["--ro-bind", "/dev/null", str(path)]
        elif path.exists():
            args += ["--ro-bind", str(path), str(path)]
    args += hide(policy.hidden_paths())
    if seccomp_fd is not None:  # the caller passes this descriptor to bwrap (pass_fds)
        args += ["--seccomp", str(seccomp_fd)]
    args += ["--setenv", "TMPDIR", "/tmp", "--chdir", str(cwd)]
    return args


def _make_protected_folders(policy: SandboxPolicy) -> None:
    """A project's missing ``.pi`` (and a repository's missing ``.git/hooks``) is made, empty,
    before the command so that it can be mounted read-only: else the command could create
    ``.pi/settings.json`` or ``.pi/extensions/…``, which a trusted project loads on the next run,
    outside the sandbox."""
    if policy.read_only:
        return
    project = Path(os.path.realpath(policy.project))
    wanted = [project / ".pi"] + ([project / ".git" / "hooks"] if (project / ".git").is_dir() else [])
    for folder in wanted:
        if not os.path.lexists(folder):
            with contextlib.suppress(OSError):
                folder.mkdir()


def _empty_run() -> list[str]:
    """An empty ``/run`` (its sockets are escapes), keeping the resolver's files for DNS."""
    if not os.path.isdir("/run") or os.path.islink("/run"):
        return []
    args = ["--tmpfs", "/run"]
    for keep in ("/run/systemd/resolve/stub-resolv.conf", "/run/systemd/resolve/resolv.conf",
                 "/run/resolvconf/resolv.conf", "/run/NetworkManager/resolv.conf"):
        if os.path.isfile(keep):
            args += ["--ro-bind", keep, keep]
    return args


def hide(paths: Iterable[Path]) -> list[str]:
    args: list[str] = []
    for path in paths:
        if path.is_symlink():
            target = Path(os.path.realpath(path))
            if target.exists():
                args += hide([target])
            continue
        if path.is_dir():
            args += ["--tmpfs", str(path), "--remount-ro", str(path)]
        elif path.exists():
            args += ["--ro-bind", "/dev/null", str(path)]
    return args


@dataclass(slots=True)
class Preflight:
    """Whether bwrap can run here, found once per run."""

    ok: bool
    message: str
    """What failed and what to do (empty when ok)."""
    seconds: float = 0.0
    bwrap: Bwrap | None = None


def explain_failure(stderr: str) -> str:
    text = stderr.strip()
    if "No permissions to create new namespace" in text or ("Operation not permitted" in text and "namespace" in text):
        hint = ("user namespaces are refused (Docker's default seccomp profile does this): run the container "
                "with --security-opt seccomp=unconfined, or use --permission-mode bypassPermissions")
    elif "setting up uid map" in text:
        hint = ("AppArmor refuses unprivileged user namespaces (Ubuntu 23.10+): allow them for bwrap "
                "(an AppArmor profile for /usr/bin/bwrap) or set kernel.apparmor_restrict_unprivileged_userns=0")
    elif "Can't mount proc" in text:
        hint = "/proc cannot be mounted in a new namespace (a container hides its /proc): run the container privileged"
    elif "Failed to make / slave" in text:
        hint = "the root mount cannot be made a slave mount (overlayfs in a container)"
    else:
        hint = "bwrap failed"
    return f"{hint} (bwrap said: {text.splitlines()[-1] if text else 'nothing'})"


@dataclass(slots=True)
class SandboxRuntime:
    """The sandbox of one session: its temp dir, the filter file, the preflight's answer."""

    policy: SandboxPolicy
    preflight: Preflight
    _owned_temp: bool = field(default=False)
    proxy_box: list[DomainProxy | None] = field(default_factory=lambda: [None])
    """The session's domain proxy once started (a list: shared with ``with_read_only``'s copy)."""

    def command(self, argv: Sequence[str], cwd: Path) -> SandboxedCommand:
        """``argv`` wrapped in bwrap; the caller passes ``pass_fds`` and calls ``close`` after the start."""
        bwrap = self.preflight.bwrap
        assert bwrap is not None and self.preflight.ok
        fd = None
        if bwrap.seccomp_filter is not None:  # a pipe per command: bwrap reads it to the end
            fd, write_end = os.pipe()
            try:
                os.write(write_end, bwrap.seccomp_filter)  # ~300 bytes: far below a pipe's buffer
            finally:
                os.close(write_end)
        proxy = self._proxy()
        args = bwrap_arguments(self.policy, cwd, disable_userns=bwrap.disable_userns, seccomp_fd=fd,
                               proxy_folder=proxy.folder if proxy is not None else None)
        temp = Path(os.path.realpath(self.policy.temp_dir))
        guard = git_guard.GitGuard.before([r for r in self.policy.writable_roots() if r != temp])
        info_read, info_write = os.pipe()  # bwrap writes the sandbox's pid 1 there: finish waits for it
        os.set_blocking(info_read, False)
        args[:0] = ["--info-fd", str(info_write)]
        if proxy is not None:
            from pi_tui.permissions.proxy import INSIDE_PORT

            argv = [sys.executable, "-I", "-S", str(FORWARDER), f"{PROXY_INSIDE}/proxy.sock", str(INSIDE_PORT),
                    "--", *argv]
        return SandboxedCommand([bwrap.program, *args, "--", *argv], (info_write,) if fd is None else (fd, info_write),
                                info_read, guard)

    def _proxy(self) -> DomainProxy | None:
        """The domain proxy, started with the first command that needs it (shared by the
        read-write and plan views; plan mode has no network at all)."""
        if not self.policy.domains or self.policy.read_only:
            return None
        if self.proxy_box[0] is None:
            from pi_tui.permissions.proxy import (
                DomainProxy,  # socketserver: only with a domain list
            )

            self.proxy_box[0] = DomainProxy(self.policy.domains, Path(tempfile.mkdtemp(prefix="pi-proxy-"))).start()
        return self.proxy_box[0]

    def with_read_only(self, read_only: bool) -> SandboxRuntime:
        """The same sandbox with nothing writable but the temp dir and no network (plan mode)."""
        if read_only == self.policy.read_only:
            return self
        return SandboxRuntime(dataclasses.replace(self.policy, read_only=read_only), self.preflight,
                              proxy_box=self.proxy_box)

    def close(self) -> None:
        proxy = self.proxy_box[0]
        if proxy is not None:
            proxy.close()
            shutil.rmtree(proxy.folder, ignore_errors=True)
        if self._owned_temp:
            shutil.rmtree(self.policy.temp_dir, ignore_errors=True)


@dataclass(slots=True)
class SandboxedCommand:
    """bwrap's argv for one command and the descriptors it must inherit."""

    argv: list[str]
    pass_fds: tuple[int, ...]
    info_fd: int | None = None
    """Where bwrap wrote ``{"child-pid": …}``: the sandbox's pid 1, as the host sees it."""
    guard: git_guard.GitGuard | None = None
    report: Callable[[str], None] | None = None
    """Where ``finish(output_gone=True)`` says what the guard moved (the gate's notice)."""

    def close(self) -> None:
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)

    def finish(self, *, output_gone: bool = False) -> str:
        """After bwrap exited: wait (bounded) until the sandbox's pid 1 is gone — its PID namespace,
        and every process in it, ends with it — then run the git guard. The lines to append to
        the command's output ("" when nothing was moved); with ``output_gone`` (a cancelled
        call) they go to ``report`` as well, or no one would hear that a file was moved."""
        if self.info_fd is not None:
            info = b""
            with contextlib.suppress(OSError):
                info = os.read(self.info_fd, 4096)
            with contextlib.suppress(OSError):
                os.close(self.info_fd)
            self.info_fd = None
            _wait_gone(_child_pid(info))
        guard, self.guard = self.guard, None
        lines = "\n".join(guard.check()) if guard is not None else ""
        if lines and output_gone and self.report is not None:
            with contextlib.suppress(Exception):  # runs in a loop callback: a failing sink must not hide the move
                self.report(f"After a cancelled bash call:\n{lines}")
        return lines


def _child_pid(info: bytes) -> int | None:
    import json

    try:
        pid = json.loads(info.decode()).get("child-pid")
    except (ValueError, AttributeError):
        return None
    return pid if isinstance(pid, int) and pid > 1 else None


def _wait_gone(pid: int | None, within: float = 2.0) -> None:
    """Until ``pid`` is no longer running (gone or a zombie: a PID namespace's pid 1 becomes a
    zombie only once every other process in it has exited). Normally at once: bwrap waits for
    it; after a SIGKILL (timeout, abort) it takes a moment."""
    if pid is None:
        return
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return
        if stat.rpartition(")")[2].split()[:1] in (["Z"], ["X"]):
            return
        time.sleep(0.005)


def new_temp_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="pi-sandbox-"))


def run_preflight(policy: SandboxPolicy, *, timeout: float = 10.0) -> Preflight:
    """Start ``bwrap … -- /bin/true`` with this policy once: the answer holds for the run."""
    started = time.perf_counter()
    program = find_bwrap()
    if program is None:
        return Preflight(False, "bwrap is not installed (Debian/Ubuntu: apt install bubblewrap; "
                         "Fedora: dnf install bubblewrap)", time.perf_counter() - started)
    from pi_tui.permissions import seccomp

    bwrap = Bwrap(program, _supports(program, "--disable-userns"), seccomp.filter_bytes())
    runtime = SandboxRuntime(policy, Preflight(True, "", 0.0, bwrap))
    true = shutil.which("true") or "/bin/true"
    command = runtime.command([true], policy.project if policy.project.is_dir() else policy.temp_dir)
    try:
        done = subprocess.run(command.argv, capture_output=True, text=True, timeout=timeout,
                              pass_fds=command.pass_fds, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return Preflight(False, f"bwrap could not start: {error}", time.perf_counter() - started)
    finally:
        command.close()
        command.finish()
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        return Preflight(False, explain_failure(done.stderr), elapsed)
    return Preflight(True, "", elapsed, bwrap)


def _supports(program: str, option: str) -> bool:
    try:
        done = subprocess.run([program, "--help"], capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return option in done.stdout
