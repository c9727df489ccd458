"""How the job commands show a job, a sweep and a residual entry: the words and the JSON, nothing else."""

from __future__ import annotations

from typing import Any

from domain.model.jobs.residual import ResidualEntry
from domain.services.jobs.listing import ListedJob
from domain.services.jobs.status import JobView
from domain.services.jobs.sweep import SweepReport

EXIT_CODES = ("Exit codes: 0 succeeded; 1 the outcome is not success; 2 bad input or refused; 3 internal error; "
              "4 the supervisor gave up; 5 work outstanding after supervise.wait; 128+n ended by signal n "
              "(the job goes on). See docs/exit-codes.md.")


def view_json(view: JobView) -> dict[str, Any]:
    s = view.state
    return {
        "job": s.name,
        "cluster": s.spec.cluster,
        "adapter": s.spec.adapter,
        "state": view.label,
        "outcome": None if s.outcome is None else {"result": str(s.outcome.kind), "detail": s.outcome.detail},
        "settled": s.settled,
        "unattended": view.unattended,
        "supervisor": {"held": view.health.held,
                       "last_loop": view.health.last_loop.isoformat() if view.health.last_loop else None,
                       "healthy": view.health.held and not view.loop_unhealthy},
        "attempts": [{"attempt": a.number, "order": str(a.order), "object_id": a.object_id,
                      "object_state": str(a.object_state) if a.object_state else None,
                      "exit_code": a.exit_code, "signal": a.signal} for a in s.attempts],
        "outstanding": [o.what for o in view.left],
        "escalations": [{"reason": str(e.reason), "attempt": e.attempt, "detail": e.detail,
                         "at": e.at.isoformat(), "delivered": e.delivered} for e in s.escalations],
        "requests": [{"request": r.id, "action": str(r.action), "at": r.at.isoformat(), "answer": r.result,
                      "detail": r.detail} for r in s.requests],
        "pruned_at": s.pruned_at.isoformat() if s.pruned_at else None,
    }


def view_line(view: JobView) -> str:
    s = view.state
    words = [f"{s.name}", view.label]
    if s.outcome is not None:
        words.append(f"({s.outcome.detail})")
    if view.health.held:
        words.append("supervised" + (" (loop unhealthy)" if view.loop_unhealthy else ""))
    elif view.unattended:
        words.append("Unattended")
    if view.left and s.outcome is not None:
        words.append(f"{len(view.left)} outstanding")
    if s.pruned_at is not None:
        words.append(f"pruned at {s.pruned_at:%Y-%m-%d %H:%M:%S %Z}")
    return "  ".join(words)


def listed_line(job: ListedJob) -> str:
    """``view_line``'s words, from the job's summary."""
    s = job.summary
    if s.problem is not None:
        return f"{s.job}  damaged: record does not read: {s.problem}"
    words = [f"{s.job}", s.state]
    if s.outcome is not None:
        words.append(f"({s.outcome_detail})")
    if job.health.held:
        words.append("supervised" + (" (loop unhealthy)" if job.loop_unhealthy else ""))
    elif job.unattended:
        words.append("Unattended")
    if job.left and s.outcome is not None:
        words.append(f"{job.left} outstanding")
    if s.pruned_at is not None:
        words.append(f"pruned at {s.pruned_at:%Y-%m-%d %H:%M:%S %Z}")
    return "  ".join(words)


def listed_json(job: ListedJob) -> dict[str, Any]:
    """One job of ``list --json``: its summary (``status JOB --json`` has the attempts, requests...)."""
    s = job.summary
    if s.problem is not None:
        return {"job": s.job, "problem": f"record does not read: {s.problem}"}
    return {
        "job": s.job,
        "cluster": s.cluster,
        "adapter": s.adapter,
        "state": s.state,
        "outcome": None if s.outcome is None else {"result": s.outcome, "detail": s.outcome_detail},
        "settled": s.settled,
        "unattended": job.unattended,
        "supervisor": {"held": job.health.held,
                       "last_loop": job.health.last_loop.isoformat() if job.health.last_loop else None,
                       "healthy": job.health.held and not job.loop_unhealthy},
        "attempt_count": s.attempts,
        "object_id": s.object_id,
        "outstanding_count": job.left,
        "recorded_at": s.recorded_at.isoformat(),
        "updated_at": s.updated_at.isoformat(),
        "pruned_at": s.pruned_at.isoformat() if s.pruned_at else None,
    }


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
