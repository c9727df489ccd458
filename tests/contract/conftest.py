"""The scheduler harness, one per scheduler of ``scheduler_params.PARAMS``, for every scheduler suite here."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.contract.scheduler_params import FACTORIES, PARAMS, SchedulerHarness


@pytest.fixture(params=PARAMS)
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SchedulerHarness]:
    made = FACTORIES[request.param](tmp_path)
    yield made
    made.stop_everything()
