"""The residual list (DESIGN §2): per-user entries for scheduler objects that nobody owns any more.

An entry names a job, the cluster that holds it and which of its objects a sweep may stop: one
attempt's (by its nonce) for an attempt of unknown outcome or an abandoned one, or any object of the
job's name for a pruned job. A sweep stops only objects that never started and are not foreign.
Entries expire 30 days after they were added; every expiry is reported, never silent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from dunscaith.domain.model.jobs.ids import JobId, Nonce, ObjectId
from dunscaith.domain.model.jobs.objects import NOT_STARTED, ObjectView
from dunscaith.domain.model.recorded_time import aware_time
from dunscaith.domain.model.strict_json import DecodeError, decode_exact, dumps_canonical

RESIDUAL_VERSION = 1
EXPIRY = timedelta(days=30)


class ResidualReason(StrEnum):
    UNKNOWN = "unknown"  # an attempt whose create was never answered, moved when its record settled
    ABANDONED = "abandoned"  # an attempt the user let go of (``abandon``)
    PRUNED = "pruned"  # a job whose record was pruned: any not-started object of its name


class ResidualPolicy(StrEnum):
    LIST = "list"  # default: unknown attempts move to the residual list when the record settles
    MANUAL = "manual"  # an unknown attempt escalates and the record waits for the user


@dataclass(frozen=True, slots=True)
class ResidualEntry:
    job: JobId
    cluster: str
    adapter: str
    reason: ResidualReason
    attempt: int | None  # None for a pruned job
    nonce: Nonce | None  # None for a pruned job: any object of the name
    added_at: datetime

    @property
    def key(self) -> str:
        """The entry's name within its job: one per attempt, one for the pruned job."""
        return "pruned" if self.nonce is None else f"attempt-{self.attempt}"

    def expires_at(self) -> datetime:
        return self.added_at + EXPIRY

    def expired(self, now: datetime) -> bool:
        return now >= self.expires_at()

    def describe(self) -> str:
        what = "any not-started object" if self.nonce is None else f"attempt {self.attempt}'s object"
        return f"{self.job} ({self.reason}, {what}, cluster {self.cluster})"


@dataclass(frozen=True, slots=True)
class ResidualReading:
    """One entry as found on disk: the entry, or why it could not be read (a damaged one is reported)."""

    job: JobId
    key: str
    entry: ResidualEntry | None
    problem: str | None = None


Targets = Mapping[JobId, frozenset[Nonce] | None]


def targets_by_cluster(entries: Iterable[ResidualEntry]) -> dict[str, dict[JobId, frozenset[Nonce] | None]]:
    """What one sweep per cluster may stop: per name, the nonces of its attempts, or None (any object)
    when the job was pruned."""
    out: dict[str, dict[JobId, frozenset[Nonce] | None]] = {}
    for entry in entries:
        names = out.setdefault(entry.cluster, {})
        if entry.nonce is None:
            names[entry.job] = None
        elif entry.job not in names or names[entry.job] is not None:
            names[entry.job] = (names.get(entry.job) or frozenset()) | {entry.nonce}
    return out


def sweepable(objects: Iterable[ObjectView], targets: Targets, user: str) -> list[ObjectId]:
    """Which of a query's objects a sweep may stop: the user's own, never started, and the attempt's
    (by nonce) unless the whole job was pruned. Anything else (foreign, running, ended) is left alone.

    The one statement of the rule: every sweep (``domain.services.jobs.sweep``) applies it to its
    scheduler's answer, whichever scheduler that is."""
    chosen = set()
    for view in objects:
        if view.name not in targets or view.owner != user:
            continue  # foreign: never touched
        if view.state not in NOT_STARTED or view.started:
            continue  # a sweep never stops an object that has started
        nonces = targets[view.name]
        if nonces is not None and view.nonce not in nonces:
            continue  # another attempt's object, or one of nobody we know
        chosen.add(view.object_id)
    return sorted(chosen, key=lambda i: (len(i), i))


_FIELDS = {"version": (int,), "job": (str,), "cluster": (str,), "adapter": (str,), "reason": (str,),
           "attempt": (int, type(None)), "nonce": (str, type(None)), "added_at": (str,)}


def encode_entry(entry: ResidualEntry) -> bytes:
    if entry.added_at.utcoffset() is None:
        raise ValueError("a residual entry's time needs a time zone")
    return dumps_canonical({"version": RESIDUAL_VERSION, "job": entry.job, "cluster": entry.cluster,
                            "adapter": entry.adapter, "reason": str(entry.reason), "attempt": entry.attempt,
                            "nonce": entry.nonce, "added_at": entry.added_at.isoformat()})


def decode_entry(job: str, text: bytes | str) -> ResidualEntry:
    """DecodeError (naming what is wrong) if ``text`` is not a residual entry of ``job``."""
    fields = decode_exact(text, _FIELDS, "residual entry")
    if fields["version"] != RESIDUAL_VERSION:
        raise DecodeError(f"version {fields['version']}, this dunscaith reads version {RESIDUAL_VERSION}")
    if fields["job"] != job:
        raise DecodeError(f"it names job {fields['job']}")
    try:
        reason = ResidualReason(fields["reason"])
    except ValueError as exc:
        raise DecodeError(str(exc)) from None
    added = aware_time(fields["added_at"], "added_at")
    if (fields["nonce"] is None) != (reason is ResidualReason.PRUNED):
        raise DecodeError("only a pruned job's entry has no nonce")
    return ResidualEntry(JobId(fields["job"]), fields["cluster"], fields["adapter"], reason, fields["attempt"],
                         None if fields["nonce"] is None else Nonce(fields["nonce"]), added)
