"""The seccomp filter every sandboxed command runs under, as a classic BPF program for bwrap's
``--seccomp FD``.

Written here rather than through libseccomp: the program is 30-odd instructions, and the Python
bindings on PyPI are either unmaintained (``pyseccomp`` 0.1.2, 2021) or not packaged for pip
(libseccomp's own ``seccomp`` module comes only with the C library's build). A hand-written filter
is small enough to check by reading, and ``tests/permissions/test_seccomp.py`` runs it through a
BPF interpreter for every syscall it names and for its neighbours, and the escape suite runs the
real thing under bwrap.

What it refuses (``EPERM``, so programs see an ordinary "Operation not permitted"):
``ptrace``, ``process_vm_readv``/``writev`` (reading another process's memory), the
``io_uring_*`` calls (a syscall path seccomp cannot see into), ``keyctl``/``add_key``/
``request_key`` (the kernel keyring), ``bpf``, ``perf_event_open``, ``userfaultfd``, ``setns``,
``ioctl(TIOCSTI)``/``ioctl(TIOCLINUX)`` (typing into a terminal), and ``clone``/``unshare`` with
``CLONE_NEWUSER`` (a new user namespace is where kernel bugs are reached from). ``clone3`` gets
``ENOSYS``: its flags sit in memory a filter cannot read, and libc falls back to ``clone``.
A syscall from another ABI (i386 ``int 0x80``, x32) is refused whole: its numbers differ.
"""

from __future__ import annotations

import errno
import platform
import struct
from dataclasses import dataclass

# Classic BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
LD_W_ABS = 0x20
JEQ_K = 0x15
JGE_K = 0x35
JSET_K = 0x45
RET_K = 0x06
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
CLONE_NEWUSER = 0x10000000
TIOCSTI = 0x5412
TIOCLINUX = 0x541C
X32_SYSCALL_BIT = 0x40000000
# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6] (low word first).
OFFSET_NR = 0
OFFSET_ARCH = 4


def offset_arg(index: int) -> int:
    return 16 + 8 * index


@dataclass(frozen=True, slots=True)
class Arch:
    """One architecture's audit number and syscall numbers."""

    name: str
    audit: int
    denied: dict[str, int]
    ioctl: int
    clone: int
    unshare: int
    clone3: int
    x32: bool


DENIED_NAMES = ("ptrace", "process_vm_readv", "process_vm_writev", "io_uring_setup", "io_uring_enter",
                "io_uring_register", "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
                "setns")
ARCHES = {
    "x86_64": Arch("x86_64", 0xC000003E, {
        "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "io_uring_setup": 425,
        "io_uring_enter": 426, "io_uring_register": 427, "keyctl": 250, "add_key": 248, "request_key": 249,
        "bpf": 321, "perf_event_open": 298, "userfaultfd": 323, "setns": 308,
    }, ioctl=16, clone=56, unshare=272, clone3=435, x32=True),
    "aarch64": Arch("aarch64", 0xC00000B7, {
        "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "io_uring_setup": 425,
        "io_uring_enter": 426, "io_uring_register": 427, "keyctl": 219, "add_key": 217, "request_key": 218,
        "bpf": 280, "perf_event_open": 241, "userfaultfd": 282, "setns": 268,
    }, ioctl=29, clone=220, unshare=97, clone3=435, x32=False),
}


def native_arch() -> Arch | None:
    machine = platform.machine().lower()
    return ARCHES.get("aarch64" if machine == "arm64" else machine)


Instruction = tuple[int, int, int, int]
"""(code, jump-if-true, jump-if-false, k) — ``struct sock_filter``."""


def build_program(arch: Arch) -> list[Instruction]:
    """The filter for ``arch``; jumps are relative, as the kernel wants them."""
    # Symbolic program: ("jeq", k, label) jumps to label when equal, else falls through.
    body: list[tuple[str, int, str]] = [("ld", OFFSET_ARCH, ""), ("jne", arch.audit, "eperm"), ("ld", OFFSET_NR, "")]
    if arch.x32:
        body.append(("jge", X32_SYSCALL_BIT, "eperm"))
    body += [("jeq", number, "eperm") for number in arch.denied.values()]
    body += [("jeq", arch.clone3, "enosys"), ("jeq", arch.ioctl, "ioctl"), ("jeq", arch.unshare, "flags"),
             ("jeq", arch.clone, "flags"), ("ret", RET_ALLOW, ""),
             ("label", 0, "ioctl"), ("ld", offset_arg(1), ""), ("jeq", TIOCSTI, "eperm"), ("jeq", TIOCLINUX, "eperm"),
             ("ret", RET_ALLOW, ""),
             ("label", 0, "flags"), ("ld", offset_arg(0), ""), ("jset", CLONE_NEWUSER, "eperm"), ("ret", RET_ALLOW, ""),
             ("label", 0, "eperm"), ("ret", RET_ERRNO | errno.EPERM, ""),
             ("label", 0, "enosys"), ("ret", RET_ERRNO | errno.ENOSYS, "")]
    labels: dict[str, int] = {}
    position = 0
    for op, _, name in body:
        if op == "label":
            labels[name] = position
        else:
            position += 1
    program: list[Instruction] = []
    for op, k, name in body:
        if op == "label":
            continue
        here = len(program)
        if op == "ld":
            program.append((LD_W_ABS, 0, 0, k))
        elif op == "ret":
            program.append((RET_K, 0, 0, k))
        else:
            jump = labels[name] - here - 1
            assert 0 <= jump < 256, "a jump too far for classic BPF"
            code = {"jeq": JEQ_K, "jne": JEQ_K, "jge": JGE_K, "jset": JSET_K}[op]
            program.append((code, 0, jump, k) if op == "jne" else (code, jump, 0, k))
    return program


def encode(program: list[Instruction]) -> bytes:
    return b"".join(struct.pack("<HBBI", *instruction) for instruction in program)


def filter_bytes() -> bytes | None:
    """This machine's filter, or None on an architecture we have no syscall table for."""
    arch = native_arch()
    return encode(build_program(arch)) if arch is not None else None
