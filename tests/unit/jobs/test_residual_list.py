"""The residual list as files (0600 entries in 0700 folders, one file per entry) and its pure rules."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dunscaith.adapters.residual.files import FileResidualList
from dunscaith.domain.model.jobs.ids import JobId, Nonce
from dunscaith.domain.model.jobs.residual import (
    EXPIRY,
    ResidualEntry,
    ResidualReason,
    decode_entry,
    encode_entry,
    targets_by_cluster,
)
from dunscaith.domain.model.strict_json import DecodeError

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def entry(job: str = "j1", attempt: int | None = 1, nonce: str | None = "n1", cluster: str = "local",
          reason: ResidualReason = ResidualReason.UNKNOWN, at: datetime = T0) -> ResidualEntry:
    return ResidualEntry(JobId(job), cluster, "local", reason, attempt, None if nonce is None else Nonce(nonce), at)


def test_an_entry_is_private_and_adding_it_twice_keeps_the_first(tmp_path: Path) -> None:
    residual = FileResidualList(tmp_path / "dunscaith" / "residual")
    assert residual.add(entry()) is True
    assert residual.add(entry(at=T0 + timedelta(days=3))) is False
    path = residual.directory / "j1" / "attempt-1"
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
    (reading,) = residual.entries()
    assert reading.entry == entry()


def test_a_damaged_entry_is_listed_with_its_problem_and_the_others_still_read(tmp_path: Path) -> None:
    residual = FileResidualList(tmp_path / "dunscaith" / "residual")
    residual.add(entry())
    residual.add(entry("j2"))
    (residual.directory / "j1" / "attempt-1").chmod(0o600)
    os.unlink(residual.directory / "j1" / "attempt-1")
    (residual.directory / "j1" / "attempt-1").write_text("{not json")
    readings = residual.entries()
    assert [(r.job, r.entry is None) for r in readings] == [("j1", True), ("j2", False)]
    assert "damaged" in (readings[0].problem or "")


def test_dropping_the_last_entry_of_a_job_removes_its_folder(tmp_path: Path) -> None:
    residual = FileResidualList(tmp_path / "dunscaith" / "residual")
    residual.add(entry())
    residual.drop(entry())
    residual.drop(entry())  # gone already: nothing to do
    assert residual.entries() == [] and not (residual.directory / "j1").exists()


def test_entries_expire_thirty_days_after_they_were_added() -> None:
    assert timedelta(days=30) == EXPIRY
    assert not entry().expired(T0 + timedelta(days=30) - timedelta(seconds=1))
    assert entry().expired(T0 + timedelta(days=30))


def test_targets_per_cluster_name_the_nonces_or_any_object_for_a_pruned_job() -> None:
    got = targets_by_cluster([entry(), entry(attempt=2, nonce="n2"), entry("j2", cluster="hpc"),
                              entry("j3", None, None, reason=ResidualReason.PRUNED), entry("j3", 1, "m1")])
    assert got == {"local": {"j1": frozenset({"n1", "n2"}), "j3": None}, "hpc": {"j2": frozenset({"n1"})}}


@pytest.mark.parametrize("text", [
    b'{"version":1}',
    encode_entry(entry()).replace(b'"j1"', b'"other"'),
    encode_entry(entry()).replace(b'"unknown"', b'"pruned"'),
    encode_entry(entry()).replace(b'"version":1', b'"version":9'),
])
def test_an_entry_that_is_not_one_of_this_job_is_refused(text: bytes) -> None:
    with pytest.raises(DecodeError):
        decode_entry("j1", text)
