"""What ``qacct -j NAME`` prints: one record per ended job (per task of an array), read from the cell's
accounting file. A job deleted before it started has no record, ever (``ledger.py`` keeps those); a record
has no ``-ac`` context, so no nonce (the nonce comes from what was seen of the job while it lived)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from dunscaith.domain.model.jobs.objects import ObjectState


@dataclass(frozen=True, slots=True)
class Record:
    job_id: str
    name: str
    owner: str
    task: int | None
    submitted: datetime | None
    started: datetime | None  # None: it never started (``start_time -/-``)
    ended: datetime | None
    failed: int
    failed_text: str
    exit_status: int
    category: str

    @property
    def object_id(self) -> str:
        return self.job_id if self.task is None else f"{self.job_id}.{self.task}"


def args(job: str) -> list[str]:
    return ["-j", job]


def not_found(stderr: str) -> bool:
    """qacct says it has no record: none of that job, or no accounting file yet (no job ended in the cell so
    far). Either way nothing is known of an end, and absence stays unknown."""
    return "not found" in stderr or ("accounting" in stderr and "No such file or directory" in stderr)


def parse(text: str) -> list[Record]:
    records = []
    for block in text.split("=" * 62):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            key, _, value = line.partition(" ")
            if key:
                fields[key] = value.strip()
        if not fields.get("jobnumber", "").isdigit():
            continue
        failed_text = fields.get("failed", "0")
        task = fields.get("taskid", "undefined")
        records.append(
            Record(
                job_id=fields["jobnumber"],
                name=fields.get("jobname", ""),
                owner=fields.get("owner", ""),
                task=int(task) if task.isdigit() else None,
                submitted=_time(fields.get("qsub_time", "")),
                started=_time(fields.get("start_time", "")),
                ended=_time(fields.get("end_time", "")),
                failed=_int(failed_text.split(":", 1)[0]),
                failed_text=failed_text,
                exit_status=_int(fields.get("exit_status", "0").split()[0] if fields.get("exit_status") else "0"),
                category=fields.get("category", ""),
            )
        )
    return records


def _int(text: str) -> int:
    text = text.strip()
    return int(text) if text.lstrip("-").isdigit() else 0


def _time(text: str) -> datetime | None:
    text = " ".join(text.split())
    if not text or text.startswith("-"):
        return None
    try:
        return datetime.strptime(text, "%a %b %d %H:%M:%S %Y").astimezone()
    except ValueError:
        return None


def outcome(record: Record) -> tuple[ObjectState, int | None, int | None, str]:
    """(state, exit code, signal, reason) of an ended job from its record (``failed`` codes of SGE 8.1.9)."""
    code = record.exit_status
    signal = code - 128 if code > 128 and code - 128 < 65 else None
    if record.failed == 0:
        if code == 0:
            return ObjectState.COMPLETED, 0, None, ""
        return ObjectState.FAILED, code, signal, ""
    why = f"qacct: failed {record.failed_text}"
    if record.failed == 100:  # "assumedly after job": deleted while it ran (qdel)
        return ObjectState.CANCELLED, code, signal, why
    if record.failed == 37:  # qmaster enforced h_rt, h_cpu or h_vmem
        over_time = "h_rt" in record.category and "h_vmem" not in record.category
        return (ObjectState.TIMEOUT if over_time else ObjectState.OUT_OF_MEMORY), code, signal, why
    if record.failed == 19:  # before writing exit_status: the node died under it
        return ObjectState.NODE_FAIL, None, None, why
    return ObjectState.FAILED, code if record.started else None, signal, why
