"""The scheduler's own submit, start and end times of a few jobs (``status``), from ``sacct`` where the
cluster keeps accounting and ``scontrol -o show job`` for what it does not list (yet: slurmdbd may lag
slurmctld) or where it keeps none.

Slurm prints times in the client's local time without a zone ("2026-12-02T05:01:02"); "Unknown",
"None" and "N/A" are no time. A job that never started has no start, whatever the field says: sacct
gives ``Start=None`` (22.05: the end time in some versions) and scontrol the time it gave up on it, so
the start is kept only where nodes were allocated (``NodeList``). While a job runs, scontrol's
``EndTime`` is its time limit's end and while it is pending ``StartTime`` an estimate: neither is
kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from dunscaith.adapters.scheduler.slurm.config import clusters_args
from dunscaith.adapters.scheduler.slurm.states import UnknownState, object_state
from dunscaith.domain.model.jobs.objects import ENDED, ObjectState, ObjectTimes

FIELDS = "JobID,Submit,Start,End,State,NodeList"
_N = 6
_NO_NODES = ("", "None assigned", "(null)", "None")


def sacct_args(job_ids: Sequence[str], clusters: str | None) -> list[str]:
    """With ``--jobs`` and no ``--starttime`` sacct looks back to the epoch, never-eligible jobs too."""
    return ["-X", "--parsable2", "--noheader", f"--format={FIELDS}", f"--jobs={','.join(job_ids)}",
            *clusters_args(clusters)]


def slurm_time(text: str) -> datetime | None:
    """A time as Slurm prints it (local time, no zone), made aware; None for no time."""
    text = text.strip()
    if not text or text in ("Unknown", "None", "N/A", "(null)"):
        return None
    try:
        return datetime.fromisoformat(text).astimezone()
    except ValueError:
        return None


def _times(submit: str, start: str, end: str, state: str, nodes: str, source: str) -> ObjectTimes:
    try:
        seen = object_state(state, "")
    except UnknownState:
        seen = ObjectState.UNKNOWN
    ran = nodes.strip() not in _NO_NODES and seen not in (ObjectState.PENDING, ObjectState.HELD)
    return ObjectTimes(submitted=slurm_time(submit), started=slurm_time(start) if ran else None,
                       ended=slurm_time(end) if seen in ENDED else None, source=source)


def parse_sacct(stdout: str, wanted: Sequence[str]) -> dict[str, ObjectTimes]:
    """``JobID|Submit|Start|End|State|NodeList`` lines; a line it cannot read is skipped (display only)."""
    keep = set(wanted)
    found: dict[str, ObjectTimes] = {}
    for line in stdout.splitlines():
        fields = line.split("|")
        if len(fields) != _N or fields[0].strip() not in keep:
            continue
        job_id, submit, start, end, state, nodes = fields
        found[job_id.strip()] = _times(submit, start, end, state, nodes, "sacct")
    return found


def from_scontrol(facts: dict[str, str]) -> ObjectTimes | None:
    """One job's times from the ``Key=value`` pairs of its ``scontrol -o show job`` line."""
    if "JobId" not in facts or "JobState" not in facts:
        return None
    return _times(facts.get("SubmitTime", ""), facts.get("StartTime", ""), facts.get("EndTime", ""),
                  facts["JobState"], facts.get("NodeList", ""), "scontrol")
