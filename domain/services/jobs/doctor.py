"""Doctor: what is wrong with this host's records, said without changing anything.

It reports the store (whether it opens, and SQLite's own integrity check), every job whose record does
not read, every pointer that is damaged or names a job of this host that the store does not know (a
store restored from an older copy, or moved aside), every entry of the index of pointers not settled
that this host's pointers leave missing or stale, and every residual entry that does not read. It
writes nothing unless asked: a doctor that repaired would hide what a user must decide (restore, or
start anew). The summaries and the pointers' index are views, rebuilt on request.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dunscaith.domain.model.jobs.attendance import pointer_settled
from dunscaith.domain.model.jobs.errors import JobsError
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.pointer import PointerReading
from dunscaith.domain.model.jobs.record import HostIdentity
from dunscaith.domain.model.jobs.snapshot import resumed
from dunscaith.domain.model.jobs.state import JobState, fold, label
from dunscaith.domain.model.jobs.summary import summarize
from dunscaith.ports.job_store import JobStore, StoreError
from dunscaith.ports.pointers import Pointers
from dunscaith.ports.residual import ResidualList

REBUILD = "dunscaith doctor --rebuild-summaries folds them (summaries and snapshots) again from the records"
REINDEX = "dunscaith doctor --rebuild-index indexes this host's pointers again"


@dataclass(frozen=True, slots=True)
class Finding:
    subject: str  # "store", "job j1", "pointer j2", "residual j3/KEY"
    problem: str | None  # None: this one is fine
    detail: str = ""  # what was checked, for a finding without a problem


@dataclass(frozen=True, slots=True)
class DoctorReport:
    findings: tuple[Finding, ...]

    @property
    def problems(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.problem is not None)


class Doctor:
    def __init__(self, open_store: Callable[[], JobStore], integrity: Callable[[JobStore], str | None],
                 pointers: Pointers, residual: ResidualList, here: HostIdentity) -> None:
        self._open_store = open_store
        self._integrity = integrity
        self._pointers = pointers
        self._residual = residual
        self._here = here

    def __call__(self) -> DoctorReport:
        findings: list[Finding] = []
        known = self._store(findings)
        findings.extend(self._pointer_findings(known))
        findings.extend(self._residual_findings())
        return DoctorReport(tuple(findings))

    def _store(self, findings: list[Finding]) -> set[str] | None:
        """The jobs the store knows; None when it cannot be opened or listed."""
        try:
            store = self._open_store()
        except (StoreError, JobsError) as exc:  # the root or the store refused: that is the finding
            findings.append(Finding("store", str(exc)))
            return None
        try:
            problem = self._integrity(store)
        except StoreError as exc:
            problem = str(exc)
        where = store.identity().location
        findings.append(Finding("store", problem, f"{where}: it opens, and its integrity check passes"))
        try:
            jobs = store.jobs()
        except StoreError as exc:
            findings.append(Finding("store", f"its jobs cannot be listed: {exc}"))
            return None
        for job in jobs:
            try:
                record = store.read(job)
                state = fold(record)
            except (JobsError, StoreError) as exc:
                findings.append(Finding(f"job {job}", f"its record does not read: {exc}"))
                continue
            try:
                kept = store.summary(job)
            except StoreError as exc:
                kept = None
                findings.append(Finding(f"job {job}", f"its summary does not read: {exc}; {REBUILD}"))
            if kept is not None and kept != summarize(state, record.events[-1].seq, job):
                findings.append(Finding(f"job {job}", f"its summary (what list shows) disagrees with its record "
                                                      f"({kept.state}, the record says {label(state)}); {REBUILD}"))
            findings.extend(self._snapshot_finding(store, job, state))
        findings.append(Finding("records", None, f"{len(jobs)} job(s) recorded"))
        return set(jobs)

    @staticmethod
    def _snapshot_finding(store: JobStore, job: JobId, state: JobState) -> list[Finding]:
        """The record's snapshot with the events after it (what status folds) must fold to the record; one
        that is not this build's is no problem (status folds the whole record then)."""
        try:
            resumed_state = resumed(store.read_tail(job))
        except (JobsError, StoreError) as exc:
            return [Finding(f"job {job}", f"its snapshot and the events after it do not read: {exc}; {REBUILD}")]
        if resumed_state is not None and resumed_state != state:
            return [Finding(f"job {job}", f"its snapshot (what status folds from) disagrees with its record "
                                          f"({label(resumed_state)}, the record says {label(state)}); {REBUILD}")]
        return []

    def rebuild_summaries(self) -> int:
        """Fold every record again into its summary (the events are the truth and are not touched); how
        many. The one thing doctor writes, and only when asked."""
        return self._open_store().rebuild_summaries()

    def rebuild_index(self) -> int:
        """Index this host's pointers again: the missing entries added, the stale ones removed (and any
        entry naming no pointer that does not read); how many changed. The pointers are not touched."""
        readings = self._pointers.all()
        changed = 0
        for job, _, add in self._index_gaps(readings, self._pointers.indexed()):
            if add is not None:
                self._pointers.index(job, add)
            else:
                self._pointers.unindex(job)
            changed += 1
        self._pointers.index_built()
        return changed

    def _index_gaps(self, readings: list[PointerReading], indexed: list[JobId] | None
                    ) -> list[tuple[JobId, str, HostIdentity | None]]:
        """What the index lacks or has too many, for this host's pointers: (job, why, the owner to add an
        entry for, or None to remove it). An index never built is built by the next command as it is."""
        if indexed is None:
            return []
        entries = set(indexed)
        pointed = {r.job: r.pointer for r in readings}
        gaps: list[tuple[JobId, str, HostIdentity | None]] = []
        for job, pointer in pointed.items():
            if (pointer is not None and pointer.root_host == self._here and not pointer_settled(pointer)
                    and job not in entries):
                gaps.append((job, f"is not settled ({pointer.state}) and missing from the index of pointers not "
                                  "settled, so the Unattended notice on other hosts passes it over", self._here))
        for job in indexed:
            if job in pointed:
                pointer = pointed[job]
                if pointer is not None and pointer.root_host == self._here and pointer_settled(pointer):
                    gaps.append((job, f"is settled ({pointer.state}) but still in the index of pointers not "
                                      "settled (a stale entry, passed over)", None))
                continue
            entry = self._pointers.index_entry(job)
            if entry is not None and entry.owner in (self._here, None):
                gaps.append((job, "has an entry in the index of pointers not settled but no pointer (a stale "
                                  "entry, passed over)", None))
        return gaps

    def _pointer_findings(self, known: set[str] | None) -> list[Finding]:
        try:
            readings = self._pointers.all()
            indexed = self._pointers.indexed()
        except Exception as exc:  # the pointers' folder itself does not read: say so, check the rest
            return [Finding("pointers", f"cannot be listed: {exc}")]
        found = [Finding(f"pointer {job}", f"{why}; {REINDEX}") for job, why, _ in self._index_gaps(readings, indexed)]
        for reading in readings:
            pointer = reading.pointer
            if pointer is None:
                found.append(Finding(f"pointer {reading.job}", reading.problem or "damaged"))
            elif pointer.root_host != self._here:
                continue  # another host's job: its store is there, and so is its check
            elif known is None:
                found.append(Finding(f"pointer {reading.job}", None, "names a job of this host; the store does "
                                                                     "not open, so it is not checked"))
            elif reading.job not in known:
                found.append(Finding(f"pointer {reading.job}", (
                    f"names job {reading.job} of this host ({pointer.record_root}), which the store does not know: "
                    "the store was replaced or restored from an older copy; if it is elsewhere, put it back")))
        return found

    def _residual_findings(self) -> list[Finding]:
        try:
            readings = self._residual.entries()
        except Exception as exc:
            return [Finding("residual list", f"cannot be listed: {exc}")]
        return [Finding(f"residual {r.job}/{r.key}", r.problem or "damaged") for r in readings if r.entry is None]
