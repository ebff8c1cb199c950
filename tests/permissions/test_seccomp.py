"""The hand-written seccomp filter, run through a classic-BPF interpreter for every syscall it
names and their neighbours (the escape suite runs it for real under bwrap)."""

from __future__ import annotations

import errno
import struct

import pytest

from pi_tui.permissions import seccomp
from pi_tui.permissions.seccomp import ARCHES, RET_ALLOW, RET_ERRNO, build_program, encode

EPERM = RET_ERRNO | errno.EPERM
ENOSYS = RET_ERRNO | errno.ENOSYS


def run(program: list[tuple[int, int, int, int]], nr: int, arch: int, args: tuple[int, ...] = (0,) * 6) -> int:
    """Classic BPF as the kernel runs a seccomp filter: A register, absolute word loads from
    struct seccomp_data, conditional jumps relative to the next instruction."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, *args)
    pc, acc = 0, 0
    for _ in range(len(program) + 1):
        code, jt, jf, k = program[pc]
        if code == seccomp.LD_W_ABS:
            acc = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif code == seccomp.RET_K:
            return k
        else:
            taken = {seccomp.JEQ_K: acc == k, seccomp.JGE_K: acc >= k, seccomp.JSET_K: bool(acc & k)}[code]
            pc += 1 + (jt if taken else jf)
    raise AssertionError("the program did not return")


@pytest.mark.parametrize("name", sorted(ARCHES))
def test_each_denied_syscall_gets_eperm_and_its_neighbours_pass(name: str) -> None:
    arch = ARCHES[name]
    program = build_program(arch)
    denied = set(arch.denied.values())
    assert set(arch.denied) == set(seccomp.DENIED_NAMES)
    for nr in denied:
        assert run(program, nr, arch.audit) == EPERM
    special = denied | {arch.clone3, arch.ioctl, arch.clone, arch.unshare}
    for nr in range(0, 460):
        if nr not in special:
            assert run(program, nr, arch.audit) == RET_ALLOW, nr
    assert run(program, arch.clone3, arch.audit) == ENOSYS


@pytest.mark.parametrize("name", sorted(ARCHES))
def test_argument_checks(name: str) -> None:
    arch = ARCHES[name]
    program = build_program(arch)
    assert run(program, arch.ioctl, arch.audit, (0, seccomp.TIOCSTI, 0, 0, 0, 0)) == EPERM
    assert run(program, arch.ioctl, arch.audit, (0, seccomp.TIOCLINUX, 0, 0, 0, 0)) == EPERM
    assert run(program, arch.ioctl, arch.audit, (0, 0x5401, 0, 0, 0, 0)) == RET_ALLOW  # TCGETS
    for nr in (arch.clone, arch.unshare):
        assert run(program, nr, arch.audit, (seccomp.CLONE_NEWUSER | 0x11, 0, 0, 0, 0, 0)) == EPERM
        assert run(program, nr, arch.audit, (0x01000000 | 0x11, 0, 0, 0, 0, 0)) == RET_ALLOW  # fork-like
    # upper bits of an argument do not hide TIOCSTI (the filter reads the low word of args[1])
    assert run(program, arch.ioctl, arch.audit, ((1 << 40), seccomp.TIOCSTI | (1 << 33), 0, 0, 0, 0)) == EPERM


def test_other_abis_are_refused_whole() -> None:
    arch = ARCHES["x86_64"]
    program = build_program(arch)
    assert run(program, 0, 0x40000003) == EPERM  # i386 int 0x80: its own numbers
    assert run(program, 0x40000000 + 101, arch.audit) == EPERM  # x32 ptrace
    assert run(program, 0x40000000, arch.audit) == EPERM


def test_encoding_is_sock_filter() -> None:
    program = build_program(ARCHES["x86_64"])
    data = encode(program)
    assert len(data) == 8 * len(program)
    assert struct.unpack_from("<HBBI", data, 0) == (seccomp.LD_W_ABS, 0, 0, seccomp.OFFSET_ARCH)
