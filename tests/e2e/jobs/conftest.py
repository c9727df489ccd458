from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.jobs.cli import Cli


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    (tmp_path / "home").mkdir()
    return Cli(tmp_path)
