"""A pipeline is recorded whole or not at all, on each SQL store: a crash (kill -9) while its jobs are being
written, or once they are all written but before the transaction commits, leaves none of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from dunscaith.adapters.clock.fake import FakeClock
from dunscaith.adapters.host.system import SystemHost
from dunscaith.adapters.store.sqlite.store import SqliteStore
from dunscaith.domain.services.jobs.gates import Gates
from dunscaith.domain.services.jobs.submit import RecordPipeline
from tests.integration.store.test_record_sweep import CrashAt
from tests.unit.jobs.helpers import NoCrash
from tests.unit.jobs.test_record_pipeline import pipeline_specs


@pytest.mark.parametrize("nth", [1, 3, 5])
def test_a_crash_between_two_jobs_of_a_pipeline_leaves_none_of_them(tmp_path: Path, nth: int) -> None:
    store = SqliteStore.open(tmp_path / "records", SystemHost())
    again = SqliteStore.open(tmp_path / "records", SystemHost())  # what another process reads
    try:
        pipeline, specs = pipeline_specs()
        with pytest.raises(RuntimeError, match="crashed"):
            RecordPipeline(store, FakeClock(), CrashAt("pipeline-job-recorded", nth))(pipeline.name, specs)
        assert again.jobs() == [] and Gates(again).pipeline("study") is None
        assert RecordPipeline(store, FakeClock(), NoCrash())(pipeline.name, specs)[-1] == "study.plot"
        assert len(again.jobs()) == 5
    finally:
        store.close()
        again.close()
