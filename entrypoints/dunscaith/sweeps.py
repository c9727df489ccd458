"""Run a residual sweep for a command and say what it did (docs/residual.md); it never fails the command."""

from __future__ import annotations

import sys
from typing import Any

from domain.model.jobs.residual import ResidualEntry

PROG = "dunscaith"


def _say(line: str) -> None:
    print(f"{PROG}: {line}", file=sys.stderr)


def expiry_line(entry: ResidualEntry) -> str:
    return (f"residual entry {entry.describe()} expired {entry.expires_at():%Y-%m-%d} (added "
            f"{entry.added_at:%Y-%m-%d}) and was dropped: sweeps no longer look for its objects")


def report(done: Any) -> None:
    for entry in done.expired:
        _say(expiry_line(entry))
    for cluster, object_id in done.stopped:
        _say(f"sweep: stopped {object_id} on cluster {cluster}, a residual object that never started")
    for problem in done.problems:
        _say(f"sweep: {problem} (the next sweep tries again)")


def sweep(container: Any) -> Any:
    """One sweep of the whole residual list; its report printed. None when it could not run at all."""
    try:
        done = container.sweep()()
    except Exception as exc:  # a sweep rides on a command and never stops it
        _say(f"sweep not run: {type(exc).__name__}: {exc}")
        return None
    report(done)
    return done


def expire(container: Any) -> Any:
    """Drop expired entries only (no scheduler is asked), reporting each."""
    try:
        done = container.sweep().expire()
    except Exception as exc:
        _say(f"residual list not read: {type(exc).__name__}: {exc}")
        return None
    report(done)
    return done


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
