"""``dunscaith events``: a job's record read once, as a timeline (domain/model/jobs/timeline.py)."""

from __future__ import annotations

from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.timeline import Timeline, timeline
from dunscaith.ports.job_store import JobStore


class JobEvents:
    def __init__(self, store: JobStore) -> None:
        self._store = store

    def of(self, job: JobId) -> Timeline:
        """UnknownJob when not recorded; RecordDamaged when the store cannot give its lines back. A line this
        build does not decode is kept in the timeline, marked, rather than refusing the whole record."""
        record = self._store.read(job)
        return timeline(record, self._store.location(), bound=self._store.identity().host is not None)
