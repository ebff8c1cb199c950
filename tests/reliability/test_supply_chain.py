"""The committed lock files: complete, hashed, inside pyproject.toml's ranges, no known-bad release.

`make run`/`make test` install only from requirements-dev.lock with `pip --require-hashes`; these
tests keep the locks honest when pyproject.toml changes (run `make lock` to refresh them).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

FAULT_CLASS = "supply chain"

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# litellm 1.82.7 and 1.82.8 were published from a hijacked account (1.82.8 shipped a credential
# stealing .pth file); 1.107.0 is reported compromised. None may ever be locked or allowed.
KNOWN_BAD = {"litellm": {Version("1.82.7"), Version("1.82.8"), Version("1.107.0")}}
# Every Python/platform the locks must serve (they are universal: markers decide per platform).
ENVIRONMENTS = [
    {"python_version": "3.11", "python_full_version": "3.11.7", "sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64"},
    {"python_version": "3.13", "python_full_version": "3.13.1", "sys_platform": "darwin", "platform_system": "Darwin", "platform_machine": "arm64"},
]


@dataclass(frozen=True)
class Pin:
    name: str
    version: Version
    marker: Marker | None
    hashes: tuple[str, ...]


def parse_lock(path: Path) -> dict[str, list[Pin]]:
    """`name==version [; marker] \\ --hash=...` entries (pip's hash-checking format)."""
    text = re.sub(r"\\\n", " ", path.read_text())
    pins: dict[str, list[Pin]] = {}
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        hashes = tuple(re.findall(r"--hash=(sha256:[0-9a-f]{64})", line))
        spec = re.sub(r"--hash=\S+", "", line).strip()
        req = Requirement(spec)
        (only,) = req.specifier  # exactly one `==` pin per entry
        assert only.operator == "==", f"{path.name}: {spec!r} is not an exact pin"
        pin = Pin(canonicalize_name(req.name), Version(only.version), req.marker, hashes)
        pins.setdefault(pin.name, []).append(pin)
    return pins


RUNTIME = parse_lock(ROOT / "requirements.lock")
DEV = parse_lock(ROOT / "requirements-dev.lock")


def _dev_requirements() -> list[str]:
    return list(PYPROJECT["project"]["optional-dependencies"]["dev"])


def _check_against(lock: dict[str, list[Pin]], requirement: str, lock_name: str) -> None:
    req = Requirement(requirement)
    name = canonicalize_name(req.name)
    for env in ENVIRONMENTS:
        if req.marker and not req.marker.evaluate(env):
            continue
        chosen = [p for p in lock.get(name, []) if p.marker is None or p.marker.evaluate(env)]
        assert chosen, f"{lock_name} lacks {req.name} (pyproject.toml: {requirement!r}) for {env['sys_platform']}; run make lock"
        for pin in chosen:
            assert req.specifier.contains(pin.version, prereleases=True), (
                f"{lock_name} pins {name}=={pin.version}, outside pyproject.toml's {requirement!r}; run make lock"
            )


@pytest.mark.parametrize("requirement", PYPROJECT["project"]["dependencies"])
def test_runtime_lock_satisfies_each_dependency(requirement: str) -> None:
    _check_against(RUNTIME, requirement, "requirements.lock")
    _check_against(DEV, requirement, "requirements-dev.lock")


@pytest.mark.parametrize("requirement", _dev_requirements() + PYPROJECT["build-system"]["requires"])
def test_dev_lock_satisfies_dev_extras_and_build_backend(requirement: str) -> None:
    _check_against(DEV, requirement, "requirements-dev.lock")


def test_every_entry_is_pinned_with_hashes() -> None:
    for lock_name, lock in (("requirements.lock", RUNTIME), ("requirements-dev.lock", DEV)):
        for name, pins in lock.items():
            for pin in pins:
                assert pin.hashes, f"{lock_name}: {name}=={pin.version} has no --hash"


def test_runtime_and_dev_locks_pin_the_same_versions() -> None:
    for name, pins in RUNTIME.items():
        assert name in DEV, f"requirements-dev.lock lacks {name} (requirements.lock has it); run make lock"
        assert {p.version for p in pins} == {p.version for p in DEV[name]}, (
            f"{name}: requirements.lock and requirements-dev.lock disagree; run make lock"
        )


def test_known_bad_releases_are_neither_locked_nor_allowed() -> None:
    for name, bad in KNOWN_BAD.items():
        for lock_name, lock in (("requirements.lock", RUNTIME), ("requirements-dev.lock", DEV)):
            locked = {p.version for p in lock.get(name, [])}
            assert locked, f"{lock_name} does not lock {name}"
            assert not locked & bad, f"{lock_name} pins a known-bad {name} release: {sorted(locked & bad)}"
        ranges = [Requirement(r) for r in PYPROJECT["project"]["dependencies"] if canonicalize_name(Requirement(r).name) == name]
        assert ranges, f"pyproject.toml does not constrain {name}"
        for req in ranges:
            allowed = [v for v in bad if req.specifier.contains(v, prereleases=True)]
            assert not allowed, f"pyproject.toml's {str(req)!r} allows known-bad {name} {allowed}"


def test_lock_checker_catches_a_stale_or_bad_lock(tmp_path: Path) -> None:
    """The checks above would fail on the locks they exist to catch."""
    lock = tmp_path / "bad.lock"
    lock.write_text(
        "litellm==1.82.8 \\\n    --hash=sha256:" + "0" * 64 + "\n"
        "textual==8.1.0 \\\n    --hash=sha256:" + "1" * 64 + "\n"
    )
    bad = parse_lock(lock)
    with pytest.raises(AssertionError, match="outside"):
        _check_against(bad, "textual>=8.2.8,<8.3", "bad.lock")
    with pytest.raises(AssertionError, match="lacks rich"):
        _check_against(bad, "rich>=14,<16", "bad.lock")
    assert bad["litellm"][0].version in KNOWN_BAD["litellm"]


def test_make_installs_only_from_the_hashed_lock() -> None:
    """The stamp rule depends on the lock and installs with --require-hashes, the package without
    build isolation (so no unhashed build dependency is fetched)."""
    makefile = (ROOT / "Makefile").read_text()
    stamp_rule = re.search(r"^\$\(STAMP\):(.*?)\n\n", makefile, re.S | re.M)
    assert stamp_rule, "Makefile has no $(STAMP) rule"
    rule = stamp_rule.group(0)
    assert "$(DEV_LOCK)" in rule.splitlines()[0], "the install stamp must depend on the dev lock"
    installs = [line for line in rule.splitlines() if "pip install" in line]
    assert installs, "the stamp rule installs nothing"
    for line in installs:
        assert "--require-hashes" in line or ("--no-deps" in line and "--no-build-isolation" in line), line
