"""One squeue for many names, and the reading of its answer.

Fields and records are framed with ASCII separators rather than spaces or newlines: the comment (our
nonce, or a foreign job's free text) is the last field and may hold anything, even a newline.

Job arrays: ``-r`` puts every task on a line of its own (without it the tasks still pending in the array's
own record are one line, ``A_[1-5%2]``, which must never reach a caller); the id is ``JobArrayID``
(``A_i`` for a task, the job id for any other job: ``JobID`` would be the array's id for every task
still in its record) and ``ArrayTaskID`` the task's index (``N/A`` for a job that is no task).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dunscaith.adapters.scheduler.slurm.arrays import task_index
from dunscaith.adapters.scheduler.slurm.config import clusters_args
from dunscaith.adapters.scheduler.slurm.states import object_state

RS, US = "\x1e", "\x1f"
# --Format (not --format): only it has RestartCnt. ":0" prints a field whole, unpadded; the character
# after it is printed after the field. The comment (our nonce, or a foreign job's free text) is last.
_COLUMNS = ("JobArrayID", "Name", "State", "Reason", "UserName", "RestartCnt", "BatchHost", "EndTime", "ArrayTaskID",
            "Comment")
FORMAT = ",".join(f"{c}:0{US}" for c in _COLUMNS[:-1]) + f",{_COLUMNS[-1]}:0{RS}"
_FIELDS = len(_COLUMNS)
_NO_HOST = ("", "n/a", "(null)", "None")


def squeue_args(names: Sequence[str], clusters: str | None) -> list[str]:
    return ["--states=all", "--array", "--noheader", f"--Format={FORMAT}", f"--name={','.join(names)}",
            *clusters_args(clusters)]


def squeue_job_args(job_ids: Sequence[str], clusters: str | None) -> list[str]:
    """The same fields for exact ids (``A_i`` names one task of an array)."""
    return ["--states=all", "--array", "--noheader", f"--Format={FORMAT}", f"--jobs={','.join(job_ids)}",
            *clusters_args(clusters)]


class SqueueParseError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class SqueueRow:
    job_id: str
    name: str
    slurm_state: str
    reason: str
    user: str
    restarts: int
    batch_host: str
    end_time: str
    comment: str
    array_task: int | None = None  # the task's index when the job is one task of an array

    def element(self) -> str:
        """The name dunscaith knows this job by: a task of array ``S`` is ``S-<index>``, any other job its name."""
        return self.name if self.array_task is None else f"{self.name}-{self.array_task}"

    @property
    def started(self) -> bool:
        """It ran once: a batch host is set while it runs or after, a requeued job counts a restart."""
        return self.batch_host not in _NO_HOST or self.restarts > 0


class RowMemo:
    """The rows of the last answer read with it, by their records' text: a record squeue prints again
    unchanged (a sweep's tasks between two polls, most of them) is not read again, and is the very same
    row. Only the last answer's are kept."""

    def __init__(self) -> None:
        self.rows: dict[str, SqueueRow] = {}


def parse(stdout: str, memo: RowMemo | None = None) -> list[SqueueRow]:
    *records, tail = stdout.split(RS + "\n")
    if tail.strip() and not all(ln.startswith("CLUSTER:") for ln in tail.strip().splitlines()):
        raise SqueueParseError(f"unexpected squeue output {tail.strip()[:80]!r}")
    if memo is not None:
        known = memo.rows
        rows = []
        fresh: dict[str, SqueueRow] = {}
        for record in records:
            row = known.get(record)
            if row is None:
                row = _parse_records([record])[0]
            fresh[record] = row
            rows.append(row)
        memo.rows = fresh
        return rows
    return _parse_records(records)


def _parse_records(records: list[str]) -> list[SqueueRow]:
    rows = []
    for record in records:
        # With --clusters, squeue may print "CLUSTER: name" lines before a cluster's jobs.
        while record.startswith("CLUSTER:") and "\n" in record:
            record = record.split("\n", 1)[1]
        fields = record.split(US, _FIELDS - 1)
        if len(fields) != _FIELDS:
            raise SqueueParseError(f"squeue record with {len(fields)} fields, not {_FIELDS}: {record[:80]!r}")
        *front, comment = fields
        job_id, name, state, reason, user, restarts, host, end, task = (f.strip() for f in front)
        if not job_id or not name or not state or not restarts.isdigit():
            raise SqueueParseError(f"squeue record without id, name, state or restart count: {record[:80]!r}")
        object_state(state, reason)  # refuse a state we do not know here, where the record is at hand
        if "[" in job_id:
            raise SqueueParseError(f"squeue gave the array record {job_id!r} whole, not one line a task")
        rows.append(SqueueRow(job_id, name, state, reason, user, int(restarts), host, end, comment, task_index(task)))
    return rows
