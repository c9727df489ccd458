"""A store's carried folds (adapters/store/summary_rows.py): a sweep's elements, recorded in one transaction and
then appended to phase by phase, are each stepped on from this process's carry, never folded again from the
record (a fold from the record cost most of a 500-element phase: ~1 ms an element)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from dunscaith.adapters.store.event_codec import encode_data
from dunscaith.adapters.store.summary_rows import Carries
from dunscaith.domain.model.jobs import events as ev
from dunscaith.domain.model.jobs.ids import JobId, Nonce
from dunscaith.domain.model.jobs.record import StoreIdentity
from tests.unit.jobs.test_domain_tables import SPEC

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


class NotRead:
    """A record an append must not need to read: its carry is current."""

    def snapshot(self) -> Sequence[Any] | None:
        raise AssertionError("the record's snapshot was read: the carry was dropped")

    def after(self, seq: int) -> Iterable[Sequence[Any]]:
        raise AssertionError("the record's events were read: the carry was dropped")


def _start(carries: Carries, jobs: list[JobId]) -> None:
    kind, data = ev.encode(ev.JobRecorded.of(SPEC, StoreIdentity("memory", "m")))
    for job in jobs:
        carries.start(job, T0, kind, encode_data(data))


def _step_each(carries: Carries, jobs: list[JobId], last_seq: int) -> None:
    kind, data = ev.encode(ev.Submitting(1, Nonce("n")))
    for job in jobs:
        summary, _ = carries.step(job, last_seq, T0, kind, encode_data(data), NotRead())
        assert summary.seq == last_seq + 1


def test_carries_made_in_one_transaction_are_all_kept_for_the_next() -> None:
    carries = Carries()
    jobs = [JobId(f"exp-{i}") for i in range(1, 501)]
    with carries.all_kept():
        _start(carries, jobs)
    _step_each(carries, jobs, 1)  # every element's first phase: no record read


def test_a_reservation_keeps_as_many_carries_as_a_phase_names() -> None:
    carries = Carries()
    jobs = [JobId(f"exp-{i}") for i in range(1, 301)]
    carries.reserve(len(jobs))
    _start(carries, jobs)
    _step_each(carries, jobs, 1)
    _step_each(carries, jobs, 2)
