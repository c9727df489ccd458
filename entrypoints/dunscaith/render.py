"""How the job commands show a job, a sweep and a residual entry: the words and the JSON, nothing else."""

from __future__ import annotations

import shlex
from datetime import UTC, datetime
from typing import Any

from dunscaith.domain.model.jobs.job_result import ExitFrom, JobResult
from dunscaith.domain.model.jobs.objects import ObjectTimes
from dunscaith.domain.model.jobs.residual import ResidualEntry
from dunscaith.domain.model.jobs.resources import Resources
from dunscaith.domain.model.jobs.spec import JobSpec
from dunscaith.domain.model.jobs.state import Attempt, JobState
from dunscaith.domain.services.jobs.status import JobView
from dunscaith.domain.services.jobs.sweep import SweepReport
from dunscaith.entrypoints.dunscaith.help_text import EXIT_CODES

__all__ = ["EXIT_CODES"]  # kept in help_text.py (loaded for help without this module); here too


def _iso(at: datetime | None) -> str | None:
    return at.isoformat() if at is not None else None


def times(state: JobState, now: datetime) -> dict[str, datetime | None]:
    """submitted (recorded), started (the first attempt seen running), ended (the outcome)."""
    started = next((a.started_at for a in state.attempts if a.started_at is not None), None)
    return {"submitted": state.recorded_at, "started": started, "ended": state.outcome_at}


def elapsed_seconds(state: JobState, now: datetime) -> float | None:
    """Time since it started running, to its end (None before it started)."""
    t = times(state, now)
    if t["started"] is None:
        return None
    return round(((t["ended"] or now) - t["started"]).total_seconds(), 3)


def elapsed_text(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def command_text(spec: JobSpec) -> str:
    """The job's command line as a shell would take it back (``python train.py --lr '0.1 0.2'``); for a
    batch script, ``script:`` and its first line that is neither blank nor a comment. Not escaped: the
    caller escapes what it prints."""
    if spec.script is None:
        return shlex.join(spec.command)
    first = next((ln.strip() for ln in spec.script.splitlines() if ln.strip() and not ln.lstrip().startswith("#")),
                 "")
    return f"script: {first}" if first else "script"


def scheduler_times(view: JobView) -> ObjectTimes | None:
    """The job's times as its scheduler keeps them: submitted (its first attempt's object), started (the
    first that started), ended (the last attempt's, once the job has an outcome); None when not asked or
    the scheduler knows none of its objects."""
    asked = view.scheduler_times
    known = [(a, asked.by_object[a.object_id]) for a in view.state.attempts
             if asked is not None and a.object_id is not None and a.object_id in asked.by_object]
    if not known:
        return None
    started = next((t.started for _, t in known if t.started is not None), None)
    last_attempt, last = known[-1]
    done = view.state.outcome is not None and last_attempt is view.state.attempts[-1]
    return ObjectTimes(known[0][1].submitted, started, last.ended if done else None, last.source)


def times_json(times: ObjectTimes | None) -> dict[str, Any] | None:
    if times is None:
        return None
    return {"submitted": _iso(times.submitted), "started": _iso(times.started), "ended": _iso(times.ended),
            "source": times.source}


def scheduler_json(view: JobView) -> dict[str, Any]:
    """status --json's scheduler fields (docs/json.md): the job's times as its scheduler keeps them, and
    each attempt's (by attempt number), and why they could not be asked."""
    asked = view.scheduler_times
    by_object = asked.by_object if asked is not None else {}
    return {
        "scheduler_times": times_json(scheduler_times(view)),
        "scheduler_times_problem": (asked.problem or None) if asked is not None else "not asked",
        "attempt_scheduler_times": {str(a.number): times_json(by_object.get(a.object_id))
                                    for a in view.state.attempts if a.object_id is not None},
    }


def times_words(times: ObjectTimes, now: datetime) -> str:
    """``submitted ...  started ...  ended ...  elapsed ...`` of the scheduler's times."""
    elapsed = None if times.started is None else ((times.ended or now) - times.started).total_seconds()
    return (f"submitted {local_time(times.submitted)}  started {local_time(times.started)}  "
            f"ended {local_time(times.ended)}  elapsed {elapsed_text(elapsed)}")


def local_time(at: datetime | None) -> str:
    return at.astimezone().strftime("%Y-%m-%d %H:%M:%S") if at is not None else "-"


def view_json(view: JobView, now: datetime | None = None) -> dict[str, Any]:
    s = view.state
    now = now or datetime.now(UTC)
    current = s.current
    return {
        "job": s.name,
        "cluster": s.spec.cluster,
        "adapter": s.spec.adapter,
        "state": view.label,
        "outcome": None if s.outcome is None else {"result": str(s.outcome.kind), "detail": s.outcome.detail},
        "settled": s.settled,
        "unattended": view.unattended,
        "times": {key: _iso(at) for key, at in times(s, now).items()},
        "elapsed_seconds": elapsed_seconds(s, now),
        "stdout": current.stdout if current is not None else None,
        "stderr": current.stderr if current is not None else None,
        "command_line": command_text(s.spec),
        "spec": {"command": list(s.spec.command), "script": s.spec.script is not None, "workdir": s.spec.workdir,
                 "options": list(s.spec.options), "resources": s.spec.resources.shown(),
                 "env": [pair.split("=", 1)[0] for pair in s.spec.env]},
        "supervisor": {"held": view.health.held,
                       "last_loop": view.health.last_loop.isoformat() if view.health.last_loop else None,
                       "next_loop": view.health.next_loop.isoformat() if view.health.next_loop else None,
                       "healthy": view.health.held and not view.loop_unhealthy},
        "attempts": [_attempt_json(a, s.spec.resources) for a in s.attempts],
        "outstanding": [o.what for o in view.left],
        "escalations": [{"reason": str(e.reason), "attempt": e.attempt, "detail": e.detail,
                         "at": e.at.isoformat(), "delivered": e.delivered} for e in s.escalations],
        "requests": [{"request": r.id, "action": str(r.action), "at": r.at.isoformat(), "answer": r.result,
                      "detail": r.detail} for r in s.requests],
        "failures": list(s.failures),
        "pruned_at": s.pruned_at.isoformat() if s.pruned_at else None,
        # the sweep it is an element of, and its index (null for a job of its own): docs/sweeps.md
        "sweep": s.spec.member.sweep if s.spec.member is not None else None,
        "sweep_index": s.spec.member.index if s.spec.member is not None else None,
        # the pipeline it is a step of, and the step (null for a job of no pipeline): docs/pipelines.md
        "pipeline": {"name": s.spec.step_of.pipeline, "step": s.spec.step_of.step} if s.spec.step_of else None,
    }


def _attempt_json(a: Attempt, job_needs: Resources) -> dict[str, Any]:
    return {"attempt": a.number, "order": str(a.order), "object_id": a.object_id,
            "object_state": str(a.object_state) if a.object_state else None,
            "exit_code": a.exit_code, "signal": a.signal, "stdout": a.stdout, "stderr": a.stderr,
            "released": _iso(a.released_at), "started": _iso(a.started_at), "ended": _iso(a.ended_at),
            # this attempt's own needs (docs/json.md), and what gave it them (null: the job's)
            "needs": (a.needs if a.needs is not None else job_needs).shown(),
            "cause": a.cause or None, "why": a.why or None}


def view_line(view: JobView, now: datetime | None = None, wide: bool = False) -> str:
    s = view.state
    now = now or datetime.now(UTC)
    words = [f"{s.name}", view.label]
    if s.outcome is not None:
        words.append(f"({s.outcome.detail})")
    words.append(f"submitted {local_time(s.recorded_at)}")
    words.append(f"elapsed {elapsed_text(elapsed_seconds(s, now))}")
    if view.health.held:
        words.append("supervised" + (" (loop unhealthy)" if view.loop_unhealthy else ""))
    elif view.sweep_held:
        words.append("supervised by its sweep's supervisor (not started yet)")
    elif view.unattended:
        words.append("Unattended")
    if view.left and s.outcome is not None:
        words.append(f"{len(view.left)} outstanding")
    if s.pruned_at is not None:
        words.append(f"pruned at {s.pruned_at:%Y-%m-%d %H:%M:%S %Z}")
    if wide:
        current = s.current
        words.append(f"cluster {s.spec.cluster}")
        if current is not None and current.stdout:
            words.append(f"stdout {current.stdout}")
        if current is not None and current.stderr and current.stderr != current.stdout:
            words.append(f"stderr {current.stderr}")
    return "  ".join(words)


def expiry_line(entry: ResidualEntry) -> str:
    return (f"residual entry {entry.describe()} expired {entry.expires_at():%Y-%m-%d} (added "
            f"{entry.added_at:%Y-%m-%d}) and was dropped: sweeps no longer look for its objects")


def sweep_lines(done: SweepReport) -> list[str]:
    lines = [expiry_line(entry) for entry in done.expired]
    lines += [f"sweep: stopped {object_id} on cluster {cluster}, a residual object that never started"
              for cluster, object_id in done.stopped]
    lines += [f"sweep: {problem} (the next sweep tries again)" for problem in done.problems]
    return lines


def entry_json(entry: ResidualEntry, expired: bool) -> dict[str, Any]:
    return {"job": entry.job, "residual": {
        "reason": str(entry.reason), "attempt": entry.attempt, "nonce": entry.nonce, "cluster": entry.cluster,
        "added_at": entry.added_at.isoformat(), "expires_at": entry.expires_at().isoformat(),
        "expired": expired}}


def entry_line(entry: ResidualEntry, expired: bool) -> str:
    what = "any not-started object" if entry.attempt is None else f"attempt {entry.attempt}"
    when = (f"expired {entry.expires_at():%Y-%m-%d}, dropped" if expired
            else f"added {entry.added_at:%Y-%m-%d}, expires {entry.expires_at():%Y-%m-%d}")
    return f"{entry.job}  residual ({entry.reason}: {what}, cluster {entry.cluster}; {when})"


def result_json(result: JobResult | None, job: str, ending: str, outstanding: list[str], exit_code: int,
                source: ExitFrom) -> dict[str, Any]:
    """What ``submit --json`` and ``supervise --json`` print when the supervision ends (docs/json.md); a notice
    to notify.command carries the same object (domain/model/jobs/notices.py)."""
    from dunscaith.domain.model.jobs.notices import result_document

    return result_document(result, job, ending, outstanding, exit_code, source)
