"""The fuzz suite's budget: a few examples per test in the quick suite (-m "not slow"), more otherwise,
every test bounded so the whole suite stays within two minutes in CI."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fuzz.harness import MODE, Home, make_template


def pytest_configure(config: pytest.Config) -> None:
    MODE["name"] = "quick" if "not slow" in (config.getoption("markexpr") or "") else "full"


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Home]:
    yield make_template(Path(tmp_path_factory.mktemp("fuzz-template")) / "t")
