"""The version forwarding states (entrypoints/version.py) is the project's own."""

from __future__ import annotations

import tomllib
from importlib.metadata import version
from pathlib import Path

from dunscaith.entrypoints.version import VERSION

ROOT = Path(__file__).resolve().parents[2]


def test_the_version_constant_is_pyproject_s_and_the_installed_one() -> None:
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"] == VERSION
    assert version("dunscaith") == VERSION
