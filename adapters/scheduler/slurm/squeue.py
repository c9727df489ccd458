"""One squeue for many names, and the reading of its answer.

Records are framed with ASCII separators rather than spaces or newlines: the comment (our nonce, or a
foreign job's free text) is the last field and may hold anything, even a newline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from adapters.scheduler.slurm.states import object_state

RS, US = "\x1e", "\x1f"
# job id, name, state, reason, user, batch host, end time, comment (last: free text)
FORMAT = RS + US.join(("%i", "%j", "%T", "%r", "%u", "%B", "%e", "%k"))
_FIELDS = 8
_NO_HOST = ("", "n/a", "(null)", "None")


def squeue_args(names: Sequence[str], clusters: str | None) -> list[str]:
    args = ["--states=all", "--noheader", f"--format={FORMAT}", f"--name={','.join(names)}"]
    if clusters:
        args.append(f"--clusters={clusters}")
    return args


class SqueueParseError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class SqueueRow:
    job_id: str
    name: str
    slurm_state: str
    reason: str
    user: str
    batch_host: str
    end_time: str
    comment: str

    @property
    def started(self) -> bool:
        """A batch host is kept once the job has run (a held or never-started job has none)."""
        return self.batch_host not in _NO_HOST


def parse(stdout: str) -> list[SqueueRow]:
    head, *records = stdout.split(RS)
    for line in head.splitlines():
        # With --clusters, squeue may print "CLUSTER: name" before a cluster's jobs.
        if line.strip() and not line.startswith("CLUSTER:"):
            raise SqueueParseError(f"unexpected squeue output {line.strip()[:80]!r}")
    rows = []
    for record in records:
        fields = record.split(US, _FIELDS - 1)
        if len(fields) != _FIELDS:
            raise SqueueParseError(f"squeue record with {len(fields)} fields, not {_FIELDS}: {record[:80]!r}")
        *front, comment = fields
        comment = comment[:-1] if comment.endswith("\n") else comment
        lines = comment.split("\n")
        # A "CLUSTER: x" line can only follow a record: it is never part of our nonces.
        if len(lines) > 1 and lines[-1].startswith("CLUSTER:"):
            comment = "\n".join(lines[:-1])
        job_id, name, state, reason, user, host, end = (f.strip() for f in front)
        if not job_id or not name or not state:
            raise SqueueParseError(f"squeue record without id, name or state: {record[:80]!r}")
        object_state(state, reason)  # refuse a state we do not know here, where the record is at hand
        rows.append(SqueueRow(job_id, name, state, reason, user, host, end, comment))
    return rows
