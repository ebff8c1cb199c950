"""The wheel ships the product, not the fakes: pi_tui/testing and the demo that plays on them run
from a checkout (make demo, the README's "try it offline"); pyproject.toml excludes them."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_has_no_fakes_and_no_demo(tmp_path: Path) -> None:
    wheel_builder = pytest.importorskip("hatchling.builders.wheel", reason="hatchling (the dev lock's build "
                                        "backend) is not installed: cannot build the wheel")
    built = list(wheel_builder.WheelBuilder(str(ROOT)).build(directory=str(tmp_path), versions=["standard"]))
    assert len(built) == 1
    names = zipfile.ZipFile(built[0]).namelist()
    assert "pi_tui/providers/http_wire.py" in names and "pi_tui/providers/stream_failures.py" in names
    assert "pi_tui/_builtin/prompts/review.md" in names
    assert [name for name in names if name.startswith("pi_tui/testing/") or name == "pi_tui/demo.py"] == []
    assert [name for name in names if "fake" in name or "scripted" in name] == []
