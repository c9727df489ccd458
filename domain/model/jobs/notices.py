"""Notices: telling the user's ``notify.command`` that a job (or a sweep) reached its outcome, escalated, or
that its supervisor gave up (docs/notifications.md).

Which notices a record owes is decided here from the record alone: the kinds the job was submitted to be
told of (``JobSpec.notify``, fixed at submit from ``notify.on`` and ``--notify`` / ``--no-notify``) and the
ids already delivered (``JobState.notified``). A notice owed and not delivered keeps the record from
settling (domain/model/jobs/settlement.py), as an undelivered escalation does. Each notice has an id that
is the same whoever works it out, so a notice is delivered once per record whichever process delivers it.

A sweep's element owes no outcome notice of its own: the sweep gets one notice for its outcome
(``sweep_owed``), recorded in its first element's record. Nor does a pipeline's step: a pipeline is to get
one notice for its outcome the same way (``sweep_owed`` takes any group of jobs: its name, the record that
keeps the notice, every member's outcome); its supervision is not built yet, so it is not given one yet.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from dunscaith.domain.model.jobs.exit_codes import ExitCode, for_outcome
from dunscaith.domain.model.jobs.ids import JobId
from dunscaith.domain.model.jobs.job_result import ExitFrom, JobResult
from dunscaith.domain.model.jobs.state import JobState


class NoticeKind(StrEnum):
    OUTCOME = "outcome"  # a job or a sweep reached its outcome
    ESCALATION = "escalation"  # an escalation was committed (besides escalations.command)
    GAVE_UP = "gave-up"  # the supervisor gave up (exit 4): told once, best effort (the record may not be writable)


NOTICE_KINDS: tuple[str, ...] = tuple(str(k) for k in NoticeKind)


def notice_kinds_problem(on: Sequence[str]) -> str | None:
    """What is wrong with a ``notify.on`` list, in one line; None when it is fine."""
    seen: set[str] = set()
    for word in on:
        if word not in NOTICE_KINDS:
            return f"notify.on: {word!r} is not one of {', '.join(NOTICE_KINDS)}"
        if word in seen:
            return f"notify.on: {word!r} is given twice"
        seen.add(word)
    return None


def chosen_kinds(on: Sequence[str], configured: bool, flag: bool | None) -> tuple[str, ...]:
    """The kinds a job submitted now is told of, recorded in its first event: none without a command
    (``configured``) or with ``--no-notify`` (``flag`` False); ``notify.on`` otherwise, and with
    ``--notify`` (``flag`` True) at least its outcome."""
    if not configured or flag is False:
        return ()
    kinds = [k for k in NOTICE_KINDS if k in on]
    if flag is True and str(NoticeKind.OUTCOME) not in kinds:
        kinds.insert(0, str(NoticeKind.OUTCOME))
    return tuple(kinds)


def _stamp(at: datetime | None) -> str:
    return at.isoformat() if at is not None else ""


def outcome_notice_id(state: JobState) -> str:
    """The id of a job's outcome notice: its name, when it was recorded, and when the outcome was reached (a
    re-run element reaches a new outcome, and is told of it again)."""
    return f"{state.name}@{_stamp(state.recorded_at)}/outcome@{_stamp(state.outcome_at)}"


def escalation_notice_id(state: JobState, index: int) -> str:
    return f"{state.name}@{_stamp(state.recorded_at)}/escalation-{index + 1}"


def gave_up_notice_id(state: JobState, at: datetime) -> str:
    return f"{state.name}@{_stamp(state.recorded_at)}/gave-up@{_stamp(at)}"


@dataclass(frozen=True, slots=True)
class OwedNotice:
    id: str
    kind: NoticeKind
    index: int | None = None  # the escalation's index (0-based) for an escalation notice


def owed(state: JobState) -> list[OwedNotice]:
    """The notices this record owes and has not delivered, in the order they are due."""
    wanted = state.spec.notify
    if not wanted:
        return []
    left: list[OwedNotice] = []
    done = set(state.notified)
    if str(NoticeKind.ESCALATION) in wanted:
        for index in range(len(state.escalations)):
            nid = escalation_notice_id(state, index)
            if nid not in done:
                left.append(OwedNotice(nid, NoticeKind.ESCALATION, index))
    if (str(NoticeKind.OUTCOME) in wanted and state.outcome is not None and state.spec.member is None
            and state.spec.step_of is None):
        nid = outcome_notice_id(state)
        if nid not in done:
            left.append(OwedNotice(nid, NoticeKind.OUTCOME))
    return left


def wants(state: JobState, kind: NoticeKind) -> bool:
    return str(kind) in state.spec.notify


def result_document(result: JobResult | None, job: str, ending: str, outstanding: list[str], exit_code: int,
                    source: ExitFrom) -> dict[str, Any]:
    """What ``submit --json`` and ``supervise --json`` print when the supervision ends (docs/json.md); a
    notice carries the same object."""
    return {
        "job": result.job if result is not None else job,
        "cluster": result.cluster if result is not None else None,
        "ending": ending,
        "outcome": None if result is None or result.outcome is None
        else {"result": str(result.outcome.kind), "detail": result.outcome.detail},
        "job_exit_code": result.exit_code if result is not None else None,
        "job_signal": result.signal if result is not None else None,
        "exit_code": exit_code,
        "exit_code_from": str(source),
        "attempts": [] if result is None else [
            {"attempt": a.number, "object_id": a.object_id, "order": str(a.order),
             "object_state": str(a.object_state) if a.object_state is not None else None,
             "exit_code": a.exit_code, "signal": a.signal} for a in result.attempts],
        "stdout": result.stdout if result is not None else None,
        "stderr": result.stderr if result is not None else None,
        "record": None if result is None else {"store": result.record.store, "backend": result.record.backend,
                                                 "host": result.record.host},
        "outstanding": outstanding,
    }


def job_notice(result: JobResult, notice: OwedNotice, at: datetime, *, detail: str = "") -> dict[str, Any]:
    """The object a job's notice hands the command: the job's ``--json`` result as it stands, with the
    notice's ``delivery_id``, what it tells of (``notice``), when it was made, and for an escalation or a
    give-up what happened (``notice_detail``)."""
    outcome = result.outcome
    if notice.kind is NoticeKind.GAVE_UP:
        ending, code = "gave-up", int(ExitCode.GAVE_UP)
    elif outcome is not None:
        ending, code = "outcome", int(for_outcome(outcome))
    else:
        ending, code = "escalation", int(ExitCode.NOT_SUCCESS)
    document = result_document(result, result.job, ending, [], code, ExitFrom.DUNSCAITH)
    document.update({"delivery_id": notice.id, "notice": str(notice.kind), "notice_at": at.isoformat(),
                     "notice_detail": detail})
    return document


def sweep_notice(sweep: str, document: dict[str, Any], notice_id: str, at: datetime,
                 kind: NoticeKind = NoticeKind.OUTCOME, detail: str = "") -> dict[str, Any]:
    """A sweep's (or a pipeline's) notice: its ``--json`` result (docs/json.md, a sweep's result), with the
    delivery id; ``kind``: its outcome, or its supervision's give-up (``detail``: what gave up)."""
    return {**document, "sweep": sweep, "delivery_id": notice_id, "notice": str(kind),
            "notice_at": at.isoformat(), "notice_detail": detail}


def sweep_gave_up_id(sweep: str, first: JobState, at: datetime) -> str | None:
    """The id of the one notice a sweep's (or a pipeline's) supervision that gave up owes, when its jobs were
    submitted to tell of a give-up (its first job's record says); None otherwise."""
    if str(NoticeKind.GAVE_UP) not in first.spec.notify:
        return None
    return f"{sweep}@{_stamp(first.recorded_at)}/gave-up@{_stamp(at)}"


def sweep_owed(sweep: JobId, first: JobState, outcomes: Sequence[str | None], attempts: int) -> OwedNotice | None:
    """The notice a sweep owes for its outcome, once every element has one (``outcomes``: each element's),
    when its elements were submitted to tell of it and its first element's record (``first``, where it is
    recorded) has not got it. ``attempts``: the elements' attempts in all, so that a sweep whose failed
    elements were run again (``resubmit NAME --failed``) is told of its new outcome."""
    if not outcomes or any(o is None for o in outcomes) or str(NoticeKind.OUTCOME) not in first.spec.notify:
        return None
    nid = f"{sweep}@{_stamp(first.recorded_at)}/outcome-{attempts}"
    return None if nid in first.notified else OwedNotice(nid, NoticeKind.OUTCOME)
