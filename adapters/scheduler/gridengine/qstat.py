"""What ``qstat -u USER -s prsz -xml`` (every job of the user, zombies too) and ``qstat -j IDS -xml`` (one job's
details: its ``-ac`` context, where the nonce is, and its paths) print, parsed (SGE 8.1.9's XML).

The list has no context: a job's nonce is read once from ``qstat -j`` and kept (``ledger.py``). An array's
pending tasks are one line (``<tasks>1,3-5:1</tasks>``), each running task a line of its own.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import datetime

from dunscaith.adapters.scheduler.gridengine.qsub import NONCE_VARIABLE
from dunscaith.domain.model.jobs.objects import ObjectState


class QstatParseError(ValueError):
    """qstat answered with something this module cannot read."""


@dataclass(frozen=True, slots=True)
class Row:
    job_id: str
    name: str
    owner: str
    state: str  # qstat's letters: hqw, qw, r, t, hr, dr, Eqw, Rq, z ...
    submitted: str  # JB_submission_time (pending, zombie) or JAT_start_time (running), as printed
    tasks: str | None  # an array's task ids on this line, None for a job that is no array

    @property
    def zombie(self) -> bool:
        return "z" in self.state

    def task_ids(self) -> list[int]:
        return expand_tasks(self.tasks) if self.tasks else []


@dataclass(frozen=True, slots=True)
class Detail:
    job_id: str
    name: str
    owner: str
    nonce: str | None
    submitted: int | None  # epoch seconds
    cwd: str | None
    stdout: str | None  # -o as given (None: Grid Engine's default)
    stderr: str | None
    starts: dict[int, int] = field(default_factory=dict)  # task number → its start, epoch seconds
    array: bool = False


def list_args(user: str) -> list[str]:
    return ["-u", user, "-s", "prsz", "-xml"]


def _xml(text: str) -> ET.Element:
    try:
        return ET.fromstring(text)
    except ET.ParseError as exc:
        raise QstatParseError(f"qstat printed XML that cannot be read ({exc})") from None


def parse_list(text: str) -> list[Row]:
    rows = []
    for job in _xml(text).iter("job_list"):

        def get(tag: str, job: ET.Element = job) -> str:
            return (job.findtext(tag) or "").strip()

        job_id = get("JB_job_number")
        if not job_id.isdigit():
            raise QstatParseError(f"qstat listed a job without a number: {ET.tostring(job)[:200]!r}")
        rows.append(
            Row(
                job_id=job_id,
                name=get("JB_name"),
                owner=get("JB_owner"),
                state=get("state"),
                submitted=get("JB_submission_time") or get("JAT_start_time"),
                tasks=get("tasks") or None,
            )
        )
    return rows


def parse_details(text: str) -> tuple[dict[str, Detail], list[str]]:
    """Each job ``qstat -j IDS -xml`` describes, by id, and the ids it says do not exist."""
    root = _xml(text)
    details: dict[str, Detail] = {}
    for job in root.iter("djob_info"):
        for element in job.findall("element"):
            detail = _detail(element)
            if detail is not None:
                details[detail.job_id] = detail
    unknown = [(n.text or "").strip() for n in root.iter("ST_name")]
    return details, unknown


def _detail(element: ET.Element) -> Detail | None:
    job_id = (element.findtext("JB_job_number") or "").strip()
    if not job_id.isdigit():
        return None
    submitted = (element.findtext("JB_submission_time") or "").strip()
    return Detail(
        job_id=job_id,
        name=(element.findtext("JB_job_name") or "").strip(),
        owner=(element.findtext("JB_owner") or "").strip(),
        nonce=_context_nonce(element.find("JB_context")),
        submitted=int(submitted) if submitted.isdigit() else None,
        cwd=(element.findtext("JB_cwd") or "").strip() or None,
        stdout=_path(element, "JB_stdout_path_list"),
        stderr=_path(element, "JB_stderr_path_list"),
        starts=_starts(element.find("JB_ja_tasks")),
        array=_has_children(element.find("JB_ja_structure")),
    )


def _context_nonce(context: ET.Element | None) -> str | None:
    """The nonce in the job's ``-ac`` context (never its environment, which may carry the same name)."""
    for var in list(context) if context is not None else []:  # <context_list> (SGE 8.1.9) or <element>
        if (var.findtext("VA_variable") or "").strip() == NONCE_VARIABLE:
            return (var.findtext("VA_value") or "").strip() or None
    return None


def _starts(tasks: ET.Element | None) -> dict[int, int]:
    starts = {}
    for task in list(tasks) if tasks is not None else []:  # <ulong_sublist> (SGE 8.1.9) or <element>
        number, start = task.findtext("JAT_task_number"), task.findtext("JAT_start_time")
        if number and number.strip().isdigit() and start and start.strip().isdigit() and int(start) > 0:
            starts[int(number)] = int(start)
    return starts


def _has_children(element: ET.Element | None) -> bool:
    return element is not None and len(element) > 0


def _path(element: ET.Element, tag: str) -> str | None:
    found = element.find(tag)
    if found is None:
        return None
    for path in found.iter("PN_path"):
        return (path.text or "").strip() or None
    return None


def expand_tasks(spec: str) -> list[int]:
    """``1-5:2,8`` → ``[1, 3, 5, 8]`` (qstat's task lists)."""
    ids: list[int] = []
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        bounds, _, step_text = part.partition(":")
        low, _, high = bounds.partition("-")
        step = int(step_text) if step_text else 1
        if not low.isdigit() or (high and not high.isdigit()) or step < 1:
            raise QstatParseError(f"qstat printed a task list that cannot be read: {spec!r}")
        ids.extend(range(int(low), int(high or low) + 1, step))
    return ids


def object_state(letters: str) -> tuple[ObjectState, bool, str]:
    """(the state, whether it has started, a reason) of a live job or task from qstat's state letters."""
    if "E" in letters:
        return (
            ObjectState.PENDING,
            False,
            (f"Grid Engine error state ({letters}): it stays queued until a person clears it (qmod -cj) or deletes it"),
        )
    if "d" in letters:
        return ObjectState.STOPPING, "r" in letters or "t" in letters, "being deleted"
    if "r" in letters or "t" in letters:
        reason = "suspended" if any(s in letters for s in "sST") else ""
        return ObjectState.RUNNING, True, reason
    if any(s in letters for s in "sST"):
        return ObjectState.RUNNING, True, "suspended"
    started = "R" in letters  # rescheduled: it ran before
    if "h" in letters:
        return ObjectState.HELD, started, ""
    if "q" in letters or "w" in letters:
        return ObjectState.PENDING, started, ""
    raise QstatParseError(f"qstat printed a job state this adapter does not know: {letters!r}")


def list_time(text: str) -> datetime | None:
    """qstat's list time (``2026-12-07T12:19:50``, the qmaster host's local time) as an aware datetime."""
    try:
        return datetime.fromisoformat(text).astimezone()
    except ValueError:
        return None
